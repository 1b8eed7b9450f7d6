"""The device a program runs on: placing inputs on it, and CUDA faults.

With ``--device cuda`` a program's ``inputs()`` still builds its tensors on
the CPU (its own seeded RNG, so CPU and CUDA runs start from the same
numbers); ``to_device`` then moves them to the GPU. Eager CUDA is the
reference for compiled CUDA; where the two differ in floating-point values, a
float64 run on the CPU breaks the tie (``harness.execute`` and
``harness.compare``: torch's ``same(ref, res, fp64_ref=...)`` rule).

A device-side assert or an illegal memory access poisons the CUDA context:
every later CUDA call in the process fails. Such a fault is recorded as a
``crash`` whose signature carries the CUDA error text and where it happened,
and the worker exits so that the host replaces it. CUDA faults are
recognised by exception type (``torch.AcceleratorError``) and by the message
texts of torch, the CUDA runtime and Triton, so a program that raises the same
text on a machine without a GPU simulates one (the tests do that).
"""

from __future__ import annotations

import os
import re
import traceback
from typing import Any

from harness import compare
from harness.outcome import Outcome, Phase, Verdict
from harness.settings import CompileSettings
from harness.tracebacks import cause_chain

# Devices ``run_program`` accepts.
DEVICES = ("cpu", "cuda")
# Exit status of a worker that leaves after a CUDA fault (fuzz.campaign.workers
# replaces it; the reply it sent first says "retiring").
EXIT_CUDA_FAULT = 88
# Error texts of a fault that poisons the CUDA context: torch's "CUDA error:",
# Triton's launcher ("Triton Error [CUDA]: ..."), the driver API, and the
# cuBLAS/cuDNN failures that follow an asynchronous kernel fault.
_FAULT_TEXT = re.compile(
    r"(?:CUDA error|CUDA driver error|Triton Error \[CUDA\]|CUDA Error): *(?P<what>[^\n]+)"
    r"|(?P<status>CUBLAS_STATUS_EXECUTION_FAILED|CUDNN_STATUS_EXECUTION_FAILED|CUDNN_STATUS_INTERNAL_ERROR)"
)
# Trailing kernel index in an Inductor kernel name ("triton_poi_fused_add_0"):
# it depends on the order of kernels in the output code, which minimisation changes.
_KERNEL_INDEX = re.compile(r"_\d+$")
# An Inductor kernel launch in generated output code: "triton_poi_fused_add_0.run(".
_KERNEL_CALL = re.compile(r"\b(triton_\w+)\.run\(")


class CudaFault(Exception):
    """A CUDA fault during a program's run; the context is poisoned.

    ``what`` is the normalised error ("CUDA error: device-side assert
    triggered"); ``where`` names the kernel or frame ("triton_poi_fused_index",
    "torch/_tensor.py:__getitem__", or "" when unknown).
    """

    def __init__(self, what: str, where: str, text: str):
        super().__init__(what)
        self.what, self.where, self.text = what, where, text


def fault_text(exc: BaseException) -> str:
    """``"CUDA error: <what>"`` if ``exc`` (or an exception in its cause
    chain) is a CUDA fault that poisons the context, else ``""``.

    Out-of-memory errors (``torch.OutOfMemoryError``, "CUDA error: out of
    memory") are not faults: the context survives them, so they are the
    program's failure, i.e. data.
    """
    for item in cause_chain(exc):
        if type(item).__name__ == "OutOfMemoryError":
            continue
        match = _FAULT_TEXT.search(compare.safe_str(item))  # a program's __str__ may raise
        if match:
            what = (match.group("what") or match.group("status")).strip().rstrip(".")
            if "out of memory" in what:  # an allocation failed; the context lives on
                continue
            return "CUDA error: " + compare.normalise_text(what)[:160]
        if type(item).__name__ == "AcceleratorError":
            return "CUDA error: " + compare.normalise_text(compare.safe_str(item).split("\n", 1)[0])[:160]
    return ""


def fault_site(exc: BaseException) -> str:
    """The kernel a fault happened in, index removed ("triton_poi_fused_add"),
    found from the Triton launcher's ``self.fn`` or the output code's
    ``<kernel>.run(`` line; else the innermost torch frame
    ("torch/_ops.py:__call__"); else "". With ``CUDA_LAUNCH_BLOCKING=1`` the
    traceback is the faulting launch's, so this names the right kernel."""
    torch_frame = ""
    for item in cause_chain(exc):
        tb = item.__traceback__
        frames = []
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        for frame in reversed(frames):
            fn = getattr(frame.f_locals.get("self"), "fn", None)
            name = getattr(fn, "__name__", "")
            if isinstance(name, str) and name.startswith("triton_"):
                return _KERNEL_INDEX.sub("", name)
        for summary in reversed(traceback.extract_tb(item.__traceback__)):
            match = _KERNEL_CALL.search(summary.line or "")
            if match:
                return _KERNEL_INDEX.sub("", match.group(1))
            path = summary.filename.replace("\\", "/")
            if not torch_frame and "/torch/" in path:
                torch_frame = "torch/" + path.rsplit("/torch/", 1)[1] + ":" + summary.name
    return torch_frame


def raise_if_fault(exc: BaseException) -> None:
    """Raise ``CudaFault`` from ``exc`` if it is a CUDA fault; else return."""
    what = fault_text(exc)
    if what:
        raise CudaFault(what, fault_site(exc), "".join(traceback.format_exception(exc))[-4000:]) from exc


def record_fault(outcome: Outcome, fault: CudaFault, phase: Phase | None = None) -> Outcome:
    """Make ``outcome`` the ``crash`` of a CUDA fault. The phase (eager,
    compiled, fp64), unless given, is read off what the outcome already
    holds and goes into ``phase``; ``error_type`` is the CUDA error and
    ``torch_frame`` "<phase>:<kernel or frame>", so the signature's detail
    reads "CUDA error: device-side assert triggered@compiled:triton_poi_fused_index"."""
    phase = phase or (Phase.EAGER if not outcome.eager else Phase.COMPILED if not outcome.compiled else Phase.FP64)
    outcome.verdict = Verdict.CRASH
    outcome.phase = phase
    outcome.error_type = fault.what
    outcome.error_message = fault.what
    outcome.torch_frame = f"{phase.value}:{fault.where}" if fault.where else phase.value
    outcome.detail = fault.text
    return outcome


def is_fault_outcome(outcome: Outcome) -> bool:
    """True for an outcome made by ``record_fault``."""
    return outcome.verdict is Verdict.CRASH and outcome.error_type.startswith("CUDA error")


def fault_reply(request: dict[str, Any], exc: BaseException, interpreter: str) -> dict[str, Any] | None:
    """The worker's reply when a CUDA fault escaped ``run_program`` (the
    ``crash`` outcome, ``"retiring": true``), or None for any other exception.
    The outcome carries the request's compile settings, as ``run_program``'s
    would (none for the concurrency run, which ignores them)."""
    from harness.program import Program

    if not fault_text(exc):
        return None
    try:
        program_id = Program.from_json(request["program"]).program_id
    except Exception:
        program_id = ""
    try:
        settings = CompileSettings() if request.get("threads") else CompileSettings.from_json(request.get("compile"))
    except (TypeError, ValueError):  # a malformed request still gets its crash reply
        settings = CompileSettings()
    outcome = Outcome(program_id=program_id, interpreter=interpreter, backend=str(request.get("backend", "")),
                      device=str(request.get("device", "cpu")), fullgraph=bool(request.get("fullgraph", False)),
                      threads=int(request.get("threads") or 0), compile_settings=settings)
    what = fault_text(exc)
    record_fault(outcome, CudaFault(what, fault_site(exc), "".join(traceback.format_exception(exc))[-4000:]),
                 Phase.HARNESS)
    return {"id": request.get("id"), "outcome": outcome.to_json(), "retiring": True}


def mark_retiring(reply: dict[str, Any], request: dict[str, Any]) -> None:
    """Set ``reply["retiring"]`` when the worker must exit after sending it: the
    outcome is a CUDA fault's crash, or the CUDA context of a run on a GPU
    turns out poisoned (then the outcome becomes that crash)."""
    data = reply.get("outcome")
    if data is None or reply.get("retiring"):
        return
    outcome = Outcome.from_json(data)
    if is_fault_outcome(outcome):
        reply["retiring"] = True
    elif request.get("device", "cpu") != "cpu" and (what := context_error()):
        record_fault(outcome, CudaFault(what, "", "the CUDA context was poisoned after the run"), Phase.AFTER_RUN)
        reply["outcome"], reply["retiring"] = outcome.to_json(), True


def check(device: str) -> None:
    """Raise ValueError naming the problem unless ``device`` is usable here:
    a known device, a GPU that torch sees, and no address-space limit
    (``harness.limits``) in the way of initialising CUDA."""
    import torch

    if device not in DEVICES:
        raise ValueError(f"Expected a device in {DEVICES} but got device={device!r}")
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"device cuda: torch {torch.__version__} in this interpreter sees no GPU "
            f"(torch.cuda.is_available() is False; CUDA build: {torch.version.cuda or 'no'})"
        )
    if device != "cpu" and not torch.cuda.is_initialized():
        import resource

        if resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY:
            raise ValueError(
                f"device {device}: this worker has an address-space limit, under which CUDA cannot start: "
                f"start GPU workers with TCFUZZ_DEVICE={device} (fuzz.campaign.interpreters.for_device)"
            )


def synchronize() -> None:
    """Wait for queued CUDA work, so that an asynchronous fault surfaces in
    the call that caused it (a no-op where CUDA was never used)."""
    import torch

    if torch.cuda.is_initialized():
        torch.cuda.synchronize()


def context_error() -> str:
    """The CUDA error of a poisoned context ("" if healthy or never used)."""
    try:
        synchronize()
    except Exception as e:  # the sticky error of an earlier fault
        return fault_text(e) or f"CUDA error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return ""


def to_device(value: Any, device: str) -> Any:
    """``value`` with every tensor inside tuples, lists and dicts moved to
    ``device``; ``nn.Module``s are moved in place; other values are returned
    as they are.

    A leaf tensor stays a leaf with the same ``requires_grad``; a non-leaf
    tensor is moved with autograd (``Tensor.to``), so it stays non-leaf.
    """
    import torch

    if isinstance(value, torch.Tensor):
        if value.device == torch.device(device):
            return value
        if value.is_leaf:
            moved = value.detach().to(device)
            return moved.requires_grad_() if value.requires_grad else moved
        return value.to(device)
    if type(value) in (tuple, list):
        return type(value)(to_device(v, device) for v in value)
    if type(value) is dict:
        return {k: to_device(v, device) for k, v in value.items()}
    if isinstance(value, torch.nn.Module):
        return value.to(device=device)
    return value


def worker_device() -> str:
    """The device this worker process serves, from ``TCFUZZ_DEVICE`` (set by
    the host for GPU campaigns, ``fuzz.campaign.interpreters.for_device``): "cpu" by default."""
    return os.environ.get("TCFUZZ_DEVICE", "cpu")
