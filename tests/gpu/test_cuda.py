"""The GPU path on a real GPU: Inductor through Triton, CUDA faults, cases
that run on CUDA standalone. Marked ``gpu``; without a GPU each test skips
with the reason (tests.gpu.support). ``scripts/gpu-check.sh`` runs them."""

from __future__ import annotations

import pytest

from harness.outcome import Verdict
from harness.program import Program
from fuzz.campaign import interpreters
from fuzz.corpus import render, store
from fuzz.triage.signature import findings
from fuzz.campaign.workers import Task, Worker
from tests.gpu.support import gpu_interpreter_spec, session_skip_reason

pytestmark = [pytest.mark.gpu, pytest.mark.slow]


@pytest.fixture(scope="module")
def interp():
    reason = session_skip_reason()
    if reason:
        pytest.skip(reason)
    return interpreters.for_device([interpreters.resolve(gpu_interpreter_spec())], "cuda")[0]


@pytest.fixture(scope="module")
def worker(interp, tmp_path_factory):
    w = Worker(interp, tmp_path_factory.mktemp("logs"), run_timeout_s=120)
    w.start()
    yield w
    w.close()


def run(worker: Worker, source: str, backend: str = "inductor"):
    return worker.run(Task(Program(source), worker.interpreter.name, backend, "cuda"))


# A reduction over a row length that is no multiple of Triton's block sizes.
REDUCTION = """import torch

def f(x, w):
    return (x * w).sum(-1).softmax(0), (x.sin() + w).amax(0)

def inputs():
    g = torch.Generator().manual_seed(0)
    return torch.randn(300, 1037, generator=g), torch.randn(1037, generator=g)
"""

OUT_OF_BOUNDS = """import torch

def f(x, i):
    return x[i] + 1

def inputs():
    return torch.ones(3), torch.tensor([5])
"""

SIN = """import torch

def f(x):
    return x.sin() * 2

def inputs():
    return (torch.linspace(0, 1, 37),)
"""


def test_inductor_compiles_through_triton_and_matches_eager_cuda(worker):
    o = run(worker, REDUCTION)
    assert o.device == "cuda" and o.verdict is Verdict.MATCH, o
    assert o.graph_count >= 1 and not o.graph_breaks


def test_device_side_assert_is_a_crash_and_the_worker_is_replaced(worker):
    o = run(worker, OUT_OF_BOUNDS, "eager")
    assert o.verdict is Verdict.CRASH and o.error_type == "CUDA error: device-side assert triggered", o
    assert o.phase == "eager" and o.torch_frame.startswith("eager")
    (finding,) = [f for f in findings([o]) if f.signature.kind == "crash"]
    assert finding.signature.stage == "dynamo@cuda" and "CUDA error: device-side assert" in finding.signature.detail
    assert not worker.alive  # it exited: its CUDA context was poisoned
    assert run(worker, SIN, "eager").verdict is Verdict.MATCH  # a fresh worker took over


def test_a_case_found_on_cuda_runs_on_cuda_standalone(worker, interp):
    o = run(worker, SIN, "tcfuzz_add_one")
    assert o.verdict is Verdict.DIVERGENCE
    (finding,) = findings([o])
    assert finding.signature.stage == "tcfuzz_add_one@cuda"
    text = render.render_case(Program(SIN), finding.signature, backend=finding.backend, device="cuda")
    assert '# device = "cuda"' in text
    assert store.run_standalone(text, [interp]) == {interp.name: 1}
    clean = render.render_case(Program(SIN), finding.signature, backend="eager", device="cuda")
    assert store.run_standalone(clean, [interp]) == {interp.name: 0}


def test_repro_runs_a_cuda_case_on_cuda(interp, tmp_path, capsys):
    from fuzz import cli

    case = tmp_path / "case.py"
    case.write_text(OUT_OF_BOUNDS)
    code = cli.main(["repro", str(case), "--python", gpu_interpreter_spec(), "--backend", "eager",
                     "--device", "cuda", "--log-dir", str(tmp_path / "logs")])
    out = capsys.readouterr().out
    # the table's cell is triage's ("crash * · <id> …"); the line below it names the cell's error and phase
    assert code == 1 and "crash * · " in out, out
    assert f"{interp.name}/eager: CUDA error: device-side assert triggered at eager (phase eager)" in out, out
