"""A run that timed out runs once more, with TIMEOUT_RETRY_FACTOR times the
limit, before its timeout is a finding: a loaded machine's slow compile is
not a hang (no workers: a fake pool whose runs time out as told)."""

from __future__ import annotations

from pathlib import Path

from harness.outcome import Outcome, Verdict
from harness.program import Program
from fuzz.campaign import loop
from fuzz.campaign.config import CampaignConfig
from fuzz.campaign.interpreters import Interpreter
from fuzz.campaign.workers import RUN_TIMEOUT_S


class _TimeoutPool:
    """A run times out while its time limit is under ``needs_s`` (per
    interpreter; missing: never), and matches once given that much."""

    def __init__(self, needs_s: dict[str, float]):
        self.needs_s = needs_s
        self.queue: list = []
        self.workers = [object()]
        self.ids = 0
        self.limits: list[tuple[str, float | None]] = []

    @property
    def pending(self) -> int:
        return len(self.queue)

    def submit(self, task) -> int:
        self.ids += 1
        self.queue.append((self.ids, task))
        return self.ids

    def next_result(self, timeout_s=None):
        task_id, task = self.queue.pop(0)
        limit_s = task.timeout_s if task.timeout_s is not None else RUN_TIMEOUT_S
        self.limits.append((task.interpreter, task.timeout_s))
        timed_out = limit_s < self.needs_s.get(task.interpreter, 0.0)
        outcome = Outcome(task.program.program_id, task.interpreter, task.backend,
                          verdict=Verdict.TIMEOUT if timed_out else Verdict.MATCH,
                          error_type="timeout" if timed_out else "", elapsed_s=limit_s if timed_out else 1.0)
        return task_id, task, outcome


def _campaign(tmp_path: Path, needs_s: dict[str, float]) -> loop.Campaign:
    config = CampaignConfig(interpreters=[Interpreter("3.12", Path("/nonexistent/python3.12")),
                                          Interpreter("3.13", Path("/nonexistent/python3.13"))],
                            backends=["eager"], out_dir=tmp_path / "out", corpus_dir=tmp_path / "corpus",
                            budget_s=None, programs=1, feedback=False, vary_compile=False)
    config.corpus_dir.mkdir(exist_ok=True)
    campaign = loop.Campaign(config)
    campaign.pool = _TimeoutPool(needs_s)
    campaign._next_program = lambda seed: Program("import torch\n\ndef f(x):\n    return x + 1\n\n"
                                                  "def inputs():\n    return (torch.ones(1),)\n")
    return campaign


def test_a_run_slow_under_load_is_run_again_and_is_no_finding(tmp_path):
    campaign = _campaign(tmp_path, {"3.13": 2 * RUN_TIMEOUT_S})
    campaign._fuzz(deadline_s=None)
    assert campaign.pool.limits == [("3.12", None), ("3.13", None),
                                    ("3.13", loop.TIMEOUT_RETRY_FACTOR * RUN_TIMEOUT_S)]
    verdicts = {o.interpreter: o.verdict for o in campaign.db.outcomes()}
    assert verdicts == {"3.12": Verdict.MATCH, "3.13": Verdict.MATCH}
    assert campaign.new == {}


def test_a_run_that_hangs_at_the_longer_limit_is_a_timeout_bucket(tmp_path):
    campaign = _campaign(tmp_path, {"3.13": float("inf")})
    campaign._fuzz(deadline_s=None)
    assert len(campaign.pool.limits) == 3  # retried once, not again
    [(finding, _)] = campaign.new.values()
    assert finding.signature.kind == "timeout" and finding.signature.interpreters == ("3.13",)
