"""A campaign without the eager backend still places a bug on the ladder: a bug
verdict on its lowest backend gets an eager run (no workers: a fake pool)."""

from __future__ import annotations

from pathlib import Path

from harness.outcome import Outcome, Verdict
from harness.program import Program
from fuzz.campaign import loop
from fuzz.campaign.config import CampaignConfig
from fuzz.campaign.interpreters import Interpreter
from tests.unit.test_filing_time import _Clock, _SlowPool

# Which backends each program's compiled run fails on (a compile error in one frame).
FAILS_ON = {
    "dynamo-bug": {"eager", "aot_eager", "inductor"},  # Dynamo's: every rung shows it
    "aot-bug": {"aot_eager", "inductor"},
    "inductor-bug": {"inductor"},
    "clean": set(),
}
TAGS = list(FAILS_ON)


class _Pool(_SlowPool):
    """Runs tasks at once: a program compile-errors on the backends FAILS_ON names for its tag."""

    def __init__(self) -> None:
        super().__init__(_Clock(), task_s=0.0)
        self.ran: list[tuple[str, str, str]] = []

    def next_result(self, timeout_s=None):
        task_id, task = self.queue.pop(0)
        tag = task.program.source.rsplit("# ", 1)[1].strip()
        self.ran.append((tag, task.interpreter, task.backend))
        if task.backend in FAILS_ON[tag]:
            outcome = Outcome(task.program.program_id, task.interpreter, task.backend, verdict=Verdict.COMPILE_ERROR,
                              error_type="RuntimeError", torch_frame="torch/_dynamo/x.py:f")
        else:
            outcome = Outcome(task.program.program_id, task.interpreter, task.backend, verdict=Verdict.MATCH)
        return task_id, task, outcome


def _program(seed: int) -> Program:
    return Program(f"import torch\n\ndef f(x):\n    return x\n\ndef inputs():\n    return (torch.ones(1),)\n"
                   f"# {TAGS[seed % len(TAGS)]}\n")


def _run(tmp_path: Path, backends: list[str]) -> tuple[loop.Campaign, _Pool]:
    config = CampaignConfig(interpreters=[Interpreter("3.12", Path("/nonexistent/python3.12"))],
                            backends=backends, out_dir=tmp_path / "out", corpus_dir=tmp_path / "corpus",
                            budget_s=None, programs=len(TAGS), feedback=False, vary_compile=False)
    config.corpus_dir.mkdir(exist_ok=True)
    campaign = loop.Campaign(config)
    campaign.pool = _Pool()
    campaign._next_program = _program
    campaign._fuzz(deadline_s=None)
    return campaign, campaign.pool


def test_a_bug_on_the_lowest_backend_gets_an_eager_run_that_places_it(tmp_path):
    campaign, pool = _run(tmp_path, ["aot_eager", "inductor"])
    stages = {finding.signature.stage: (finding.backend, program.source.rsplit("# ", 1)[1].strip())
              for finding, program in campaign.new.values()}
    assert stages == {"dynamo": ("eager", "dynamo-bug"), "aot": ("aot_eager", "aot-bug"),
                      "inductor": ("inductor", "inductor-bug")}
    eager_runs = sorted(tag for tag, _, backend in pool.ran if backend == "eager")
    assert eager_runs == ["aot-bug", "dynamo-bug"]  # only the programs with a bug on aot_eager, once each
    assert campaign.progress.programs == len(TAGS)


def test_no_eager_run_is_added_where_the_campaign_runs_eager(tmp_path):
    campaign, pool = _run(tmp_path, ["eager", "inductor"])
    assert sum(backend == "eager" for _, _, backend in pool.ran) == len(TAGS)
    # aot_eager did not run: the aot bug shows first on inductor, one bucket with the Inductor bug
    assert sorted(f.signature.stage for f, _ in campaign.new.values()) == ["dynamo", "inductor"]
