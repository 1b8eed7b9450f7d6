"""Run one program eagerly and under one backend in this interpreter.

The rule, after ``torch/_inductor/fuzzer.py``: eager first, ``torch._dynamo.reset()``
before each attempt. Each run (eager A, eager B, compiled, and the float64
reference when one is needed) gets a fresh module namespace executed from the
source, so a program that mutates its globals starts every run from the same
state. Eager A vs eager B decides ``flaky``; eager A vs compiled decides
everything else, call by call. No eager run passes through Dynamo
(``eager_reference``): torch's higher-order operators compile themselves when
called eagerly, which would make eager a compiled run of its own.

Every run makes the calls of one plan (harness.plan: fresh, cached, then
guard and shape where they apply, then carried), decided by eager A's
``_run``. After each call the harness compares the return value (generators drained), the
exception (type and normalised message), captured stdout, the arguments, and
global state that may leak out of the call (grad mode, default dtype); after
the run, module globals, class attributes and closure cells.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import sys
import time
import traceback
import types
from dataclasses import dataclass, field
from typing import Any

from harness import compare, device as devices, inputs as input_variants, observe, reference, state, timing
from harness.plan import Call, CallPlan, is_program_class, reset_global_state
from harness.backends import resolve_backend, stance_of
from harness.outcome import Aspect, CallResult, Outcome, Phase, Verdict
from harness.program import Program, ProgramError
from harness.settings import CompileSettings
from harness.tracebacks import cause_chain, torch_location

log = logging.getLogger(__name__)

# Characters of a call's printed text kept in its CallResult; the rest is
# compared by its length and SHA-256 (a program that prints in a loop must
# not make a reply of gigabytes).
MAX_STDOUT_CHARS = 20_000
# Entries of Outcome.incomparable and Outcome.state_left kept.
MAX_NOTES = 20


class _NoReference(Exception):
    """The float64 variant of the inputs could not be made: no fp64 run."""


def printed_text(text: str) -> str:
    """``text`` as a CallResult keeps it: whole up to MAX_STDOUT_CHARS
    characters, else its start, its length and the SHA-256 of all of it."""
    if len(text) <= MAX_STDOUT_CHARS:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()
    return f"{text[:MAX_STDOUT_CHARS]}\n[... {len(text)} characters in all, sha256 {digest}]"


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
    state_after: Any = None


@dataclass
class _Run:
    calls: list[_Call] = field(default_factory=list)
    globals_after: Any = None
    plan: tuple[Call, ...] = ()  # harness.plan's calls, in order
    undone: list[str] = field(default_factory=list)  # attributes the calls rebound, put back after each
    passed: tuple | None = None  # what the last call was given (float64, moved): the next carried call's arguments


def qualified_name(exc_type: type) -> str:
    module = getattr(exc_type, "__module__", None)
    qualname = getattr(exc_type, "__qualname__", None) or exc_type.__name__
    return qualname if module in ("builtins", None) else f"{module}.{qualname}"


def is_torch_error(exc: BaseException) -> bool:
    """True for exceptions torch raises about itself (Dynamo, AOT, Inductor),
    not for user exceptions re-raised by compiled code."""
    module = type(exc).__module__ or ""
    return module.startswith("torch.") and (
        module.startswith(("torch._dynamo", "torch._inductor", "torch._functorch", "torch.fx", "torch._subclasses"))
        or type(exc).__name__ in ("BackendCompilerFailed", "InternalTorchDynamoError", "TorchRuntimeError", "Unsupported")
    )


# Packages of the compiler itself. A frame there says which part of the
# compiler failed; a frame below it (torch/_prims_common, _refs, _decomp, ...)
# only says which op's semantics raised, which differs between programs that
# hit one compiler bug through different ops.
COMPILER_PACKAGES = ("torch/_dynamo/", "torch/_inductor/", "torch/_functorch/", "torch/fx/")
# Decorator frames that wrap everything (``torch._disable_dynamo``): never the place of a bug.
WRAPPER_FRAMES = ("torch/_dynamo/eval_frame.py:_fn", "torch/_compile.py:inner", "torch/utils/_stats.py:wrapper")


def raised_in_compiler(exc: BaseException) -> bool:
    """True if the deepest exception of ``exc``'s chain was raised by a frame
    of the compiler itself (COMPILER_PACKAGES): an ``assert`` or a
    ``KeyError`` inside Dynamo is torch's own error whatever its type, not
    the program's."""
    frames = traceback.extract_tb(cause_chain(exc)[-1].__traceback__)
    where = torch_location(frames[-1]) if frames else ""
    return where.startswith(COMPILER_PACKAGES) and where not in WRAPPER_FRAMES


def innermost_torch_frame(exc: BaseException) -> str:
    """``torch/<path>:<function>`` of the innermost compiler frame
    (COMPILER_PACKAGES) of the deepest exception in the cause chain, or of its
    innermost torch frame where no compiler frame is on it (function, not
    line, so it survives edits)."""
    fallback = ""
    for item in reversed(cause_chain(exc)):
        for frame in reversed(traceback.extract_tb(item.__traceback__)):
            where = torch_location(frame)
            if not where or where in WRAPPER_FRAMES:
                continue
            if where.startswith(COMPILER_PACKAGES):
                return where
            fallback = fallback or where
    return fallback


# What torch/_dynamo/variables/higher_order_ops.py puts before the graph
# break it turns into an UncapturedHigherOrderOpError (raised ``from None``:
# the break's ``gb_type`` is left only as the first line after it).
UNCAPTURED_HOP_PREFIX = "captured completely with torch.compile. Got graph break/error:"


def root_error_type(exc: BaseException) -> str:
    """``Outer(Inner)`` for a wrapped error such as BackendCompilerFailed,
    ``Unsupported[gb_type]`` for a graph break under ``fullgraph=True`` (its
    frame is always Dynamo's ``unimplemented``: the ``gb_type`` tells the
    breaks apart), ``UncapturedHigherOrderOpError[gb_type]`` for the graph
    break a higher-order operator's body hit (UNCAPTURED_HOP_PREFIX), else
    the type."""
    outer = type(exc).__name__
    try:
        gb_type = getattr(exc, "gb_type", None) or _uncaptured_hop_gb_type(exc)
        inner = getattr(exc, "inner_exception", None) or exc.__cause__
    except Exception:  # a program's exception with a __getattr__ that raises
        return outer
    if isinstance(gb_type, str) and gb_type:
        return f"{outer}[{gb_type}]"
    return f"{outer}({type(inner).__name__})" if inner is not None and type(inner) is not type(exc) else outer


def _uncaptured_hop_gb_type(exc: BaseException) -> str | None:
    """The gb_type line of an UncapturedHigherOrderOpError's message, else None."""
    if type(exc).__name__ != "UncapturedHigherOrderOpError":
        return None
    _, found, rest = compare.safe_str(exc).partition(UNCAPTURED_HOP_PREFIX)
    lines = [line.strip() for line in rest.splitlines() if line.strip()] if found else []
    return lines[0][:120] if lines else None


def root_error_message(exc: BaseException) -> str:
    """The normalised first line of a wrapped error's inner exception
    (``BackendCompilerFailed``'s own first line is only ``backend=... raised:``),
    or "" for an error that wraps none."""
    try:
        inner = getattr(exc, "inner_exception", None) or exc.__cause__
    except Exception:  # a program's exception with a __getattr__ that raises
        return ""
    if inner is None or type(inner) is type(exc):
        return ""
    return compare.normalise_message(compare.safe_str(inner))


def load_module(program: Program, path: str) -> types.ModuleType:
    """Execute the program's source as a fresh module whose ``__file__`` is ``path``.

    Raises ProgramError if the source does not compile, raises while it
    executes, or leaves no callable entry or input function (the checks of
    ``Program.check``, made on the compiled module: a parse of the source to
    an ``ast`` costs more than the compile itself, on every load).
    """
    if not os.path.exists(path):  # named by the source's hash: same path, same text
        with open(path, "w") as fh:
            fh.write(program.source)
    name = f"tcfuzz_program_{program.program_id}"
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    try:
        # dont_inherit: not this module's `from __future__ import annotations`
        # (annotations as strings, PEP 649's deferred ones never evaluated)
        code = compile(program.source, path, "exec", dont_inherit=True)
    except SyntaxError as e:
        raise ProgramError(f"not a Python program: {e.msg} at line {e.lineno}") from None
    try:
        with contextlib.redirect_stdout(_Capture()):
            exec(code, module.__dict__)
    except BaseException as e:  # SystemExit and KeyboardInterrupt too: the program's
        raise ProgramError(f"the program raised while loading: {type(e).__name__}: "
                           f"{compare.safe_str(e)}"[:500]) from None
    for function in (program.entry, program.inputs):
        if not callable(module.__dict__.get(function)):
            raise program.missing(function)
    return module


def deterministic_settings() -> None:
    """Settings under which eager and compiled runs of a seeded program agree:
    Inductor falls back to eager's RNG for random ops (``fallback_random``, as
    torch/_inductor/fuzzer.py does)."""
    import torch._inductor.config as inductor_config

    if not inductor_config.fallback_random:  # setting it, even to its value, makes the config hash again
        inductor_config.fallback_random = True


def eager_reference() -> contextlib.AbstractContextManager:
    """The context of every eager run (A, B and the float64 reference):
    Dynamo's ``force_eager`` stance, so that no eager run passes through
    Dynamo. torch's higher-order operators compile themselves when called
    eagerly (torch/_higher_order_ops/utils.py ``_hop_compile_and_call``, for
    cond, while_loop, map, scan and associative_scan: ``torch.compile(fn, backend=...,
    fullgraph=True)``); without the stance an eager result depends on Dynamo's
    guards and caches, those of the worker's earlier runs included. On torch
    2.15.0 an eager ``torch.cond`` whose branch reads a module float raised on
    the guard call, or gave the first call's value, depending on what the worker
    had run before: the false-alarm benchmark's ``force_eager`` value@guard
    findings. Under the stance the operator runs its branches as Python does.
    Eager's own misbehaviour is never a compiler finding."""
    import torch

    return torch.compiler.set_stance("force_eager")


def skip_guard_latency_profile() -> None:
    """Stop Dynamo from timing each new guard set after building it.

    torch/_dynamo/guards.py calls ``profile_guard_manager`` after every compile
    to log the guards' latency (``guard_latency_us`` in its compilation
    metrics), flushing the CPU cache first: ~20 ms CPU and ~90 ms wall a
    compile here, half of a small program's eager-backend compile, for a
    number nothing in tcfuzz reads. The guards were already checked on the
    frame just before (the "Guard failed on the same frame" assertion), so no
    guard code goes unrun. Called once per worker, before any program's
    state is saved, so restoring state keeps it."""
    try:
        import torch._dynamo.guards as guards
    except ImportError:  # a torch without it: nothing to skip
        return
    if hasattr(guards, "profile_guard_manager"):
        guards.profile_guard_manager = _no_guard_latency


def _no_guard_latency(*args: object) -> float:
    return 0.0


def global_state() -> tuple:
    """Torch's process-wide state that a call can leak (harness.state.torch_modes:
    grad, inference and forward-AD modes, default dtype and device, autocast
    with its dtype and nesting, torch function and dispatch modes, anomaly
    mode, deterministic algorithms, matmul precision; not Dynamo's stance,
    which the harness sets for the compiled run of some backends)."""
    return state.torch_modes()


def _globals_snapshot(module: types.ModuleType) -> Any:
    """Module globals that are data, public attributes of the module's classes,
    and the closure cells of its functions."""
    out: dict[str, Any] = {}
    for k, v in list(module.__dict__.items()):
        try:
            _snapshot_global(module, k, v, out)
        except Exception as e:  # a program's class with a metaclass or descriptor that raises
            out[k] = compare.Opaque(compare.type_name(v), f"{type(e).__name__} while reading it")
    return out


def _snapshot_global(module: types.ModuleType, k: str, v: Any, out: dict[str, Any]) -> None:
    """Add global ``k`` (value ``v``) of ``module`` to ``out`` as ``_globals_snapshot`` does."""
    if not isinstance(k, str) or k.startswith("__") or isinstance(v, types.ModuleType):
        return
    if is_program_class(v, module):
        attrs = {a: compare.snapshot(x) for a, x in vars(v).items()
                 if not a.startswith("_") and not callable(x) and not isinstance(x, (property, classmethod,
                                                                                    staticmethod))}
        if attrs:
            out[f"class {k}"] = attrs
    elif isinstance(v, types.FunctionType):
        if v.__closure__:
            cells = []
            for cell in v.__closure__:
                try:
                    cells.append(compare.snapshot(cell.cell_contents))
                except ValueError:  # an empty cell
                    cells.append("<empty>")
            out[f"cells {k}"] = cells
    elif not callable(v):
        out[k] = compare.snapshot(v)


def _make_inputs(module: types.ModuleType, program: Program) -> Any:
    """What the program's ``inputs()`` returns, its printed text discarded
    (CallPlan seeds the RNGs first). Raises ProgramError if it raises."""
    try:
        with contextlib.redirect_stdout(_Capture()):
            return getattr(module, program.inputs)()
    except BaseException as e:  # SystemExit and KeyboardInterrupt too: the program's
        devices.raise_if_fault(e)
        raise ProgramError(f"inputs() raised {type(e).__name__}: {compare.safe_str(e)}"[:500]) from None


def _run(module: types.ModuleType, program: Program, fn: Any, plan: tuple[str, ...] | None, *,
         calls: int | None = None, fp64: bool = False, device: str = "cpu", carried: tuple | None = None) -> _Run:
    """Make ``plan``'s calls of ``fn`` on a freshly loaded ``module``. With
    ``plan`` None the run decides it (harness.plan.CallPlan: from the module
    before the first call and that call's inputs, so ``inputs()`` is called
    once per call but ``carried``; at most ``calls`` calls) and records it in
    ``run.plan``. The ``carried`` call is given the objects the call before
    it was given, as that call left them (made float64 or moved to
    ``device`` once, not again); ``carried`` is that call's ``run.passed``
    for a plan made one call at a time."""
    run = _Run(passed=carried)
    namespaces = state.capture_namespaces()
    call_plan = CallPlan(module, lambda: _make_inputs(module, program), plan, limit=calls, carried=carried)
    for label, args in call_plan:
        if label is Call.CARRIED and run.passed is not None:
            args = run.passed
        else:
            if fp64:
                try:
                    args = input_variants.to_fp64(args)
                except Exception as e:  # a tensor kind without a float64 variant
                    raise _NoReference(f"{type(e).__name__}") from None
            if device != "cpu":
                args = devices.to_device(args, device)
        run.passed = args
        out = _Capture()
        call = _Call(CallResult(label=label.value))
        start = time.perf_counter()
        try:
            with contextlib.redirect_stdout(out):
                with reference.lifted() if fp64 else contextlib.nullcontext():
                    value = compare.drain(fn(*args))
                devices.synchronize()  # an asynchronous CUDA fault surfaces here, in its call
            call.value = compare.snapshot(value)
            call.result.value = compare.describe(call.value)
        except BaseException as e:  # the program's failure is data, SystemExit and KeyboardInterrupt too
            devices.raise_if_fault(e)  # but a CUDA fault poisons the process: a crash
            call.exc = e
            call.result.exc_type = qualified_name(type(e))
            call.result.exc_message = compare.normalise_message(compare.safe_str(e))
        call.result.elapsed_s = time.perf_counter() - start
        # a rebound builtins.len or torch.equal must not reach the harness's own code
        run.undone += [u for u in state.restore_namespaces(namespaces) if u not in run.undone]
        call.result.stdout = printed_text(out.getvalue())
        call.args_after = compare.snapshot(args)
        call.state_after = global_state()
        run.calls.append(call)
    run.globals_after = _globals_snapshot(module)
    run.plan = call_plan.calls or ()
    return run


# What each call is compared in, in this order: the first that differs is
# the one reported. After the run, ``Aspect.GLOBALS`` is compared as well.
CALL_ASPECTS = (Aspect.EXCEPTION, Aspect.EXCEPTION_MESSAGE, Aspect.VALUE, Aspect.STDOUT, Aspect.MUTATION,
                Aspect.GLOBAL_STATE)
# Aspects compared as float values within tolerance: a difference there is a
# bug only if compiled is further from the float64 run than eager is.
FLOAT_ASPECTS = (Aspect.VALUE, Aspect.MUTATION, Aspect.GLOBALS)


def _values_match(ref: Any, res: Any, fp64: Any, what: str, notes: list[str] | None) -> bool:
    """compare.values_match, a comparison that cannot be made counted as a
    match and noted in ``notes`` as "<what>: <why>"."""
    try:
        return compare.values_match(ref, res, fp64)
    except compare.Incomparable as e:
        if notes is not None and len(notes) < MAX_NOTES:
            notes.append(f"{what}: {e}")
        return True


def call_difference(ref: _Call, res: _Call, fp64: _Call | None = None,
                    aspects: tuple[Aspect, ...] = CALL_ASPECTS, notes: list[str] | None = None) -> Aspect | None:
    """The first of ``aspects`` (in CALL_ASPECTS order) in which call ``res``
    differs from call ``ref``, or None: the exception (one raised and the
    other did not, or another type), its normalised message, the return value
    (compare.values_match, ``fp64``'s value deciding float differences), the
    printed text, the arguments after the call, torch's global state after it.
    Nothing is compared where torch wrapped the error eager raised too
    (``wraps_eager_error``): compiled failed while tracing, before the
    mutations and prints eager made up to its error (a CUDA campaign on torch
    2.11 had 4 such mutation "divergences" in 94 programs). A value that
    cannot be compared counts as equal and is noted in ``notes``
    ("value@fresh: ...").
    """
    label = ref.result.label
    raised = ref.exc is not None
    if wraps_eager_error(ref, res):
        # the program's own failure, wrapped by torch: eager rejects the call too, and
        # compiled failed while tracing, before the ops (and prints) eager ran up to it
        return None
    # by qualified name: each run loads the program afresh, so its exception classes are new objects
    if Aspect.EXCEPTION in aspects and (raised != (res.exc is not None) or
                                        (raised and ref.result.exc_type != res.result.exc_type)):
        return Aspect.EXCEPTION
    if Aspect.EXCEPTION_MESSAGE in aspects and raised and ref.result.exc_message != res.result.exc_message:
        return Aspect.EXCEPTION_MESSAGE
    if Aspect.VALUE in aspects and not raised and not _values_match(
            ref.value, res.value, None if fp64 is None else fp64.value, f"value@{label}", notes):
        return Aspect.VALUE
    if Aspect.STDOUT in aspects and ref.result.stdout != res.result.stdout:
        return Aspect.STDOUT
    if Aspect.MUTATION in aspects and not _values_match(
            ref.args_after, res.args_after, None if fp64 is None else fp64.args_after, f"mutation@{label}", notes):
        return Aspect.MUTATION
    if Aspect.GLOBAL_STATE in aspects and ref.state_after != res.state_after:
        return Aspect.GLOBAL_STATE
    return None


def _first_difference(ref: _Run, res: _Run, fp64: _Run | None = None, notes: list[str] | None = None,
                      skip: tuple[str, ...] = ()) -> tuple[Aspect | None, str]:
    """(aspect, call label) of the first way two runs differ, call by call
    (``call_difference``), then in module globals, class attributes and
    closure cells (label ""), then in the ``carried`` call (after the
    globals, so that a program whose globals differ after the run is the
    "globals" divergence it was before that call existed); (None, "") when
    they match. Calls labelled in ``skip`` are not compared. Comparisons that
    cannot be made are noted in ``notes``."""
    fp64_calls = fp64.calls if fp64 is not None else [None] * len(ref.calls)
    triples = [t for t in zip(ref.calls, res.calls, fp64_calls) if t[0].result.label not in skip]
    carried = [t for t in triples if t[0].result.label == Call.CARRIED.value]
    for a, b, c in [t for t in triples if t[0].result.label != Call.CARRIED.value]:
        aspect = call_difference(a, b, c, notes=notes)
        if aspect is not None:
            return aspect, a.result.label
    if len(res.calls) == len(ref.calls) and not _values_match(  # after a shorter run (compiled_calls) they differ
            ref.globals_after, res.globals_after, None if fp64 is None else fp64.globals_after, "globals", notes):
        return Aspect.GLOBALS, ""
    for a, b, c in carried:
        aspect = call_difference(a, b, c, notes=notes)
        if aspect is not None:
            return aspect, a.result.label
    return None, ""


# Exception types too general to say that two failures are one: a torch error
# is always an Exception, whatever eager raised.
_TOO_GENERAL = frozenset({"Exception", "BaseException"})


def wraps_eager_error(ref: _Call, res: _Call) -> bool:
    """True if compiled call ``res`` raised torch's own error (``is_torch_error``)
    that is an instance of the type eager call ``ref`` raised, other than
    Exception itself: the program's own failure, which eager rejects too,
    surfaced through the compiler's wrapper. Dynamo runs each op on fake
    tensors first and raises ``TorchRuntimeError`` (a RuntimeError) where the
    op raises RuntimeError, e.g. a shape or device mismatch (gb_type
    "RuntimeError when making fake tensor call"); a program's
    ``except RuntimeError`` catches both. Eager's own misbehaviour is no
    compiler finding, so the call is not compared (``call_difference``).
    Compiled ``TorchRuntimeError`` where eager raised IndexError is still a
    compile error: ``except IndexError`` misses it (compile-error/af739903defa)."""
    if ref.exc is None or res.exc is None or not is_torch_error(res.exc):
        return False
    eager_type = ref.result.exc_type
    return eager_type not in _TOO_GENERAL and eager_type in {qualified_name(t) for t in type(res.exc).__mro__}


def is_compile_error(ref: _Call, res: _Call) -> bool:
    """True if compiled call ``res`` raised torch's own error where eager call
    ``ref`` did not raise that type. Torch's own: a type of the compiler's
    (``is_torch_error``) or any exception raised inside the compiler
    (``raised_in_compiler``: an ``assert`` or ``KeyError`` in Dynamo). A torch
    error that is an instance of what eager raised is eager's failure
    (``wraps_eager_error``), not the compiler's."""
    exc = res.exc
    return exc is not None and (is_torch_error(exc) or raised_in_compiler(exc)) and (
        ref.exc is None or ref.result.exc_type != res.result.exc_type) and not wraps_eager_error(ref, res)


def record_compile_error(outcome: Outcome, res: _Call) -> Outcome:
    """Make ``outcome`` the ``compile-error`` of call ``res`` (``is_compile_error``):
    its label, root error type, normalised message (of the wrapped error, where
    one is wrapped) and innermost compiler frame."""
    assert res.exc is not None
    outcome.verdict = Verdict.COMPILE_ERROR
    outcome.call = res.result.label
    outcome.error_type = root_error_type(res.exc)
    outcome.error_message = root_error_message(res.exc) or res.result.exc_message
    outcome.torch_frame = innermost_torch_frame(res.exc)
    return outcome


def note_state(outcome: Outcome, restored: state.Restored) -> None:
    """Add what ``harness.state.restore`` put back (and the threads still
    running) to ``outcome.state_left``, once each, at most MAX_NOTES."""
    for note in restored.undone + [f"could not restore: {f}" for f in restored.failed] + [
            f"thread {t} still running" for t in restored.threads]:
        if note not in outcome.state_left and len(outcome.state_left) < MAX_NOTES:
            outcome.state_left.append(note)


def run_program(
    program: Program,
    backend: str,
    *,
    interpreter: str,
    device: str = "cpu",
    fullgraph: bool = False,
    workdir: str = ".",
    calls: int | None = None,
    settings: CompileSettings | None = None,
    compiled_calls: int | None = None,
) -> Outcome:
    """Run ``program`` eagerly twice and compiled with ``backend`` once, each
    run making the calls of the program's plan (at most ``calls`` of them;
    the compiled run at most ``compiled_calls``, the rest of its calls left
    uncompared, and the globals after the run then not compared either);
    compiled with ``settings`` (harness.settings; None: torch.compile's
    defaults), which the outcome records; every run's calls in
    ``settings.calling()`` (no_grad with freezing).

    Returns an Outcome; failures of the program are recorded in it, never raised.
    Raises ValueError for an unknown backend or a device this interpreter
    cannot use (a harness failure). Tensors are created by the program's
    ``inputs()`` on the CPU and moved to ``device``; a CUDA fault becomes a
    ``crash`` outcome (``harness.device``), after which the process must exit.
    """
    import torch
    import torch._dynamo

    settings = settings or CompileSettings()
    outcome = Outcome(program_id=program.program_id, interpreter=interpreter, backend=backend,
                      device=device, fullgraph=fullgraph, compile_settings=settings)
    backend_fn = resolve_backend(backend)
    devices.check(device)
    stance = stance_of(backend)
    path = os.path.join(workdir, f"prog_{program.program_id}.py")
    started = time.perf_counter()
    deterministic_settings()
    torch._dynamo.reset()
    clock = timing.PhaseClock()
    fp64_run: _Run | None = None
    state.install()  # records the threads the program starts
    # the compiler's config is put back after the program (harness.worker),
    # not between runs: each run's load sets it alike, and comparing it costs 3 ms
    saved = state.capture(configs=False)

    def fresh_start() -> None:  # what one run left behind must not reach the next (harness.state)
        note_state(outcome, state.restore(saved, workdir))

    try:
        log.info("phase %s %s %s", Phase.EAGER, program.program_id, backend)
        mod_a = load_module(program, path)
        # eager A decides the plan from its first call's inputs (inputs() may count its calls)
        with settings.calling(), eager_reference(), clock.phase(timing.TimePhase.EAGER):
            eager_a = _run(mod_a, program, getattr(mod_a, program.entry), None, calls=calls, device=device)
        plan = eager_a.plan
        outcome.eager_s = sum(c.result.elapsed_s for c in eager_a.calls)
        outcome.state_left += eager_a.undone[:MAX_NOTES]
        fresh_start()
        mod_b = load_module(program, path)
        with settings.calling(), eager_reference(), clock.phase(timing.TimePhase.EAGER):
            eager_b = _run(mod_b, program, getattr(mod_b, program.entry), plan, device=device)
        outcome.eager = [c.result for c in eager_a.calls]
        with clock.phase(timing.TimePhase.COMPARE):
            flaky_aspect, flaky_call = _first_difference(eager_a, eager_b, notes=outcome.incomparable)
        skip: tuple[str, ...] = ()
        if flaky_aspect and flaky_call == Call.CARRIED.value:
            # eager disagrees with itself on the carried call alone: that call is not compared, the rest is
            outcome.incomparable.append(f"{flaky_aspect.value}@{flaky_call}: eager differs from itself")
            flaky_aspect, skip = None, (Call.CARRIED.value,)
        if flaky_aspect:
            outcome.verdict, outcome.aspect, outcome.call = Verdict.FLAKY, flaky_aspect, flaky_call
            return outcome

        log.info("phase %s %s %s", Phase.COMPILED, program.program_id, backend)
        fresh_start()
        mod_c = load_module(program, path)
        counter = observe.GraphCounter(backend_fn)
        compiled_fn = settings.compile(getattr(mod_c, program.entry), backend=counter, fullgraph=fullgraph)
        with observe.record_graph_breaks() as breaks, settings.patched(), settings.calling(), (
                torch.compiler.set_stance(stance) if stance else contextlib.nullcontext()):
            compiled = _Run()
            for i, label in enumerate(plan[:compiled_calls] if compiled_calls else plan):
                counter.call_index = i
                with clock.phase(f"{timing.CALL_PREFIX}{label.value}"):
                    part = _run(mod_c, program, compiled_fn, (label,), device=device, carried=compiled.passed)
                compiled.calls, compiled.passed = compiled.calls + part.calls, part.passed
            compiled.globals_after = _globals_snapshot(mod_c)
        outcome.compiled = [c.result for c in compiled.calls]
        outcome.compile_s = compiled.calls[0].result.elapsed_s if compiled.calls else 0.0
        outcome.graph_count, outcome.recompiles = counter.graphs, counter.recompiles
        outcome.graph_breaks = list(breaks)

        for a, b in zip(eager_a.calls, compiled.calls):
            if is_compile_error(a, b):
                return record_compile_error(outcome, b)
        with clock.phase(timing.TimePhase.COMPARE):
            aspect, call = _first_difference(eager_a, compiled, notes=outcome.incomparable, skip=skip)
        if aspect in FLOAT_ASPECTS and any(
                compare.has_float(c.value) or compare.has_float(c.args_after) for c in eager_a.calls):
            # torch's rule: a float difference is a bug only if compiled is
            # further from a float64 run than eager is
            log.info("phase %s %s %s", Phase.FP64, program.program_id, backend)
            fresh_start()
            mod_r = load_module(program, path)
            try:
                with settings.calling(), eager_reference(), clock.phase(timing.TimePhase.FP64):
                    fp64_run = _run(mod_r, program, getattr(mod_r, program.entry), plan[:compiled_calls or len(plan)],
                                   fp64=True, device="cpu")
                aspect, call = _first_difference(eager_a, compiled, fp64_run, skip=skip)
            except _NoReference as e:  # no float64 variant of the inputs: eager's value decides
                outcome.incomparable.append(f"no float64 reference: {e}")
    except ProgramError as e:
        outcome.verdict = Verdict.INVALID
        outcome.detail = str(e)
        return outcome
    except devices.CudaFault as e:  # the worker exits after replying (harness.worker)
        return devices.record_fault(outcome, e)
    finally:
        outcome.elapsed_s = time.perf_counter() - started
        outcome.phases = clock.result()
        outcome.cpu_s = round(clock.cpu_s(), 3)
        for name in [n for n in sys.modules if n.startswith("tcfuzz_program_")]:
            del sys.modules[name]
        reset_global_state()
        fresh_start()
        torch._dynamo.reset()
        del outcome.incomparable[MAX_NOTES:]

    if aspect:
        outcome.verdict = Verdict.DIVERGENCE
        outcome.aspect, outcome.call = aspect, call
        if aspect in (Aspect.EXCEPTION, Aspect.EXCEPTION_MESSAGE):
            a, b = next((a.result, b.result) for a, b in zip(eager_a.calls, compiled.calls)
                        if a.result.label == call)
            outcome.error_type = f"{a.exc_type or 'None'}->{b.exc_type or 'None'}"
            outcome.error_message = f"{a.exc_message} -> {b.exc_message}"[:300]
    return outcome
