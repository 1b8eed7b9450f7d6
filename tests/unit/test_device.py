"""The device path without torch: recognising CUDA faults, the device in
signatures and corpus cases, worker environments, --python paths, and the
reasons GPU tests skip."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from harness import device
from harness.outcome import CallResult, Outcome, Phase, Verdict
from harness.program import Program, read_pep723
from fuzz.campaign import interpreters
from fuzz.corpus import render
from fuzz.errors import HarnessError
from fuzz.triage.signature import Signature, findings
from tests.conftest import env_python

CUDA_ASSERT = ("CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported "
               "at some other API call, so the stacktrace below might be incorrect.")


class AcceleratorError(RuntimeError):  # named as torch's
    pass


class OutOfMemoryError(RuntimeError):  # named as torch's
    pass


def test_cuda_faults_are_recognised_by_text_type_and_cause():
    assert device.fault_text(RuntimeError(CUDA_ASSERT)) == "CUDA error: device-side assert triggered"
    triton = RuntimeError("Triton Error [CUDA]: an illegal memory access was encountered")
    assert device.fault_text(triton) == "CUDA error: an illegal memory access was encountered"
    assert device.fault_text(AcceleratorError("misaligned address")) == "CUDA error: misaligned address"
    wrapped = ValueError("backend failed")
    wrapped.__cause__ = RuntimeError("CUDA error: an illegal memory access was encountered")
    assert device.fault_text(wrapped) == "CUDA error: an illegal memory access was encountered"
    # the context survives these: they are the program's failures, i.e. data
    assert device.fault_text(OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")) == ""
    assert device.fault_text(RuntimeError("CUDA error: out of memory")) == ""
    assert device.fault_text(IndexError("index 5 is out of bounds")) == ""
    assert device.fault_text(RuntimeError("Expected all tensors to be on the same device")) == ""


def _launch(kernel):
    class Launcher:  # shaped like Inductor's CachingAutotuner
        fn = staticmethod(kernel)

        def run(self):
            raise RuntimeError("CUDA error: an illegal memory access was encountered")

    Launcher().run()


def test_fault_site_names_the_kernel_without_its_index():
    def triton_red_fused_sum_3():
        pass

    with pytest.raises(RuntimeError) as info:
        _launch(triton_red_fused_sum_3)
    assert device.fault_site(info.value) == "triton_red_fused_sum"
    with pytest.raises(device.CudaFault) as fault:
        device.raise_if_fault(info.value)
    assert fault.value.what == "CUDA error: an illegal memory access was encountered"
    assert fault.value.where == "triton_red_fused_sum" and "Traceback" in fault.value.text
    assert device.raise_if_fault(KeyError("k")) is None  # not a fault: nothing raised


def test_fault_outcome_names_the_phase_and_its_signature_the_device():
    fault = device.CudaFault("CUDA error: device-side assert triggered", "triton_poi_fused_index", "trace")
    o = Outcome("p", "3.12", "inductor", device="cuda", eager=[CallResult()])
    device.record_fault(o, fault)
    assert o.verdict is Verdict.CRASH and o.phase is Phase.COMPILED and device.is_fault_outcome(o)
    (finding,) = findings([o])
    assert finding.signature.key == ("crash|inductor@cuda|CUDA error: device-side assert triggered"
                                     "@compiled:triton_poi_fused_index|3.12")
    eager = device.record_fault(Outcome("p", "3.12", "inductor", device="cuda"), device.CudaFault("CUDA error: x", "", ""))
    assert eager.phase is Phase.EAGER and eager.torch_frame == "eager" and eager.aspect is None


def test_cpu_signatures_are_unchanged_and_graph_breaks_stay_dynamo():
    def outcome(dev: str) -> Outcome:
        return Outcome("p", "3.12", "inductor", device=dev, verdict=Verdict.DIVERGENCE, aspect="value")

    assert [f.signature.key for f in findings([outcome("cpu")])] == ["divergence|inductor|value|3.12"]
    assert [f.signature.key for f in findings([outcome("cuda")])] == ["divergence|inductor@cuda|value|3.12"]
    from harness.outcome import GraphBreak

    gb = Outcome("p", "3.12", "eager", device="cuda", graph_breaks=[GraphBreak("Data-dependent branching", "r")])
    assert [f.signature.stage for f in findings([gb])] == ["dynamo"]


PROGRAM = """import torch

def f(x):
    return x.sin()

def inputs():
    return (torch.ones(3, requires_grad=True),)
"""


def test_a_case_found_on_cuda_says_so_and_moves_its_inputs_there():
    sig = Signature("divergence", "inductor@cuda", "value", ("3.12",))
    text = render.render_case(Program(PROGRAM), sig, backend="inductor", device="cuda")
    table = tomllib.loads(read_pep723(text)["content"])["tool"]["tcfuzz"]
    assert table["device"] == "cuda" and table["stage"] == "inductor@cuda"
    assert 'moved = value.detach().to("cuda")' in text and "def inputs(): return _to_device(_inputs_on_cpu())" in text
    # before the runner, also where the runner re-executes the file as module "case"
    assert 'if __name__ in ("__main__", "case"):  # found on cuda' in text
    assert text.index("_to_device(_inputs_on_cpu())") < text.rindex('if __name__ == "__main__":')
    compile(text, "case.py", "exec")
    # the program alone (what minimisation and a re-render start from) leaves the block out
    assert "_to_device" not in render.program_body(text) and "def f(x)" in render.program_body(text)
    cpu = render.render_case(Program(PROGRAM), Signature("divergence", "inductor", "value", ("3.12",)), backend="inductor")
    assert "_to_device" not in cpu and '# device = "cpu"' in cpu


def test_gpu_workers_get_launch_blocking_and_the_cuda_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TCFUZZ_CACHE", str(tmp_path))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    monkeypatch.setenv("LD_LIBRARY_PATH", "/usr/local/nvidia/lib64")
    monkeypatch.setenv("UNRELATED", "x")
    interp = interpreters.Interpreter("3.12", tmp_path / "python")
    assert interpreters.for_device([interp], "cpu") == [interp]
    (gpu,) = interpreters.for_device([interp], "cuda")
    env = gpu.environ()
    assert env["CUDA_LAUNCH_BLOCKING"] == "1" and env["TCFUZZ_DEVICE"] == "cuda"
    assert env["CUDA_VISIBLE_DEVICES"] == "0" and env["LD_LIBRARY_PATH"] == "/usr/local/nvidia/lib64"
    assert "UNRELATED" not in env and "CUDA_LAUNCH_BLOCKING" not in interp.environ()
    assert interpreters.for_device([gpu], "cuda") == [gpu]  # once is enough


def test_python_accepts_the_path_of_an_interpreter_with_torch(tmp_path):
    without_torch = tmp_path / "python3"  # answers the probe as a 3.12 without torch would
    without_torch.write_text('#!/bin/sh\necho "3.12 False"\n')
    without_torch.chmod(0o755)
    with pytest.raises(HarnessError, match="Python 3.12.* has no torch: install torch into it"):
        interpreters.resolve(str(without_torch))
    with pytest.raises(HarnessError, match="does not exist"):
        interpreters.resolve("/nonexistent/python3")
    python = env_python("3.12")
    if not python.exists():
        pytest.skip("no worker env for 3.12: run scripts/provision.sh")
    interp = interpreters.resolve(str(python))
    assert interp.name == "3.12" and interp.python == python and interp.python.is_absolute()


def test_gpu_tests_skip_with_the_problem_and_the_fix(monkeypatch, tmp_path):
    from tests.gpu import support

    monkeypatch.setattr(interpreters, "resolve", lambda spec: interpreters.Interpreter("3.12", Path(spec)))
    monkeypatch.setattr(interpreters, "cuda_problem", lambda i: f"Python 3.12 ({i.python}, torch built for CUDA 13.0) sees no GPU")
    reason = support.skip_reason("/x/python")
    assert reason == ("no GPU: Python 3.12 (/x/python, torch built for CUDA 13.0) sees no GPU; "
                      "scripts/gpu-check.sh runs these tests on a machine with one")
    monkeypatch.setattr(interpreters, "cuda_problem", lambda i: "")
    assert support.skip_reason("/x/python") == ""

    def missing(spec):
        raise HarnessError(f"interpreter {spec} does not exist")

    monkeypatch.setattr(interpreters, "resolve", missing)
    assert support.skip_reason("/nope").startswith("no interpreter for the GPU tests (interpreter /nope does not exist)")
    monkeypatch.setenv("TCFUZZ_GPU_PYTHON", "/opt/torch/bin/python3")
    assert support.gpu_interpreter_spec() == "/opt/torch/bin/python3"


def test_worker_replies_after_a_fault_say_retiring():
    request = {"id": 7, "backend": "inductor", "device": "cuda",
               "program": {"source": PROGRAM, "entry": "f", "inputs": "inputs", "generator": "manual",
                           "seed": None, "features": []}}
    reply = device.fault_reply(request, RuntimeError(CUDA_ASSERT), "3.12")
    assert reply["retiring"] and reply["id"] == 7
    o = Outcome.from_json(reply["outcome"])
    assert o.verdict is Verdict.CRASH and o.phase is Phase.HARNESS and o.torch_frame == "harness"
    assert o.program_id == Program(PROGRAM).program_id and o.device == "cuda"
    assert device.fault_reply(request, KeyError("k"), "3.12") is None
    crash = {"id": 8, "outcome": o.to_json()}
    device.mark_retiring(crash, request)
    assert crash["retiring"]
    fine = {"id": 9, "outcome": Outcome("p", "3.12", "eager").to_json()}
    device.mark_retiring(fine, {"device": "cpu"})
    assert "retiring" not in fine
