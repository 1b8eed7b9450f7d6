"""``source/lines``: statement deletion by lines, for a program the host cannot parse.

A program gated to the newest grammar (3.14 t-strings, PEP 758's unbracketed
``except A, B:``, 3.15's PEP 798 ``[*x for x in xs]``) does not parse on an
older host's Python, so the minimiser's syntax-tree passes
(fuzz.reduce.pipeline, fuzz.reduce.flow_passes) cannot touch it; before this
pass only the generator stage reduced such a program (the fresh-clone
campaign filed graph-break c07bc0d0ca6a, 3.15 grammar, at 24 lines).

This pass needs no parser: a statement is a line, together with the lines
indented under it when it ends with ``:`` and its clauses (the generator
writes one statement per line). It deletes one statement at a time, the
last first (later statements read earlier ones, so deleting from the end
keeps the candidates valid more often), putting ``pass`` where a block would
be left empty, replaces a block statement by its body, dedented, or the
entry's returned value by one of its parameters (as the syntax-tree pass
``source/dataflow`` does); and
keeps a change where the check (run on the workers' interpreters, which can
parse the program) still holds. Once the line that
needed the newer grammar is gone the program may parse on the host again,
and the pipeline goes on with its syntax-tree passes.

The interface is the pipeline's oracle (``best``, ``many``, ``batch``,
``current``); the rule is ours, in the spirit of the line-level passes of
shrinkray and C-Reduce.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from fuzz.reduce.flow_passes import size

log = logging.getLogger(__name__)

# Top-level lines never deleted: ``import torch`` and the headers of the
# entry and inputs functions (without them no check can hold).
PROTECTED_PREFIXES = ("import torch\n", "import torch ")
# The clauses that continue a compound statement at its indentation.
CLAUSES = ("elif ", "elif(", "else:", "except", "finally:")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _is_code(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _block_end(lines: list[str], i: int) -> int:
    end = i + 1
    if lines[i].rstrip().endswith(":"):
        while end < len(lines) and (not _is_code(lines[end]) or _indent(lines[end]) > _indent(lines[i])):
            end += 1
    return end


def statements(lines: list[str]) -> list[tuple[int, int]]:
    """The statements of ``lines`` as half-open line ranges [start, end): a
    code line, with the lines indented under it when it opens a block, and a
    compound statement with its clauses (``elif``, ``else``, ``except``,
    ``finally`` at its indentation). A clause is a statement of its own too
    (deleting an ``else`` is valid; the check rejects what is not)."""
    spans = []
    for i, line in enumerate(lines):
        if not _is_code(line):
            continue
        end = _block_end(lines, i)
        if not line.lstrip().startswith(CLAUSES):
            while end < len(lines) and _is_code(lines[end]) and _indent(lines[end]) == _indent(line) \
                    and lines[end].lstrip().startswith(CLAUSES):
                end = _block_end(lines, end)
        spans.append((i, end))
    return spans


def without(lines: list[str], start: int, end: int) -> list[str] | None:
    """``lines`` less [start, end), with ``pass`` where that empties a block;
    None for a deletion that leaves nothing to check."""
    rest = lines[:start] + lines[end:]
    before = next((lines[k] for k in range(start - 1, -1, -1) if _is_code(lines[k])), None)
    after = next((lines[k] for k in range(end, len(lines)) if _is_code(lines[k])), None)
    indent = _indent(lines[start])
    opens_block = before is not None and before.rstrip().endswith(":") and _indent(before) < indent
    if opens_block and (after is None or _indent(after) < indent):
        rest = lines[:start] + [" " * indent + "pass"] + lines[end:]
        if [line.strip() for line in lines[start:end]] == ["pass"]:
            return None
    return rest if any(_is_code(line) for line in rest) else None


def hoisted(lines: list[str], start: int, end: int) -> list[str] | None:
    """``lines`` with the block statement at [start, end) replaced by the
    body of its first clause, dedented to the statement's indentation
    (``if c:`` / ``for x in xs:`` / ``with m:`` / ``try:`` gives way to what
    it runs, its other clauses dropped); None for a line that opens no block."""
    if not lines[start].rstrip().endswith(":") or lines[start].lstrip().startswith(("def ", "async def ", "class ")):
        return None
    body_end = _block_end(lines, start)
    body = [line for line in lines[start + 1:body_end] if _is_code(line)]
    if not body:
        return None
    shift = _indent(body[0]) - _indent(lines[start])
    if shift <= 0 or any(_indent(line) < _indent(body[0]) for line in body):
        return None
    return lines[:start] + [line[shift:] for line in body] + lines[end:]


def returned_inputs(lines: list[str], start: int, end: int, entry: str) -> list[list[str]]:
    """For a ``return <value>`` line of the entry function (one
    indentation level in): ``lines`` with each of the entry's parameters
    returned instead, so the computation behind the value can go."""
    line = lines[start]
    header = next((lines[k] for k in range(start - 1, -1, -1)
                   if _indent(lines[k]) == 0 and _is_code(lines[k])), "")
    match = re.match(rf"(?:async )?def {re.escape(entry)}\((.*)\)\s*(?:->.*)?:\s*$", header)
    if end != start + 1 or not match or not line.lstrip().startswith("return ") or _indent(line) == 0:
        return []
    params = [re.split(r"[:=]", p, maxsplit=1)[0].strip().lstrip("*") for p in match.group(1).split(",")]
    return [lines[:start] + [" " * _indent(line) + f"return {p}"] + lines[end:]
            for p in params if p.isidentifier() and line.strip() != f"return {p}"]


def _protected(line: str, entry: str, inputs: str) -> bool:
    return _indent(line) == 0 and ((line + "\n").startswith(PROTECTED_PREFIXES) or line.startswith(
        (f"def {entry}(", f"def {inputs}(", f"async def {entry}(")))


def reduce_lines(oracle: Any, entry: str = "f", inputs: str = "inputs", jobs: int = 1) -> None:
    """Delete statements by lines while the check holds (module docstring):
    one sweep from the last statement to the first, the candidates checked
    ``oracle.batch(jobs)`` at a time and the first that holds taken, then on
    from where it was; sweeps until one deletes nothing."""
    oracle.current = "source/lines"
    changed = True
    while changed:
        changed = False
        position = None  # deletions go from the end towards the start
        while True:
            lines = oracle.best.splitlines()
            spans = [s for s in statements(lines) if not _protected(lines[s[0]], entry, inputs)]
            spans = [s for s in reversed(spans) if position is None or s[0] < position]
            candidates: list[tuple[int, str]] = []
            for start, end in spans:
                for rest in (without(lines, start, end), hoisted(lines, start, end),
                             *returned_inputs(lines, start, end, entry)):
                    text = "\n".join(rest) + "\n" if rest is not None else ""
                    if rest is not None and size(text) < size(oracle.best):  # smaller, so every step progresses
                        candidates.append((start, text))
            if not candidates:
                break
            step = oracle.batch(jobs)
            taken = None
            for k in range(0, len(candidates), step):
                batch = candidates[k:k + step]
                results = oracle.many([text for _, text in batch])
                taken = next((start for (start, _), ok in zip(batch, results) if ok), None)
                if taken is not None:
                    break
            if taken is None:
                break
            changed = True
            position = taken + 1  # the statement now at ``taken`` comes after the deleted one: try it again
