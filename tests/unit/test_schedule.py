"""The cell scheduler (fuzz.campaign.schedule) and the campaign around it,
with fake pools and clocks: every program on the cheapest backend
everywhere, the slower ones where the policy picks; a bug on a sampled cell
confirmed on the rest of the product, so its interpreter set is that of full
replication; the yield learned per CPU-second with a floor; the schedule
a function of the seed without feedback; SIGTERM writes the report; an
unbudgeted campaign's filing time is bounded."""

from __future__ import annotations

import collections
import json
import os
import random
import signal
from pathlib import Path

import pytest

from harness.outcome import CallResult, GraphBreak, Outcome, Verdict
from harness.program import Program
from fuzz.campaign import loop
from fuzz.campaign.config import CampaignConfig
from fuzz.campaign.interpreters import Interpreter
from fuzz.campaign.schedule import Cell, CellScheduler, Policy, Role
from fuzz.corpus import backlog
from fuzz.corpus.filing import FiledCase
from fuzz.report.summary import cell_table
from fuzz.triage.signature import Finding, Signature

INTERPS = ["3.11", "3.12", "3.13", "3.13t"]
BACKENDS = ["eager", "aot_eager", "inductor"]


def test_the_cheapest_backend_runs_everywhere_and_each_slower_one_on_one_interpreter():
    cells = CellScheduler(Policy.YIELD, BACKENDS, INTERPS, adaptive=False)
    for seed in range(40):
        plan = cells.plan(seed, INTERPS)
        by_backend = collections.Counter(c.backend for c in plan)
        assert by_backend == {"eager": 4, "aot_eager": 1, "inductor": 1}
        assert {c.interpreter for c in plan if c.backend == "eager"} == set(INTERPS)


def test_without_feedback_the_schedule_is_a_function_of_the_seed_that_visits_every_cell_evenly():
    a = CellScheduler(Policy.YIELD, BACKENDS, INTERPS, adaptive=False)
    b = CellScheduler(Policy.YIELD, BACKENDS, INTERPS, adaptive=False, seed=99)
    # the same program's cells whichever scheduler (a shard, a resumed run) plans it, in any order
    seeds = list(range(400))
    assert [a.plan(s, INTERPS) for s in seeds] == [b.plan(s, INTERPS) for s in reversed(seeds)][::-1]
    counts = collections.Counter(c for s in seeds for c in a.plan(s, INTERPS) if c.backend == "inductor")
    assert sorted(counts.values()) == [100, 100, 100, 100]  # each block of 4 seeds visits each interpreter once


def test_a_program_that_parses_on_some_interpreters_only_is_planned_there():
    cells = CellScheduler(Policy.YIELD, BACKENDS, INTERPS, adaptive=False)
    plan = cells.plan(7, ["3.13", "3.13t"])
    assert {c.interpreter for c in plan} <= {"3.13", "3.13t"}
    assert cells.plan(7, []) == []


def test_the_full_and_share_policies_are_the_product_and_the_seeded_share():
    full = CellScheduler(Policy.FULL, BACKENDS, INTERPS)
    assert len(full.plan(3, INTERPS)) == 12
    share = CellScheduler(Policy.SHARE, BACKENDS, INTERPS, share={"aot_eager": 0.25, "inductor": 0.0})
    picked = [any(c.backend == "aot_eager" for c in share.plan(s, INTERPS)) for s in range(2000)]
    assert 0.2 < sum(picked) / 2000 < 0.3
    assert picked == [random.Random(f"share-{s}-aot_eager").random() < 0.25 for s in range(2000)]
    assert not any(c.backend == "inductor" for s in range(50) for c in share.plan(s, INTERPS))


def test_the_yield_bandit_favours_the_productive_cell_and_keeps_the_floor():
    cells = CellScheduler(Policy.YIELD, ["eager", "inductor"], INTERPS, seed=1, adaptive=True)
    picks = collections.Counter()
    for seed in range(400):
        [cell] = [c for c in cells.plan(seed, INTERPS) if c.backend == "inductor"]
        picks[cell.interpreter] += 1
        cells.record_run(cell, 20.0)
        if cell.interpreter == "3.12" and seed % 3 == 0:  # 3.12's Inductor finds a new bug every third run
            cells.credit([cell], "compile-error", new=True)
    assert picks["3.12"] > 0.5 * 400
    even = 400 / len(INTERPS)
    assert all(picks[i] >= cells.floor * even - 1 for i in INTERPS), picks


def test_limitations_and_known_buckets_earn_nothing():
    cells = CellScheduler(Policy.YIELD, BACKENDS, INTERPS)
    cell = Cell("3.12", "eager")
    cells.credit([cell], "graph-break", new=True, limitation=True)
    cells.credit([cell], "divergence", new=False)
    assert cells.stats[cell].reward == 0.0 and cells.stats[cell].buckets == 2 and cells.stats[cell].new_bugs == 0
    cells.credit([cell], "divergence", new=True)
    assert cells.stats[cell].reward == 10.0 and cells.stats[cell].new_bugs == 1


def test_the_learned_state_survives_a_snapshot():
    cells = CellScheduler(Policy.YIELD, BACKENDS, INTERPS)
    cells.record_run(Cell("3.13", "inductor"), 12.5)
    cells.record_run(Cell("3.13", "inductor"), 3.0, Role.CONFIRM)
    cells.credit([Cell("3.13", "inductor")], "crash", new=True)
    again = CellScheduler(Policy.YIELD, BACKENDS, INTERPS)
    again.restore(json.loads(json.dumps(cells.snapshot())))
    assert again.stats == cells.stats


def _outcome(program: Program, interpreter: str, backend: str, verdict: Verdict = Verdict.MATCH) -> Outcome:
    divergence = verdict is Verdict.DIVERGENCE
    return Outcome(program.program_id, interpreter, backend, verdict=verdict, cpu_s=1.0,
                   eager=[CallResult(label="fresh")], aspect="value" if divergence else None,
                   call="fresh" if divergence else "", phases={"eager": [0.5, 0.4], "call:fresh": [0.6, 0.5]})


def test_a_bug_on_a_sampled_cell_asks_for_the_rest_of_the_product():
    program = Program("def f():\n    return 1\n")
    cells = CellScheduler(Policy.YIELD, BACKENDS, INTERPS, adaptive=False)
    plan = cells.plan(5, INTERPS)
    [sampled] = [c for c in plan if c.backend == "inductor"]
    outcomes = [_outcome(program, c.interpreter, c.backend) for c in plan]
    assert cells.confirmations(plan, outcomes, INTERPS) == []
    wrong = [_outcome(program, c.interpreter, c.backend,
                      Verdict.DIVERGENCE if c == sampled else Verdict.MATCH) for c in plan]
    more = cells.confirmations(plan, wrong, INTERPS)
    assert set(more) | set(plan) == {Cell(i, b) for i in INTERPS for b in BACKENDS}
    # the same bug on eager there already places it: nothing to confirm
    on_eager = wrong + [_outcome(program, sampled.interpreter, "eager", Verdict.DIVERGENCE)]
    on_eager = [o for o in on_eager if not (o.backend == "eager" and o.interpreter == sampled.interpreter
                                            and o.verdict is Verdict.MATCH)]
    assert cells.confirmations(plan, on_eager, INTERPS) == []


def test_a_cause_on_a_sampled_cell_is_confirmed_only_on_the_backends_that_can_hold_its_finding():
    """A finding is keyed by the lowest backend that shows its cause and the
    interpreters it shows on there (fuzz.triage.signature.findings): a cause
    aot_eager shows is confirmed on aot_eager everywhere, not on Inductor,
    whose runs cannot change its key; one Inductor shows needs both."""
    program = Program("def f():\n    return 1\n")
    cells = CellScheduler(Policy.YIELD, BACKENDS, INTERPS, adaptive=False)
    plan = cells.plan(5, INTERPS)
    [aot] = [c for c in plan if c.backend == "aot_eager"]
    [ind] = [c for c in plan if c.backend == "inductor"]
    outcomes = [_outcome(program, c.interpreter, c.backend,
                         Verdict.DIVERGENCE if c == aot else Verdict.MATCH) for c in plan]
    more = cells.confirmations(plan, outcomes, INTERPS)
    assert set(more) == {Cell(i, "aot_eager") for i in INTERPS} - {aot}
    # a graph break only aot_eager shows: the same cells
    outcomes = [_outcome(program, c.interpreter, c.backend) for c in plan]
    [sampled] = [o for o in outcomes if o.backend == "aot_eager"]
    sampled.graph_breaks = [GraphBreak("Attempt to trace generator", "generator")]
    assert set(cells.confirmations(plan, outcomes, INTERPS)) == {Cell(i, "aot_eager") for i in INTERPS} - {aot}
    # a bug on Inductor: its stage needs the ladder below it, on every interpreter
    outcomes = [_outcome(program, c.interpreter, c.backend,
                         Verdict.DIVERGENCE if c == ind else Verdict.MATCH) for c in plan]
    more = cells.confirmations(plan, outcomes, INTERPS)
    assert set(more) | set(plan) == {Cell(i, b) for i in INTERPS for b in BACKENDS}


class _PlantedPool:
    """Runs tasks at once: every run matches except Inductor on ``wrong_on``
    (a planted compiler wrong on one interpreter only); records the tasks."""

    def __init__(self, wrong_on: str):
        self.wrong_on = wrong_on
        self.queue: list = []
        self.tasks: list = []
        self.workers = [object()] * 4
        self.info: dict = {}
        self.ids = 0

    @property
    def pending(self) -> int:
        return len(self.queue)

    def submit(self, task) -> int:
        self.ids += 1
        self.queue.append((self.ids, task))
        self.tasks.append(task)
        return self.ids

    def next_result(self, timeout_s=None):
        task_id, task = self.queue.pop(0)
        wrong = task.backend == "inductor" and task.interpreter == self.wrong_on and "planted" in task.program.source
        return task_id, task, _outcome(task.program, task.interpreter, task.backend,
                                       Verdict.DIVERGENCE if wrong else Verdict.MATCH)


def _campaign(tmp_path: Path, name: str, schedule: str, **kw) -> loop.Campaign:
    config = CampaignConfig(interpreters=[Interpreter(n, Path(f"/nonexistent/python{n}")) for n in INTERPS],
                            backends=BACKENDS, out_dir=tmp_path / name, corpus_dir=tmp_path / "corpus",
                            budget_s=None, feedback=False, schedule=schedule, minimise=False, **kw)
    config.corpus_dir.mkdir(exist_ok=True)
    return loop.Campaign(config)


def _programs(seed: int) -> Program:
    tag = "planted" if seed % 5 == 0 else "plain"
    return Program(f"import torch\n\ndef f(x):\n    return x + {seed}  # {tag}\n\n"
                   "def inputs():\n    return (torch.ones(1),)\n", seed=seed)


def test_a_one_interpreter_bug_keeps_its_interpreter_set_under_the_scheduler(tmp_path):
    """A planted Inductor bug on 3.13 only: the yield schedule runs Inductor
    on one interpreter per program, confirms what it finds on the others, and
    buckets the same signatures with the same interpreter sets as the full
    product, at a fraction of the runs."""
    buckets = {}
    runs = {}
    for schedule in ("full", "yield"):
        campaign = _campaign(tmp_path, schedule, schedule, programs=20)
        campaign.pool = _PlantedPool(wrong_on="3.13")
        campaign._next_program = _programs
        campaign._fuzz(deadline_s=None)
        buckets[schedule] = {(b["kind"], b["stage"], b["interpreters"]) for b in campaign.db.buckets()}
        runs[schedule] = len(campaign.pool.tasks)
    assert buckets["full"] == {("divergence", "inductor", "3.13")}
    assert buckets["yield"] == buckets["full"]
    assert runs["yield"] < 0.6 * runs["full"]


def test_the_schedule_is_recorded_and_a_resumed_program_keeps_its_cells(tmp_path):
    campaign = _campaign(tmp_path, "rec", "yield", programs=3)
    campaign.pool = _PlantedPool(wrong_on="none")
    campaign._next_program = _programs
    campaign._fuzz(deadline_s=None)
    stored = campaign.db.scheduled_cells()
    assert sorted(stored) == [0, 1, 2]
    for seq, keys in stored.items():
        planned = campaign.cells.plan(campaign.config.seed_of(seq), INTERPS)
        assert keys == [c.key for c in planned]
    summary_cells = {(c["interpreter"], c["backend"]): c
                     for c in cell_table(campaign.db.outcomes(), campaign.db.programs(), [])}
    assert sum(c["runs"] for c in summary_cells.values()) == 3 * (4 + 2)
    assert all(summary_cells[(i, "eager")]["runs"] == 3 for i in INTERPS)


class _SigtermPool(_PlantedPool):
    """Sends this process SIGTERM after ``after`` results, as `timeout` would."""

    def __init__(self, after: int):
        super().__init__(wrong_on="none")
        self.after, self.results = after, 0
        self.terminated = False

    def start(self):
        return {}

    def next_result(self, timeout_s=None):
        self.results += 1
        if self.results == self.after:
            os.kill(os.getpid(), signal.SIGTERM)
        return super().next_result(timeout_s)

    def terminate(self):
        self.terminated = True

    def close(self):
        pass


def test_sigterm_stops_the_campaign_and_writes_its_report(tmp_path):
    campaign = _campaign(tmp_path, "term", "yield", programs=50)
    campaign.pool = _SigtermPool(after=20)
    campaign._next_program = _programs
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        campaign.run()
    assert signal.getsignal(signal.SIGTERM) is before  # the handler is put back
    summary = json.loads((tmp_path / "term" / "summary.json").read_text())
    assert summary["interrupted"] and 0 < summary["programs"] < 50
    assert campaign.pool.terminated
    page = (tmp_path / "term" / "index.html").read_text()
    assert "Cells (yield schedule)" in page and "Where the runs' time went" in page
    assert {c["backend"] for c in summary["cells"]} == set(BACKENDS)
    assert summary["phases"]["runs"]["eager"]["cpu_s"] == pytest.approx(0.4 * summary["runs"])


class _Clock:
    def __init__(self) -> None:
        self.now_s = 0.0

    def __call__(self) -> float:
        return self.now_s


def test_an_unbudgeted_campaign_bounds_its_filing_time(tmp_path, monkeypatch):
    """`--programs N` alone: the programs took 100 s, so filing gets
    max(FILING_FLOOR_S, 100 s); six crashes at 140 s each do not all fit, and
    the rest wait in the backlog."""
    clock = _Clock()
    filed: list[str] = []

    def file_finding(pool, finding, program, **kw):
        filed.append(finding.signature.key)
        clock.now_s += 140.0
        return FiledCase(finding.signature, path=kw["corpus_dir"] / f"{finding.signature.id}.py",
                         standalone={"3.12": 1}, stats={"lines_before": 9, "lines_after": 5, "checks": 3,
                                                        "elapsed_s": 110.0})

    monkeypatch.setattr(loop, "file_finding", file_finding)
    campaign = _campaign(tmp_path, "bounded", "yield", programs=6)
    campaign.clock = clock
    campaign.started = clock()
    clock.now_s = 100.0
    crashes = [Finding(Signature("crash", "inductor", f"SIGSEGV@torch/k{n}.py:f", ("3.12",)), "inductor")
               for n in range(6)]
    campaign.new = {f.signature.key: (f, _programs(n)) for n, f in enumerate(crashes)}
    campaign._file_new_buckets()
    deadline_s = 100.0 + max(loop.FILING_FLOOR_S, loop.FILING_SHARE_UNBUDGETED * 100.0)
    assert 1 <= len(filed) < 6
    assert clock.now_s <= deadline_s + 140.0
    assert len(backlog.load(campaign.config.corpus_dir)) == 6 - len(filed)


def test_limitation_buckets_are_counted_but_never_filed(tmp_path, monkeypatch):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "known-issues.toml").write_text(
        '[limitations]\ngb_types = ["Data-dependent branching"]\n')
    filed: list[str] = []
    monkeypatch.setattr(loop, "file_finding", lambda pool, finding, program, **kw: filed.append(finding) or None)
    campaign = _campaign(tmp_path, "limits", "yield", programs=1)
    program = _programs(1)
    outcomes = [_outcome(program, i, "eager") for i in INTERPS]
    for o in outcomes:
        o.graph_breaks = [GraphBreak("Data-dependent branching", "x")]
    campaign.planned[0] = [Cell(i, "eager") for i in INTERPS]
    campaign._classify(0, program, outcomes)
    assert campaign.progress.new_buckets == 1 and campaign.limitations
    campaign._file_new_buckets()
    assert filed == [] and backlog.load(tmp_path / "corpus") == {}


class _TimedPool(_PlantedPool):
    """Each run takes ``task_s`` seconds of ``clock``; Inductor on 3.13 is wrong for planted programs."""

    def __init__(self, clock: _Clock, task_s: float):
        super().__init__(wrong_on="3.13")
        self.clock, self.task_s = clock, task_s

    def next_result(self, timeout_s=None):
        self.clock.now_s += self.task_s
        return super().next_result(timeout_s)


@pytest.mark.parametrize("planted", [False, True])
def test_the_fuzz_phase_keeps_only_the_filing_time_its_finds_need(tmp_path, planted):
    """Past its deadline (half the budget) the fuzz phase goes on while the
    new buckets need less filing time than is left: to the budget's end when
    it found nothing, and to the end less a bug's minimise budget when it did."""
    clock = _Clock()
    campaign = _campaign(tmp_path, f"reserve-{planted}", "full", programs=None)
    campaign.config.budget_s, campaign.config.minimise = 1200.0, True
    campaign.clock = clock
    campaign.started = clock()
    campaign.pool = _TimedPool(clock, task_s=2.0)
    campaign._next_program = (lambda seed: _programs(0)) if planted else (lambda seed: _programs(1 + 5 * seed + 1))
    campaign._fuzz(deadline_s=600.0, latest_s=1200.0)
    reserve_s = campaign.config.minimise_budget_s + campaign.confirm_s
    if planted:
        assert campaign.new and 600.0 <= clock.now_s <= 1200.0 - reserve_s + 60.0
    else:
        assert not campaign.new and 1200.0 - 60.0 <= clock.now_s <= 1200.0


def test_graph_breaks_reserve_one_case_s_filing_time_and_every_bug_its_own(tmp_path):
    """Ten new graph breaks and regressions keep one case's time for filing,
    not ten, so they do not end the fuzz phase; each bug keeps its minimise
    budget and confirmation."""
    campaign = _campaign(tmp_path, "reserve-kinds", "yield")
    program = _programs(1)
    for n in range(10):
        kind = "graph-break" if n % 2 else "graph-break-regression"
        sig = Signature(kind, "dynamo", f"Unsupported method call {n}", ("3.12",))
        campaign.new[sig.key] = (Finding(sig, "eager"), program)
    assert campaign._filing_reserve_s() == loop.MIN_CASE_BUDGET_S
    for n in range(2):
        sig = Signature("compile-error", "aot", f"AssertionError@torch/x{n}.py:f", ("3.12",))
        campaign.new[sig.key] = (Finding(sig, "aot_eager"), program)
    bug_s = campaign.config.minimise_budget_s + campaign.confirm_s
    assert campaign._filing_reserve_s() == 2 * bug_s + loop.MIN_CASE_BUDGET_S


def test_an_off_ladder_bug_or_a_backend_only_graph_break_on_a_sampled_cell_is_confirmed():
    """A planted compiler's bug is keyed apart from eager's even when eager
    shows the same cause, and a graph break only a slower backend shows is
    that backend's: both decide an interpreter set, so both are confirmed
    (the 50-program comparison with tcfuzz_add_one found one of each)."""
    program = Program("def f():\n    return 1\n")
    cells = CellScheduler(Policy.YIELD, ["eager", "tcfuzz_add_one"], INTERPS, adaptive=False)
    plan = cells.plan(2, INTERPS)
    outcomes = [_outcome(program, c.interpreter, c.backend, Verdict.DIVERGENCE) for c in plan]
    assert len(cells.confirmations(plan, outcomes, INTERPS)) == len(INTERPS) - 1
    ladder = CellScheduler(Policy.YIELD, ["eager", "aot_eager"], INTERPS, adaptive=False)
    plan = ladder.plan(2, INTERPS)
    outcomes = [_outcome(program, c.interpreter, c.backend) for c in plan]
    assert ladder.confirmations(plan, outcomes, INTERPS) == []
    [sampled] = [o for o in outcomes if o.backend == "aot_eager"]
    sampled.graph_breaks = [GraphBreak("Attempt to trace generator", "generator")]
    assert len(ladder.confirmations(plan, outcomes, INTERPS)) == len(INTERPS) - 1
