"""The minimiser's data-flow passes (fuzz.reduce.pipeline's ``source/dataflow``
and ``source/bypass`` stages), over the candidates of fuzz.reduce.dataflow:
dead assignments, copies, the returned tuple and an input returned in its
place, then operator calls bypassed. Each takes the pipeline's oracle (a
cached, deadline-bound check that keeps the smallest accepted source)."""

from __future__ import annotations

from typing import Any

from fuzz.corpus.render import code_lines
from fuzz.reduce import dataflow

# fuzz.reduce.pipeline._Oracle (that module imports this one)
_Oracle = Any


def size(source: str) -> tuple[int, int]:
    """(lines of code, characters): the order in which candidates compare."""
    return code_lines(source), len(source)


def reduce_dataflow(oracle: _Oracle, entry: str) -> None:
    """The entry function's dead assignments and copies (``a = b``), then chunks of its returned
    tuple each with the assignments that leaves dead, then an input returned
    in place of what is left (fuzz.reduce.dataflow):
    an operator chain goes in a few checks where statement deletion would
    need one per statement. Each candidate is checked; a taken one restarts
    the tuple's chunks from the new best."""
    oracle.current = "source/dataflow"
    for rewrite in (lambda s: dataflow.without_dead_assignments(s, entry), dataflow.without_copies):
        try:
            candidate = rewrite(oracle.best)
        except (SyntaxError, ValueError, RecursionError):  # an AST the rewrite cannot handle: no candidate
            candidate = None
        if candidate is not None:
            oracle(candidate)
    while True:
        source = oracle.best
        for candidate in dataflow.return_tuple_candidates(source, entry):
            pruned = dataflow.without_dead_assignments(candidate, entry)
            if (pruned is not None and oracle(pruned)) or oracle(candidate):
                if oracle.best != source:
                    break
        else:
            break
    try:
        returned = list(dataflow.returned_input_candidates(oracle.best, entry))
    except (SyntaxError, ValueError, RecursionError):
        returned = []
    for candidate in returned:  # the first that holds: the computation behind the returned value goes
        if size(candidate) < size(oracle.best) and oracle(candidate):
            break


def reduce_bypass(oracle: _Oracle, entry: str, jobs: int) -> None:
    """Delta debugging over the entry function's operator calls: chunks of its
    assignments ``y = op(x, ...)`` are bypassed (``y = x``, then copies and
    dead assignments go: fuzz.reduce.dataflow.bypassed), halves first, down to
    single calls; the candidates of one chunk size are checked together and
    the first that holds, in order, is taken, and the chunks restart from the
    new best. Statement deletion cannot shorten a chain whose every result is
    read; a bypass keeps it a valid program, and the oracle rejects one that
    changes a shape eager needs or loses the bug."""
    oracle.current = "source/bypass"
    while True:
        source = oracle.best
        n = dataflow.bypass_sites(source, entry)
        progressed = False
        chunk = max(1, n // 2)
        while n and chunk >= 1 and not progressed:
            candidates = []
            for start in range(0, n, chunk):
                try:
                    text = dataflow.bypassed(source, set(range(start, min(n, start + chunk))), entry)
                except (SyntaxError, ValueError, RecursionError):  # an AST the rewrite cannot handle
                    text = None
                if text is not None and size(text) < size(source):
                    candidates.append(text)
            step = oracle.batch(jobs)
            for k in range(0, len(candidates), step):
                if any(oracle.many(candidates[k:k + step])) and oracle.best != source:
                    progressed = True
                    break
            chunk //= 2
        if not progressed:
            return
