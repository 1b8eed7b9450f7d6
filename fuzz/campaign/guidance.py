"""Coverage guidance for a campaign: the coverage map, its curve and the pool, behind five calls.

The campaign loop (``fuzz.campaign.loop``) needs only:

- ``guidance.task(task)``: the task with ``reach`` on (the worker reports
  its new compiler lines, harness.reach), unless coverage is off;
- ``guidance.next_program(seed, seq)``: a mutant of a pool entry for this
  seed, or None to draw it as usual (always None with ``feedback=False``,
  ``--no-feedback``: every program a function of its seed);
- ``guidance.record(seq, program, outcomes)``: once all of a program's
  outcomes are in; unions their coverage into the map
  (``fuzz.campaign.reach.CoverageMap``), extends the curve and, with
  feedback, puts a program that added lines in the pool
  (``fuzz.generate.pool``); returns the lines it added;
- ``snapshot()`` / ``restore(snapshot)``: the JSON state for the campaign
  database's meta (``META_KEY``), so ``--resume`` continues the map, the
  curve, the pool and the mutants in flight; ``merge_snapshots`` unions
  shards' (``tcfuzz merge``);
- ``summary()``: ``summary.json["coverage"]``, ``{"statements": N, "curve":
  [{"programs", "cpu_s", "statements"}, ...], "pool": <entries>}``.

Coverage is recorded with ``feedback=False`` too, so guided and blind
campaigns compare on the same measure.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Sequence
from typing import Any

from harness.outcome import Outcome
from harness.program import Program
from fuzz.campaign.reach import CoverageMap, ReachCurve
from fuzz.campaign.workers import Task
from fuzz.generate.pool import Draft, Mutation, Pool, PoolEntry, draw_with_choices, encode_choices
from fuzz.generate.program import GENERATOR

__all__ = ["META_KEY", "Guidance", "merge_snapshots", "package_statements", "summary_of"]

log = logging.getLogger(__name__)

# The campaign database's meta key of ``Guidance.snapshot()``.
META_KEY = "coverage"


class Guidance:
    """See the module docstring. ``feedback``: mutate pool entries (False:
    the pool stays empty and unused); ``coverage``: ask workers for reach
    (False: nothing is recorded, and there is no feedback either)."""

    def __init__(self, *, feedback: bool = True, coverage: bool = True):
        self.coverage = coverage
        self.feedback = feedback and coverage
        self.map = CoverageMap()
        self.curve = ReachCurve()
        self.pool = Pool(density=self.map.lines_in)
        self.programs = 0
        self.cpu_s = 0.0
        self.drafts: dict[int, Draft] = {}  # seq -> the mutant in flight

    def task(self, task: Task) -> Task:
        """``task`` asking its worker for reach when coverage is on."""
        return dataclasses.replace(task, reach=True) if self.coverage and not task.reach else task

    def next_program(self, seed: int, seq: int) -> Program | None:
        """A mutant of a pool entry to run as ``seq`` (campaign seed ``seed``),
        or None: draw the seed as the campaign would without guidance."""
        if not self.feedback:
            return None
        made = self.pool.next_program(seed)
        if made is None:
            return None
        program, draft = made
        self.drafts[seq] = draft
        return program

    def record(self, seq: int, program: Program, outcomes: Iterable[Outcome]) -> int:
        """Take a finished program's outcomes (every run of it); the compiler
        lines it added to the cells' maps, summed over its cells."""
        outcomes = list(outcomes)
        new_by_file: dict[str, int] = {}
        for outcome in outcomes:
            for path, count in self.map.record_by_file(outcome).items():
                new_by_file[path] = new_by_file.get(path, 0) + count
        new = sum(new_by_file.values())
        self.programs += 1
        # CPU seconds where the worker measured them (Outcome.cpu_s), else wall seconds
        self.cpu_s += sum(getattr(o, "cpu_s", 0.0) or o.elapsed_s for o in outcomes)
        self.curve.add(self.programs, self.cpu_s, self.map.statements, self.map.interpreter_statements())
        draft = self.drafts.pop(seq, None)
        if self.feedback:
            self.pool.observe(mutant=draft is not None, new_lines=new)
            if new:
                entry = draft.entry if draft is not None and draft.entry.entry_id == program.program_id \
                    else fresh_entry(program)
                entry.new_lines = new_by_file
                if self.pool.add(entry):
                    log.info("pool: %s (%s) added %d compiler lines; %d entries", entry.entry_id,
                             entry.mutation.value, new, len(self.pool))
        return new

    def summary(self) -> dict[str, Any]:
        """``summary.json["coverage"]``: statements covered at the end (distinct
        compiler lines over every cell), per interpreter and per package
        (``torch/_dynamo``, ...), the curve, and the pool's entries (a count)."""
        return {"statements": self.map.statements, "interpreters": self.map.interpreter_statements(),
                "packages": package_statements(self.map.by_file()), "curve": self.curve.to_json(),
                "pool": len(self.pool)}

    def snapshot(self) -> dict[str, Any]:
        """The whole state as JSON (for the meta ``META_KEY``)."""
        return {"map": self.map.to_json(), "curve": self.curve.to_json(), "pool": self.pool.to_json(),
                "programs": self.programs, "cpu_s": round(self.cpu_s, 3),
                "drafts": {str(seq): draft.to_json() for seq, draft in sorted(self.drafts.items())}}

    def restore(self, snapshot: dict[str, Any] | None) -> None:
        """Continue from ``snapshot()``'s state (a resumed campaign); None or {} changes nothing."""
        if not snapshot:
            return
        self.map.merge(CoverageMap.from_json(snapshot.get("map", {})))
        self.curve = ReachCurve.from_json(snapshot.get("curve", []))
        self.pool.restore(snapshot.get("pool", {}))
        self.programs = int(snapshot.get("programs", 0))
        self.cpu_s = float(snapshot.get("cpu_s", 0.0))
        self.drafts.update({int(seq): Draft.from_json(raw) for seq, raw in snapshot.get("drafts", {}).items()})


def summary_of(snapshot: dict[str, Any] | None) -> dict[str, Any] | None:
    """``Guidance.summary()`` of a stored ``snapshot()`` (the campaign
    database's meta ``META_KEY``), for reports rebuilt from the database;
    None for a campaign that recorded no coverage."""
    if not snapshot:
        return None
    guidance = Guidance()
    guidance.restore(snapshot)
    return guidance.summary()


def package_statements(by_file: dict[str, int]) -> dict[str, int]:
    """Statements per package ("torch/_dynamo", "torch/_inductor", ...: a
    path's first two parts) of ``{path: statements}``."""
    packages: dict[str, int] = {}
    for path, count in by_file.items():
        package = "/".join(path.split("/")[:2])
        packages[package] = packages.get(package, 0) + count
    return dict(sorted(packages.items()))


def fresh_entry(program: Program) -> PoolEntry:
    """The pool entry of a program drawn as usual: with its choice sequence
    where our generator drew it from its seed (redrawn here: a few ms, only
    for programs that added coverage), else its source alone."""
    choices = ""
    if program.generator == GENERATOR and program.seed is not None:
        redrawn, drawn_choices = draw_with_choices(program.seed, dict(program.weights) or None)
        if redrawn.source == program.source:
            choices = encode_choices(drawn_choices)
    return PoolEntry(program.program_id, program.seed, program, choices, Mutation.FRESH)


def merge_snapshots(snapshots: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One snapshot of several shards' (``tcfuzz merge``): their maps and pools
    united, programs and CPU seconds summed. The merged curve is its end point
    alone: a shard's map is not kept per point, so the union's statements at
    earlier points are unknown (each shard's own curve stays in its database)."""
    merged = Guidance()
    for snapshot in snapshots:
        if not snapshot:
            continue
        merged.map.merge(CoverageMap.from_json(snapshot.get("map", {})))
        merged.pool.restore(snapshot.get("pool", {}))
        merged.programs += int(snapshot.get("programs", 0))
        merged.cpu_s += float(snapshot.get("cpu_s", 0.0))
    if merged.programs:
        merged.curve.add(merged.programs, merged.cpu_s, merged.map.statements, merged.map.interpreter_statements())
    return merged.snapshot()
