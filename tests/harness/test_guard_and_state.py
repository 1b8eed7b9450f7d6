"""The guard call on objects and functions, BaseException as data, torch
modes and tensor types compared after each call, and process state put back
between runs and programs (harness.plan, harness.execute, harness.state).
Runs inside a worker env."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from harness import execute, state  # noqa: E402
from harness.program import Program  # noqa: E402

HOSTILE = Path(__file__).resolve().parent.parent / "hostile"


def run(source: str, tmp_path, backend: str = "eager"):
    return execute.run_program(Program(source), backend, interpreter="test", workdir=str(tmp_path))


BRANCH_ON_ATTRIBUTE = '''
import torch


class Config:
    def __init__(self):
        self.scale = 2


def f(cfg, x):
    if cfg.scale > 2:
        return x * cfg.scale
    return x + 1


def inputs():
    return (Config(), torch.ones(1))
'''

GAINS_ATTRIBUTE = '''
import torch


class Box:
    def __init__(self):
        self.name = "box"


def f(box, x):
    if hasattr(box, "extra"):
        return x - box.extra
    return x + 1


def inputs():
    return (Box(), torch.ones(1))
'''


def _values(calls):
    return [c.value for c in calls]


def test_the_guard_call_changes_an_attribute_of_the_argument_and_compiled_recompiles(tmp_path):
    o = run(BRANCH_ON_ATTRIBUTE, tmp_path)
    assert [c.label for c in o.eager] == ["fresh", "cached", "guard", "carried"]
    assert o.verdict.value == "match", o
    assert o.eager[2].value != o.eager[1].value  # eager took the other branch: scale 2 -> 3
    assert _values(o.compiled) == _values(o.eager) and o.recompiles >= 1


@pytest.mark.parametrize("has_it", [False, True])
def test_the_guard_call_adds_or_removes_an_attribute_the_program_tests_for(tmp_path, has_it):
    source = GAINS_ATTRIBUTE.replace('self.name = "box"', "self.extra = 5") if has_it else GAINS_ATTRIBUTE
    o = run(source, tmp_path)
    assert [c.label for c in o.eager] == ["fresh", "cached", "guard", "carried"]
    assert o.verdict.value == "match", o
    assert o.eager[2].value != o.eager[1].value  # the object gained (lost) "extra"
    assert _values(o.compiled) == _values(o.eager) and o.recompiles >= 1


def test_the_guard_call_changes_functions_closures_lists_and_dicts(tmp_path):
    o = run((HOSTILE / "guard_function.py").read_text(), tmp_path)
    assert o.verdict.value == "match", o
    assert "values=[8.0" in o.eager[1].value and "values=[11.0" in o.eager[2].value  # k 3->4, by 1->2, key "b"
    assert _values(o.compiled) == _values(o.eager) and o.recompiles >= 1


@pytest.mark.parametrize("name, exc_type", [("system_exit", "SystemExit"), ("keyboard_interrupt", "KeyboardInterrupt"),
                                            ("generator_exit", "GeneratorExit")])
def test_base_exceptions_of_the_program_are_data_eager_and_compiled(tmp_path, name, exc_type):
    o = run((HOSTILE / f"{name}.py").read_text(), tmp_path)
    assert o.verdict.value == "match", o
    assert {c.exc_type for c in o.eager + o.compiled} == {exc_type}


def test_an_exception_whose_str_raises_is_recorded_by_its_type(tmp_path):
    o = run((HOSTILE / "exception_str_raises.py").read_text(), tmp_path)
    assert o.verdict.value == "match", o
    assert o.eager[0].exc_type.endswith(".Broken") and "__str__ raised RuntimeError" in o.eager[0].exc_message


def test_a_program_raising_systemexit_while_loading_is_invalid(tmp_path):
    o = run("import sys\nsys.exit(2)\ndef f(x):\n    return x\ndef inputs():\n    return (1,)\n", tmp_path)
    assert o.verdict.value == "invalid" and "SystemExit" in o.detail


def _compiled_variant(source: str, variant_body: str, tmp_path):
    """eager A's run and a run of a different function standing for compiled code."""
    program = Program(source)
    ref_mod = execute.load_module(program, str(tmp_path / "p.py"))
    ref = execute._run(ref_mod, program, ref_mod.f, None)
    mod = execute.load_module(program, str(tmp_path / "p.py"))
    exec(compile(variant_body, "variant", "exec"), mod.__dict__)
    res = execute._run(mod, program, mod.__dict__["g"], ref.plan)
    state.restore(state.capture())  # nothing to put back between the two here but the modes below
    return ref, res


def test_a_leaked_autocast_state_is_caught(tmp_path):
    source = "import torch\ndef f(x):\n    return x + 1\ndef inputs():\n    return (torch.ones(2),)\n"
    saved = state.capture()
    try:
        ref, res = _compiled_variant(source, "def g(x):\n    torch.autocast('cpu').__enter__()\n    return x + 1\n",
                                     tmp_path)
    finally:
        restored = state.restore(saved)
    assert execute._first_difference(ref, res) == ("global-state", "fresh")
    assert any("autocast" in u for u in restored.undone) and not torch.is_autocast_enabled("cpu")


def test_a_lost_tensor_subclass_type_is_caught(tmp_path):
    source = ("import torch\nclass Tagged(torch.Tensor):\n    pass\ndef f(x):\n    return x.as_subclass(Tagged) + 1\n"
              "def inputs():\n    return (torch.ones(2),)\n")
    ref, res = _compiled_variant(source, "def g(x):\n    return x + 1\n", tmp_path)
    assert execute._first_difference(ref, res) == ("value", "fresh")
    ref, same = _compiled_variant(source, "def g(x):\n    return x.as_subclass(Tagged) + 1\n", tmp_path)
    assert execute._first_difference(ref, same) == (None, "")


def test_state_a_program_leaves_is_put_back_and_the_next_program_is_unchanged(tmp_path):
    after = (HOSTILE / "after_state.py").read_text()
    before = run(after, tmp_path)
    saved = state.capture()
    left = run((HOSTILE / "leaves_state.py").read_text(), tmp_path)
    restored = state.restore(saved, str(tmp_path))
    assert not restored.failed, restored
    for what in ("builtins.len rebound", "torch.sin rebound", "environment",
                 "sys.modules['fake_module'] added", "recursion limit", "handler of SIGUSR2"):
        assert what in left.state_left, (what, left.state_left)
    assert "torch._dynamo.config" in restored.undone  # the worker puts the config back after the program
    again = run(after, tmp_path)
    assert before.verdict.value == again.verdict.value == "match", again
    assert _values(again.eager) == _values(before.eager) and _values(again.compiled) == _values(before.compiled)
    assert "fake_module" not in sys.modules and "TCFUZZ_HOSTILE" not in os.environ
    assert torch.get_default_dtype() is torch.float32 and not torch.is_autocast_enabled("cpu")


def test_a_thread_the_program_leaves_running_is_reported(tmp_path):
    saved = state.capture()
    o = run((HOSTILE / "thread_left_running.py").read_text(), tmp_path)
    restored = state.restore(saved, str(tmp_path))
    assert o.verdict.value == "match", o
    assert "thread hostile-spinner still running" in o.state_left
    assert restored.threads and not restored.clean


RESUMES_IN_CONTEXTLIB = '''
import contextlib

import torch


def f(t0, t1):
    try:
        torch._dynamo.graph_break()
        with contextlib.nullcontext(t1) as v:
            t2 = torch.sigmoid(v)
        raise IndexError("i")
    except IndexError:
        t2 = t0 + 1
    return t2


def inputs():
    return (torch.ones(2), torch.ones(2))
'''


def test_what_dynamo_binds_in_a_watched_module_is_kept_for_the_cached_call(tmp_path):
    """Dynamo compiles a frame of contextlib's own code here and binds its resume
    function (``__resume_at_16_3``) in contextlib's globals. Putting the watched
    namespaces back after a call must keep it: deleting it made the cached call
    raise NameError, a divergence of the harness's making (campaign of 2026-12-07)."""
    o = run(RESUMES_IN_CONTEXTLIB, tmp_path)
    assert o.verdict.value == "match", (o.verdict, o.call, o.error_message)
