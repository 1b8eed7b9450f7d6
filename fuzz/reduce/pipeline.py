"""Minimisation: reduce a program while it keeps its exact signature.

The interestingness test is the full signature (kind, stage, detail and the
set of interpreters), evaluated on the persistent workers, never "eager !=
compiled": a reducer whose check drifts produces confident nonsense. A
candidate is first tried on one interpreter of the signature and only then on
the others, so most rejections cost one run. The campaign's check is
two-phase (``SignatureCheck(fast=True)``): candidates run on that first
interpreter alone (same cause, same root-cause key there), and the best source
of every stage is confirmed on all interpreters, both ways; a confirmation that
fails puts the reduction back to the last confirmed source, with full checks
from then on, so a case cannot end on another signature. A fast check also
stops the call plan after the call where the input showed a divergence or
compile error (the later calls recompile: for a compile error each one runs
the failing compile again), which the confirmation runs in full.

First the compile settings (``settings/drop``, fuzz.reduce.settings_passes):
each setting, marked dim, config key and nested option entry the signature
holds without goes, so every later check compiles with fewer of them and the
case is filed with what ``MinimizeResult.settings`` kept. Then three stages,
each keeping only candidates that pass the check:
  generator  a program that tcfuzz's generator wrote from a seed is shrunk by
             Hypothesis' own shrinker over its choice sequence (fuzz.reduce.shrink):
             every candidate is a valid program by construction;
  source     what the generator cannot reach, and programs from elsewhere (a
             user's repro, a hypothesmith program): first ``source/statements``,
             our own delta debugging over whole statements, block by block,
             whose candidates of one round are checked in parallel on the
             workers; then ``source/bypass``, the same over operator calls
             (``y = op(x)`` becomes ``y = x`` and the copy goes, so a chain
             whose every result is read still shrinks); then pysource-minimize (AST-level, every candidate
             compiles). pysource-minimize is the default second stage over
             shrinkray: under the same check and a 60 s budget it ended
             smaller (median 28 lines / 249 tokens against shrinkray's 63 / 574
             over 14 cases, benchmarks/minimize.py; shrinkray reached a median
             22 oracle calls in that time, pysource-minimize 85); and it
             installs in the host venv (shrinkray needs Python >= 3.12).
             A program the host cannot parse (newer grammar) gets
             ``source/lines`` instead (fuzz.reduce.line_passes), and the
             syntax-tree passes once it parses;
  tidy       names (pysource-minimize's ``unique_name_N``), bare constants,
             unused imports, readable names for numbered ones (``t2`` ->
             ``x``, ``it6`` -> ``it``: fuzz.reduce.names), unused arguments of
             ``f`` and the matching inputs, and input shapes shrunk towards 1.
The check (SignatureCheck) is the case's root cause, not only its coarse
signature: a divergence keeps its exception fingerprint (types and message,
fuzz.triage.rootcause), and eager keeps its kind of behaviour per call (it
returned and keeps returning the same kind of value, or keeps raising the
same type), so a candidate can neither drift to another bug that shares the
coarse signature nor become a program that eager itself rejects.
Every pass is named ``stage/pass`` and counts its checks and successes
(``MinimizeResult.passes``). The result is never larger than the input.
"""

from __future__ import annotations

import ast
import dataclasses
import logging
import sys
import time
from collections.abc import Callable, Iterator, Sequence

from harness.program import Program
from harness.settings import CompileSettings
from fuzz.corpus.render import code_lines, program_body
from fuzz.errors import CouldNotMinimize
from fuzz.reduce import names
from fuzz.reduce.flow_passes import reduce_bypass, reduce_dataflow, size
from fuzz.reduce.graph_passes import GraphPhase, reduce_graph
from fuzz.reduce import block_passes  # noqa: F401 - registers the block passes with graph_passes
from fuzz.reduce.line_passes import reduce_lines
from fuzz.reduce.lookahead import Lookahead
from fuzz.reduce.settings_passes import reduce_settings
from fuzz.reduce.tidy import drop_unused_arguments, rename_placeholders, smaller_shapes, tidy
from fuzz.reduce.check import SignatureCheck  # noqa: F401 - where tcfuzz's callers have always found it

log = logging.getLogger(__name__)

# Default time budget per case, in seconds (CPU backends).
DEFAULT_BUDGET_S = 300.0
# Share of the budget the generator stage may use; the source and tidy stages
# get the rest (and whatever the generator stage left).
GENERATOR_SHARE = 0.5
# Seconds kept back for the tidy stage out of the budget.
TIDY_RESERVE_S = 15.0


class _OutOfTime(Exception):
    pass


@dataclasses.dataclass
class MinimizeResult:
    """The smallest accepted source and the reducer's statistics (times in
    seconds; ``passes``: pass name -> [checks, successes], the full checks of
    a fast SignatureCheck under ``confirm/full-signature``; ``fallbacks``:
    confirmations that failed, each a return to the last confirmed source;
    ``lines_after``: ``source``'s lines as a case files it, with the
    ``import torch`` that fuzz.corpus.render puts back where the reducer
    dropped it;
    ``settings``: the compile settings ``source`` shows the signature with,
    those of the input less what ``settings/drop`` removed, which the filed
    case records; None when the check carries no settings)."""

    source: str
    lines_before: int
    lines_after: int
    checks: int = 0
    accepted: int = 0
    elapsed_s: float = 0.0
    complete: bool = True
    passes: dict[str, list[int]] = dataclasses.field(default_factory=dict)
    fallbacks: int = 0
    settings: CompileSettings | None = None  # the compile settings kept (settings/drop); None: the check has none


class _Oracle:
    """The check as the passes see it: cached by source, bounded by a deadline
    (raises _OutOfTime once past it), keeping the smallest accepted source and
    per-pass counters. ``many`` checks a batch (in parallel where the check
    has ``check_many``).

    A check with ``confirm`` and ``fast`` set (SignatureCheck) accepts
    candidates provisionally; ``confirm_best`` runs the full check on the best
    source and, when it fails, falls back to the last confirmed source, forgets
    the provisional acceptances and turns ``fast`` off."""

    def __init__(self, check: Callable[[str], bool], best: str, deadline: float,
                 progress: Callable[[str], None] | None, clock: Callable[[], float] = time.monotonic):
        self.check, self.best, self.deadline, self.progress = check, best, deadline, progress
        self.clock = clock
        self.cache: dict[str, bool] = {best: True}
        self.checks, self.accepted = 0, 0
        self.passes: dict[str, list[int]] = {}
        self.current = "input"
        self.confirmed = best  # the best source that passed a full check
        self.provisional: set[str] = set()  # accepted by fast checks only
        self.chain: list[str] = []  # the bests since the last confirmation, in order (each smaller)
        self.fallbacks = 0
        self.submodules = _submodule_imports(best)
        self.settings_cache: dict[str, bool] = {}  # settings/drop's checks of the best source, by settings

    def _fast(self) -> bool:
        return bool(getattr(self.check, "fast", False)) and hasattr(self.check, "confirm")

    def batch(self, jobs: int) -> int:
        """Candidates worth checking at once: ``jobs`` per interpreter that the
        check spreads its fast checks over (SignatureCheck.spread)."""
        return max(1, jobs) * (max(1, int(getattr(self.check, "spread", 1))) if self._fast() else 1)

    def confirm_best(self) -> bool:
        """Run the full check on the best source if only fast checks accepted
        it (past the deadline too: one check); on failure bisect the chain of
        bests since the last confirmation for the last one the full check
        accepts (while time is left) and fall back to it, else to the last
        confirmed source. True when the best source is confirmed."""
        if self.best == self.confirmed or not hasattr(self.check, "confirm"):
            return True
        fast_name, self.current = self.current, "confirm/full-signature"
        ok = bool(self.check.confirm(self.best))
        self.checks += 1
        counter = self.passes.setdefault(self.current, [0, 0])
        counter[0] += 1
        counter[1] += int(ok)
        self.current = fast_name
        if ok:
            self.confirmed = self.best
            self.provisional.clear()
            self.chain.clear()
            return True
        # bisect the chain of bests for the last one the full check accepts (while time is left)
        rejected = self.best
        if not self.chain or self.chain[-1] != rejected:
            self.chain.append(rejected)
        lo, hi = -1, len(self.chain) - 1  # chain[hi] (the best) failed; -1 stands for ``confirmed``
        while hi - lo > 1 and self.left_s() > 0:
            mid = (lo + hi) // 2
            self.current = "confirm/full-signature"
            good = bool(self.check.confirm(self.chain[mid]))
            self.checks += 1
            counter[0] += 1
            counter[1] += int(good)
            lo, hi = (mid, hi) if good else (lo, mid)
        self.current = fast_name
        if lo >= 0:
            self.confirmed = self.chain[lo]
        log.warning("the full check rejected the fast checks' best (%d lines): back to the last confirmed "
                    "(%d lines), full checks from now on", code_lines(rejected), code_lines(self.confirmed))
        self.fallbacks += 1
        self.best = self.confirmed
        self.chain.clear()
        for source in self.provisional:
            self.cache.pop(source, None)
        self.provisional.clear()
        self.check.fast = False
        return False

    def left_s(self) -> float:
        return self.deadline - self.clock()

    def _count(self, ok: bool) -> None:
        self.checks += 1
        counter = self.passes.setdefault(self.current, [0, 0])
        counter[0] += 1
        counter[1] += int(ok)

    def check_settings(self, settings: CompileSettings) -> bool:
        """Does the best source hold when the check compiles with
        ``settings`` (the check's ``settings`` attribute, put back after)?
        Cached by settings; raises _OutOfTime past the deadline. For
        fuzz.reduce.settings_passes."""
        key = repr(settings.to_json())
        if key in self.settings_cache:
            return self.settings_cache[key]
        if self.left_s() <= 0:
            raise _OutOfTime
        saved = self.check.settings
        self.check.settings = settings
        try:
            ok = bool(self.check(self.best))
        finally:
            self.check.settings = saved
        self.settings_cache[key] = ok
        self._count(ok)
        return ok

    def confirm_settings(self) -> bool:
        """The full check of the best source under the check's current
        settings where the check is fast (past the deadline too: one check);
        True without a check otherwise (its checks were full)."""
        if not self._fast():
            return True
        fast_name, self.current = self.current, "confirm/full-signature"
        try:
            ok = bool(self.check.confirm(self.best))
        finally:
            self.current = fast_name
        self.passes.setdefault("confirm/full-signature", [0, 0])
        self.checks += 1
        self.passes["confirm/full-signature"][0] += 1
        self.passes["confirm/full-signature"][1] += int(ok)
        return ok

    def take(self, candidate: str) -> None:
        """Make ``candidate`` (accepted by the check, not larger) the best
        source: confirmed if a full check accepted it, else provisional."""
        if candidate == self.best:
            return
        self.best = candidate
        if not self._fast():
            self.confirmed = candidate
        else:
            self.chain.append(candidate)

    def _record(self, source: str, ok: bool) -> None:
        self.cache[source] = ok
        fast = self._fast()
        if ok and fast:
            self.provisional.add(source)
        counter = self.passes.setdefault(self.current, [0, 0])
        counter[0] += 1
        if ok:
            counter[1] += 1
            if size(source) < size(self.best):
                self.best = source
                if not fast:  # a full check accepted it
                    self.confirmed = source
                else:
                    self.chain.append(source)
                self.accepted += 1
                log.info("%s: %d lines after %d checks", self.current, code_lines(source), self.checks)
                if self.progress:
                    self.progress(f"{self.current}: {code_lines(source)} lines after {self.checks} checks")

    def known(self, source: str) -> bool | None:
        """The answer for ``source`` without a check: the cached one, or False
        for a candidate that lost an import the case needs; None when only a
        check can tell."""
        if source in self.cache:
            return self.cache[source]
        if self.submodules and any(path in source and path not in _submodule_imports(source)
                                   for path in self.submodules):
            # the harness's worker has imported the submodule already; the case
            # standing alone has not (AttributeError on torch.nn.attention.flex_attention)
            self.cache[source] = False
            return False
        return None

    def __call__(self, source: str) -> bool:
        known = self.known(source)
        if known is not None:
            return known
        if self.left_s() <= 0:
            raise _OutOfTime
        self.checks += 1
        ok = bool(self.check(source))
        self._record(source, ok)
        return ok

    def many(self, sources: Sequence[str]) -> list[bool]:
        todo = list(dict.fromkeys(s for s in sources if self.known(s) is None))
        if todo:
            if self.left_s() <= 0:
                raise _OutOfTime
            check_many = getattr(self.check, "check_many", None)
            results = check_many(todo) if check_many and len(todo) > 1 else [bool(self.check(s)) for s in todo]
            self.checks += len(todo)
            for s, ok in zip(todo, results):
                self._record(s, ok)
        return [self.cache[s] for s in sources]


# ---------------------------------------------------------------- source/statements

def _blocks(tree: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """Every statement list in ``tree``, outermost first: (node, field)."""
    queue: list[ast.AST] = [tree]
    while queue:
        node = queue.pop(0)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], (ast.stmt, ast.excepthandler, ast.match_case)):
                if field in ("body", "orelse", "finalbody"):
                    yield node, field
                queue.extend(block)


def _without(source: str, path: int, removed: set[int], keep: frozenset[str]) -> str | None:
    """``source`` with the statements at indices ``removed`` of its ``path``-th
    block gone (an emptied block gets ``pass``), or None when that would drop
    something in ``keep`` (the entry, inputs, imports at module level)."""
    tree = ast.parse(source)
    node, field = list(_blocks(tree))[path]
    block = getattr(node, field)
    if isinstance(node, ast.Module) and any(_defines(block[i]) & keep for i in removed):
        return None
    kept = [s for i, s in enumerate(block) if i not in removed]
    if not kept and field == "orelse":
        setattr(node, field, [])
    else:
        setattr(node, field, kept or [ast.Pass()])
    try:
        return ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    except Exception:  # noqa: BLE001 - an AST that cannot be written back is no candidate
        return None


def _submodule_imports(source: str) -> frozenset[str]:
    """The dotted modules ``source`` imports at module level (``import
    torch.nn.attention.flex_attention``): a candidate that still reads one
    must keep its import (the minimiser's check runs in a worker that has
    imported it anyway). Empty for a source that does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()
    return frozenset(alias.name for node in tree.body if isinstance(node, ast.Import)
                     for alias in node.names if "." in alias.name and alias.asname is None)


def _defines(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {"import"}
    return set()


def reduce_statements(oracle: _Oracle, keep: frozenset[str], jobs: int) -> None:
    """Delta debugging over whole statements, one block at a time, outermost
    first: remove chunks of n/2, n/4, ... 1 statements; the candidates of one
    chunk size are checked together (``jobs`` at a time per interpreter the
    check spreads over, ``_Oracle.batch``) and the first that holds, in order,
    is taken."""
    oracle.current = "source/statements"
    path = 0
    while True:
        source = oracle.best
        blocks = list(_blocks(ast.parse(source)))
        if path >= len(blocks):
            return
        node, field = blocks[path]
        n = len(getattr(node, field))
        chunk = max(1, n // 2) if n > 1 else 1
        progressed = False
        while chunk >= 1 and not progressed:
            starts = list(range(0, n, chunk))
            candidates = []
            for start in starts:
                text = _without(source, path, set(range(start, min(n, start + chunk))), keep)
                if text is not None and text != source and ast.dump(ast.parse(text)) != ast.dump(ast.parse(source)):
                    candidates.append(text)
            step = oracle.batch(jobs)
            for k in range(0, len(candidates), step):
                batch = candidates[k:k + step]
                if any(oracle.many(batch)) and oracle.best != source:
                    progressed = True
                    break
            chunk = chunk // 2 if chunk > 1 else 0
        if not progressed:
            path += 1  # this block is minimal; blocks are re-listed from the new best


def reduce_with_pysource_minimize(oracle: _Oracle, jobs: int = 1) -> None:
    """pysource-minimize (AST-level) over the best source so far, its checks
    ``oracle.batch(jobs)`` at a time: its search asks one candidate at a
    time, and a forked lookahead predicts the candidates it will ask next if
    this one fails (fuzz.reduce.lookahead), so that they are checked
    together; the result is the one of checking one at a time, and the
    checks of predicted candidates the search never asked are counted as
    ``source/pysource-minimize-ahead``. A candidate larger (lines, then
    characters) than the smallest source the search has accepted
    (pysource-minimize's rendering of the start, ``ast.unparse``, to begin
    with) is taken as failing without a check: it cannot become the result,
    and pysource-minimize's value strategy halves a float literal that the
    bug needs (0.5, 0.25, ... 1e-300) with every halving holding, 130 of
    26acb2151f73's 166 checks in a 90 s budget. Its own failures end this
    pass with the best source it reached (0.10.1 asserts "missing case
    <ast.MatchStar>" where a star pattern must stay)."""
    oracle.current = "source/pysource-minimize"
    try:
        import pysource_minimize  # the host has it; a worker env running fuzz.reduce.remote may not
    except ImportError:
        log.warning("pysource-minimize is not installed in %s: its pass is skipped (run scripts/provision.sh)",
                    sys.executable)
        return
    start = oracle.best
    bound = max(size(start), size(ast.unparse(ast.parse(start))))
    lookahead = Lookahead(oracle.known, oracle.many, oracle.batch(jobs))

    def check(source: str) -> bool:
        nonlocal bound
        if size(source) > bound:
            return False
        ok = lookahead(source)
        if ok:
            bound = min(bound, size(source))
        return ok

    try:
        reduced = lookahead.run(lambda: pysource_minimize.minimize(start, check, compilable=True))
    except _OutOfTime:
        raise
    except Exception as e:  # noqa: BLE001 - a third-party reducer's bug must not lose the case
        log.warning("pysource-minimize stopped with %s: %s; keeping the smallest source it reached",
                    type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        return
    finally:
        if lookahead.wasted:
            oracle.passes.setdefault("source/pysource-minimize-ahead", [0, 0])[0] += lookahead.wasted
    if oracle(reduced) and size(reduced) <= size(oracle.best):
        oracle.take(reduced)  # pysource-minimize's own result, not a smaller success of a batch's abandoned path


# ---------------------------------------------------------------- tidy

def tidy_passes(oracle: _Oracle, entry: str, inputs: str) -> None:
    """Each tidy pass proposes candidates from the best source; the first that
    holds (in order) is taken, and the pass is repeated until none does."""
    passes: list[tuple[str, Callable[[str], list[str]]]] = [
        ("tidy/constants", lambda s: [tidy(s)]),
        ("tidy/names", lambda s: [rename_placeholders(s)]),
        ("tidy/imports", lambda s: [names.drop_unused_imports(s)]),
        ("tidy/readable-names", lambda s: [names.readable_names(s, entry, inputs)]),
        ("tidy/unused-inputs", lambda s: drop_unused_arguments(s, entry, inputs)),
        ("tidy/shapes", lambda s: smaller_shapes(s, inputs)),
    ]
    for name, propose in passes:
        oracle.current = name
        while True:
            source = oracle.best
            try:
                # a readable name may be longer: that pass may not add lines, the others may not grow
                def fits(c: str, before: str = source, lines_only: bool = name == "tidy/readable-names") -> bool:
                    return code_lines(c) <= code_lines(before) if lines_only else size(c) <= size(before)

                candidates = [c for c in propose(source) if c != source and fits(c)]
            except (SyntaxError, ValueError):
                break
            taken = False
            for ok, candidate in zip(oracle.many(candidates), candidates):
                if ok and fits(candidate):
                    oracle.take(candidate)  # as small or smaller, and tidier
                    taken = True
                    break
            if not taken or name in ("tidy/constants", "tidy/names", "tidy/imports", "tidy/readable-names"):
                break


# ---------------------------------------------------------------- the pipeline

def _parser_for(check: Callable[[str], bool]) -> tuple[str, dict[str, str]] | None:
    """(python, environment) of the worker env of the newest interpreter the
    check's signature shows on (it ran the program, so it parses it), from
    the check's pool (a SignatureCheck); None for a check without them."""
    from fuzz.generate.versions import version_of

    pool, signature = getattr(check, "pool", None), getattr(check, "signature", None)
    interpreters = getattr(pool, "interpreters", None)
    if not isinstance(interpreters, dict) or signature is None:
        return None
    shown = [interpreters[n] for n in signature.interpreters if n in interpreters]
    if not shown:
        return None
    newest = max(shown, key=lambda i: (version_of(i.name) or (0, 0), not i.free_threaded))
    return str(newest.python), newest.environ()


def parses_here(source: str) -> bool:
    """Whether the host's Python can parse ``source`` (programs of 3.14/3.15
    grammar cannot be parsed on an older host)."""
    try:
        ast.parse(source)
    except SyntaxError:
        return False
    return True


def minimize_source(source: str, check: Callable[[str], bool], *, budget_s: float = DEFAULT_BUDGET_S,
                    progress: Callable[..., None] | None = None, program: Program | None = None,
                    jobs: int = 1, stages: Sequence[str] = ("settings", "generator", "source", "graph", "tidy"),
                    clock: Callable[[], float] = time.monotonic) -> MinimizeResult:
    """Reduce ``source`` (the program body) while ``check`` holds.

    ``check(source) -> bool`` is the interestingness test (a SignatureCheck in
    tcfuzz; its ``check_many`` is used for parallel rounds where it has one;
    where it has ``settings``, the compile settings are reduced first and
    the result's ``settings`` are those kept). ``stages``: which of
    "settings", "generator", "source", "graph" (fuzz.reduce.graph_passes)
    and "tidy" run.
    ``program``: the Program ``source`` came from; when the generator wrote it
    (fuzz.reduce.shrink.replayable) the generator stage runs after the settings. ``jobs``:
    candidates checked at once in parallel rounds (workers per interpreter).
    ``progress(message)`` is called on every improvement. Raises
    CouldNotMinimize if ``check`` does not hold on the input. Stops after
    ``budget_s`` seconds with the smallest source accepted so far; the result
    is never larger than the input. ``clock() -> seconds`` is the time the
    budget is measured in (``time.monotonic``; tests pass a fake one).
    """
    started = clock()
    body = program_body(source)
    deadline = started + budget_s
    say = (lambda message: progress(message)) if progress else None
    oracle = _Oracle(check, body, deadline, say, clock)
    oracle.cache.clear()
    oracle.current = "input"
    if not oracle(body):
        raise CouldNotMinimize("the case does not show its signature before minimisation; nothing to minimise")
    entry = program.entry if program else "f"
    inputs = program.inputs if program else "inputs"
    keep = frozenset({entry, inputs, "import"})
    complete = True

    def stage(name: str, run: Callable[[], None], stop_at: float) -> None:
        nonlocal complete
        if name not in stages:
            return
        saved = oracle.deadline
        oracle.deadline = min(saved, stop_at)
        try:
            run()
        except _OutOfTime:
            complete = False
            log.info("stage %s stopped at its time limit", name)
        finally:
            oracle.deadline = saved
        oracle.confirm_best()  # a stage's result holds on every interpreter before the next builds on it

    # the compile settings first: each one dropped makes every later check cheaper
    stage("settings", lambda: reduce_settings(oracle), deadline)
    if program is not None and "generator" in stages:
        from fuzz.reduce import shrink

        if shrink.replayable(program.with_source(body)) or shrink.replayable(program):
            def generator_stage() -> None:
                oracle.current = "generator/shrink"
                limit_s = max(0.0, min(budget_s * GENERATOR_SHARE, oracle.left_s()))
                result = shrink.shrink_program(program, oracle, budget_s=limit_s)
                oracle(result.program.source)
                if not result.complete:
                    raise _OutOfTime

            stage("generator", generator_stage, deadline)
    tidy_at = deadline - min(TIDY_RESERVE_S, budget_s * 0.1)
    elsewhere = _parser_for(check) if not parses_here(oracle.best) and oracle.left_s() > 0 else None
    if elsewhere is not None:
        # grammar newer than the host's Python: the parsing stages run in the
        # worker env of an interpreter the program ran on (fuzz.reduce.remote),
        # their checks answered here
        from fuzz.reduce import remote

        parsing = [s for s in stages if s in remote.PARSING_STAGES]
        log.info("the program does not parse on the host's Python %d.%d: stages %s run on %s",
                 *sys.version_info[:2], ", ".join(parsing), elsewhere[0])
        done = remote.minimize_elsewhere(oracle.best, check, elsewhere[0], elsewhere[1], budget_s=oracle.left_s(),
                                         jobs=jobs, stages=parsing, entry=entry, inputs=inputs, progress=say)
        if done is not None:
            if size(done["source"]) < size(oracle.best):
                oracle.best = oracle.confirmed = done["source"]  # the remote's last step confirmed it (confirm_best)
                oracle.chain.clear()
                oracle.provisional.clear()
            oracle.checks += done["checks"]
            oracle.accepted += done["accepted"]
            oracle.fallbacks += done["fallbacks"]
            for name, (checks, successes) in done["passes"].items():
                counter = oracle.passes.setdefault(name, [0, 0])
                counter[0] += checks
                counter[1] += successes
            complete = complete and done["complete"]
            stages = [s for s in stages if s not in remote.PARSING_STAGES]
    if not parses_here(oracle.best) and any(s in stages for s in ("source", "graph", "tidy")):
        # grammar newer than the host's Python (a 3.14/3.15-gated program on a
        # 3.11 host): the source and tidy passes work on syntax trees, so
        # statements are deleted by lines (fuzz.reduce.line_passes) until the
        # program parses here, if it comes to that
        log.info("the program does not parse on the host's Python %d.%d: statements deleted by lines",
                 *sys.version_info[:2])
        stage("source", lambda: reduce_lines(oracle, entry, inputs, jobs), tidy_at)
        if not parses_here(oracle.best):
            stages = [s for s in stages if s not in ("source", "graph", "tidy")]
    stage("source", lambda: reduce_dataflow(oracle, entry), tidy_at)
    stage("graph", lambda: reduce_graph(oracle, entry, inputs, GraphPhase.STRUCTURE, jobs), tidy_at)
    stage("source", lambda: reduce_statements(oracle, keep, jobs), tidy_at)
    stage("source", lambda: reduce_bypass(oracle, entry, jobs), tidy_at)
    stage("graph", lambda: reduce_graph(oracle, entry, inputs, GraphPhase.VALUES, jobs), tidy_at)
    stage("source", lambda: reduce_with_pysource_minimize(oracle, jobs), tidy_at)
    stage("tidy", lambda: tidy_passes(oracle, entry, inputs), deadline)
    oracle.confirm_best()
    result = oracle.best if code_lines(oracle.best) <= code_lines(body) else body  # readable names may add characters
    filed = result if "import torch" in result or "import torch" not in body else "import torch\n" + result
    return MinimizeResult(source=result, lines_before=code_lines(body), lines_after=code_lines(filed),  # as rendered
                          checks=oracle.checks, accepted=oracle.accepted, elapsed_s=clock() - started,
                          complete=complete, passes=oracle.passes,
                          fallbacks=oracle.fallbacks, settings=_settings_of(check))


def _settings_of(check: Callable[[str], bool]) -> CompileSettings | None:
    settings = getattr(check, "settings", None)
    return settings if isinstance(settings, CompileSettings) else None
