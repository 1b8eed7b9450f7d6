"""The carried call (harness.plan: the previous call's argument objects again,
as that call left them, with the module as the calls left it): what it
passes, where it is compared, how a rendered case replays it, and a stale
guard it finds that no call with fresh inputs can. Runs inside a worker env."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from harness import execute, plan  # noqa: E402
from harness.outcome import Aspect, CallResult, Verdict  # noqa: E402
from harness.program import Program  # noqa: E402
from fuzz.corpus import render  # noqa: E402  (stdlib-only: importable in a worker env)
from fuzz.triage.signature import Signature  # noqa: E402

# State that only a carried call sees: a list that grows, a generator half
# consumed, an object's private counter (the guard call changes only public
# scalars), a tensor changed in place, and inputs() counting its calls.
CARRIES = '''
import torch

MADE = []


class Box:
    def __init__(self):
        self._n = 0


def numbers():
    yield from range(10)


def f(log, gen, box, x):
    log.append(len(log))
    box._n += 1
    x.add_(1)
    return [list(log), next(gen), box._n, x.clone()]


def inputs():
    MADE.append(1)
    return [], numbers(), Box(), torch.zeros(1)
'''


def test_the_carried_call_gets_the_previous_call_s_objects_as_it_left_them(tmp_path):
    program = Program(CARRIES)
    module = execute.load_module(program, str(tmp_path / "p.py"))
    run = execute._run(module, program, module.f, None)
    assert run.plan == ("fresh", "cached", "guard", "carried")  # a Box passed in: the guard call
    assert len(module.MADE) == 3  # no inputs() for the carried call
    fresh, carried = run.calls[0].value, run.calls[-1].value
    assert fresh[:3] == [[0], 0, 1] and fresh[3].tolist() == [1.0]
    # the guard call's list, generator, box and tensor, one call further on
    assert carried[:3] == [[0, 1], 1, 2] and carried[3].tolist() == [2.0]


def test_a_plan_made_one_call_at_a_time_carries_the_objects_across(tmp_path):
    program = Program(CARRIES)
    module = execute.load_module(program, str(tmp_path / "p.py"))
    first = execute._run(module, program, module.f, ("fresh",))
    carried = execute._run(module, program, module.f, ("carried",), carried=first.passed)
    assert carried.passed is first.passed and len(module.MADE) == 1
    assert carried.calls[0].value[:3] == [[0, 1], 1, 2]


def test_the_float64_reference_carries_its_own_float64_arguments(tmp_path):
    program = Program(CARRIES)
    module = execute.load_module(program, str(tmp_path / "p.py"))
    run = execute._run(module, program, module.f, None, fp64=True)
    assert [c.value[3].dtype for c in run.calls] == [torch.float64] * 4
    assert run.calls[-1].value[3].tolist() == [2.0]  # the guard call's float64 tensor, changed once more
    assert run.calls[-1].value[:3] == [[0, 1], 1, 2]


# The program flips an attribute of the object it is given; with inputs()
# every call starts from "a", only the carried call from "b". A string: the
# guard call changes scalars, so it cannot make the flip for the program.
FLIPS = '''
import torch


class Switch:
    def __init__(self):
        self.mode = "a"


def f(s, x):
    out = x + 1 if s.mode == "b" else x - 1
    s.mode = "b" if s.mode == "a" else "a"
    return out


def inputs():
    return Switch(), torch.ones(3)
'''


@pytest.fixture
def guards_dropped(monkeypatch):
    """A planted stale guard: torch.compile with every guard dropped
    (``torch.compiler.skip_all_guards_unsafe`` as ``guard_filter_fn``), so
    the code compiled for the first call runs whatever the state."""
    compile_ = torch.compile

    def without_guards(fn, **kwargs):
        return compile_(fn, options={"guard_filter_fn": torch.compiler.skip_all_guards_unsafe}, **kwargs)

    monkeypatch.setattr(torch, "compile", without_guards)


def test_the_carried_call_finds_a_stale_guard_no_call_with_fresh_inputs_can(tmp_path, guards_dropped):
    program = Program(FLIPS)
    fresh_inputs_only = execute.run_program(program, "eager", interpreter="test", workdir=str(tmp_path), calls=4)
    assert [c.label for c in fresh_inputs_only.compiled] == ["fresh", "cached", "guard", "shape"]
    assert fresh_inputs_only.verdict is Verdict.MATCH, fresh_inputs_only
    outcome = execute.run_program(program, "eager", interpreter="test", workdir=str(tmp_path))
    assert (outcome.verdict, outcome.aspect, outcome.call) == (Verdict.DIVERGENCE, Aspect.VALUE, "carried")
    assert "values=[2.0" in outcome.eager[-1].value and "values=[0.0" in outcome.compiled[-1].value


def test_a_compiled_run_cut_short_compares_the_calls_it_made_and_eager_makes_them_all(tmp_path):
    """``compiled_calls``: the minimiser's fast check compiles only up to the
    call that showed the bug; eager's calls are all made (its behaviour is
    compared in full), and the globals that the later calls change are not
    compared (here eager counts five calls, compiled two)."""
    program = Program("import torch\n\nCOUNT = 0\n\n\ndef f(x):\n    global COUNT\n    COUNT += 1\n"
                      "    return x + COUNT\n\n\ndef inputs():\n    return (torch.ones(3),)\n")
    outcome = execute.run_program(program, "eager", interpreter="test", workdir=str(tmp_path), compiled_calls=2)
    assert [c.label for c in outcome.compiled] == ["fresh", "cached"]
    assert [c.label for c in outcome.eager] == ["fresh", "cached", "guard", "shape", "carried"]
    assert outcome.verdict is Verdict.MATCH, outcome
    whole = execute.run_program(program, "eager", interpreter="test", workdir=str(tmp_path))
    assert whole.verdict is Verdict.MATCH and len(whole.compiled) == 5, whole


def test_with_its_guards_dynamo_recompiles_for_the_carried_call(tmp_path):
    outcome = execute.run_program(Program(FLIPS), "eager", interpreter="test", workdir=str(tmp_path))
    assert outcome.verdict is Verdict.MATCH, outcome
    assert [c.label for c in outcome.compiled][-1] == "carried" and outcome.recompiles >= 1


def test_a_rendered_case_replays_the_carried_call(tmp_path, capsys, guards_dropped):
    sig = Signature("divergence", "dynamo", "value@carried", ("3.12",))
    assert render.divergence_last_call(sig) == "carried"
    case = tmp_path / "case.py"
    case.write_text(render.render_case(Program(FLIPS), sig, backend="eager"))
    namespace = {"__name__": "__main__", "__file__": str(case)}
    with pytest.raises(SystemExit) as exit_status:
        exec(compile(case.read_text(), str(case), "exec"), namespace)
    assert exit_status.value.code == 1  # the stale guard reproduces standalone
    assert "calls:    fresh, cached, guard, shape, carried\n" in capsys.readouterr().out
    eager, compiled = namespace["eager"], namespace["compiled"]
    assert [c[0].tolist() for c in eager[:4]] == [c[0].tolist() for c in compiled[:4]]
    assert eager[4][0].tolist() == [2.0] * 4 and compiled[4][0].tolist() == [0.0] * 4


def _call(label: str, value) -> execute._Call:
    return execute._Call(CallResult(label=label), value=value)


def _run(values: dict, globals_after) -> execute._Run:
    return execute._Run(calls=[_call(label, v) for label, v in values.items()], globals_after=globals_after)


def test_module_globals_are_compared_before_the_carried_call():
    """A program whose globals differ after the run is the "globals"
    divergence it was before the carried call existed, even where that
    call differs too; the carried call decides where the globals agree."""
    ref = _run({"fresh": 1, "cached": 1, "carried": 2}, {"N": 1})
    assert execute._first_difference(ref, _run({"fresh": 1, "cached": 1, "carried": 3}, {"N": 2})) == (
        Aspect.GLOBALS, "")
    assert execute._first_difference(ref, _run({"fresh": 1, "cached": 1, "carried": 3}, {"N": 1})) == (
        Aspect.VALUE, "carried")
    assert execute._first_difference(ref, _run({"fresh": 0, "cached": 1, "carried": 3}, {"N": 2})) == (
        Aspect.VALUE, "fresh")
    assert execute._first_difference(ref, _run({"fresh": 1, "cached": 1, "carried": 3}, {"N": 1}),
                                     skip=("carried",)) == (None, "")


# Eager reproduces every call but the carried one (its private counter is 1
# there, and it then returns the clock): that call alone is left uncompared.
CLOCK_ON_THE_SECOND_USE = '''
import time
import torch


class Box:
    def __init__(self):
        self._used = 0


def f(box, x):
    box._used += 1
    return x * 2 if box._used == 1 else time.perf_counter_ns()


def inputs():
    return Box(), torch.ones(2)
'''


def test_eager_disagreeing_with_itself_on_the_carried_call_alone_leaves_that_call_uncompared(tmp_path):
    program = Program(CLOCK_ON_THE_SECOND_USE)
    outcome = execute.run_program(program, "eager", interpreter="test", workdir=str(tmp_path))
    assert outcome.verdict is Verdict.MATCH, outcome
    assert "value@carried: eager differs from itself" in outcome.incomparable
    wrong = execute.run_program(program, "tcfuzz_add_one", interpreter="test", workdir=str(tmp_path))
    assert (wrong.verdict, wrong.aspect, wrong.call) == (Verdict.DIVERGENCE, Aspect.VALUE, "fresh")


def test_the_carried_call_is_always_last_and_described():
    assert plan.decide(False, ()) == ("fresh", "cached", "carried")
    assert plan.decide(True, (torch.ones(2),), last="shape")[-1] == "shape"
    assert "previous call" in plan.Call.CARRIED.describe()
