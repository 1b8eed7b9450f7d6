"""The call plan and the side-effect rules of harness.execute, with a program
that must match and a variant that must diverge for each. The "compiled"
function here is a deliberately different Python function, so every rule is
exercised without depending on a torch bug. Runs inside a worker env."""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from harness import execute  # noqa: E402
from harness.program import Program  # noqa: E402

PROGRAM = '''
import torch

COUNT = 0
items = []


class Acc:
    scale = 2


def f(x):
    global COUNT
    COUNT += 1
    items.append(1)
    print("sum", round(float(x.sum()), 3))
    x.add_(1)
    return x * Acc.scale + COUNT


def inputs():
    return (torch.ones(3, 4),)
'''

# variants of f, each wrong in one way, with the aspect that must be reported
VARIANTS = {
    "value": "return x * Acc.scale + COUNT + 1",
    "stdout": 'print("sum!"); return x * Acc.scale + COUNT',
    "mutation": "y = x * Acc.scale + COUNT; x.mul_(0); return y",
    "globals": "items.append(2); return x * Acc.scale + COUNT",
    "global-state": "torch.set_grad_enabled(False); return x * Acc.scale + COUNT",
    "exception": "raise KeyError('k')",
}


def _runs(tmp_path, variant: str | None):
    program = Program(PROGRAM)
    ref_mod = execute.load_module(program, str(tmp_path / "p.py"))
    ref = execute._run(ref_mod, program, ref_mod.f, None)
    plan = ref.plan
    mod = execute.load_module(program, str(tmp_path / "p.py"))
    fn = mod.f
    if variant is not None:
        body = PROGRAM.split("    return x * Acc.scale + COUNT\n")[0] + textwrap.indent(
            VARIANTS[variant].replace("; ", "\n"), "    ") + "\n"
        namespace = mod.__dict__
        exec(compile(body.split("def f(x):", 1)[0].rsplit("\n", 1)[0] + "\ndef f(x):" + body.split("def f(x):", 1)[1],
                     "variant", "exec"), namespace)
        fn = namespace["f"]
    return plan, ref, execute._run(mod, program, fn, plan)


def test_the_plan_has_a_guard_call_and_a_shape_call(tmp_path):
    plan, ref, same = _runs(tmp_path, None)
    assert plan == ("fresh", "cached", "guard", "shape", "carried")
    assert execute._first_difference(ref, same) == (None, "")
    # the guard call saw the mutated class attribute, the shape call a grown input
    assert [c.result.value.split("values=")[0] for c in ref.calls][-1].startswith("tensor(shape=[3, 5]")


@pytest.mark.parametrize("aspect", sorted(VARIANTS))
def test_each_side_effect_rule_diverges(tmp_path, aspect):
    _, ref, res = _runs(tmp_path, aspect)
    assert execute._first_difference(ref, res)[0] == aspect


def test_a_plain_program_has_no_guard_call():
    program = Program("import torch\ndef f(x):\n    return x + 1\ndef inputs():\n    return (torch.ones(1),)\n")
    mod = execute.load_module(program, "/tmp/tcfuzz_plain.py")
    assert execute._run(mod, program, mod.f, None).plan == ("fresh", "cached", "carried")


def test_force_eager_stance_and_identity_backend_report_match(tmp_path):
    program = Program(PROGRAM)
    for backend in ("tcfuzz_force_eager", "tcfuzz_identity"):
        outcome = execute.run_program(program, backend, interpreter="test", workdir=str(tmp_path))
        assert outcome.verdict.value == "match", (backend, outcome)
        assert [c.label for c in outcome.compiled] == ["fresh", "cached", "guard", "shape", "carried"]


# torch.cond compiles itself when called eagerly (torch/_higher_order_ops/utils.py
# _hop_compile_and_call). On torch 2.15.0 that compile failed on the guard call,
# after SCALE changed, or answered with the first call's value, depending on
# what the process had compiled before: eager misbehaved, and the force_eager
# backend, which cannot be wrong, was reported as diverging.
HOP_PROGRAM = '''
import torch

SCALE = 0.5


def f(x):
    return torch.cond(x.sum() > 100, lambda a: torch.sin(a), lambda a: torch.cos(a) * SCALE, (x,))


def inputs():
    return (torch.ones(2),)
'''


def test_no_eager_run_passes_through_dynamo(tmp_path):
    """Eager runs are made under the force_eager stance (execute.eager_reference):
    the program matches under force_eager on every call, the guard call's
    changed SCALE included, in a first run and in a second one in the same
    process."""
    for _ in range(2):
        outcome = execute.run_program(Program(HOP_PROGRAM), "tcfuzz_force_eager", interpreter="test",
                                      workdir=str(tmp_path))
        assert outcome.verdict.value == "match", outcome
        assert [c.label for c in outcome.compiled][:3] == ["fresh", "cached", "guard"]
        assert outcome.compiled[2].value != outcome.compiled[0].value  # SCALE changed what the guard call returns


ANNOTATED = """
import torch

def f(x):
    def g(a: int) -> int:
        return a
    return x + (1.0 if g.__annotations__["a"] is int else 0.0)

def inputs():
    return (torch.zeros(1),)
"""


def test_a_program_runs_with_its_own_future_flags_not_the_harness_s(tmp_path):
    """The harness's modules start with ``from __future__ import
    annotations``, and ``compile`` inherits the caller's future flags unless
    told not to: every program ran with its annotations as strings, so a 3.14
    program's deferred annotations were never evaluated (the Dynamo bug of
    corpus/compile-error/a1ef5d0465fe was hidden). The annotation is the class
    ``int`` in eager and compiled runs."""
    outcome = execute.run_program(Program(ANNOTATED), "eager", interpreter="test", workdir=str(tmp_path))
    assert outcome.verdict.value == "match", outcome
    assert "values=[1.0]" in outcome.eager[0].value, outcome.eager[0]


def test_a_wrong_backend_diverges_on_value(tmp_path):
    outcome = execute.run_program(Program(PROGRAM), "tcfuzz_add_one", interpreter="test", workdir=str(tmp_path))
    assert (outcome.verdict.value, outcome.aspect, outcome.call) == ("divergence", "value", "fresh")


def _raise_from(filename: str, exc: str):
    namespace: dict = {}
    exec(compile(f"def boom():\n    raise {exc}\n", filename, "exec"), namespace)
    try:
        namespace["boom"]()
    except Exception as e:
        return e


def test_an_assert_inside_dynamo_is_torch_s_own_error_but_a_user_s_is_not():
    inside = _raise_from("/env/site-packages/torch/_dynamo/bytecode_transformation.py", "AssertionError()")
    user = _raise_from("/tmp/prog_1.py", "AssertionError()")
    op = _raise_from("/env/site-packages/torch/_ops.py", "RuntimeError('shape')")
    assert execute.raised_in_compiler(inside)
    assert not execute.raised_in_compiler(user) and not execute.raised_in_compiler(op)
    assert execute.innermost_torch_frame(inside) == "torch/_dynamo/bytecode_transformation.py:boom"


COUNTING = """
import torch
CALLS = []
def f(x):
    return x * len(CALLS)
def inputs():
    CALLS.append(1)
    return (torch.ones(2, 3),)
"""


def test_a_run_decides_its_plan_from_its_first_call_without_calling_inputs_again(tmp_path):
    program = Program(COUNTING)
    mod = execute.load_module(program, str(tmp_path / "p.py"))
    run = execute._run(mod, program, mod.f, None)
    assert run.plan == ("fresh", "cached", "shape", "carried")
    assert len(mod.CALLS) == 3  # one inputs() per call but carried: what f sees is what a standalone case sees
    assert [c.result.value.split("values=")[0] for c in run.calls][0].startswith("tensor(shape=[2, 3]")
    again = execute.load_module(program, str(tmp_path / "p.py"))
    assert execute._run(again, program, again.f, None, calls=1).plan == ("fresh",)


def test_a_wrapped_compile_error_is_recorded_with_its_inner_message() -> None:
    """BackendCompilerFailed's first line is only ``backend=... raised:``: a
    compile error records the wrapped error's message (known-issues.toml's
    limitation messages are matched against it)."""
    from torch._dynamo.exc import BackendCompilerFailed

    inner = RuntimeError("one of the variables needed for gradient computation has been modified by an "
                         "inplace operation: [torch.FloatTensor [4]]\nHint: ...")
    try:
        wrapped = BackendCompilerFailed("aot_eager", inner)
    except TypeError:  # an older signature: (backend_fn, inner_exception, traceback)
        wrapped = BackendCompilerFailed("aot_eager", inner, None)
    assert str(wrapped).startswith("backend=") and "inplace operation" not in str(wrapped).split("\n", 1)[0]
    assert execute.root_error_message(wrapped) == (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        "[torch.FloatTensor [4]]")
    assert execute.root_error_type(wrapped) == "BackendCompilerFailed(RuntimeError)"
    assert execute.root_error_message(RuntimeError("not wrapped")) == ""


# eager raises RuntimeError (a shape mismatch); Dynamo's fake-tensor run of the
# op raises TorchRuntimeError, a RuntimeError: the program's failure, not torch's,
# and what eager printed and mutated before its error is not compared either
SHAPE_MISMATCH = """
import torch
def f(x):
    print("before")
    x.add_(1)
    return x + torch.ones(3)
def inputs():
    return (torch.ones(2, 5),)
"""


def _failed_call(exc: BaseException):
    from harness.outcome import CallResult

    return execute._Call(CallResult("fresh", exc_type=execute.qualified_name(type(exc)), exc_message=str(exc)),
                         exc=exc)


def test_torch_s_wrapper_of_an_error_eager_raises_too_is_no_finding(tmp_path):
    from harness.outcome import Verdict
    from torch._dynamo.exc import TorchRuntimeError

    rejected = execute.run_program(Program(SHAPE_MISMATCH), "eager", interpreter="test", workdir=str(tmp_path))
    assert rejected.verdict is Verdict.MATCH, rejected
    assert rejected.compiled[0].exc_type == "torch._dynamo.exc.TorchRuntimeError"
    # TorchRuntimeError where eager raised IndexError: a program's `except IndexError`
    # misses it, so it stays torch's own error (compile-error/af739903defa, torch 2.12.0)
    wrapped = _failed_call(TorchRuntimeError("RuntimeError when making fake tensor call"))
    assert execute.wraps_eager_error(_failed_call(RuntimeError("shape")), wrapped)
    assert not execute.is_compile_error(_failed_call(RuntimeError("shape")), wrapped)
    assert execute.call_difference(_failed_call(RuntimeError("shape")), wrapped) is None
    for eager in (IndexError("index 0 is out of bounds"), Exception("too general to say")):
        assert not execute.wraps_eager_error(_failed_call(eager), wrapped)
        assert execute.is_compile_error(_failed_call(eager), wrapped)


def test_an_uncaptured_higher_order_op_error_is_typed_by_the_graph_break_its_body_hit() -> None:
    """torch raises UncapturedHigherOrderOpError ``from None`` with the inner
    graph break's text after a fixed prefix: its gb_type tells one HOP
    failure from another (and a documented limitation, such as aliasing,
    from a bug)."""
    from torch._dynamo.exc import UncapturedHigherOrderOpError

    message = ("This higher order operator doesn't work unless it is captured completely with torch.compile. "
               "Got graph break/error:\n\nEncountered aliasing during higher order op tracing\n"
               "  Higher Order Operator: torch.ops.higher_order.invoke_subgraph\n")
    assert execute.root_error_type(UncapturedHigherOrderOpError(message)) == (
        "UncapturedHigherOrderOpError[Encountered aliasing during higher order op tracing]")
    assert execute.root_error_type(UncapturedHigherOrderOpError("something else")) == "UncapturedHigherOrderOpError"
