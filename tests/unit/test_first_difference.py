"""Graph-break regressions by their first difference (fuzz.triage.signature):
a finding's consequences do not repeat the finding, and a break without a
user line (line 0) is placed by its twin or left out."""

from __future__ import annotations

from harness.outcome import GraphBreak, Outcome, Verdict
from fuzz.triage.signature import break_sequence, findings, first_difference

EARLY = "Attempted to read undefined local variable"
BRANCH = "Data-dependent branching"
GENERATOR = "Attempt to trace generator"


def _run(interp: str, *breaks: tuple[str, int]) -> Outcome:
    return Outcome(program_id="p", interpreter=interp, backend="eager", verdict=Verdict.MATCH,
                   graph_breaks=[GraphBreak(gb_type=g, reason=g, filename="/tmp/p.py" if line else "", lineno=line)
                                 for g, line in breaks])


def test_consequences_do_not_repeat_the_first_difference_s_own_gb_type():
    """3.13 breaks early (counted twice, and again in a loop at another line)
    and never reaches the branch 3.12 breaks on: the consequence is the branch alone."""
    outs = [_run("3.12", (BRANCH, 9), (BRANCH, 9)),
            _run("3.13", (EARLY, 5), (EARLY, 5), (EARLY, 7))]
    first = first_difference(outs)
    assert (first.gb_type, first.lineno, first.interpreters) == (EARLY, 5, ("3.13",))
    assert first.consequences == ("3.12: Data-dependent branching at line 9",)
    [regression] = [f for f in findings(outs) if f.signature.kind == "graph-break-regression"]
    assert regression.signature.detail == f"{EARLY} [absent on 3.12]"
    assert all(EARLY not in c for c in regression.consequences)


def test_a_line_0_break_of_a_generator_frame_is_left_out_of_the_sequence():
    """A generator's own frame refused eagerly after its caller broke: Dynamo
    gives no user line (0), and no other break of its gb_type gives one."""
    outs = [_run("3.12", (BRANCH, 9)),
            _run("3.13", (EARLY, 5), (GENERATOR, 0))]
    assert break_sequence(outs[1]) == [(5, EARLY)]
    first = first_difference(outs)
    assert (first.gb_type, first.lineno) == (EARLY, 5)  # not the line-0 break, which would sort first
    assert first.consequences == ("3.12: Data-dependent branching at line 9",)
    assert all("line 0" not in c for f in findings(outs) for c in f.consequences)


def test_a_line_0_break_takes_the_line_of_its_twin_in_the_same_run():
    """One break counted twice (graph_break and unimplemented) and logged once:
    the unlogged count is that break, at its line; so it cancels with the other
    interpreter's and is no consequence."""
    run = _run("3.13", (BRANCH, 9), (BRANCH, 0))
    assert break_sequence(run) == [(9, BRANCH), (9, BRANCH)]
    outs = [_run("3.12", (BRANCH, 9), (BRANCH, 9), (EARLY, 4)), run]
    first = first_difference(outs)
    assert (first.gb_type, first.lineno, first.interpreters, first.consequences) == (EARLY, 4, ("3.12",), ())
    # two lines for its gb_type: which one is unknown, so it is left out
    assert break_sequence(_run("3.13", (BRANCH, 9), (BRANCH, 12), (BRANCH, 0))) == [(9, BRANCH), (12, BRANCH)]


def test_only_line_0_breaks_differ_then_each_regression_is_its_own_finding():
    outs = [_run("3.12", (BRANCH, 9)), _run("3.13", (BRANCH, 9), (GENERATOR, 0))]
    assert first_difference(outs) is None
    assert {f.signature.detail for f in findings(outs)} == {BRANCH, f"{GENERATOR} [absent on 3.12]"}


def test_the_same_breaks_in_another_order_are_no_difference():
    outs = [_run("3.12", (BRANCH, 9), (EARLY, 5)), _run("3.13", (EARLY, 5), (BRANCH, 9))]
    assert first_difference(outs) is None
