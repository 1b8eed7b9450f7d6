"""The campaign's coverage map: the compiler lines its programs reached.

Workers asked for it (``Task.reach``) report with each outcome the lines of
``torch/_dynamo``, ``torch/_functorch``, ``torch/_inductor`` and ``torch/fx``
that were new for that worker (``Outcome.reach``, harness.reach).
``CoverageMap`` unions them per cell, (interpreter, backend): bytecode and
torch differ per interpreter, and each backend runs its own part of the
compiler. ``record(outcome)`` says how many lines were new for the
campaign's map of its cell: a program's coverage novelty.

A worker serves every backend of its interpreter and reports a line once,
so a line that two backends run is credited to the backend of the first run
in each worker that reached it; the union over an interpreter's backends
(and ``statements``, over every cell) is exact.

``ReachCurve`` keeps (programs, cpu_s, statements, statements per
interpreter) as the campaign goes,
thinned to at most ``MAX_CURVE_POINTS`` points. Both serialise to JSON for
the campaign database's meta (``--resume``), and ``CoverageMap.merge``
unions shards' maps (``tcfuzz merge``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from harness.outcome import Outcome

__all__ = ["MAX_CURVE_POINTS", "CoverageMap", "CurvePoint", "ReachCurve", "cell_key", "decode_lines", "encode_lines"]

# Points a curve keeps: when full, every other point is dropped (the first
# and the last always kept), so a long campaign's curve stays a few KiB.
MAX_CURVE_POINTS = 400


def cell_key(interpreter: str, backend: str) -> str:
    """The map's key of a cell in JSON: "3.12/eager"."""
    return f"{interpreter}/{backend}"


class CoverageMap:
    """Compiler lines reached, per cell and in all (see the module docstring)."""

    def __init__(self) -> None:
        # "3.12/eager" -> {"torch/_dynamo/guards.py": {line, ...}}
        self.cells: dict[str, dict[str, set[int]]] = {}
        # every cell together: {"torch/_dynamo/guards.py": {line, ...}}
        self.union: dict[str, set[int]] = {}
        self._statements = 0
        # each interpreter's backends together: "3.12" -> {path: {line, ...}}, and its count
        self.interpreters: dict[str, dict[str, set[int]]] = {}
        self._by_interpreter: dict[str, int] = {}

    def add(self, cell: str, reach: dict[str, Iterable[int]]) -> int:
        """Union ``reach`` ({short path: lines}) into ``cell``'s map; the number
        of lines that were not in it before."""
        return sum(self.add_by_file(cell, reach).values())

    def add_by_file(self, cell: str, reach: dict[str, Iterable[int]]) -> dict[str, int]:
        """``add``, giving the new lines' count per file (files with none left out)."""
        lines_of = self.cells.setdefault(cell, {})
        interpreter = cell.partition("/")[0]
        lines_of_interpreter = self.interpreters.setdefault(interpreter, {})
        new: dict[str, int] = {}
        for path, lines in reach.items():
            known = lines_of.setdefault(path, set())
            fresh = set(lines) - known
            if not fresh:
                continue
            known |= fresh
            new[path] = len(fresh)
            in_interpreter = lines_of_interpreter.setdefault(path, set())
            before = len(in_interpreter)
            in_interpreter |= fresh
            self._by_interpreter[interpreter] = self._by_interpreter.get(interpreter, 0) + len(in_interpreter) - before
            everywhere = self.union.setdefault(path, set())
            before = len(everywhere)
            everywhere |= fresh
            self._statements += len(everywhere) - before
        return new

    def record(self, outcome: Outcome) -> int:
        """Add an outcome's ``reach`` to the map of its (interpreter, backend);
        the lines new to that cell (0 for an outcome without reach)."""
        return sum(self.record_by_file(outcome).values())

    def record_by_file(self, outcome: Outcome) -> dict[str, int]:
        """``record``, giving the new lines' count per file."""
        reach = getattr(outcome, "reach", None)
        if not reach:
            return {}
        return self.add_by_file(cell_key(outcome.interpreter, outcome.backend), reach)

    @property
    def statements(self) -> int:
        """Distinct (file, line) pairs reached in any cell."""
        return self._statements

    def interpreter_statements(self) -> dict[str, int]:
        """Distinct (file, line) pairs reached per interpreter (its backends together)."""
        return dict(sorted(self._by_interpreter.items()))

    def lines_in(self, path: str) -> int:
        """Lines of ``path`` reached in any cell (the pool's density, fuzz.generate.pool)."""
        return len(self.union.get(path, ()))

    def cell_statements(self) -> dict[str, int]:
        """Lines reached per cell, by ``cell_key``."""
        return {cell: sum(map(len, files.values())) for cell, files in sorted(self.cells.items())}

    def by_file(self) -> dict[str, int]:
        """Lines reached in any cell, per file, sorted by path."""
        return {path: len(lines) for path, lines in sorted(self.union.items())}

    def to_json(self) -> dict[str, Any]:
        """{"cells": {"3.12/eager": {path: "1-4,9,12-20"}}}: each file's lines as
        sorted runs (``encode_lines``), a few bytes per run of covered lines."""
        return {"cells": {cell: {path: encode_lines(lines) for path, lines in sorted(files.items())}
                          for cell, files in sorted(self.cells.items())}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CoverageMap:
        """The map of ``to_json`` (a file's lines as runs or as a list); {} gives an empty map.
        Raises ValueError for lines that are neither."""
        made = cls()
        for cell, files in data.get("cells", {}).items():
            made.add(cell, {path: decode_lines(lines) for path, lines in files.items()})
        return made

    def merge(self, other: CoverageMap) -> int:
        """Union ``other`` (another shard's map) into this one; lines new to this map's cells."""
        return sum(self.add(cell, files) for cell, files in other.cells.items())


def encode_lines(lines: Iterable[int]) -> str:
    """Line numbers as sorted runs: {1, 2, 3, 4, 9} -> "1-4,9"."""
    runs: list[str] = []
    ordered = sorted(set(lines))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        runs.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(runs)


def decode_lines(text: str | Iterable[int]) -> set[int]:
    """The lines of ``encode_lines``'s text (or of a list of ints). Raises ValueError for bad text."""
    if not isinstance(text, str):
        return {int(line) for line in text}
    lines: set[int] = set()
    for run in filter(None, text.split(",")):
        low, _, high = run.partition("-")
        lines.update(range(int(low), int(high or low) + 1))
    return lines


@dataclasses.dataclass(frozen=True)
class CurvePoint:
    """Statements covered after ``programs`` programs and ``cpu_s`` CPU seconds of runs."""

    programs: int
    cpu_s: float
    statements: int
    # statements per interpreter ("3.12" -> count), its backends together
    interpreters: tuple[tuple[str, int], ...] = ()

    def to_json(self) -> dict[str, Any]:
        made: dict[str, Any] = {"programs": self.programs, "cpu_s": round(self.cpu_s, 3),
                                "statements": self.statements}
        if self.interpreters:
            made["interpreters"] = dict(self.interpreters)
        return made


class ReachCurve:
    """Statements against programs and CPU time, thinned (see the module docstring)."""

    def __init__(self, max_points: int = MAX_CURVE_POINTS):
        self.points: list[CurvePoint] = []
        self.max_points = max_points
        self._stride = 1  # programs between kept points, doubled at each thinning
        self._last: CurvePoint | None = None

    def add(self, programs: int, cpu_s: float, statements: int,
            interpreters: dict[str, int] | None = None) -> None:
        """Note the state after a program (kept when it falls on the stride);
        ``interpreters``: statements per interpreter then."""
        point = CurvePoint(programs, cpu_s, statements, tuple(sorted((interpreters or {}).items())))
        self._last = point
        if programs % self._stride:
            return
        self.points.append(point)
        if len(self.points) > self.max_points:
            self._stride *= 2
            self.points = [p for p in self.points if p.programs % self._stride == 0] or self.points[:1]

    def to_json(self) -> list[dict[str, Any]]:
        """The kept points, and the latest one, as [{"programs", "cpu_s", "statements"}, ...]."""
        points = list(self.points)
        if self._last is not None and (not points or points[-1] != self._last):
            points.append(self._last)
        return [p.to_json() for p in points]

    @classmethod
    def from_json(cls, data: list[dict[str, Any]], max_points: int = MAX_CURVE_POINTS) -> ReachCurve:
        made = cls(max_points)
        for raw in data:
            made.add(int(raw["programs"]), float(raw["cpu_s"]), int(raw["statements"]),
                     {str(k): int(v) for k, v in raw.get("interpreters", {}).items()})
        return made

    @property
    def last(self) -> CurvePoint | None:
        return self._last
