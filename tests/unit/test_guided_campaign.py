"""Coverage guidance inside the campaign loop (no workers: a fake pool whose
outcomes report compiler lines that depend on the program's features): with
feedback, programs that reach new lines enter the pool and later seeds run
its mutants; with --no-feedback every program is its seed's and coverage is
still recorded; the snapshot resumes."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

from harness.outcome import Outcome, Verdict
from fuzz.campaign import loop
from fuzz.campaign.config import CampaignConfig
from fuzz.campaign.database import CampaignDB
from fuzz.campaign.merge import merge
from fuzz.campaign.interpreters import Interpreter
from fuzz.generate.pool import POOL
from tests.unit.test_filing_time import _Clock, _SlowPool

PROGRAMS = 40


class _ReachPool(_SlowPool):
    """Runs tasks at once; a run asked for reach reports a line per feature
    of the program and one per source line count, in a fake Dynamo file."""

    def __init__(self) -> None:
        super().__init__(_Clock(), task_s=0.0)
        self.asked: list[bool] = []

    def next_result(self, timeout_s=None):
        task_id, task = self.queue.pop(0)
        self.asked.append(task.reach)
        program = task.program
        lines = sorted({zlib.crc32(f.encode()) % 5000 for f in program.features}
                       | {5000 + program.source.count("\n")}) if task.reach else []
        outcome = Outcome(program.program_id, task.interpreter, task.backend, verdict=Verdict.MATCH,
                          elapsed_s=0.5, reach={"torch/_dynamo/fake.py": lines} if lines else {})
        return task_id, task, outcome


def _campaign(tmp_path: Path, *, feedback: bool) -> loop.Campaign:
    config = CampaignConfig(interpreters=[Interpreter("3.12", Path("/nonexistent/python3.12"))],
                            backends=["eager"], out_dir=tmp_path / "out", corpus_dir=tmp_path / "corpus",
                            budget_s=None, programs=PROGRAMS, feedback=feedback, vary_compile=False)
    config.corpus_dir.mkdir(parents=True, exist_ok=True)
    campaign = loop.Campaign(config)
    campaign.pool = _ReachPool()
    return campaign


def test_with_feedback_new_coverage_enters_the_pool_and_its_mutants_run(tmp_path):
    campaign = _campaign(tmp_path, feedback=True)
    ran = []
    next_program = campaign.guidance.next_program
    campaign.guidance.next_program = lambda seed, seq: ran.append(p := next_program(seed, seq)) or p
    campaign._fuzz(deadline_s=None)
    assert all(campaign.pool.asked)
    assert campaign.progress.programs == PROGRAMS
    summary = campaign.guidance.summary()
    assert summary["statements"] > 0 and summary["pool"] > 0
    assert summary["curve"][-1]["programs"] == PROGRAMS
    mutants = [p for p in ran if p is not None]
    assert mutants and all(p.generator in (POOL, "tcfuzz.mutate") for p in mutants)
    # every pool entry rebuilds to its program
    for entry in campaign.guidance.pool.entries.values():
        assert entry.rebuild().source == entry.program.source


def test_without_feedback_no_mutant_runs_but_coverage_is_recorded(tmp_path):
    campaign = _campaign(tmp_path, feedback=False)
    ran = []
    next_program = campaign.guidance.next_program
    campaign.guidance.next_program = lambda seed, seq: ran.append(p := next_program(seed, seq)) or p
    campaign._fuzz(deadline_s=None)
    assert len(ran) == PROGRAMS and not any(ran)
    assert campaign.guidance.summary()["statements"] > 0
    assert campaign.guidance.summary()["pool"] == 0


def test_a_campaign_in_the_same_folder_continues_the_saved_coverage(tmp_path):
    first = _campaign(tmp_path, feedback=True)
    first._fuzz(deadline_s=None)  # saved to the meta every FEEDBACK_SAVE_EVERY programs
    assert PROGRAMS % loop.FEEDBACK_SAVE_EVERY == 0
    second = loop.Campaign(first.config)
    assert second.guidance.summary() == first.guidance.summary()
    assert sorted(second.guidance.pool.entries) == sorted(first.guidance.pool.entries)


class _RunnablePool(_ReachPool):
    """``_ReachPool`` with what ``Campaign.run`` asks of a pool."""

    def start(self):
        return {}

    def close(self):
        pass

    def terminate(self):
        pass


def _run(tmp_path: Path, name: str, *, feedback: bool = True, seed: int = 0) -> dict:
    campaign = _campaign(tmp_path / name, feedback=feedback)
    campaign.config.seed = seed
    campaign.config.minimise = False
    campaign.pool = _RunnablePool()
    campaign.run()
    return json.loads((tmp_path / name / "out" / "summary.json").read_text())


def test_the_report_shows_the_coverage_curve_and_the_pool(tmp_path):
    summary = _run(tmp_path, "guided")
    coverage = summary["coverage"]
    assert coverage["statements"] > 0 and coverage["pool"] > 0
    assert coverage["interpreters"] == {"3.12": coverage["statements"]}
    assert coverage["packages"] == {"torch/_dynamo": coverage["statements"]}
    curve = coverage["curve"]
    assert curve[-1]["programs"] == PROGRAMS and curve[-1]["statements"] == coverage["statements"]
    assert [p["statements"] for p in curve] == sorted(p["statements"] for p in curve)
    assert all(p["interpreters"]["3.12"] == p["statements"] for p in curve)
    page = (tmp_path / "guided" / "out" / "index.html").read_text()
    assert "id='coverage-programs'" in page and "id='coverage-cpu_s'" in page
    assert "Compiler coverage" in (tmp_path / "guided" / "out" / "summary.md").read_text()


def test_shards_merge_their_coverage_and_pools(tmp_path):
    shards = [_run(tmp_path, f"shard{k}", seed=1000 * k) for k in range(2)]
    dbs = [CampaignDB(tmp_path / f"shard{k}" / "out" / "campaign.sqlite") for k in range(2)]
    pools = [{e["entry_id"] for e in db.meta()["coverage"]["pool"]["entries"]} for db in dbs]
    for db in dbs:
        db.close()
    merged = merge([tmp_path / f"shard{k}" / "out" for k in range(2)], tmp_path / "merged")
    assert merged["coverage"]["pool"] == len(pools[0] | pools[1])
    assert max(s["coverage"]["statements"] for s in shards) <= merged["coverage"]["statements"] \
        <= sum(s["coverage"]["statements"] for s in shards)
    assert merged["coverage"]["curve"][-1]["programs"] == 2 * PROGRAMS
