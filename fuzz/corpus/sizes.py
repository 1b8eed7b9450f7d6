"""How small the corpus cases are: each case's program lines, and each group's
median and cases over its limit (``tcfuzz corpus-status --sizes``).

A case's program lines are the lines of code (neither blank nor comment-only)
of its program, fuzz.corpus.render.program_body: ``f``, ``inputs``, their
helpers and imports, and anything else at module level (a docstring, a known
bug's ``EXPECT`` table: a case says what it is in ``#`` comments), without
the PEP 723 table and the runner's settings and ``__main__`` block. It is
the measure the minimiser reduces (``code_lines``) and issue 32 of tcfuzz's
tracker set its targets in: for a case an engineer reads before fixing it,
bug cases (divergence, compile-error, crash, timeout) a median of at most 8
lines and none over 15; graph-break cases (graph-break regressions included)
a median of at most 10 and none over 25.
"""

from __future__ import annotations

import dataclasses
import enum
import statistics
from collections.abc import Iterable
from pathlib import Path

from fuzz.corpus.render import code_lines, program_body
from fuzz.corpus.store import list_cases


class SizeGroup(enum.Enum):
    """The groups a size target is set for."""

    BUG = "bug"
    GRAPH_BREAK = "graph-break"

    @classmethod
    def of(cls, kind: str) -> SizeGroup:
        return cls.GRAPH_BREAK if kind.startswith("graph-break") else cls.BUG


# (median at most, none over) program lines per group
SIZE_TARGETS = {SizeGroup.BUG: (8, 15), SizeGroup.GRAPH_BREAK: (10, 25)}


def program_lines(source: str) -> int:
    """Lines of code of a case's program (see the module docstring)."""
    return code_lines(program_body(source))


@dataclasses.dataclass(frozen=True)
class CaseSize:
    """One case: its id, kind and program lines."""

    case_id: str
    kind: str
    lines: int


@dataclasses.dataclass(frozen=True)
class GroupSize:
    """One group's cases, median program lines, and the cases over its limit
    (largest first), against SIZE_TARGETS."""

    group: SizeGroup
    cases: int
    median: float
    over: tuple[CaseSize, ...]

    @property
    def met(self) -> bool:
        most_median, limit = SIZE_TARGETS[self.group]
        return self.median <= most_median and not self.over


def case_sizes(root: Path) -> list[CaseSize]:
    """Every case of the corpus folder ``root``, largest first. Raises
    OSError if a case cannot be read."""
    sizes = [CaseSize(path.stem, path.parent.name, program_lines(path.read_text()))
             for path in list_cases(root)]
    return sorted(sizes, key=lambda c: (-c.lines, c.kind, c.case_id))


def group_sizes(sizes: Iterable[CaseSize]) -> list[GroupSize]:
    """Each group's median and cases over its limit (a group without cases is left out)."""
    sizes = list(sizes)
    groups = []
    for group, (_, limit) in SIZE_TARGETS.items():
        members = [c for c in sizes if SizeGroup.of(c.kind) is group]
        if members:
            groups.append(GroupSize(group, len(members), statistics.median(c.lines for c in members),
                                    tuple(c for c in members if c.lines > limit)))
    return groups


def render_sizes(sizes: list[CaseSize]) -> str:
    """A line per case (kind, id, program lines), then a line per group: its
    median and cases over the limit against the targets."""
    lines = [f"{c.kind:<24} {c.case_id}  {c.lines:>4}" for c in sizes]
    for g in group_sizes(sizes):
        most_median, limit = SIZE_TARGETS[g.group]
        over = ", ".join(f"{c.case_id} ({c.lines})" for c in g.over) or "none"
        lines.append(f"{g.group.value} cases: {g.cases}, median {g.median:g} lines (target <= {most_median}), "
                     f"over {limit}: {over} -> {'met' if g.met else 'not met'}")
    return "\n".join(lines)
