"""The free-threaded concurrency oracle: one compiled function, K threads at once.

On a free-threaded build with the GIL off (3.13t), Dynamo's caches, guards and
compile lock are shared by threads that really run in parallel; nobody else
tests that. ``run_threaded`` makes, for one program and backend:

  eager     one call on the calling thread: the reference;
  eager-K   K threads call the eager function at once, ``ROUNDS`` times. A
            result that differs from the reference means the program itself
            is not thread-safe (module state, RNG): ``flaky``, never a bug;
  compiled  after ``torch._dynamo.reset()``, K threads released together by
            a ``threading.Barrier`` make the first call of one
            ``torch.compile``'d function (so they compile it concurrently),
            then ``ROUNDS - 1`` more rounds on the cached code.

Every compiled call is compared with the reference (return value, exception
type, mutated arguments; stdout is not compared: threads share it). The
Outcome has ``threads = K`` and is recorded apart from the single-threaded
one; its ``aspect`` ("threads:value", ...) and ``error_type``
("threads:BackendCompilerFailed(...)") start with "threads:" so its findings
are buckets of their own. Inputs are made before the threads start, one
``torch.manual_seed(0)`` set each, since the RNG is process-wide.
"""

from __future__ import annotations

import io
import logging
import os
import random
import sys
import threading
import time
from typing import Any

from harness import compare
from harness.backends import resolve_backend
from harness.outcome import CallResult, Outcome, Verdict
from harness.program import Program, ProgramError

log = logging.getLogger(__name__)

# Rounds of K concurrent calls: the first compiles, the others hit the cache.
ROUNDS = 2
# Seconds the threads of one round may take before the run counts as hung;
# the host's own timeout then records it.
ROUND_TIMEOUT_S = 600.0
PREFIX = "threads:"


class _SharedStdout(io.StringIO):
    def close(self) -> None:
        pass


class _Result:
    __slots__ = ("value", "args_after", "exc", "elapsed_s")

    def __init__(self) -> None:
        self.value: Any = None
        self.args_after: Any = None
        self.exc: BaseException | None = None
        self.elapsed_s = 0.0


def _make_inputs(module: Any, program: Program) -> tuple:
    import torch

    torch.manual_seed(0)
    random.seed(0)
    try:
        args = getattr(module, program.inputs)()
    except Exception as e:
        raise ProgramError(f"inputs() raised {type(e).__name__}: {e}") from None
    return args if isinstance(args, tuple) else (args,)


def _call(fn: Any, args: tuple) -> _Result:
    result = _Result()
    start = time.perf_counter()
    try:
        result.value = compare.snapshot(compare.drain(fn(*args)))
    except Exception as e:  # the program's failure is data
        result.exc = e
    result.elapsed_s = time.perf_counter() - start
    result.args_after = compare.snapshot(args)
    return result


def _round(fn: Any, arg_sets: list[tuple]) -> list[_Result]:
    """Call ``fn`` once per argument set, each from its own thread, all
    released at once."""
    barrier = threading.Barrier(len(arg_sets))
    results: list[_Result | None] = [None] * len(arg_sets)

    def work(i: int) -> None:
        barrier.wait()
        results[i] = _call(fn, arg_sets[i])

    workers = [threading.Thread(target=work, args=(i,), name=f"tcfuzz-thread-{i}") for i in range(len(arg_sets))]
    for t in workers:
        t.start()
    for t in workers:
        t.join(ROUND_TIMEOUT_S)
    if any(r is None for r in results):
        raise TimeoutError(f"threads of a round did not finish within {ROUND_TIMEOUT_S} s")
    return results  # type: ignore[return-value]


def _difference(ref: _Result, res: _Result) -> str:
    if (ref.exc is None) != (res.exc is None) or (ref.exc is not None and type(ref.exc) is not type(res.exc)):
        return "exception"
    if ref.exc is None and not compare.values_match(ref.value, res.value):
        return "value"
    if not compare.values_match(ref.args_after, res.args_after):
        return "mutation"
    return ""


def _call_result(r: _Result, label: str) -> CallResult:
    from harness.execute import qualified_name

    out = CallResult()
    if hasattr(out, "label"):
        out.label = label
    out.elapsed_s = r.elapsed_s
    if r.exc is not None:
        out.exc_type = qualified_name(type(r.exc))
        out.exc_message = compare.normalise_text(str(r.exc).split("\n", 1)[0])[:300]
    else:
        out.value = compare.describe(r.value)
    return out


def run_threaded(program: Program, backend: str, *, threads: int, interpreter: str, device: str = "cpu",
                 fullgraph: bool = False, workdir: str = ".") -> Outcome:
    """The concurrency run of ``program`` under ``backend`` with ``threads``
    threads (see the module docstring). Returns an Outcome with
    ``threads = threads``; failures of the program are recorded, never raised.
    Raises ValueError for fewer than 2 threads or an unknown backend."""
    import torch
    import torch._dynamo

    from harness import execute

    if threads < 2:
        raise ValueError(f"Expected at least 2 threads but got threads={threads}")
    outcome = Outcome(program_id=program.program_id, interpreter=interpreter, backend=backend, device=device,
                      fullgraph=fullgraph, threads=threads)
    backend_fn = resolve_backend(backend)
    path = os.path.join(workdir, f"prog_{program.program_id}.py")
    started = time.perf_counter()
    if hasattr(execute, "deterministic_settings"):
        execute.deterministic_settings()
    torch._dynamo.reset()
    saved_stdout = sys.stdout
    sys.stdout = _SharedStdout()  # one for all threads: redirect_stdout is not per thread
    try:
        log.info("phase eager %s %s threads=%d", program.program_id, backend, threads)
        mod_ref = execute.load_module(program, path)
        ref = _call(getattr(mod_ref, program.entry), _make_inputs(mod_ref, program))
        outcome.eager = [_call_result(ref, "reference")]
        outcome.eager_s = ref.elapsed_s

        mod_e = execute.load_module(program, path)
        for r in range(ROUNDS):
            eager_k = _round(getattr(mod_e, program.entry), [_make_inputs(mod_e, program) for _ in range(threads)])
            if any(_difference(ref, res) for res in eager_k):
                outcome.verdict = Verdict.FLAKY
                outcome.aspect = PREFIX + "eager"
                return outcome

        log.info("phase compiled %s %s threads=%d", program.program_id, backend, threads)
        mod_c = execute.load_module(program, path)
        torch._dynamo.reset()
        compiled_fn = torch.compile(getattr(mod_c, program.entry), backend=backend_fn, fullgraph=fullgraph)
        results: list[tuple[str, _Result]] = []
        for r in range(ROUNDS):
            arg_sets = [_make_inputs(mod_c, program) for _ in range(threads)]
            results += [(f"round{r}/thread{i}", res) for i, res in enumerate(_round(compiled_fn, arg_sets))]
        outcome.compiled = [_call_result(res, label) for label, res in results]
        outcome.compile_s = max(res.elapsed_s for label, res in results if label.startswith("round0/"))
    except ProgramError as e:
        outcome.verdict = Verdict.INVALID
        outcome.detail = str(e)
        return outcome
    finally:
        sys.stdout = saved_stdout
        outcome.elapsed_s = time.perf_counter() - started
        for name in [n for n in sys.modules if n.startswith("tcfuzz_program_")]:
            del sys.modules[name]
        torch._dynamo.reset()

    for label, res in results:
        if res.exc is not None and execute.is_torch_error(res.exc) and (
                ref.exc is None or type(ref.exc) is not type(res.exc)):
            outcome.verdict = Verdict.COMPILE_ERROR
            outcome.error_type = PREFIX + execute.root_error_type(res.exc)
            outcome.error_message = compare.normalise_text(str(res.exc).split("\n", 1)[0])[:300]
            outcome.torch_frame = execute.innermost_torch_frame(res.exc)
            outcome.detail = label
            return outcome
    for label, res in results:
        aspect = _difference(ref, res)
        if aspect:
            outcome.verdict = Verdict.DIVERGENCE
            outcome.aspect = PREFIX + aspect
            outcome.detail = label
            if aspect == "exception":
                outcome.error_type = (f"{PREFIX}{_call_result(ref, '').exc_type or 'None'}->"
                                      f"{_call_result(res, '').exc_type or 'None'}")
            return outcome
    return outcome
