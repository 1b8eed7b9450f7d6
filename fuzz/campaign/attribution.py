"""Free-threaded or torch release? The cell that tells a confounded finding apart.

In the default matrix 3.13t runs torch 2.12.0 (its last release with a
cp313t wheel) while 3.13 runs the newest. A finding that shows on 3.13t and
not on 3.13 could come from the free-threaded build or from the older torch;
one more cell decides: the GIL twin (3.13) with the free-threaded build's
torch (2.12.0). If it shows there too, the finding belongs to that torch
release ("torch 2.12.0 only"); if not, to the build ("free-threaded only").
The same cell decides the mirror case, a finding on 3.13 and not on 3.13t
("GIL builds only" or "torch <newest> only"). Pinned cells come from
``fuzz.campaign.torch_envs``; each is started once per campaign.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from harness.outcome import Outcome
from harness.program import Program
from harness.settings import CompileSettings
from fuzz.campaign import interpreters as interpreter_specs
from fuzz.campaign import torch_envs
from fuzz.campaign.workers import Task, WorkerPool
from fuzz.errors import HarnessError
from fuzz.triage.signature import ABSENT_ON, Finding, Kind, Signature, findings

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Attribution:
    """Which cell was run (``interpreter`` with torch ``release``), whether the
    finding showed there, and the pattern that follows."""

    interpreter: str
    release: str
    shows: bool
    pattern: str

    def to_json(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def release_of(version: str) -> str:
    """"2.12.0+cu130" -> "2.12.0"."""
    return version.split("+")[0]


def deciding_cell(sig: Signature, torch_of: Mapping[str, str]) -> tuple[str, str, str] | None:
    """(GIL twin to run, torch release to run it with, the free-threaded
    interpreter) when ``sig``'s interpreter set separates a free-threaded
    build from its GIL twin and their torch releases differ; else None.
    ``torch_of`` maps each interpreter of the campaign to its torch version."""
    shown = set(sig.interpreters)
    for threaded in sorted(n for n in torch_of if n.endswith("t")):
        twin = threaded[:-1]
        if twin not in torch_of or (threaded in shown) == (twin in shown):
            continue
        if release_of(torch_of[threaded]) != release_of(torch_of[twin]):
            return twin, release_of(torch_of[threaded]), threaded
    return None


def pattern_of(sig: Signature, cell: tuple[str, str, str], shows: bool, torch_of: Mapping[str, str]) -> str:
    """The pattern the deciding cell's result names."""
    twin, release, threaded = cell
    if threaded in sig.interpreters:  # shown free-threaded, not on the twin with the newer torch
        return f"torch {release} only" if shows else "free-threaded only"
    newer = release_of(torch_of[twin])
    return "GIL builds only" if shows else f"torch {newer} only"


def same_finding(sig: Signature, outcome: Outcome) -> bool:
    """Whether ``outcome`` shows ``sig``'s finding (kind, stage and detail).
    A graph-break regression needs two interpreters to be a finding, so on the
    one deciding cell it shows when the cell breaks with its gb_type."""
    if sig.kind is Kind.GRAPH_BREAK_REGRESSION:
        gb_type = sig.detail.split(ABSENT_ON, 1)[0]
        return any((g.gb_type or g.reason) == gb_type for g in outcome.graph_breaks)
    return any((f.signature.kind, f.signature.stage, f.signature.detail) == (sig.kind, sig.stage, sig.detail)
               for f in findings([outcome]))


class Attributor:
    """Runs deciding cells for a campaign, one worker per (interpreter,
    release), started on first use and closed by ``close``."""

    def __init__(self, log_dir: Path, *, device: str = "cpu", fullgraph: bool = False,
                 settings_of: Callable[[Program, str], CompileSettings] | None = None):
        self.log_dir = log_dir
        self.device = device
        self.fullgraph = fullgraph
        # how a program compiles on a backend (CampaignConfig.compile_settings)
        self.settings_of = settings_of or (lambda program, backend: CompileSettings())
        self.pools: dict[tuple[str, str], WorkerPool | None] = {}

    def attribute(self, finding: Finding, program: Program, torch_of: Mapping[str, str]) -> Attribution | None:
        """The attribution of ``finding`` (None when its interpreter set is not
        confounded, or the deciding cell cannot be had: no wheel, no env)."""
        cell = deciding_cell(finding.signature, torch_of)
        if cell is None:
            return None
        twin, release, _ = cell
        pool = self._pool(twin, release)
        if pool is None:
            return None
        (outcome,) = pool.run_all([Task(program, twin, finding.backend, self.device, self.fullgraph,
                                        settings=self.settings_of(program, finding.backend))])
        shows = same_finding(finding.signature, outcome)
        result = Attribution(twin, release, shows, pattern_of(finding.signature, cell, shows, torch_of))
        log.info("attribution of %s: %s with torch %s %s: %s", finding.signature.id, twin, release,
                 "shows it" if shows else "does not", result.pattern)
        return result

    def _pool(self, name: str, release: str) -> WorkerPool | None:
        key = (name, release)
        if key not in self.pools:
            try:
                env = torch_envs.ensure_env(interpreter_specs.resolve(name), release)
                pool = None
                if env.interpreter is not None:
                    pool = WorkerPool([env.interpreter], log_dir=self.log_dir / f"attribution-{name}-{release}")
                    pool.start()
            except HarnessError as e:
                log.warning("cannot run %s with torch %s to attribute a finding: %s", name, release, e)
                pool = None
            self.pools[key] = pool
        return self.pools[key]

    def close(self) -> None:
        for pool in self.pools.values():
            if pool is not None:
                pool.close()
        self.pools.clear()


def attribute_all(attributor: Attributor, items: Sequence[tuple[Finding, Program]],
                  torch_of: Mapping[str, str]) -> dict[str, Attribution]:
    """Attributions by signature id of every confounded finding in ``items``."""
    out: dict[str, Attribution] = {}
    for finding, program in items:
        if finding.signature.id not in out:
            found = attributor.attribute(finding, program, torch_of)
            if found is not None:
                out[finding.signature.id] = found
    return out
