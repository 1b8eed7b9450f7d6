"""A fast check stops the compiled run after the call that showed the
finding: a compile error at the first call is checked with one compile, not
one per call of the plan (each later call recompiles and fails again), while
eager makes every call; the confirmation runs the whole plan."""

from __future__ import annotations

from harness.outcome import CallResult, Outcome, Verdict
from harness.program import Program
from fuzz.campaign.workers import Task
from fuzz.reduce.check import SignatureCheck
from fuzz.reduce.pipeline import minimize_source
from fuzz.triage.signature import findings

PLAN = ("fresh", "cached", "shape", "carried")


class _ShowsAt:
    """A pool whose programs show ``verdict`` at call ``at`` of a four-call
    plan on the interpreters ``where(source)`` names, and match elsewhere;
    it records (source, interpreter, compiled_calls) of every run; eager
    makes every call, and raises at ``shape`` where the source says so."""

    def __init__(self, where, verdict: Verdict = Verdict.COMPILE_ERROR, at: str = "fresh"):
        self.where, self.verdict, self.at, self.runs = where, verdict, at, []

    def run_all(self, tasks):
        tasks = list(tasks)
        self.runs += [(t.program.source, t.interpreter, t.compiled_calls) for t in tasks]
        return [self._outcome(t) for t in tasks]

    def _outcome(self, task: Task) -> Outcome:
        labels = PLAN[:task.compiled_calls] if task.compiled_calls else PLAN
        eager = [CallResult(label, "tensor([1.])") if label != "shape" or "eager raises" not in task.program.source
                 else CallResult(label, exc_type="RuntimeError") for label in PLAN]
        shows = task.interpreter in self.where(task.program.source) and self.at in labels
        if not shows:
            return Outcome("p", task.interpreter, task.backend, eager=eager, compiled=eager[:len(labels)])
        if self.verdict is Verdict.COMPILE_ERROR:
            compiled = [CallResult(label, exc_type="torch._inductor.exc.InductorError") for label in labels]
            return Outcome("p", task.interpreter, task.backend, verdict=Verdict.COMPILE_ERROR, call=self.at,
                           error_type="InductorError(AssertionError)", torch_frame="torch/_inductor/x.py:f",
                           eager=eager, compiled=compiled)
        return Outcome("p", task.interpreter, task.backend, verdict=Verdict.DIVERGENCE, aspect=None, call=self.at,
                       eager=eager, compiled=[CallResult(label, "tensor([2.])") for label in labels])


def _signature(pool, names):
    outcomes = pool.run_all([Task(Program("kept"), n, "inductor") for n in names])
    pool.runs.clear()
    return findings(outcomes)[0].signature


def test_a_compile_error_of_the_first_call_is_checked_with_one_call_and_confirmed_with_the_whole_plan():
    where = {"kept": {"3.12"}, "smaller": {"3.12"}, "gone": set(), "smaller, eager raises": {"3.12"}}
    pool = _ShowsAt(lambda source: where[source])
    sig = _signature(pool, ["3.12"])
    check = SignatureCheck(pool, Program(source="kept"), sig, "inductor", ["3.12"], fast=True)
    assert not check.fast  # one interpreter: nothing to make fast before the input has run
    assert check("kept") and pool.runs == [("kept", "3.12", None)]  # the input: the whole plan
    assert check.plan_calls == 1 and check.fast
    pool.runs.clear()
    assert check("smaller") and not check("gone")
    assert check.check_many(["smaller", "gone"]) == [True, False]
    assert {calls for _, _, calls in pool.runs} == {1}  # candidates: the first call compiled only
    # eager makes every call: a candidate whose eager raises at a later call is rejected right away
    assert not check("smaller, eager raises")
    pool.runs.clear()
    assert check.confirm("smaller") and pool.runs == [("smaller", "3.12", None)]


def test_without_fast_checks_every_check_makes_the_whole_plan():
    where = {"kept": {"3.12"}, "smaller": {"3.12"}}
    pool = _ShowsAt(lambda source: where[source])
    check = SignatureCheck(pool, Program(source="kept"), _signature(pool, ["3.12"]), "inductor", ["3.12"])
    assert check("kept") and check("smaller") and not check.fast
    assert {calls for _, _, calls in pool.runs} == {None}


def test_a_divergence_of_a_later_call_keeps_the_calls_before_it_and_one_of_the_last_call_keeps_them_all():
    where = {"kept": {"3.12", "3.13"}}
    at_shape = _ShowsAt(lambda source: where[source], Verdict.DIVERGENCE, at="shape")
    check = SignatureCheck(at_shape, Program(source="kept"), _signature(at_shape, ["3.12", "3.13"]), "inductor",
                           ["3.12", "3.13"], fast=True)
    assert check("kept") and check.plan_calls == 3
    at_last = _ShowsAt(lambda source: where[source], Verdict.DIVERGENCE, at="carried")
    check = SignatureCheck(at_last, Program(source="kept"), _signature(at_last, ["3.12"]), "inductor",
                           ["3.12"], fast=True)
    assert check("kept") and check.plan_calls is None and not check.fast


def test_a_minimisation_under_short_checks_ends_on_a_source_the_whole_plan_confirms():
    """Candidates make one call; the result is confirmed with the whole plan."""
    pool = _ShowsAt(lambda source: {"3.12"} if "bug" in source else set())
    source = ("import torch\n\ndef f(x):\n    a = 1\n    bug = 2\n    b = 3\n    return x\n\n"
              "def inputs():\n    return torch.ones(1)\n")
    sig = findings(pool.run_all([Task(Program(source), "3.12", "inductor")]))[0].signature
    pool.runs.clear()
    check = SignatureCheck(pool, Program(source=source), sig, "inductor", ["3.12"], fast=True)
    result = minimize_source(source, check, budget_s=60, stages=("source",))
    assert "bug" in result.source and "a = 1" not in result.source and result.fallbacks == 0
    assert any(calls == 1 for _, _, calls in pool.runs) and pool.runs[-1][2] is None  # confirmed in full
