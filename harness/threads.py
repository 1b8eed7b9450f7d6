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

Every compiled call is compared with the reference by harness.execute's
``call_difference`` in ``ASPECTS`` (exception type, return value, mutated
arguments; stdout is not compared: threads share it), and an error of
torch's own is told from the program's by execute's ``is_compile_error``, as
in the single-threaded run. Programs are loaded, their inputs made and their
output captured by execute's code too. The Outcome has ``threads = K`` and
is recorded apart from the single-threaded one; its findings are buckets of
their own (fuzz.triage.signature starts their detail with "threads:").
Inputs are made before the threads start, the RNGs seeded before each
(harness.plan.seed_rngs), since the RNG is process-wide.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import types
from typing import Any

from harness import compare, execute
from harness.backends import resolve_backend
from harness.outcome import Aspect, CallResult, Outcome, Phase, Verdict
from harness.plan import seed_rngs
from harness.program import Program, ProgramError

log = logging.getLogger(__name__)

# Rounds of K concurrent calls: the first compiles, the others hit the cache.
ROUNDS = 2
# Seconds the threads of one round may take before the run counts as hung;
# the host's own timeout then records it.
ROUND_TIMEOUT_S = 600.0
# What each threaded call is compared in (execute.call_difference). Not
# stdout: all threads print to one stream. Exception messages and torch's
# global state are left out as this run always has (grad mode is per thread).
ASPECTS = (Aspect.EXCEPTION, Aspect.VALUE, Aspect.MUTATION)


def _inputs(module: types.ModuleType, program: Program) -> tuple:
    """One argument tuple from the program's ``inputs()``, the RNGs seeded
    first. Raises ProgramError if ``inputs()`` raises."""
    seed_rngs()
    args = execute._make_inputs(module, program)
    return args if isinstance(args, tuple) else (args,)


def _call(fn: Any, args: tuple, label: str) -> execute._Call:
    """Call ``fn(*args)`` on this thread and observe it as harness.execute
    observes a call (return value drained and snapshotted, exception type
    and normalised message, arguments after the call; stdout is shared)."""
    call = execute._Call(CallResult(label=label))
    start = time.perf_counter()
    try:
        call.value = compare.snapshot(compare.drain(fn(*args)))
        call.result.value = compare.describe(call.value)
    except BaseException as e:  # the program's failure is data, SystemExit and KeyboardInterrupt too
        call.exc = e
        call.result.exc_type = execute.qualified_name(type(e))
        call.result.exc_message = compare.normalise_message(compare.safe_str(e))
    call.result.elapsed_s = time.perf_counter() - start
    call.args_after = compare.snapshot(args)
    return call


def _round(fn: Any, arg_sets: list[tuple], label: str) -> list[execute._Call]:
    """Call ``fn`` once per argument set, each from its own thread, all
    released at once; the calls are labelled "<label>/thread<i>". Raises
    TimeoutError if they do not finish within ROUND_TIMEOUT_S seconds."""
    barrier = threading.Barrier(len(arg_sets))
    calls: list[execute._Call | None] = [None] * len(arg_sets)

    def work(i: int) -> None:
        barrier.wait()
        calls[i] = _call(fn, arg_sets[i], f"{label}/thread{i}")

    workers = [threading.Thread(target=work, args=(i,), name=f"tcfuzz-thread-{i}") for i in range(len(arg_sets))]
    for t in workers:
        t.start()
    for t in workers:
        t.join(ROUND_TIMEOUT_S)
    if any(c is None for c in calls):
        raise TimeoutError(f"threads of a round did not finish within {ROUND_TIMEOUT_S} s")
    return calls  # type: ignore[return-value]


def _first_difference(ref: execute._Call, calls: list[execute._Call]) -> tuple[Aspect, execute._Call] | None:
    """(aspect, call) of the first of ``calls`` that differs from ``ref`` in ASPECTS, or None."""
    for call in calls:
        aspect = execute.call_difference(ref, call, aspects=ASPECTS)
        if aspect is not None:
            return aspect, call
    return None


def run_threaded(program: Program, backend: str, *, threads: int, interpreter: str, device: str = "cpu",
                 fullgraph: bool = False, workdir: str = ".") -> Outcome:
    """The concurrency run of ``program`` under ``backend`` with ``threads``
    threads (see the module docstring). Returns an Outcome with
    ``threads = threads``; failures of the program are recorded, never raised.
    Raises ValueError for fewer than 2 threads or an unknown backend."""
    import torch
    import torch._dynamo

    if threads < 2:
        raise ValueError(f"Expected at least 2 threads but got threads={threads}")
    outcome = Outcome(program_id=program.program_id, interpreter=interpreter, backend=backend, device=device,
                      fullgraph=fullgraph, threads=threads)
    backend_fn = resolve_backend(backend)
    path = os.path.join(workdir, f"prog_{program.program_id}.py")
    started = time.perf_counter()
    execute.deterministic_settings()
    torch._dynamo.reset()
    saved_stdout = sys.stdout
    sys.stdout = execute._Capture()  # one for all threads: redirect_stdout is not per thread
    try:
        log.info("phase %s %s %s threads=%d", Phase.EAGER, program.program_id, backend, threads)
        mod_ref = execute.load_module(program, path)
        with execute.eager_reference():
            ref = _call(getattr(mod_ref, program.entry), _inputs(mod_ref, program), "reference")
        outcome.eager = [ref.result]
        outcome.eager_s = ref.result.elapsed_s

        mod_e = execute.load_module(program, path)
        for r in range(ROUNDS):
            with execute.eager_reference():
                eager_k = _round(getattr(mod_e, program.entry), [_inputs(mod_e, program) for _ in range(threads)],
                                 f"eager{r}")
            flaky = _first_difference(ref, eager_k)
            if flaky is not None:  # the program itself is not thread-safe
                outcome.verdict, outcome.aspect, outcome.phase = Verdict.FLAKY, flaky[0], Phase.EAGER
                return outcome

        log.info("phase %s %s %s threads=%d", Phase.COMPILED, program.program_id, backend, threads)
        mod_c = execute.load_module(program, path)
        torch._dynamo.reset()
        compiled_fn = torch.compile(getattr(mod_c, program.entry), backend=backend_fn, fullgraph=fullgraph)
        calls: list[execute._Call] = []
        for r in range(ROUNDS):
            calls += _round(compiled_fn, [_inputs(mod_c, program) for _ in range(threads)], f"round{r}")
        outcome.compiled = [c.result for c in calls]
        outcome.compile_s = max(c.result.elapsed_s for c in calls if c.result.label.startswith("round0/"))
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

    for call in calls:
        if execute.is_compile_error(ref, call):
            return execute.record_compile_error(outcome, call)
    diverged = _first_difference(ref, calls)
    if diverged is not None:
        aspect, call = diverged
        outcome.verdict, outcome.aspect, outcome.call = Verdict.DIVERGENCE, aspect, call.result.label
        if aspect is Aspect.EXCEPTION:
            outcome.error_type = f"{ref.result.exc_type or 'None'}->{call.result.exc_type or 'None'}"
    return outcome
