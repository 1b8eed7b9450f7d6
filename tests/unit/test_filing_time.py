"""How a campaign spends its time on filing (no workers: fake pools and clocks):
the fuzz phase keeps the minimising share, a case is filed only with a floor
budget and the rest wait in the corpus backlog, and the minimiser's two-phase
check falls back to the last fully confirmed source."""

from __future__ import annotations

import os
import queue
from pathlib import Path

import pytest

from harness.outcome import GraphBreak, Outcome, Verdict
from harness.program import Program
from fuzz import cli
from fuzz.campaign import loop
from fuzz.campaign.config import CampaignConfig
from fuzz.campaign.interpreters import Interpreter
from fuzz.corpus import backlog
from fuzz.corpus.filing import FiledCase
from fuzz.reduce.check import SignatureCheck
from fuzz.reduce.pipeline import minimize_source
from fuzz.triage.signature import Finding, Signature


class _Clock:
    def __init__(self) -> None:
        self.now_s = 0.0

    def __call__(self) -> float:
        return self.now_s


def _campaign(tmp_path: Path, name: str, clock: _Clock, budget_s: float = 600.0) -> loop.Campaign:
    config = CampaignConfig(interpreters=[Interpreter("3.12", Path("/nonexistent/python3.12")),
                                          Interpreter("3.13", Path("/nonexistent/python3.13"))],
                            backends=["eager"], out_dir=tmp_path / name, corpus_dir=tmp_path / "corpus",
                            budget_s=budget_s, feedback=False)
    config.corpus_dir.mkdir(exist_ok=True)
    campaign = loop.Campaign(config)
    campaign.clock = clock
    campaign.started = clock()
    return campaign


class _SlowPool:
    """Runs each task in ``task_s`` seconds of ``clock``, one at a time; every program passes."""

    def __init__(self, clock: _Clock, task_s: float):
        self.clock, self.task_s = clock, task_s
        self.queue: list = []
        self.workers = [object(), object()]
        self.info: dict = {}
        self.ids = 0

    @property
    def pending(self) -> int:
        return len(self.queue)

    def submit(self, task) -> int:
        self.ids += 1
        self.queue.append((self.ids, task))
        return self.ids

    def next_result(self, timeout_s=None):
        task_id, task = self.queue.pop(0)
        self.clock.now_s += self.task_s
        return task_id, task, Outcome(task.program.program_id, task.interpreter, task.backend, verdict=Verdict.MATCH)


def test_the_fuzz_phase_stops_before_its_deadline_given_slow_programs(tmp_path):
    """A program takes 60 s (two runs of 30 s), two are in flight: started
    while time is left, the last ones would end up to two minutes late."""
    clock = _Clock()
    campaign = _campaign(tmp_path, "slow", clock)
    campaign.pool = _SlowPool(clock, task_s=30.0)
    campaign._next_program = lambda seed: Program(f"import torch\n\ndef f(x):\n    return x + {seed}\n\n"
                                                  "def inputs():\n    return (torch.ones(1),)\n")
    campaign._fuzz(deadline_s=300.0)
    assert campaign.progress.programs >= 3
    assert clock.now_s <= 300.0, f"the fuzz phase ran until {clock.now_s} s, past its 300 s deadline"
    assert 90.0 <= campaign.pace.expected_s() <= 150.0  # submission to last result, queueing included


class _SlowingPool(_SlowPool):
    """As _SlowPool, but each run after the first ``fast_runs`` takes ``slow_s``."""

    def __init__(self, clock: _Clock, task_s: float, slow_s: float, fast_runs: int):
        super().__init__(clock, task_s)
        self.slow_s, self.fast_runs, self.runs = slow_s, fast_runs, 0

    def next_result(self, timeout_s=None):
        self.runs += 1
        if self.runs > self.fast_runs:
            self.task_s = self.slow_s
        return super().next_result(timeout_s)


def test_the_fuzz_phase_stops_in_time_when_programs_get_slower_than_the_finished_ones_were(tmp_path):
    """Twelve runs of 10 s, then runs of 60 s (the machine got loaded): the
    mean of the programs finished lags behind, but the runs in flight come
    back further apart; the phase stops by the drain they need and ends
    within a run of its 600 s deadline (it ran until 720 s when only the
    finished programs' mean was looked at)."""
    clock = _Clock()
    campaign = _campaign(tmp_path, "slowing", clock)
    campaign.pool = _SlowingPool(clock, task_s=10.0, slow_s=60.0, fast_runs=12)
    campaign._next_program = lambda seed: Program(f"import torch\n\ndef f(x):\n    return x + {seed}\n\n"
                                                  "def inputs():\n    return (torch.ones(1),)\n")
    campaign._fuzz(deadline_s=600.0)
    assert clock.now_s <= 600.0 + 60.0, clock.now_s
    pace = loop.ProgramPace()
    for wall_s in (10.0, 10.0, 10.0):
        pace.record(wall_s)
    for now_s in (0.0, 5.0, 10.0, 40.0):  # results 5, 5 and 30 s apart: 13.3 s on average
        pace.record_result(now_s)
    assert pace.fits(100.0, 150.0, queued_runs=3) and not pace.fits(100.0, 150.0, queued_runs=4)
    # two Inductor runs of 60 s queued on two workers: the results' rate (13.3 s) says 27 s, the work 60 s
    assert pace.fits(100.0, 150.0, queued_runs=2) and not pace.fits(100.0, 150.0, 2, queued_work_s=120.0, parallel=2)
    assert pace.fits(100.0, 150.0, 2, queued_work_s=80.0, parallel=2)


def _finding(kind: str, detail: str, interpreters=("3.12", "3.13")) -> Finding:
    return Finding(Signature(kind, "dynamo", detail, tuple(interpreters)), "eager")


def _program(tag: str) -> Program:
    return Program(f"import torch\n\ndef f(x):\n    return x  # {tag}\n\ndef inputs():\n    return (torch.ones(1),)\n")


def _fake_filing(clock: _Clock, order: list[str], took_s: float):
    def file_finding(pool, finding, program, **kw):
        order.append(finding.signature.key)
        assert 0.3 * loop.MIN_CASE_BUDGET_S <= kw["budget_s"] <= kw["budget_s"]
        clock.now_s += took_s
        path = kw["corpus_dir"] / f"{finding.signature.id}.py"
        return FiledCase(finding.signature, path=path, standalone={"3.12": 1, "3.13": 1},
                         stats={"lines_before": 20, "lines_after": 5, "checks": 9, "elapsed_s": took_s - 30.0})
    return file_finding


def test_a_bucket_beyond_the_time_goes_to_the_backlog_and_the_next_campaign_files_it_first(tmp_path, monkeypatch):
    clock = _Clock()
    order: list[str] = []
    monkeypatch.setattr(loop, "file_finding", _fake_filing(clock, order, took_s=140.0))
    crash = _finding("crash", "SIGSEGV@torch/x.py:f")
    regression = _finding("graph-break-regression", "Attempt to trace generator [absent on 3.13]", ("3.12",))
    plain_break = _finding("graph-break", "Unsupported context manager")

    first = _campaign(tmp_path, "first", clock)
    first.pool = _SlowPool(clock, 1.0)
    clock.now_s = 600.0 - 320.0  # 320 s left: two cases of at least 150 s
    first.new = {f.signature.key: (f, _program(f.signature.kind)) for f in (plain_break, regression, crash)}
    first._file_new_buckets()
    assert order == [crash.signature.key, regression.signature.key]  # bugs first (filing_priority)
    waiting = backlog.load(tmp_path / "corpus")
    assert list(waiting) == [plain_break.signature.key]
    assert waiting[plain_break.signature.key].program == _program("graph-break")
    assert backlog.backlog_path(tmp_path / "corpus").exists()

    # the next campaign sees the same graph break (in another program) and a new crash:
    # bugs still go first, then the backlog's graph break before any new graph break
    order.clear()
    other_crash = _finding("crash", "SIGABRT@torch/y.py:g")
    second = _campaign(tmp_path, "second", clock)
    second.pool = _SlowPool(clock, 1.0)
    clock.now_s = second.started + 600.0 - 320.0
    other_break = _finding("graph-break", "Unsupported method call")
    second.new = {other_break.signature.key: (other_break, _program("graph-break 3")),
                  other_crash.signature.key: (other_crash, _program("crash 2")),
                  plain_break.signature.key: (plain_break, _program("graph-break 2"))}
    clock.now_s = second.started + 600.0 - 470.0  # three cases' time
    second._file_new_buckets()
    assert order == [other_crash.signature.key, plain_break.signature.key, other_break.signature.key]
    assert backlog.load(tmp_path / "corpus") == {}  # filed: out of the backlog


def test_an_unfiled_bucket_that_waits_again_keeps_its_first_program_and_counts_campaigns(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    found = _finding("crash", "SIGSEGV@torch/x.py:f")
    backlog.update(corpus, unfiled=[(found, _program("a"))], done=[], now="2026-12-01T10:00:00+00:00")
    backlog.update(corpus, unfiled=[(found, _program("b"))], done=[], now="2026-12-02T10:00:00+00:00")
    entry = backlog.load(corpus)[found.signature.key]
    assert entry.program == _program("a") and entry.campaigns == 2 and entry.finding == found
    assert entry.first_seen.startswith("2026-12-01") and entry.last_seen.startswith("2026-12-02")
    backlog.update(corpus, unfiled=[], done=[found.signature.key], now="x")
    assert not backlog.backlog_path(corpus).exists()


class _TwoPhase:
    """A check with SignatureCheck's two-phase interface: the fast check only
    asks for the marker; the full one also for the guard line."""

    def __init__(self) -> None:
        self.fast = True
        self.fast_calls = self.full_calls = 0

    def __call__(self, source: str) -> bool:
        if self.fast:
            self.fast_calls += 1
            return "12345" in source
        return self.confirm(source)

    def confirm(self, source: str) -> bool:
        self.full_calls += 1
        return "12345" in source and "guard = 7" in source


SOURCE = """import torch

def f(x, n):
    y = x * 2
    for i in range(n):
        y = y + i
    z = [x, y]
    z.append(y)
    marker = 12345
    guard = 7
    return y + z[0]

def inputs():
    return (torch.ones(3), 3)
"""


def test_the_two_phase_check_falls_back_to_the_last_confirmed_source():
    check = _TwoPhase()
    result = minimize_source(SOURCE, check, budget_s=60, stages=("source",))
    # the statements pass dropped the guard under fast checks; its confirmation failed,
    # so the reduction went back to the last best with the guard and went on with full checks
    assert result.fallbacks == 1 and not check.fast
    assert "guard = 7" in result.source and "12345" in result.source
    assert result.lines_after < result.lines_before
    # the chain of bests was bisected for the last one with the guard: fewer lines than the input
    checks, accepted = result.passes["confirm/full-signature"]
    assert checks >= 2 and accepted >= 1


def test_the_two_phase_check_keeps_a_confirmed_reduction_with_few_full_checks():
    class Honest(_TwoPhase):
        def confirm(self, source: str) -> bool:
            self.full_calls += 1
            return "12345" in source

    check = Honest()
    result = minimize_source(SOURCE, check, budget_s=60, stages=("source",))
    assert result.fallbacks == 0 and check.fast and "12345" in result.source
    assert result.lines_after < result.lines_before
    assert check.full_calls <= 3 < check.fast_calls  # the input, and one per stage whose best changed


class _BreaksOn:
    """A pool whose programs break (graph break) on the interpreters ``where(source)`` names."""

    def __init__(self, where):
        self.where, self.runs = where, []

    def run_all(self, tasks):
        self.runs += [(t.program.source, t.interpreter) for t in tasks]
        gb = GraphBreak(gb_type="Attempt to trace generator", reason="x")
        return [Outcome("p", t.interpreter, t.backend, verdict=Verdict.MATCH,
                        graph_breaks=[gb] if t.interpreter in self.where(t.program.source) else [])
                for t in tasks]


class _CrashesOn(_BreaksOn):
    """A pool whose programs crash (SIGSEGV in one torch frame) on the interpreters ``where(source)`` names."""

    def run_all(self, tasks):
        self.runs += [(t.program.source, t.interpreter) for t in tasks]
        return [Outcome("p", t.interpreter, t.backend, verdict=Verdict.CRASH, error_type="SIGSEGV",
                        torch_frame="torch/x.py:f") if t.interpreter in self.where(t.program.source)
                else Outcome("p", t.interpreter, t.backend, verdict=Verdict.MATCH) for t in tasks]


def test_a_fast_signature_check_runs_one_interpreter_and_its_confirmation_checks_both_ways():
    from fuzz.triage.signature import findings

    where = {"kept": {"3.12", "3.13"}, "smaller": {"3.12", "3.13"}, "only 3.12": {"3.12"}, "gone": set()}
    pool = _CrashesOn(lambda source: where[source])
    sig = findings(pool.run_all([loop.Task(Program("kept"), n, "eager", "cpu", False) for n in ("3.12", "3.13")]))[0]
    sig = sig.signature
    assert sig.interpreters == ("3.12", "3.13")
    pool.runs.clear()
    check = SignatureCheck(pool, Program(source="kept"), sig, "eager", ["3.12", "3.13"], fast=True)
    assert check("kept") and {i for s, i in pool.runs} == {"3.12", "3.13"}  # the input: in full
    pool.runs.clear()
    assert check("smaller") and check("only 3.12") and not check("gone")
    assert {i for s, i in pool.runs} == {"3.12"}  # candidates: the signature's first interpreter only
    assert check.confirm("smaller") and not check.confirm("only 3.12")  # not crashing on 3.13: another signature
    check.fast = False
    assert check.check_many(["smaller", "gone", "only 3.12"]) == [True, False, False]


def test_a_signature_absent_on_some_interpreters_is_fast_checked_where_it_must_stay_absent():
    """A fast check of a signature absent on some interpreters runs one of its
    own and every one it is absent from: measured, one interpreter alone let a
    planted bug of 3.11-3.13 reduce to 9 lines that also showed on 3.13t,
    rejected at confirmation, back to 63 lines."""
    from fuzz.triage.signature import findings

    where = {"kept": {"3.12", "3.13"}, "smaller": {"3.12", "3.13"}, "everywhere": {"3.12", "3.13", "3.14"},
             "gone": set()}
    pool = _CrashesOn(lambda source: where[source])
    names = ["3.12", "3.13", "3.14"]
    sig = findings(pool.run_all([loop.Task(Program("kept"), n, "eager", "cpu", False) for n in names]))[0]
    assert sig.signature.interpreters == ("3.12", "3.13")
    check = SignatureCheck(pool, Program(source="kept"), sig.signature, "eager", names, fast=True)
    assert check("kept") and check.fast
    pool.runs.clear()
    assert check("smaller") and not check("everywhere") and not check("gone")
    assert pool.runs == [("smaller", "3.12"), ("smaller", "3.14"), ("everywhere", "3.12"), ("everywhere", "3.14"),
                         ("gone", "3.12")]  # 3.14 only where the cause held on 3.12
    pool.runs.clear()
    assert check.check_many(["smaller", "everywhere", "gone"]) == [True, False, False]
    assert sorted(pool.runs) == sorted([("smaller", "3.12"), ("everywhere", "3.13"), ("gone", "3.12"),
                                        ("smaller", "3.14"), ("everywhere", "3.14")])
    assert check.confirm("smaller") and not check.confirm("everywhere")


def test_a_one_interpreter_signature_among_several_is_checked_in_full():
    """With one interpreter of its own and no short plan, a fast check would
    run what the full check runs."""
    from fuzz.triage.signature import findings

    where = {"kept": {"3.13"}, "smaller": {"3.13"}, "everywhere": {"3.12", "3.13"}}
    pool = _CrashesOn(lambda source: where[source])
    sig = findings(pool.run_all([loop.Task(Program("kept"), n, "eager", "cpu", False) for n in ("3.12", "3.13")]))[0]
    assert sig.signature.interpreters == ("3.13",)
    check = SignatureCheck(pool, Program(source="kept"), sig.signature, "eager", ["3.12", "3.13"], fast=True)
    assert not check.fast and check("kept")
    assert check("smaller") and not check("everywhere")  # crashing on 3.12 too is rejected right away


def test_fast_checks_of_a_batch_spread_over_the_signature_s_interpreters():
    sig = Signature("graph-break", "dynamo", "Attempt to trace generator", ("3.12", "3.13"))
    where = {"kept": {"3.12", "3.13"}, "a": {"3.12", "3.13"}, "b": {"3.12", "3.13"}, "only 3.13": {"3.13"}}
    pool = _BreaksOn(lambda source: where[source])
    check = SignatureCheck(pool, Program(source="kept"), sig, "eager", ["3.12", "3.13"], fast=True)
    assert check("kept") and check.spread == 2
    pool.runs.clear()
    assert check.check_many(["a", "b"]) == [True, True]
    assert pool.runs == [("a", "3.12"), ("b", "3.13")]  # one run each, both interpreters busy
    assert check.check_many(["only 3.13", "a"]) == [False, True]  # "only 3.13" ran on 3.12
    assert not check.confirm("only 3.13")


def test_a_graph_break_regression_is_always_checked_in_full():
    """Its absence elsewhere is its signature: one interpreter cannot show it."""
    sig = Signature("graph-break-regression", "dynamo", "Attempt to trace generator [absent on 3.12]", ("3.13",))
    check = SignatureCheck(_BreaksOn(lambda s: {"3.13"}), Program(source="kept"), sig, "eager", ["3.12", "3.13"],
                           fast=True)
    assert not check.fast and check("kept") and check.spread == 1


def test_a_graph_break_case_keeps_eager_s_behaviour():
    """Measured: a graph break's runs match (eager and compiled raise alike), and the check
    let a case become ``-x`` on a Generator, whose eager raises TypeError."""
    from harness.outcome import CallResult

    class Raising(_BreaksOn):
        def run_all(self, tasks):
            outs = super().run_all(tasks)
            for o, t in zip(outs, tasks):
                exc = "TypeError" if "raises" in t.program.source else None
                o.eager = [CallResult("fresh", "tensor([1.])" if exc is None else "", exc_type=exc)]
            return outs

    sig = Signature("graph-break", "dynamo", "Attempt to trace generator", ("3.12", "3.13"))
    for fast in (False, True):
        check = SignatureCheck(Raising(lambda s: {"3.12", "3.13"}), Program(source="kept"), sig, "eager",
                               ["3.12", "3.13"], fast=fast)
        assert check("kept") and check("smaller") and not check("smaller, raises")
        assert not check.confirm("smaller, raises")


class _QueuedPool(_SlowingPool):
    """As _SlowingPool, with its queue's head as the run a worker has
    started: ``withdraw`` takes back the others that ``keep`` lets go, and
    ``next_result`` returns by ``timeout_s`` (queue.Empty) as the pool does."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.head_spent_s = 0.0

    def next_result(self, timeout_s=None):
        left_s = (self.slow_s if self.runs + 1 > self.fast_runs else self.task_s) - self.head_spent_s
        if timeout_s is not None and timeout_s < left_s:
            self.clock.now_s += timeout_s
            self.head_spent_s += timeout_s
            raise queue.Empty
        spent_s, self.head_spent_s = self.head_spent_s, 0.0
        self.clock.now_s -= spent_s  # the run's time already passed
        return super().next_result(timeout_s)

    def withdraw(self, keep):
        head, rest = self.queue[:1], self.queue[1:]
        taken = [item for item in rest if not keep(item[0])]
        self.queue = head + [item for item in rest if keep(item[0])]
        return taken


class _UnwithdrawablePool(_SlowingPool):
    """As _SlowingPool, whose queued runs cannot be taken back."""

    def withdraw(self, keep):
        return []


def test_at_the_phase_end_the_runs_no_worker_started_are_taken_back_and_run_first_next(tmp_path):
    """Runs of 10 s, then of 120 s with four queued: the pace cannot see
    the queue's cost coming, and waiting for it ran 300 s past the 600 s
    end. At the end the programs with a run not started are taken back
    whole: the phase ends within the one run started, and they are the
    next round's (or ``--resume``'s) first programs, in order."""
    def slow_fuzz(pool_type):
        clock = _Clock()
        campaign = _campaign(tmp_path, pool_type.__name__, clock)
        campaign.pool = pool_type(clock, task_s=10.0, slow_s=120.0, fast_runs=40)
        campaign._next_program = lambda seed: Program(f"import torch\n\ndef f(x):\n    return x + {seed}\n\n"
                                                      "def inputs():\n    return (torch.ones(1),)\n", seed=seed)
        campaign._fuzz(deadline_s=600.0)
        return campaign, clock.now_s

    _, waited_until_s = slow_fuzz(_UnwithdrawablePool)  # the drain runs every queued run
    campaign, ended_s = slow_fuzz(_QueuedPool)
    assert ended_s <= 600.0 + 120.0 < waited_until_s, (ended_s, waited_until_s)
    taken = [seq for seq, _ in campaign.resume_queue]
    assert taken == sorted(taken) and taken, taken
    assert [seq for seq, _ in campaign.db.unfinished_programs()] == taken
    campaign.pool.task_s = campaign.pool.slow_s = 1.0
    campaign._fuzz(deadline_s=campaign.clock.now_s + 1200.0)
    done = {row["seq"] for row in campaign.db.programs() if row["done"]}
    assert set(taken) <= done and max(done) > max(taken), (taken, done)


def test_the_pool_gives_back_the_tasks_no_worker_started_but_those_kept(tmp_path):
    """WorkerPool.withdraw (no worker started: every task is still queued)."""
    from fuzz.campaign.workers import Task, WorkerPool

    pool = WorkerPool([Interpreter(n, Path(f"/nonexistent/python{n}")) for n in ("3.12", "3.13")], log_dir=tmp_path)
    program = Program("def f():\n    return 1\n")
    ids = [pool.submit(Task(program, n, "eager", "cpu", False)) for n in ("3.12", "3.13", "3.12", "3.13")]
    taken = pool.withdraw(keep=lambda task_id: task_id == ids[2])
    assert sorted(task_id for task_id, _ in taken) == [ids[0], ids[1], ids[3]]
    assert pool.pending == 1 and pool.queues["3.12"].get_nowait()[0] == ids[2]



class _BlockingWorker:
    """A worker whose run waits for ``release``; ``started`` is set when a run starts."""

    def __init__(self, interpreter, started, release):
        self.interpreter, self.started, self.release = interpreter, started, release

    def start(self):
        return None

    def run(self, task):
        self.started.set()
        self.release.wait(10)
        return task.interpreter

    def close(self):
        pass


def test_the_pool_gives_back_a_task_that_waits_for_a_run_slot(tmp_path):
    """Two workers, one run slot (``max_running=1``): the second worker has
    taken its task from its queue and waits for the slot. ``withdraw`` takes
    it back (no result comes for it) and leaves the running one; a campaign
    of six workers on two slots drained four such runs past its phase's end."""
    import threading
    import time

    from fuzz.campaign.workers import Task, WorkerPool

    pool = WorkerPool([Interpreter(n, Path(f"/nonexistent/python{n}")) for n in ("3.12", "3.13")],
                      log_dir=tmp_path, max_running=1)
    started, release = threading.Event(), threading.Event()
    pool.workers = [_BlockingWorker(w.interpreter, started, release) for w in pool.workers]
    pool.start()
    try:
        program = Program("def f():\n    return 1\n")
        first = pool.submit(Task(program, "3.12", "eager", "cpu", False))
        assert started.wait(10)
        second = pool.submit(Task(program, "3.13", "eager", "cpu", False))
        deadline = time.monotonic() + 10
        while pool.queues["3.13"].qsize() and time.monotonic() < deadline:  # its worker takes it, then waits
            time.sleep(0.01)
        time.sleep(0.05)
        taken = pool.withdraw(keep=lambda task_id: False)
        assert [task_id for task_id, _ in taken] == [second] and pool.pending == 1
        release.set()
        task_id, _, outcome = pool.next_result(timeout_s=10)
        assert (task_id, outcome) == (first, "3.12")
        time.sleep(0.1)
        assert pool.results_queue.empty()  # the withdrawn task never ran
    finally:
        release.set()
        pool.close()

class _GaugedWorker:
    """A worker whose run takes 50 ms and counts the runs in progress."""

    def __init__(self, interpreter, gauge):
        self.interpreter, self.gauge = interpreter, gauge

    def start(self):
        return None

    def run(self, task):
        import time

        with self.gauge["lock"]:
            self.gauge["now"] += 1
            self.gauge["peak"] = max(self.gauge["peak"], self.gauge["now"])
        time.sleep(0.05)
        with self.gauge["lock"]:
            self.gauge["now"] -= 1
        return task.interpreter

    def close(self):
        pass


@pytest.mark.parametrize("max_running", [None, 2])
def test_the_pool_runs_at_most_max_running_programs_at_once(tmp_path, max_running):
    """Six interpreters' workers on a 2-core machine: with ``max_running``
    (a campaign's ``--running``, the cores by default) no more than that many
    runs are in progress at once; without it, every worker runs."""
    import threading

    from fuzz.campaign.workers import Task, WorkerPool

    names = ("3.11", "3.12", "3.13", "3.13t", "3.14", "3.15")
    pool = WorkerPool([Interpreter(n, Path(f"/nonexistent/python{n}")) for n in names], log_dir=tmp_path,
                      max_running=max_running)
    gauge = {"lock": threading.Lock(), "now": 0, "peak": 0}
    pool.workers = [_GaugedWorker(w.interpreter, gauge) for w in pool.workers]
    pool.start()
    try:
        program = Program("def f():\n    return 1\n")
        got = pool.run_all([Task(program, n, "eager", "cpu", False) for n in names * 3])
    finally:
        pool.close()
    assert got == list(names * 3)
    if max_running is None:
        assert gauge["peak"] > 2, gauge
    else:
        assert gauge["peak"] == max_running, gauge


def test_a_campaign_runs_as_many_programs_at_once_as_the_machine_has_cores(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert cli.build_parser().parse_args(["run"]).running is None
    def config(*extra):
        return cli._new_config(cli.build_parser().parse_args(["run", "--python", "3.12", "--backend", "eager", *extra]))

    assert config().running == 2 and config("--running", "0").running == 0


def test_the_time_left_after_filing_too_short_for_a_case_is_fuzzed_and_its_finds_wait(tmp_path, monkeypatch):
    """Filing ends with 100 s of the 600 s left: no round with a case's
    filing fits (2 x MIN_CASE_BUDGET_S), so the campaign fuzzes those 100 s
    (it used to stop, its workers idle) and what they find waits in the
    backlog; it ends within the budget."""
    clock = _Clock()
    campaign = _campaign(tmp_path, "last", clock)
    pool = campaign.pool = _SlowPool(clock, task_s=1.0)
    pool.start = lambda: {}
    crash = _finding("crash", "SIGSEGV@torch/x.py:f")
    filings: list[float] = []

    def file_new_buckets():
        filings.append(clock.now_s)
        if len(filings) == 1:
            clock.now_s = 500.0  # the first round's filing
        else:
            campaign.new = {crash.signature.key: (crash, _program("crash"))}  # found in the last round
            loop.Campaign._file_new_buckets(campaign)

    campaign._file_new_buckets = file_new_buckets
    campaign._filing_reserve_s = lambda: 300.0
    campaign._next_program = lambda seed: Program(f"import torch\n\ndef f(x):\n    return x + {seed}\n\n"
                                                  "def inputs():\n    return (torch.ones(1),)\n", seed=seed)
    campaign._run_rounds()
    assert len(filings) == 2 and filings[0] <= 300.0, filings
    assert 590.0 <= clock.now_s <= 600.0, clock.now_s
    after_filing = [row for row in campaign.db.programs() if row["done"]]
    assert campaign.progress.programs == len(after_filing) > 0
    assert list(backlog.load(tmp_path / "corpus")) == [crash.signature.key]
