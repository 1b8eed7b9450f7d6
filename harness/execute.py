"""Run one program eagerly and under one backend in this interpreter.

The rule, after ``torch/_inductor/fuzzer.py``: eager first, ``torch._dynamo.reset()``
before each attempt. Each of the three runs (eager A, eager B, compiled) gets a
fresh module namespace executed from the source, so a program that mutates its
globals starts every run from the same state. Eager A vs eager B decides
``flaky``; eager A vs compiled decides everything else, call by call.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
import time
import traceback
import types
from dataclasses import dataclass, field
from typing import Any

from harness import compare, observe
from harness.backends import resolve_backend
from harness.outcome import CallResult, Outcome, Verdict
from harness.program import Program, ProgramError

log = logging.getLogger(__name__)

# Times the entry function is called per run; the second call takes the
# compiled code's cached path.
CALLS_PER_RUN = 2


class _Capture(io.StringIO):
    """Captured stdout that survives a program closing its ``sys.stdout``."""

    def close(self) -> None:
        pass


@dataclass
class _Call:
    """A call as observed, with snapshots for comparison."""

    result: CallResult
    value: Any = None
    args_after: Any = None
    exc: BaseException | None = None


@dataclass
class _Run:
    calls: list[_Call] = field(default_factory=list)
    globals_after: Any = None


def qualified_name(exc_type: type) -> str:
    module = exc_type.__module__
    return exc_type.__qualname__ if module == "builtins" else f"{module}.{exc_type.__qualname__}"


def is_torch_error(exc: BaseException) -> bool:
    """True for exceptions torch raises about itself (Dynamo, AOT, Inductor),
    not for user exceptions re-raised by compiled code."""
    module = type(exc).__module__ or ""
    return module.startswith("torch.") and (
        module.startswith(("torch._dynamo", "torch._inductor", "torch._functorch", "torch.fx", "torch._subclasses"))
        or type(exc).__name__ in ("BackendCompilerFailed", "InternalTorchDynamoError", "TorchRuntimeError", "Unsupported")
    )


def innermost_torch_frame(exc: BaseException) -> str:
    """``torch/<path>:<function>`` of the innermost torch frame of the deepest
    exception in the cause chain (function, not line, so it survives edits)."""
    chain = [exc]
    while (nxt := chain[-1].__cause__ or chain[-1].__context__) is not None and len(chain) < 10:
        chain.append(nxt)
    for item in reversed(chain):
        frames = traceback.extract_tb(item.__traceback__)
        for frame in reversed(frames):
            path = frame.filename.replace(os.sep, "/")
            if "/torch/" in path:
                return "torch/" + path.rsplit("/torch/", 1)[1] + ":" + frame.name
    return ""


def root_error_type(exc: BaseException) -> str:
    """``Outer(Inner)`` for a wrapped error such as BackendCompilerFailed, else the type."""
    outer = type(exc).__name__
    inner = getattr(exc, "inner_exception", None) or exc.__cause__
    return f"{outer}({type(inner).__name__})" if inner is not None and type(inner) is not type(exc) else outer


def load_module(program: Program, path: str) -> types.ModuleType:
    """Execute the program's source as a fresh module whose ``__file__`` is ``path``.

    Raises ProgramError if the source does not execute or lacks the functions.
    """
    program.check()
    if not os.path.exists(path):  # named by the source's hash: same path, same text
        with open(path, "w") as fh:
            fh.write(program.source)
    name = f"tcfuzz_program_{program.program_id}"
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    try:
        code = compile(program.source, path, "exec")
        with contextlib.redirect_stdout(_Capture()):
            exec(code, module.__dict__)
    except Exception as e:
        raise ProgramError(f"the program raised while loading: {type(e).__name__}: {e}") from None
    return module


def _globals_snapshot(module: types.ModuleType) -> Any:
    return {
        k: compare.snapshot(v)
        for k, v in module.__dict__.items()
        if not k.startswith("__") and not isinstance(v, types.ModuleType) and not callable(v)
    }


def _run(module: types.ModuleType, program: Program, fn: Any, calls: int) -> _Run:
    import torch

    run = _Run()
    for _ in range(calls):
        torch.manual_seed(0)
        try:
            with contextlib.redirect_stdout(_Capture()):
                args = getattr(module, program.inputs)()
        except Exception as e:
            raise ProgramError(f"inputs() raised {type(e).__name__}: {e}") from None
        if not isinstance(args, tuple):
            args = (args,)
        out = _Capture()
        start = time.perf_counter()
        call = _Call(CallResult())
        try:
            with contextlib.redirect_stdout(out):
                value = fn(*args)
            call.value = compare.snapshot(value)
            call.result.value = compare.describe(call.value)
        except Exception as e:  # the program's failure is data
            call.exc = e
            call.result.exc_type = qualified_name(type(e))
            call.result.exc_message = compare.normalise_text(str(e).split("\n", 1)[0])[:300]
        call.result.elapsed_s = time.perf_counter() - start
        call.result.stdout = out.getvalue()
        call.args_after = compare.snapshot(args)
        run.calls.append(call)
    run.globals_after = _globals_snapshot(module)
    return run


def _first_difference(ref: _Run, res: _Run) -> str:
    """The aspect in which two runs differ ("" when they match)."""
    for a, b in zip(ref.calls, res.calls):
        if (a.exc is None) != (b.exc is None) or (a.exc is not None and type(a.exc) is not type(b.exc)):
            return "exception"
        if a.exc is None and not compare.values_match(a.value, b.value):
            return "value"
        if a.result.stdout != b.result.stdout:
            return "stdout"
        if not compare.values_match(a.args_after, b.args_after):
            return "mutation"
    if not compare.values_match(ref.globals_after, res.globals_after):
        return "globals"
    return ""


def run_program(
    program: Program,
    backend: str,
    *,
    interpreter: str,
    device: str = "cpu",
    fullgraph: bool = False,
    workdir: str = ".",
    calls: int = CALLS_PER_RUN,
) -> Outcome:
    """Run ``program`` eagerly twice and compiled with ``backend`` once, each
    run calling the entry function ``calls`` times on fresh inputs.

    Returns an Outcome; failures of the program are recorded in it, never raised.
    Raises ValueError for an unknown backend (a harness failure). ``device`` is
    recorded; tensors are created by the program's ``inputs()``.
    """
    import torch
    import torch._dynamo

    outcome = Outcome(program_id=program.program_id, interpreter=interpreter, backend=backend,
                      device=device, fullgraph=fullgraph)
    backend_fn = resolve_backend(backend)
    path = os.path.join(workdir, f"prog_{program.program_id}.py")
    started = time.perf_counter()
    torch._dynamo.reset()
    try:
        log.info("phase eager %s %s", program.program_id, backend)
        mod_a = load_module(program, path)
        eager_a = _run(mod_a, program, getattr(mod_a, program.entry), calls)
        outcome.eager_s = sum(c.result.elapsed_s for c in eager_a.calls)
        mod_b = load_module(program, path)
        eager_b = _run(mod_b, program, getattr(mod_b, program.entry), calls)
        outcome.eager = [c.result for c in eager_a.calls]
        flaky_aspect = _first_difference(eager_a, eager_b)
        if flaky_aspect:
            outcome.verdict, outcome.aspect = Verdict.FLAKY, flaky_aspect
            return outcome

        log.info("phase compiled %s %s", program.program_id, backend)
        mod_c = load_module(program, path)
        counter = observe.GraphCounter(backend_fn)
        compiled_fn = torch.compile(getattr(mod_c, program.entry), backend=counter, fullgraph=fullgraph)
        with observe.record_graph_breaks() as breaks:
            compiled = _Run()
            for i in range(calls):
                counter.call_index = i
                compiled.calls += _run(mod_c, program, compiled_fn, 1).calls
            compiled.globals_after = _globals_snapshot(mod_c)
        outcome.compiled = [c.result for c in compiled.calls]
        outcome.compile_s = compiled.calls[0].result.elapsed_s if compiled.calls else 0.0
        outcome.graph_count, outcome.recompiles = counter.graphs, counter.recompiles
        outcome.graph_breaks = list(breaks)
    except ProgramError as e:
        outcome.verdict = Verdict.INVALID
        outcome.detail = str(e)
        return outcome
    finally:
        outcome.elapsed_s = time.perf_counter() - started
        for name in [n for n in sys.modules if n.startswith("tcfuzz_program_")]:
            del sys.modules[name]
        torch._dynamo.reset()

    for a, b in zip(eager_a.calls, compiled.calls):
        if b.exc is not None and is_torch_error(b.exc) and (a.exc is None or type(a.exc) is not type(b.exc)):
            outcome.verdict = Verdict.COMPILE_ERROR
            outcome.error_type = root_error_type(b.exc)
            outcome.error_message = compare.normalise_text(str(b.exc).split("\n", 1)[0])[:300]
            outcome.torch_frame = innermost_torch_frame(b.exc)
            return outcome
    aspect = _first_difference(eager_a, compiled)
    if aspect:
        outcome.verdict = Verdict.DIVERGENCE
        outcome.aspect = aspect
        if aspect == "exception":
            pairs = [(a.result.exc_type, b.result.exc_type) for a, b in zip(eager_a.calls, compiled.calls)]
            first = next(p for p in pairs if p[0] != p[1])
            outcome.error_type = f"{first[0] or 'None'}->{first[1] or 'None'}"
    return outcome
