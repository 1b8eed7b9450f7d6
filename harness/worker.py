"""``python -m harness.worker``: a long-lived server that runs many programs.

``import torch`` and the first compile of each backend are paid once per
process. The protocol (see ``harness.protocol``) is read from stdin and
written to a private duplicate of stdout; fds 0 and 1 are then pointed at
/dev/null so that programs cannot read requests or corrupt replies. Fatal
signals dump a ``faulthandler`` traceback on stderr, which the host keeps.
Generated code runs under ``harness.limits`` (private working directory,
address-space and CPU-time limits, no network).

Exit codes other than 0 that the host reads (``fuzz.campaign.workers``):
``EXIT_OUT_OF_MEMORY`` the harness itself ran out of memory around a program;
``EXIT_PROTOCOL_LOST`` the program closed or broke the reply channel;
``harness.device.EXIT_CUDA_FAULT`` after a CUDA fault and ``EXIT_STATE_LEFT``
after a program whose threads still run (``harness.state``): the reply it
sent first has ``"retiring": true``.
"""

from __future__ import annotations

import argparse
import faulthandler
import gc
import logging
import os
import platform
import sys
import sysconfig
import traceback
from typing import Any, Callable

from harness import device as devices, limits, protocol, support
from harness.outcome import InterpreterInfo
from harness.program import Program
from harness.settings import CompileSettings

EXIT_OUT_OF_MEMORY = 86
EXIT_PROTOCOL_LOST = 87
# After replying, when a program left state that harness.state could not put
# back (a thread it started still running): the reply has "retiring": true.
EXIT_STATE_LEFT = 88
# Programs between full garbage collections and clearings of
# PERIODIC_CACHES (cycles left by compiled frames are otherwise freed only
# when a generation-2 collection happens to run). A collection took 0.2-0.6 s
# with torch loaded before ``freeze_warm_objects``, too dear for every program.
GC_EVERY_PROGRAMS = 50
# Allocations between young-generation collections (CPython's default: 700).
# A compile allocates millions of short-lived objects: at 700, collections
# took 6-7 % of eager-backend compile time; at 50,000, a third of that
# (benchmarks/throughput.py's bare loop against tcfuzz's worker on 3.12, 150
# programs interleaved: gc callbacks' time 2.9 s -> 1.0 s, programs/s +3 %).
# What the young generation holds before it is collected is a few MiB.
GC_YOUNG_THRESHOLD = 50_000


def interpreter_info() -> InterpreterInfo:
    """This interpreter's version, build and GIL state, and torch's version."""
    import torch

    free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    gil = sys._is_gil_enabled() if hasattr(sys, "_is_gil_enabled") else True
    return InterpreterInfo(
        name=f"{sys.version_info.major}.{sys.version_info.minor}{'t' if free_threaded else ''}",
        version=platform.python_version(),
        free_threaded=free_threaded,
        gil_enabled=gil,
        torch=torch.__version__,
        executable=sys.executable,
        compile_refused=support.compile_refusal(),
    )


def _isolate_stdio() -> tuple[object, object]:
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    sys.stdin = open(os.devnull)
    return proto_in, proto_out


# What one program's compile leaves behind that ``torch._dynamo.reset()``
# does not drop, as (module, attribute path, method): measured with
# tracemalloc over 17 programs on 3.12 / torch 2.12
# (benchmarks/throughput.py --rss-programs shows the resident set). Each is
# looked up, so a torch without one of them (older envs of `tcfuzz triage`)
# skips it.
#
# Cleared after every program: caches whose entries only the program that
# made them can hit, so clearing them costs no speed.
PER_PROGRAM_CACHES = (
    # Inductor's loaded kernel modules (~0.1 ms)
    ("torch._inductor.utils", "", "clear_caches"),
    # one CompilationMetrics record per compile, each with the whole Dynamo
    # and Inductor config as JSON (~100 KiB; a deque of 64)
    ("torch._dynamo.utils", "", "clear_compilation_metrics"),
    # graph-break and other counters, keyed by messages that name the program
    # (harness.observe reads them as a difference within one run)
    ("torch._dynamo.utils", "counters", "clear"),
    # the source of every FX graph's generated forward (never dropped)
    ("torch.fx.graph_module", "_loader.eval_cache", "clear"),
    # the instructions of every resume function, keyed weakly by code objects
    # that the caches here keep alive; reset() clears only the code cache
    ("torch._dynamo.resume_execution", "ContinueExecutionCache.generated_code_metadata", "clear"),
)
# Cleared every GC_EVERY_PROGRAMS programs, with the garbage collection:
# caches that later programs hit too (torch's own functions and classes, ops
# on the same shapes), so clearing them after every program made the next
# compile slower (measured with benchmarks/throughput.py's bare loop on 3.12,
# 120 eager programs interleaved: FakeTensor's cache 3.5 %, the other two and
# linecache together 4 %). Clearing them periodically still bounds them.
PERIODIC_CACHES = (
    # FakeTensor's dispatch cache, a class attribute with no bound
    ("torch._subclasses.fake_tensor", "FakeTensorMode", "cache_clear"),
    # decoded instructions of every code object compiled (an lru_cache of
    # 128 entries that keeps each program's code objects alive)
    ("torch._dynamo.bytecode_transformation", "_cached_cleaned_instructions", "cache_clear"),
    # getattr_static's MRO cache (3.12.0-3.12.2 hold the classes strongly:
    # a program's classes, so its module, stay alive; 128 entries)
    ("inspect", "_shadowed_dict_from_mro_tuple", "cache_clear"),
)
# Classes whose lru_cache'd methods hold every instance they saw (``self`` is
# in the key): ShapeEnv's keep each compile's ShapeEnv, its FakeTensor cache
# and its FX graph alive, up to 256 per method. A new ShapeEnv per compile:
# cleared after every program.
PER_PROGRAM_METHOD_CACHES = (
    ("torch.fx.experimental.symbolic_shapes", "ShapeEnv"),
)


def resolve_cache(module_name: str, path: str, method: str) -> Any:
    """``sys.modules[module_name].<path>.<method>``, None where any step is missing."""
    target = sys.modules.get(module_name)
    for name in filter(None, path.split(".")):
        target = getattr(target, name, None)
    return getattr(target, method, None)


def cache_clearers(periodic: bool = False) -> list[Callable[[], None]]:
    """The ``clear``/``cache_clear`` callables of ``PER_PROGRAM_CACHES`` and
    ``PER_PROGRAM_METHOD_CACHES`` (``periodic``: of ``PERIODIC_CACHES``) that
    this process has (modules not yet imported and names this torch lacks are
    left out)."""
    if periodic:
        found = [resolve_cache(*entry) for entry in PERIODIC_CACHES]
    else:
        found = [resolve_cache(*entry) for entry in PER_PROGRAM_CACHES]
        for module_name, class_name in PER_PROGRAM_METHOD_CACHES:
            cls = getattr(sys.modules.get(module_name), class_name, None)
            found += [getattr(m, "cache_clear", None) for m in (vars(cls).values() if cls is not None else ())]
    return [clear for clear in found if callable(clear)]


def forget_program_lines(workdir: str) -> None:
    """Drop ``linecache``'s entries for the program's files (under
    ``workdir``) and for generated code (``<eval_with_key>.N`` of FX graphs
    and other ``<...>`` names); keep torch's own files, whose lines Dynamo
    reads for every instruction it traces."""
    import linecache

    prefix = os.path.join(workdir, "")
    for filename in [f for f in linecache.cache if not f.startswith(os.sep) or f.startswith(prefix)]:
        linecache.cache.pop(filename, None)


def release_memory(programs_run: int, workdir: str = "") -> None:
    """Drop what one program's compile leaves in memory beyond Dynamo's reset
    (which the harness calls after every program): ``cache_clearers()`` and
    the program's lines in ``linecache`` after every program; every
    GC_EVERY_PROGRAMS programs also ``cache_clearers(periodic=True)``, all of
    ``linecache`` and reference cycles. (glibc's ``malloc_trim`` was measured
    here too: it cost up to 70 ms per program and did not change the resident
    size, so it is not called.)"""
    import linecache

    for clear in cache_clearers():
        clear()
    forget_program_lines(workdir or os.getcwd())
    if programs_run % GC_EVERY_PROGRAMS == 0:
        for clear in cache_clearers(periodic=True):
            clear()
        linecache.clearcache()
        gc.collect()


def tune_collector() -> None:
    """Collect the young generation every GC_YOUNG_THRESHOLD allocations
    (the older generations' thresholds unchanged)."""
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])


def freeze_warm_objects() -> None:
    """Collect, then move every object alive now to the collector's permanent
    generation (``gc.freeze``): torch's modules and what a backend's first
    compile loads live as long as the worker, and later collections (ours
    every GC_EVERY_PROGRAMS programs, and the interpreter's own full ones
    during compiles) no longer walk them. Measured on 3.12 after one warm
    eager program: a full collection took 0.2 s before, 0.014 s after."""
    gc.collect()
    gc.freeze()


def _reply(proto_out: object, message: dict) -> None:
    try:
        protocol.send(proto_out, message)
    except (OSError, ValueError):  # the program closed or broke fd of the reply channel
        print("[worker] the reply channel is gone (closed by the program?)", file=sys.stderr, flush=True)
        os._exit(EXIT_PROTOCOL_LOST)


def _channel_ids(proto_in: object, proto_out: object) -> tuple | None:
    """(device, inode) of both protocol fds, None if either is closed."""
    try:
        return tuple((st.st_dev, st.st_ino) for st in (os.fstat(proto_in.fileno()), os.fstat(proto_out.fileno())))
    except (OSError, ValueError):
        return None


def _run_one(request: dict, name: str, workdir: str) -> tuple[dict, bool]:
    """The outcome of one run request as JSON, and whether this process is
    still as it was before the program (harness.state): False when a thread
    the program started is still running or some state could not be put
    back, and the worker must retire after replying."""
    from harness import execute, reach, state, threads

    # started before the program's state is saved, so that its events are no state the program left
    collector = reach.worker_collector() if request.get("reach") else None
    program = Program.from_json(request["program"])
    options = dict(interpreter=name, device=request.get("device", "cpu"),
                   fullgraph=bool(request.get("fullgraph", False)), workdir=workdir)
    saved = state.capture()
    with limits.program_limits(request.get("cpu_limit_s")):
        try:
            if request.get("threads"):
                outcome = threads.run_threaded(program, request["backend"], threads=int(request["threads"]),
                                               **options)
            else:
                outcome = execute.run_program(program, request["backend"], calls=request.get("calls"),
                                              compiled_calls=request.get("compiled_calls"),
                                              settings=CompileSettings.from_json(request.get("compile")), **options)
        finally:
            if _left_garbage(locals().get("outcome")):
                gc.collect()  # before the state is put back: see _left_garbage
            restored = state.restore(saved, workdir)
    execute.note_state(outcome, restored)
    if collector is not None:
        outcome.reach = collector.drain()
    outcome.gil_enabled = sys._is_gil_enabled() if hasattr(sys, "_is_gil_enabled") else True
    return outcome.to_json(), restored.clean


def _left_garbage(outcome: Any) -> bool:
    """Whether a run may have left reference cycles that hold torch's C++
    guards: it did not match (a compile error, a divergence, ...), a call
    raised, or there is no outcome (the harness raised). An exception's
    traceback keeps the compiler's frames, and with them guards such as
    AOTAutograd's ``_EnablePythonDispatcher``; when the cycle is collected
    their destructors put this thread's dispatch keys and grad mode back to
    what they were when the guard was made, so a collection after
    ``state.restore`` poisoned the worker: every later operator raised
    "Hit PythonDispatcher dispatch key but PythonDispatcherTLS was not set"
    (an ``inference_mode`` program's compile error under aot_eager; 36% of
    a guided campaign's runs were lost so). Collecting costs about 80-100 ms
    in a warm worker, so runs that matched with no exception skip it."""
    if outcome is None:
        return True
    if getattr(getattr(outcome, "verdict", None), "value", "match") != "match":
        return True
    return any(call.exc_type for call in (*outcome.eager, *outcome.compiled))


def serve() -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.worker")
    parser.add_argument("--name", help="interpreter label reported in outcomes (default: derived)")
    parser.add_argument("--address-space-mib", type=int, default=-1,
                        help="RLIMIT_AS in MiB (0: none; default: size after import torch + "
                             f"{limits.ADDRESS_SPACE_HEADROOM_MIB} MiB)")
    options = parser.parse_args()

    proto_in, proto_out = _isolate_stdio()
    faulthandler.enable(file=sys.stderr, all_threads=True)
    limits.install_signal_dumps(sys.stderr)
    limits.disable_core_files()
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="[worker] %(message)s")
    for noisy in ("torch", "filelock"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    workdir = limits.make_workdir()

    import torch  # noqa: F401  (paid once per worker)
    from harness import execute, observe, state, threads  # noqa: F401

    observe.install()
    state.install()
    execute.deterministic_settings()  # before any program's state is saved: restoring keeps it
    execute.skip_guard_latency_profile()
    tune_collector()
    address_space_mib = options.address_space_mib
    if address_space_mib < 0:
        address_space_mib = int(limits.address_space_mib()) + limits.ADDRESS_SPACE_HEADROOM_MIB
        if devices.worker_device() != "cpu":
            address_space_mib = 0  # initialising CUDA maps far more than any such limit
    limits.set_address_space_limit(address_space_mib)
    limits.install_network_guard()
    info = interpreter_info()
    name = options.name or info.name
    _reply(proto_out, {"event": "ready", "interpreter": info.__dict__, "pid": os.getpid(),
                       "protocol": protocol.PROTOCOL_VERSION, "workdir": workdir,
                       "address_space_mib": address_space_mib, "rss_mib": round(limits.rss_mib(), 1)})
    programs_run = 0
    warm_backends: set[str] = set()
    channel = _channel_ids(proto_in, proto_out)
    try:
        for line in proto_in:
            if not line.strip():
                continue
            request = protocol.decode(line)
            op = request.get("op")
            if op == "shutdown":
                break
            if op != "run":
                _reply(proto_out, {"id": request.get("id"), "error": f"unknown op {op!r}"})
                continue
            clean = True
            try:
                outcome_json, clean = _run_one(request, name, workdir)
                reply = {"id": request.get("id"), "outcome": outcome_json}
            except MemoryError:
                # the harness itself (not the program: its MemoryError is data)
                # ran out of address space; the host records a crash and replaces us
                traceback.print_exc()
                print("[worker] out of memory in the harness", file=sys.stderr, flush=True)
                os._exit(EXIT_OUT_OF_MEMORY)
            except Exception as e:
                reply = devices.fault_reply(request, e, name) or {"id": request.get("id"), "error": traceback.format_exc()}
            devices.mark_retiring(reply, request)  # a CUDA fault poisoned this process
            if not clean:  # a thread of the program still runs, or state could not be put back
                reply["retiring"], exit_code = True, EXIT_STATE_LEFT
            else:
                exit_code = devices.EXIT_CUDA_FAULT
            programs_run += 1
            if _channel_ids(proto_in, proto_out) != channel:
                # the program closed or replaced a protocol fd: die now, so
                # that the host charges this program, not the next one
                print("[worker] the program closed the protocol channel", file=sys.stderr, flush=True)
                os._exit(EXIT_PROTOCOL_LOST)
            limits.clean_workdir(workdir)
            release_memory(programs_run, workdir)
            if request.get("backend") not in warm_backends:
                warm_backends.add(request.get("backend"))
                freeze_warm_objects()  # after the first program of each backend: what it loaded stays
            reply["rss_mib"] = round(limits.rss_mib(), 1)
            reply["peak_rss_mib"] = round(limits.peak_rss_mib(), 1)
            _reply(proto_out, reply)
            if reply.get("retiring"):
                print("[worker] exiting: " + ("the program left state behind (threads still running)"
                                              if exit_code == EXIT_STATE_LEFT else
                                              "after a CUDA fault (the context is poisoned)"), file=sys.stderr, flush=True)
                os._exit(exit_code)
    finally:
        limits.remove_workdir(workdir)
    return 0


if __name__ == "__main__":
    sys.exit(serve())
