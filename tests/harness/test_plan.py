"""harness.plan with torch, and the plan a rendered corpus case makes: its
``__main__`` runner embeds harness/plan.py, so ``python CASE`` makes the
calls the harness made (scalar globals and class attributes mutated for the
guard call, tensors nested in tuples, lists and dicts grown for the shape
call). Runs inside a worker env."""

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
    return [small + before, small + before, small + after, grown + after]


def test_the_plan_mutates_scalars_and_grows_nested_tensors(tmp_path):
    program = Program(NESTED)
    module = execute.load_module(program, str(tmp_path / "p.py"))
    assert {(getattr(o, "__name__", o), n) for o, n in plan.guard_targets(module)} == {
        ("tcfuzz_program_" + program.program_id, "N"), ("tcfuzz_program_" + program.program_id, "RATE"),
        ("tcfuzz_program_" + program.program_id, "DEBUG"), ("Config", "scale")}
    run = execute._run(module, program, module.f, None)
    assert run.plan == (plan.Call.FRESH, plan.Call.CACHED, plan.Call.GUARD, plan.Call.SHAPE)
    assert run.plan == ("fresh", "cached", "guard", "shape")  # the labels are the strings of outcomes
    assert [c.result.label for c in run.calls] == ["fresh", "cached", "guard", "shape"]
    assert type(run.calls[0].result.label) is str
    assert [c.value for c in run.calls] == _expected()


def test_grow_shapes_keeps_containers_and_leaves():
    x = torch.ones(2, 3, requires_grad=True)
    grown = plan.grow_shapes(({"a": [x]}, 5))
    assert type(grown[0]["a"]) is list and grown[1] == 5
    assert grown[0]["a"][0].shape == (2, 4) and grown[0]["a"][0].is_leaf and grown[0]["a"][0].requires_grad
    assert plan.grow_shapes((torch.ones(1), [torch.ones(1, 1)])) is None
    assert plan.decide(False, (torch.ones(1),)) == ("fresh", "cached")
    assert plan.decide(True, (torch.ones(2),), last="guard") == ("fresh", "cached", "guard")
    assert plan.decide(True, (torch.ones(2),), limit=1) == ("fresh",)


@pytest.mark.parametrize("detail, calls", [
    ("globals", ["fresh", "cached", "guard", "shape"]),
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
