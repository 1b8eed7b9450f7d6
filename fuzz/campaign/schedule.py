"""Which cells run each program: a campaign's CPU as a budget over cells.

A cell is (interpreter, backend); a run is (program, cell). The schedule of a
program is the list of cells it runs on, decided when it is generated and
stored with it (``programs.cells`` in the campaign database), so a resumed
campaign reruns an unfinished program on the same cells.

Policies (``Policy``):

- ``full``: every backend on every interpreter (the product; what campaigns
  did before the scheduler).
- ``share`` (``--share aot_eager=0.5``): the lowest selected backend on every
  interpreter; each other backend, on every interpreter, for the share of
  programs its seed picks. A fixed policy of the same scheduler.
- ``yield`` (the default): the lowest selected backend (the cheapest: eager
  by default) on every interpreter, so Dynamo's cross-version comparison
  stays whole; each slower backend on ``picks`` interpreters per program.
  With feedback on, the interpreters are chosen by each cell's yield so far:
  new buckets per CPU-second (a bug counts ``BUG_REWARD``, a graph-break
  regression ``REGRESSION_REWARD``, a graph break ``GRAPH_BREAK_REWARD``;
  documented limitations nothing), by Thompson sampling from a Gamma
  posterior of that rate (a Poisson process in CPU time; Chapelle and Li,
  "An Empirical Evaluation of Thompson Sampling", 2011), with a floor: a
  cell whose share of its backend's scheduled runs is under ``FLOOR`` of an
  even share is picked first, so every cell keeps being explored and the
  whole matrix is exercised in every campaign. With ``--no-feedback`` the
  interpreters rotate by seed (each block of N consecutive seeds, N the
  interpreter count, visits every interpreter once, in a seeded order), so
  every shard and a resumed run agree and merged shards equal one run.

A bug or graph break seen on a sampled cell and not on the fully run backend
there (or any bug of a backend off the ladder, which is keyed apart) is
confirmed before it is bucketed: ``confirmations`` runs that program on
every interpreter it has not run on, with each backend that can hold the
finding (those no higher on the ladder than the backend that showed it; an
off-ladder backend's bug, that backend), so its signature's interpreter set
and stage are what full replication gives.
"""

from __future__ import annotations

import dataclasses
import enum
import random
from collections.abc import Iterable, Sequence
from typing import Any

from harness.backends import LADDER, ladder_rank
from harness.outcome import Outcome
from fuzz.triage.signature import Kind, causes

# Reward of a new bucket, by kind, for a cell's yield: a bug is worth more
# than a graph-break regression, which is worth more than a graph break.
BUG_REWARD = 10.0
REGRESSION_REWARD = 3.0
GRAPH_BREAK_REWARD = 1.0
# The Gamma prior of a cell's rate (reward per CPU-second): shape in reward
# units, rate in CPU-seconds; weak, so a few runs move it.
PRIOR_REWARD = 0.5
PRIOR_CPU_S = 60.0
# A cell whose scheduled runs fall under this share of an even split of its
# backend's runs is picked first (the exploration floor).
FLOOR = 0.5
# Interpreters each slower backend runs a program on under the yield policy.
PICKS = 1


class Policy(str, enum.Enum):
    """How a campaign's cells are chosen (module docstring)."""

    FULL = "full"
    SHARE = "share"
    YIELD = "yield"

    def __str__(self) -> str:
        return self.value


class Role(str, enum.Enum):
    """Why a run was made: scheduled, a confirmation of a sampled cell's bug
    on the rest of the product, or the eager stage check of a campaign
    without the eager backend (fuzz.campaign.loop)."""

    SCHEDULED = "scheduled"
    CONFIRM = "confirm"
    STAGE_CHECK = "stage-check"

    def __str__(self) -> str:
        return self.value


@dataclasses.dataclass(frozen=True, order=True)
class Cell:
    """One (interpreter, backend) pair, e.g. Cell("3.12", "inductor")."""

    interpreter: str
    backend: str

    @property
    def key(self) -> str:
        return f"{self.interpreter}/{self.backend}"

    @classmethod
    def parse(cls, key: str) -> Cell:
        """The Cell of ``key`` ("3.12/inductor"); raises ValueError for another string."""
        interpreter, sep, backend = key.partition("/")
        if not sep or not interpreter or not backend:
            raise ValueError(f"Expected a cell like 3.12/inductor but got {key!r}")
        return cls(interpreter, backend)


@dataclasses.dataclass
class CellYield:
    """What a cell's runs cost and bought: runs and CPU seconds by role,
    the buckets it showed first, and its reward (module docstring)."""

    runs: int = 0
    cpu_s: float = 0.0
    confirm_runs: int = 0
    confirm_cpu_s: float = 0.0
    buckets: int = 0
    new_buckets: int = 0
    new_bugs: int = 0
    reward: float = 0.0


def _family(backend: str) -> str:
    """The compiler a backend belongs to: the ladder's stages are one
    (fuzz.triage.signature.findings), any other backend is its own."""
    return "ladder" if ladder_rank(backend) < len(LADDER) else backend


def reward_of(kind: Kind | str, *, limitation: bool = False) -> float:
    """A new bucket's reward for the cells that found it: 0 for a documented limitation."""
    if limitation:
        return 0.0
    kind = Kind(kind)
    if kind is Kind.GRAPH_BREAK:
        return GRAPH_BREAK_REWARD
    if kind is Kind.GRAPH_BREAK_REGRESSION:
        return REGRESSION_REWARD
    return BUG_REWARD


class CellScheduler:
    """Decides each program's cells and learns each cell's yield.

    ``backends`` in the campaign's order; ``interpreters`` by name; ``seed``
    the campaign's; ``adaptive``: learn from yield (feedback on) or rotate by
    seed; ``share``: the ``--share`` map (policy SHARE)."""

    def __init__(self, policy: Policy, backends: Sequence[str], interpreters: Sequence[str], *, seed: int = 0,
                 adaptive: bool = True, share: dict[str, float] | None = None, picks: int = PICKS,
                 floor: float = FLOOR):
        if not backends or not interpreters:
            raise ValueError(f"Expected backends and interpreters but got backends={list(backends)!r}, "
                             f"interpreters={list(interpreters)!r}")
        self.policy = Policy(policy)
        self.backends = list(backends)
        self.interpreters = list(interpreters)
        self.seed = seed
        self.adaptive = adaptive
        self.share = dict(share or {})
        self.picks = max(1, picks)
        self.floor = floor
        self.lowest = min(self.backends, key=lambda b: (ladder_rank(b), self.backends.index(b)))
        self.stats: dict[Cell, CellYield] = {Cell(i, b): CellYield() for b in self.backends for i in self.interpreters}
        # programs planned on each cell so far (the floor counts these: runs finish late)
        self.planned: dict[Cell, int] = {}

    # ---------------------------------------------------------------- planning

    def full_backends(self) -> list[str]:
        """Backends that run every program on every interpreter under this policy."""
        if self.policy is Policy.FULL:
            return list(self.backends)
        return [self.lowest]

    def plan(self, seed: int, interpreters: Iterable[str]) -> list[Cell]:
        """The cells the program of ``seed`` runs on, among ``interpreters``
        (those it parses on), in backend then interpreter order."""
        names = [i for i in self.interpreters if i in set(interpreters)]
        if not names:
            return []
        cells: list[Cell] = []
        for backend in self.backends:
            if backend in self.full_backends():
                cells += [Cell(i, backend) for i in names]
            elif self.policy is Policy.SHARE:
                share = self.share.get(backend, 1.0)
                if share >= 1.0 or random.Random(f"share-{seed}-{backend}").random() < share:
                    cells += [Cell(i, backend) for i in names]
            else:
                cells += [Cell(i, backend) for i in sorted(self._pick(seed, backend, names),
                                                            key=names.index)]
        for cell in cells:
            self.planned[cell] = self.planned.get(cell, 0) + 1
        return cells

    def _pick(self, seed: int, backend: str, names: list[str]) -> list[str]:
        """``picks`` interpreters of ``names`` for ``backend`` (yield policy)."""
        k = min(self.picks, len(names))
        if not self.adaptive:
            return [self._rotation(seed, backend, names, j) for j in range(k)]
        rng = random.Random(f"cells-{self.seed}-{seed}-{backend}")
        runs = {n: max(self.planned.get(Cell(n, backend), 0), self.stats[Cell(n, backend)].runs) for n in names}
        even = sum(runs.values()) / len(names)
        chosen: list[str] = []
        # the floor first: the least-run cells under it, ties in a seeded order
        under = sorted((n for n in names if runs[n] == 0 or runs[n] < self.floor * even),
                       key=lambda n: (runs[n], rng.random()))
        chosen += under[:k]
        if len(chosen) < k:
            draws = {n: self.sample_rate(Cell(n, backend), rng) for n in names if n not in chosen}
            chosen += sorted(draws, key=lambda n: -draws[n])[:k - len(chosen)]
        return chosen

    def _rotation(self, seed: int, backend: str, names: list[str], j: int) -> str:
        """The j-th interpreter of the seed's rotation: each block of
        len(names) consecutive seeds visits every interpreter once, in an
        order drawn from the block and backend."""
        n = len(names)
        order = list(names)
        random.Random(f"rotation-{seed // n}-{backend}").shuffle(order)
        return order[(seed + j) % n]

    def sample_rate(self, cell: Cell, rng: random.Random) -> float:
        """A draw of the cell's reward per CPU-second from its Gamma posterior."""
        s = self.stats[cell]
        return rng.gammavariate(PRIOR_REWARD + s.reward, 1.0) / (PRIOR_CPU_S + s.cpu_s)

    def confirmations(self, planned: Sequence[Cell], outcomes: Iterable[Outcome],
                      interpreters: Iterable[str]) -> list[Cell]:
        """The cells to run before a program is classified, among
        ``interpreters`` (those it parses on) and the cells it has not run on.

        A run on a sampled backend decides a finding's interpreter set when
        it shows a cause (a bug verdict or a graph break,
        fuzz.triage.signature.causes) that the same interpreter's run on a
        fully run backend does not show (the finding is that backend's, keyed
        by where it shows), or any bug of a backend off the ladder (a compiler
        of its own, keyed apart from eager's). For each such cause the
        backends that can hold its finding run on every interpreter: for a
        ladder bug or a graph break, those no higher on the ladder than the
        backend that showed it (fuzz.triage.signature.findings keys a cause
        by the lowest backend showing it, and where it shows there: a higher
        backend changes neither); for an off-ladder bug, that backend alone.
        Nothing decides: no cells."""
        outcomes = [o for o in outcomes if not o.threads]
        full = set(self.full_backends())
        full_families = {_family(b) for b in full}
        on_full: dict[str, set[tuple[Kind, str]]] = {}
        for o in outcomes:
            if o.backend in full:
                on_full.setdefault(o.interpreter, set()).update(causes(o))
        needed: set[str] = set()
        for o in outcomes:
            if o.backend in full:
                continue
            for cause in causes(o):
                kind, _ = cause
                own_family = _family(o.backend) not in full_families and kind is not Kind.GRAPH_BREAK
                if own_family and _family(o.backend) != "ladder":
                    needed.add(o.backend)
                elif own_family or cause not in on_full.get(o.interpreter, set()):
                    needed.update(b for b in self.backends if ladder_rank(b) <= ladder_rank(o.backend))
        if not needed:
            return []
        names = [i for i in self.interpreters if i in set(interpreters)]
        have = set(planned) | {Cell(o.interpreter, o.backend) for o in outcomes}
        return [Cell(i, b) for b in self.backends if b in needed for i in names if Cell(i, b) not in have]

    # ---------------------------------------------------------------- learning

    def record_run(self, cell: Cell, cpu_s: float, role: Role = Role.SCHEDULED) -> None:
        """Count one run of ``cell`` that took ``cpu_s`` CPU seconds."""
        stats = self.stats.setdefault(cell, CellYield())
        if role is Role.SCHEDULED:
            stats.runs += 1
            stats.cpu_s += cpu_s
        else:
            stats.confirm_runs += 1
            stats.confirm_cpu_s += cpu_s

    def credit(self, cells: Iterable[Cell], kind: Kind | str, *, new: bool, limitation: bool = False) -> None:
        """A bucket first seen on ``cells`` (the scheduled runs that showed
        it): each counts it, and a new one's reward is split among them."""
        cells = [c for c in cells if c in self.stats]
        if not cells:
            return
        reward = reward_of(kind, limitation=limitation) / len(cells) if new else 0.0
        is_bug = Kind(kind) not in (Kind.GRAPH_BREAK, Kind.GRAPH_BREAK_REGRESSION)
        for cell in cells:
            s = self.stats[cell]
            s.buckets += 1
            s.new_buckets += int(new)
            s.new_bugs += int(new and is_bug and not limitation)
            s.reward += reward

    # ---------------------------------------------------------------- state

    def snapshot(self) -> dict[str, Any]:
        """The learned state as JSON (meta ``schedule``), for ``restore``."""
        return {"policy": self.policy.value, "cells": {c.key: dataclasses.asdict(s) for c, s in self.stats.items()}}

    def restore(self, data: dict[str, Any] | None) -> None:
        """Continue from ``snapshot``'s JSON (a resumed campaign); cells it
        does not know keep zero."""
        known = {f.name for f in dataclasses.fields(CellYield)}
        for key, values in (data or {}).get("cells", {}).items():
            try:
                cell = Cell.parse(key)
            except ValueError:
                continue
            self.stats[cell] = CellYield(**{k: v for k, v in values.items() if k in known})
