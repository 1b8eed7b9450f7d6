"""harness.plan with torch, and the plan a rendered corpus case makes: its
``__main__`` runner embeds harness/plan.py, so ``python CASE`` makes the
calls the harness made (scalar globals and class attributes mutated for the
guard call, tensors nested in tuples, lists and dicts grown for the shape
call); a case up to the cached call embeds only what those calls use and
sees what the whole plan sees. Runs inside a worker env."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from harness import execute, plan  # noqa: E402
from harness.program import Program  # noqa: E402
from fuzz.corpus import render  # noqa: E402  (stdlib-only: importable in a worker env)
from fuzz.triage.signature import Signature  # noqa: E402

NESTED = '''
import torch

N = 2
RATE = 0.25
DEBUG = False
NAME = "n"


class Config:
    scale = 3
    label = "cfg"


def f(pair, rest, table):
    a, b = pair
    return [tuple(a.shape), tuple(b.shape), tuple(rest[0].shape), tuple(table["w"].shape),
            N, RATE, DEBUG, Config.scale, float(torch.rand(1))]


def inputs():
    return ((torch.ones(2, 3), torch.ones(3)), [torch.ones(3, 3)], {"w": torch.ones(1, 3)})
'''

def _expected() -> list[list]:
    torch.manual_seed(0)
    r = float(torch.rand(1))  # the RNGs are seeded with 0 right before each call
    before, after = [2, 0.25, False, 3, r], [3, 0.75, True, 4, r]
    small, grown = [(2, 3), (3,), (3, 3), (1, 3)], [(2, 4), (4,), (4, 4), (1, 4)]
    # carried: the shape call's (grown) arguments again, the module as the guard mutation left it
    return [small + before, small + before, small + after, grown + after, grown + after]


def test_the_plan_mutates_scalars_and_grows_nested_tensors(tmp_path):
    program = Program(NESTED)
    module = execute.load_module(program, str(tmp_path / "p.py"))
    assert {(getattr(o, "__name__", o), n) for o, n in plan.guard_targets(module)} == {
        ("tcfuzz_program_" + program.program_id, "N"), ("tcfuzz_program_" + program.program_id, "RATE"),
        ("tcfuzz_program_" + program.program_id, "DEBUG"), ("Config", "scale")}
    run = execute._run(module, program, module.f, None)
    assert run.plan == (plan.Call.FRESH, plan.Call.CACHED, plan.Call.GUARD, plan.Call.SHAPE, plan.Call.CARRIED)
    assert run.plan == ("fresh", "cached", "guard", "shape", "carried")  # the labels are the strings of outcomes
    assert [c.result.label for c in run.calls] == ["fresh", "cached", "guard", "shape", "carried"]
    assert type(run.calls[0].result.label) is str
    assert [c.value for c in run.calls] == _expected()


def test_grow_shapes_keeps_containers_and_leaves():
    x = torch.ones(2, 3, requires_grad=True)
    grown = plan.grow_shapes(({"a": [x]}, 5))
    assert type(grown[0]["a"]) is list and grown[1] == 5
    assert grown[0]["a"][0].shape == (2, 4) and grown[0]["a"][0].is_leaf and grown[0]["a"][0].requires_grad
    assert plan.grow_shapes((torch.ones(1), [torch.ones(1, 1)])) is None
    assert plan.decide(False, (torch.ones(1),)) == ("fresh", "cached", "carried")
    assert plan.decide(True, (torch.ones(2),)) == ("fresh", "cached", "guard", "shape", "carried")
    assert plan.decide(True, (torch.ones(2),), last="guard") == ("fresh", "cached", "guard")
    assert plan.decide(True, (torch.ones(2),), limit=1) == ("fresh",)


@pytest.mark.parametrize("detail, calls", [
    ("globals", ["fresh", "cached", "guard", "shape", "carried"]),
    ("value@carried", ["fresh", "cached", "guard", "shape", "carried"]),
    ("value@guard", ["fresh", "cached", "guard"]),
    ("value", ["fresh", "cached"]),
])
def test_a_rendered_case_makes_the_calls_the_harness_made(tmp_path, capsys, detail, calls):
    program = Program(NESTED)
    module = execute.load_module(program, str(tmp_path / "p.py"))
    harness_run = execute._run(module, program, module.f, None)
    sig = Signature("divergence", "dynamo", detail, ("3.12",))
    case = tmp_path / "case.py"
    case.write_text(render.render_case(program, sig, backend="eager"))
    namespace = {"__name__": "__main__", "__file__": str(case)}
    with pytest.raises(SystemExit) as exit_status:
        exec(compile(case.read_text(), str(case), "exec"), namespace)
    assert exit_status.value.code == 0  # eager vs the eager backend: no divergence
    assert f"calls:    {', '.join(calls)}\n" in capsys.readouterr().out
    assert list(namespace["calls"]) == list(harness_run.plan[:len(calls)]) == calls
    eager = namespace["eager"]
    assert [c[0] for c in eager[:-1]] == [c.value for c in harness_run.calls][:len(calls)] == _expected()[:len(calls)]
    if detail == "globals":  # after the whole plan, as the harness compares them
        assert ["N", 3] in eager[-1] and ["scale", 4] in eager[-1] and ["NAME", "n"] in eager[-1]


# A program whose calls leave traces in every channel the runner compares: printed text, grad mode
# (reset before each call), a module global and a class attribute, an inputs() that counts its calls,
# and torch's and random's RNGs (seeded before inputs() and again before the call).
TRACES = '''
import random
import torch

COUNT = 0


class Box:
    seen = 0


def f(x, n):
    global COUNT
    entered = torch.is_grad_enabled()  # reset to True before each call
    COUNT += n
    Box.seen += 1
    print("call", COUNT, random.random())
    torch.set_grad_enabled(COUNT > 5)
    return x * torch.rand(2) + random.random(), entered


CALLS_OF_INPUTS = []


def inputs():
    CALLS_OF_INPUTS.append(len(CALLS_OF_INPUTS))
    return torch.rand(2, 2), len(CALLS_OF_INPUTS) * 3
'''


def _run_case(tmp_path, program_text, name, detail="value"):
    """exec a case rendered for divergence ``detail`` as ``python CASE`` runs it: (exit code, its namespace)."""
    sig = Signature("divergence", "dynamo", detail, ("3.12",))
    case = tmp_path / f"{name}.py"
    case.write_text(render.render_case(Program(program_text), sig, backend="eager"))
    namespace = {"__name__": "__main__", "__file__": str(case)}
    with pytest.raises(SystemExit) as exit_status:
        exec(compile(case.read_text(), str(case), "exec"), namespace)
    return exit_status.value.code, namespace, case.read_text()


def test_the_fresh_cached_runner_makes_the_calls_and_observations_of_the_whole_plan(tmp_path, capsys):
    """A case up to the cached call embeds only what those calls use of harness/plan.py; it must see
    what the runner with the whole plan sees, and what the harness saw, call by call."""
    code, compact, text = _run_case(tmp_path, TRACES, "compact")
    assert code == 0 and "class CallPlan" not in text and "def fresh_and_cached" in text
    # a comment naming __getattr__ keeps the whole plan (the plan's looks could run such code)
    code_full, full, text_full = _run_case(tmp_path, TRACES + "# __getattr__\n", "full")
    assert code_full == 0 and "class CallPlan" in text_full
    assert list(compact["calls"]) == list(full["calls"]) == ["fresh", "cached"]
    assert repr(compact["eager"]) == repr(full["eager"]) and repr(compact["compiled"]) == repr(full["compiled"])
    values, args, printed, grad = zip(*compact["eager"][:-1])
    assert [a[1] for a in args] == [3, 6] and printed[0].startswith("call 3 ") and printed[1].startswith("call 9 ")
    assert grad == (False, True)  # grad mode after each call: set by f, reset before the next
    assert [v[1] for v in values] == [True, True]
    assert ["COUNT", 9] in compact["eager"][-1] and ["seen", 2] in compact["eager"][-1]
    assert ["CALLS_OF_INPUTS", [0, 1]] in compact["eager"][-1]
    program = Program(TRACES)
    module = execute.load_module(program, str(tmp_path / "p.py"))
    harness_run = execute._run(module, program, module.f, None)
    assert [str(c.value) for c in harness_run.calls[:2]] == [str(v) for v in values]
    assert printed[0] == "call 3 0.8444218515250481\n"  # random seeded with 0 right before the call
    capsys.readouterr()


def test_a_fresh_cached_case_whose_program_runs_code_when_looked_at_keeps_the_whole_plan():
    subclass = NESTED + "\n\nclass Logged(torch.Tensor):\n    @classmethod\n    def __torch_function__(cls, *a, **k):\n" \
                        "        return super().__torch_function__(*a, **k)\n"
    for program_text, whole in ((NESTED, False), (subclass, True)):
        text = render.render_case(Program(program_text), Signature("divergence", "dynamo", "value", ("3.12",)),
                                  backend="eager")
        assert ("class CallPlan" in text) is whole and ("def fresh_and_cached" in text) is not whole
