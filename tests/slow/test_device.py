"""The GPU path without a GPU: a simulated CUDA fault in a real worker, the
CLI's refusal of ``--device cuda``, and input placement in a worker env."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from harness.outcome import Verdict
from harness.program import Program
from fuzz.campaign import interpreters
from fuzz.triage.signature import findings
from fuzz.campaign.workers import Task, WorkerPool
from tests.conftest import env_python, require_env

pytestmark = pytest.mark.slow

# What torch raises after a device-side assert, raised by the program itself.
EAGER_FAULT = """import torch

def f(x):
    raise torch.AcceleratorError("CUDA error: device-side assert triggered\\n"
                                 "CUDA kernel errors might be asynchronously reported at some other API call")

def inputs():
    return (torch.ones(3),)
"""

FINE = """import torch

def f(x):
    return x * 2

def inputs():
    return (torch.ones(3),)
"""


def test_simulated_cuda_fault_is_a_crash_and_the_pool_replaces_the_worker(tmp_path):
    require_env("3.12")
    with WorkerPool([interpreters.resolve("3.12")], jobs=1, log_dir=tmp_path) as pool:
        pool.start()
        first = pool.workers[0].proc.pid
        eager, compiled, after = pool.run_all([
            Task(Program(EAGER_FAULT), "3.12", "eager"),  # the program raises what torch raises after an assert
            Task(Program(FINE), "3.12", "tcfuzz_cuda_fault"),  # a Triton kernel's fault, simulated by the backend
            Task(Program(FINE), "3.12", "eager"),
        ])
        assert eager.verdict is Verdict.CRASH and eager.error_type == "CUDA error: device-side assert triggered"
        assert eager.phase == "eager" and eager.torch_frame == "eager"
        # on a fresh worker (the faulted one exited), eager passes and compiled faults
        assert compiled.verdict is Verdict.CRASH and compiled.phase == "compiled"
        assert compiled.torch_frame == "compiled:triton_poi_fused_simulated"
        (sig,) = [f.signature for f in findings([compiled])]
        assert sig.key == ("crash|tcfuzz_cuda_fault|CUDA error: an illegal memory access was encountered"
                           "@compiled:triton_poi_fused_simulated|3.12")
        assert after.verdict is Verdict.MATCH
        assert pool.workers[0].proc.pid != first
    log = "".join(p.read_text() for p in tmp_path.glob("worker-*.log"))
    # each faulted worker retired: after the CUDA fault, or first because the
    # fault left a thread running (harness.state), which retires it too
    assert log.count("exiting after a CUDA fault") + log.count("exiting: the program left state behind") == 2, log


def test_cli_refuses_cuda_where_torch_sees_no_gpu(tmp_path, capsys):
    require_env("3.12")
    if shutil.which("nvidia-smi"):
        pytest.skip("this machine has an NVIDIA GPU: --device cuda is not refused here")
    from fuzz import cli

    code = cli.main(["run", "--device", "cuda", "--python", "3.12", "--programs", "1", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err
    assert "--device cuda: Python 3.12" in err and "sees no GPU" in err and "--device cpu" in err
    assert not (tmp_path / "campaign.sqlite").exists()


TO_DEVICE = """
import torch
from harness.device import to_device
leaf = torch.ones(2, requires_grad=True)
nonleaf = torch.ones(2, requires_grad=True) * 2
args = (leaf, [nonleaf, 3], {"k": torch.arange(3)}, torch.nn.Linear(2, 2), "s")
assert to_device(args, "cpu")[0] is leaf  # already there: not copied
for device in ("cpu", "meta"):
    moved = to_device(args, device)
    assert type(moved) is tuple and type(moved[1]) is list and moved[1][1] == 3 and moved[4] == "s"
    assert moved[0].device.type == device and moved[0].is_leaf and moved[0].requires_grad
    assert moved[1][0].device.type == device and not moved[1][0].is_leaf and moved[1][0].requires_grad
    assert moved[2]["k"].device.type == device and not moved[2]["k"].requires_grad
    assert moved[3].weight.device.type == device  # modules move in place
print("ok")
"""


def test_to_device_keeps_structure_and_leaves():
    require_env("3.12")
    from fuzz.campaign.interpreters import ROOT

    proc = subprocess.run([str(env_python("3.12")), "-c", TO_DEVICE], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.stdout.strip() == "ok", proc.stderr
