"""The corpus store survives kill -9, and the replay plugin fails the run on a regression."""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from harness.program import Program
from fuzz.corpus import render, store
from fuzz.triage.signature import Signature
from tests.conftest import ROOT, env_python, require_env

pytestmark = pytest.mark.slow

PROGRAM = "import torch\n\ndef f(x):\n    return x.sin()\n\ndef inputs():\n    return (torch.ones(3),)\n"

WRITER = textwrap.dedent('''
    import sys, itertools
    from pathlib import Path
    from harness.program import Program
    from fuzz.corpus import render, store
    from fuzz.triage.signature import Signature
    root = Path(sys.argv[1])
    body = "import torch\\n\\ndef f(x):\\n{}    return x\\n\\ndef inputs():\\n    return (torch.ones(3),)\\n"
    for n in itertools.count():
        sig = Signature("divergence", "dynamo", "value", ("3.12",) if n % 2 else ("3.13",))
        lines = "".join(f"    x = x + {k}\\n" for k in range(50 - n % 50))  # smaller and smaller: rewrites
        text = render.render_case(Program(body.format(lines)), sig, backend="eager", meta={"filler": "y" * 4000})
        store.write_case(store.case_path(root, sig), text)
        print(n, flush=True)
''')


def test_kill_9_while_writing_leaves_only_whole_cases(tmp_path):
    """Two writers rewrite the same two cases in a loop; each is SIGKILLed
    mid-stream. Every file that looks like a case parses, and no temp file
    is taken for a case."""
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": str(ROOT)}) for _ in range(2)]
    try:
        for w in writers:  # let each get well into its loop
            for _ in range(30):
                assert w.stdout.readline(), "the writer died before it was killed"
        time.sleep(0.05)
    finally:
        for w in writers:
            w.send_signal(signal.SIGKILL)
            w.wait()
            w.stdout.close()
    assert all(w.returncode == -signal.SIGKILL for w in writers)
    cases = store.list_cases(tmp_path)
    assert len(cases) == 2
    for path in cases:
        _, meta = store.read_case(path)
        assert meta["kind"] == "divergence" and meta["count"] >= 1 and meta["filler"] == "y" * 4000
        text = path.read_text()
        ast.parse(text)  # whole, down to the last line of its __main__ block
        assert text.endswith("\n") and text.rstrip().splitlines()[-1].strip().startswith("sys.exit(")
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert not [p for p in files if p.suffix == ".py" and p not in cases], "a temp or partial file looks like a case"
    assert all(p.name.startswith(".") for p in files if p not in cases)  # locks and any orphaned temp file


def test_replay_reports_known_failures_and_fails_on_a_regression(tmp_path):
    """`pytest -p harness.corpus_plugin DIR` on a corpus of two planted-backend
    cases that always reproduce and one that no longer does: the open one is a
    known failure (xfail), the one marked fixed is a regression and fails the
    run, the third passes and is listed as FIXED."""
    require_env("3.12")
    sig = Signature("divergence", "tcfuzz_add_one", "value", ("3.12",))
    other = Signature("divergence", "tcfuzz_add_one", "value", ("3.12", "3.13"))
    store.write_case(store.case_path(tmp_path, sig),
                      render.render_case(Program(PROGRAM), sig, backend="tcfuzz_add_one"))
    fixed = store.write_case(store.case_path(tmp_path, other),
                              render.render_case(Program(PROGRAM), other, backend="tcfuzz_add_one",
                                                 meta={"status": "fixed"}))
    gone = Signature("divergence", "dynamo", "value", ("3.12",))  # eager backend: no divergence, so "fixed"
    store.write_case(store.case_path(tmp_path, gone), render.render_case(Program(PROGRAM), gone, backend="eager"))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    proc = subprocess.run([str(env_python("3.12")), "-m", "pytest", "-p", "harness.corpus_plugin", "-p",
                           "no:cacheprovider", "-n", "3", "-rxX", str(tmp_path), "--tcfuzz-record"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "1 failed, 1 passed, 1 xfailed" in out and "REGRESSION" in out and fixed.name in out, out
    assert f"FIXED: {store.case_path(tmp_path, gone)} no longer reproduces on 3.12" in out, out
    _, meta = store.read_case(fixed)
    ((key, result),) = meta["replay"].items()  # "<python>/<the env's torch>"
    assert key.startswith("3.12/") and result == "reproduces"


def test_a_hanging_case_exits_1_with_the_stack_of_the_hang(tmp_path):
    """The corpus' timeout case (pytorch#152262, a hang in Dynamo) run as
    `python CASE` with HANG_S lowered to 10 s: exit 1 and the stack of the hang."""
    require_env("3.12")
    from fuzz.campaign import cells
    from fuzz.campaign.torch_releases import Matrix

    # the hang is fixed in torch 2.15: run it where it was filed (the mission's torch 2.12.0)
    python = cells.choose("3.12", Matrix.MISSION).interpreters[0].python
    text = (ROOT / "corpus" / "timeout" / "bc26fbb9f6fe.py").read_text()
    assert f"HANG_S = {render.HANG_S:g}" in text
    case = tmp_path / "case.py"
    case.write_text(text.replace(f"HANG_S = {render.HANG_S:g}", "HANG_S = 10"))
    started = time.monotonic()
    proc = subprocess.run([str(python), str(case)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=240, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "compiled: no return within 10 s" in proc.stdout and "most recent call first" in proc.stderr
    assert time.monotonic() - started < 200


GLOBALS_PROGRAM = """
import torch

class State:
    total = 0.0

def f(x):
    State.total = x.sum() * 2
    return 1

def inputs():
    return (torch.ones(2, 3),)
"""


@pytest.mark.parametrize("backend, exit_code", [("tcfuzz_add_one", 1), ("eager", 0)])
def test_a_globals_divergence_case_compares_class_attributes_after_the_whole_plan(tmp_path, backend, exit_code):
    """The harness compares module globals and class attributes after its
    whole call plan; the standalone case must too, or it never reproduces a
    stale-global bug (found on Inductor: a class attribute float written back
    from the previous call's value after a recompile)."""
    require_env("3.12")
    sig = Signature("divergence", "aot_eager", "globals", ("3.12",))
    text = render.render_case(Program(GLOBALS_PROGRAM), sig, backend=backend)
    assert "LAST_CALL = None  #" in text  # the whole plan
    case = tmp_path / "case.py"
    case.write_text(text)
    proc = subprocess.run([str(env_python("3.12")), str(case)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=240, stdin=subprocess.DEVNULL)
    assert proc.returncode == exit_code, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "['total', tensor(" in proc.stdout


ONE_VALUE_INPUTS = """
import torch

def f(x):
    {body}

def inputs():
    return torch.ones(0)
"""


@pytest.mark.parametrize("signature, body", [
    # format() of a tensor: an InternalTorchDynamoError on torch 2.15.0 (corpus compile-error/b0fdcb125e5e)
    ("compile-error|dynamo|InternalTorchDynamoError@torch/_dynamo/variables/base.py:as_python_constant|3.12",
     "return format(x)"),
    ("graph-break|dynamo|Call to `torch._dynamo.graph_break()`|3.12",
     "torch._dynamo.graph_break()\n    return x + 1"),
])
def test_a_case_whose_inputs_return_one_value_reproduces_standalone(tmp_path, signature, body):
    """``inputs()`` may return one value instead of a tuple (the minimiser
    makes ``(t,)`` into ``t`` where the signature holds): harness.plan passes
    it as one argument, and so must the case's runner, or ``f(*t)`` unpacks a
    0-element tensor into no arguments, eager and compiled raise the same
    TypeError, and ``python CASE`` exits 0."""
    require_env("3.12")
    text = render.render_case(Program(ONE_VALUE_INPUTS.format(body=body)), Signature.parse(signature),
                              backend="eager")
    case = tmp_path / "case.py"
    case.write_text(text)
    proc = subprocess.run([str(env_python("3.12")), str(case)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=240, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "missing 1 required positional argument" not in proc.stdout


GUARD_CALL_COMPILE_ERROR = '''\
import torch
HOP_SCALE = 0.5

@torch.compiler.nested_compile_region
def region_logged(x, log):
    log.append(0)
    return x * HOP_SCALE

def f(x2):
    xs = []
    t = region_logged(x2.detach(), xs)
    region_logged(t, xs)
    return x2

def inputs():
    return (torch.randn(0),)
'''


def test_a_compile_error_of_the_guard_call_is_filed_with_the_whole_plan_s_runner(tmp_path):
    """The default campaign of 2026-12-05 found two compile errors of the
    guard call (here: the float global HOP_SCALE changed for the guard call,
    and aot_eager's invoke_subgraph refuses the float operand, torch 2.15.0)
    and filed neither: eager against compiled twice each never makes the
    guard call, so ``python CASE`` exited 0. Filing tries that runner first,
    then the whole plan's, which reproduces."""
    require_env("3.12")
    sig = Signature.parse("compile-error|aot|BackendCompilerFailed(AssertionError)@torch/fx/interpreter.py:call_function"
                          "|3.12")
    texts = render.render_case_runners(Program(GUARD_CALL_COMPILE_ERROR), sig, backend="aot_eager")
    assert len(texts) == 2 and all(render.rerender(t) == t for t in texts)
    codes = []
    for k, text in enumerate(texts):
        case = tmp_path / f"case{k}.py"
        case.write_text(text)
        codes.append(subprocess.run([str(env_python("3.12")), str(case)], cwd=tmp_path, capture_output=True,
                                    text=True, timeout=240, stdin=subprocess.DEVNULL).returncode)
    assert codes == [0, 1]
