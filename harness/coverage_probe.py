"""Which bytecode and which Dynamo lines a batch of programs reaches, in this interpreter.

Three commands, each on a JSON list of program sources (module text defining
``f`` and ``inputs``); the host (``fuzz.report.coverage``) runs them in turn, so that
a program that kills the process while it runs loses only itself.

``python -m harness.coverage_probe PROGRAMS.json`` (the opcode census) prints
one JSON object:

- ``opcodes_seen``: opnames in the programs' bytecode, every code object
  recursively (functions, classes, comprehensions, lambdas), read from the raw
  ``co_code`` of *this* interpreter's compiler (opcodes differ per version);
- ``all_opcodes``: every real opcode of this interpreter (``dis.opmap``
  entries below 256: pseudo-instructions such as ``SETUP_FINALLY`` or
  3.13's ``LOAD_CLOSURE`` are compiler-internal and never in ``co_code``);
- ``dynamo_opcodes``: the real opcodes some Dynamo instruction translator has
  a handler for: opnames ``op`` with ``hasattr(cls, op)`` for the subclasses of
  ``InstructionTranslatorBase`` in ``torch/_dynamo/symbolic_convert.py``
  (handlers are methods named after opnames there);
  ``dynamo_pseudo_opcodes`` the handled pseudo-instructions left out;
- ``dynamo_opcode_coverage``: |seen ∩ dynamo| / |dynamo|.

``... PROGRAMS.json --lines-only DATA_FILE [--start K] [--timeout-s 20] [--backend eager]``
runs programs K... under ``torch.compile(backend="eager")`` (two calls each)
with the ``coverage`` package (a worker-env dependency: see tox.ini) measuring
``torch/_dynamo/**.py``, and reports each outcome as it goes (see
``measure_lines``). With ``--backend inductor`` it compiles with Inductor
instead (on CPU), measures ``torch/_inductor`` and ``torch/_functorch`` too,
and reports with each outcome the operators of the graphs: ``torch_ops``
(the targets of the FX graphs Dynamo captured) and ``aten_ops`` (the
``OpOverloadPacket``s of the graphs Inductor's ``compile_fx_inner`` receives
after AOTAutograd: forward and backward).

``... --report DATA_FILE [--backend inductor]`` combines the data of every
such process and prints ``dynamo_line_coverage``, the share of those
statements executed (and ``inductor_line_coverage``,
``functorch_line_coverage`` for Inductor; every ``.py`` file under the
folder counts, imported or not; ``dynamo_files`` the share of each file of
``PER_FILE`` (``torch/_dynamo/variables/*``, ``polyfills/*`` and
``comprehension_graph_break.py``); ``inductor_cpu_line_coverage`` leaves out
the files only a GPU or distributed run executes, ``ACCELERATOR_ONLY``). Coverage starts before torch is imported,
so the statements a module runs at import count (as ``coverage run`` counts
them); Inductor's caches stay on, in a cache folder of the probe's own.

Runs inside the worker envs: stdlib, torch and ``coverage`` only. A program
that runs longer than ``--timeout-s`` is interrupted by a SIGALRM handler:
this probe is a measurement tool, not the oracle (the harness's workers are
timed out from the host instead).
"""

from __future__ import annotations

import argparse
import contextlib
import dis
import io
import json
import os
import re
import signal
import sys
import tempfile
import types
from typing import Any

# Calls of the compiled entry function per program (the second one takes the
# guarded cached path).
CALLS = 2
# Largest opcode value of a real instruction; pseudo-instructions are >= 256.
MAX_REAL_OPCODE = 255


def code_objects(code: types.CodeType) -> list[types.CodeType]:
    """``code`` and every code object nested in its constants, recursively."""
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += code_objects(const)
    return found


def opnames(code: types.CodeType) -> set[str]:
    """Opnames in the raw bytecode of ``code`` and its nested code objects
    (``CACHE`` entries included: they are real instructions of 3.11+)."""
    names = set()
    for item in code_objects(code):
        raw = item.co_code
        for i in range(0, len(raw), 2):
            names.add(dis.opname[raw[i]])
    return names


def real_opcodes() -> set[str]:
    return {name for name, op in dis.opmap.items() if op <= MAX_REAL_OPCODE}


def dynamo_handled() -> set[str]:
    """Opnames (real and pseudo) that a Dynamo instruction translator handles."""
    import torch._dynamo.symbolic_convert as symbolic_convert

    base = symbolic_convert.InstructionTranslatorBase
    classes = [c for c in vars(symbolic_convert).values() if isinstance(c, type) and issubclass(c, base)]
    return {name for name in dis.opmap if any(hasattr(c, name) for c in classes)}


# Marker line on stderr before each program of measure_lines.
PROGRESS = "tcfuzz-probe: program"


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


# Backends the line probe can compile with, and the folders of torch (under
# torch/) whose statements it measures for each.
# Files of torch/_inductor whose code serves only a GPU or other accelerator
# backend (Triton, CUDA, ROCm, CUTLASS, CuTe DSL, Pallas, MPS, Halide, XPU,
# MTIA, CUDA graphs, vendored GPU GEMM kernels) or distributed training
# (collectives, bucketing, overlap scheduling): a CPU run cannot execute them.
# ``inductor_cpu_line_coverage`` leaves them out; ``inductor_line_coverage``
# counts every file. A rule of ours, by path (torch 2.12.0-2.15.0 layout).
ACCELERATOR_ONLY = re.compile(
    r"(triton|cuda|rocm|cutlass|cutedsl|nv_universal|pallas|mps|halide|flydsl|vendored|quack|flex_gemm"
    r"|xpu|mtia|gfx|/ck/|/ck_|metal|tlx|helion|comms|comm_|bucketing|overlap|micro_pipeline|fsdp|distributed"
    r"|nccl|autoheuristic)", re.IGNORECASE)

# The files whose share ``line_report`` gives one by one (``dynamo_files``), as
# paths under torch/: Dynamo's model of Python values (its variable trackers),
# its Python re-implementations of library functions, and its handling of
# graph breaks inside comprehensions (torch 2.15+), so that a construct's
# effect shows in the file it was written for.
PER_FILE = re.compile(r"^_dynamo/(variables/[^/]+|polyfills/[^/]+|comprehension_graph_break)\.py$")

BACKENDS: dict[str, tuple[str, ...]] = {
    "eager": ("_dynamo",),
    "inductor": ("_dynamo", "_inductor", "_functorch"),
}


class OpRecorder:
    """A ``torch.compile`` backend that runs Inductor and records the graphs' operators.

    ``torch_ops``: names of the call_function/call_method targets of the
    graphs Dynamo hands to the backend; ``aten_ops``: ``namespace.name`` of
    every ``OpOverload`` in the graphs Inductor lowers (``GraphLowering.run``,
    after AOTAutograd's decompositions and partitioning; forward and
    backward graphs), recorded while ``recording()`` is active.
    """

    def __init__(self) -> None:
        self.torch_ops: set[str] = set()
        self.aten_ops: set[str] = set()

    def __call__(self, gm: Any, example_inputs: Any) -> Any:
        from torch._inductor.compile_fx import compile_fx

        for node in gm.graph.nodes:
            if node.op == "call_function":
                self.torch_ops.add(getattr(node.target, "__name__", str(node.target)))
            elif node.op == "call_method":
                self.torch_ops.add(str(node.target))
        return compile_fx(gm, example_inputs)

    @contextlib.contextmanager
    def recording(self) -> Any:
        """Record the aten operators of every graph Inductor lowers meanwhile."""
        from torch._inductor.graph import GraphLowering

        original = GraphLowering.run
        recorder = self

        def run(lowering: Any, *args: Any) -> Any:
            recorder.aten_ops.update(_aten_names(lowering.module))
            return original(lowering, *args)

        GraphLowering.run = run
        try:
            yield self
        finally:
            GraphLowering.run = original


def _aten_names(gm: Any) -> set[str]:
    import torch

    names = set()
    for node in gm.graph.nodes:
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            packet = node.target.overloadpacket
            names.add(f"{packet._qualified_op_name.replace('::', '.')}")
    return names


def run_compiled(source: str, index: int, timeout_s: float, workdir: str,
                 backend: str = "eager", recorder: OpRecorder | None = None,
                 settings: dict[str, Any] | None = None) -> str:
    """Run one program's entry compiled with ``backend`` ("eager", or the
    ``recorder`` for "inductor") and ``settings`` (harness.settings'
    CompileSettings as JSON, the ones a campaign draws for the program;
    None: torch.compile's defaults); the outcome as a word."""
    import torch
    import torch._dynamo

    from harness.settings import CompileSettings

    torch._dynamo.reset()
    # Dynamo imports a frame's module by name and reads its source file, as
    # for any module: register it and give it a real file (as harness.execute does)
    name = f"tcfuzz_probe_{index}"
    module = types.ModuleType(name)
    path = os.path.join(workdir, f"{name}.py")
    with open(path, "w") as fh:
        fh.write(source)
    module.__file__ = path
    sys.modules[name] = module
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(source, path, "exec", dont_inherit=True), module.__dict__)
            drawn = CompileSettings.from_json(settings)
            compiled = drawn.compile(module.f, backend=recorder if recorder is not None else backend,
                                     fullgraph=False)
            with drawn.patched(), drawn.calling():
                for _ in range(CALLS):
                    torch.manual_seed(0)
                    args = module.inputs()  # one value is one argument, as harness.plan takes it
                    compiled(*(args if isinstance(args, tuple) else (args,)))
        return "ok"
    except _Timeout:
        return "timeout"
    except BaseException as e:  # the program's failure is data here too
        if isinstance(e, KeyboardInterrupt):
            raise
        # the message on stderr (the host reads only the progress lines there), for whoever debugs
        first = (str(e).strip().splitlines() or [""])[0][:300]
        print(f"tcfuzz-probe: program {index} raised {type(e).__name__}: {first}", file=sys.stderr, flush=True)
        return f"raised {type(e).__name__}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.modules.pop(name, None)
        torch._dynamo.reset()


def measure_lines(sources: list[str], timeout_s: float, data_file: str, start: int = 0,
                  backend: str = "eager", settings: list[dict[str, Any]] | None = None) -> None:
    """Run ``sources[start:]`` compiled with ``backend`` (a key of ``BACKENDS``)
    and ``settings[k]`` for program k (compile settings as JSON; None: the defaults)
    with the line coverage of its torch folders collected into ``data_file`` (one file per process:
    ``coverage``'s data suffix), saved after every program so that a program
    that kills the process (a segfault in Dynamo) loses only itself.

    Before each program prints ``tcfuzz-probe: program K`` on stderr, after it
    ``{"program": K, "outcome": WORD}`` on stdout (with ``torch_ops`` and
    ``aten_ops`` for "inductor"), both flushed: the host restarts a probe
    that died from the program after the one that killed it.
    """
    import coverage
    import importlib.util

    if sys.version_info >= (3, 12):
        # sys.monitoring turns a line's event off once it is recorded, so
        # Dynamo runs near full speed; and 3.13t has no C tracer to fall back
        # on (coverage's pure-Python tracer is many times slower)
        os.environ.setdefault("COVERAGE_CORE", "sysmon")
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("torch is not installed in this interpreter: provision its env (scripts/provision.sh)")
    torch_root = os.path.dirname(spec.origin)
    include = [os.path.join(torch_root, folder, "*") for folder in BACKENDS[backend]]
    cov = coverage.Coverage(data_file=data_file, data_suffix=True, include=include, branch=False)
    signal.signal(signal.SIGALRM, _alarm)
    with tempfile.TemporaryDirectory(prefix="tcfuzz-probe-") as workdir:
        if backend == "inductor":
            # the FX-graph and AOTAutograd caches on, as in a campaign's
            # workers (their lookups, saves and hits are code a campaign
            # runs), in a cache of this probe's own: no hit from another run
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(workdir, "inductor-cache")
        # started before torch is imported: the statements that run at import
        # (a module's definitions) run in every campaign process too
        cov.start()
        try:
            # Inductor's compile_threads left at its default, as in a
            # campaign's workers: on a machine of more than one core its C++
            # kernels build in a pool of compile subprocesses (whose own
            # statements are not measured; the pool's host side is)
            import torch
            for index in range(start, len(sources)):
                print(f"{PROGRESS} {index}", file=sys.stderr, flush=True)
                recorder = OpRecorder() if backend == "inductor" else None
                with recorder.recording() if recorder is not None else contextlib.nullcontext():
                    word = run_compiled(sources[index], index, timeout_s, workdir, backend, recorder,
                                        settings[index] if settings else None)
                cov.save()
                entry: dict[str, Any] = {"program": index, "outcome": word}
                if recorder is not None:
                    entry["torch_ops"] = sorted(recorder.torch_ops)
                    entry["aten_ops"] = sorted(recorder.aten_ops)
                print(json.dumps(entry), flush=True)
        finally:
            cov.stop()
            cov.save()


def line_report(data_file: str, backend: str = "eager", missed_file: str | None = None) -> dict[str, Any]:
    """Share of the statements of each torch folder of ``BACKENDS[backend]``
    in the combined data files of ``measure_lines`` (``data_file`` and its
    suffixed siblings): ``dynamo_line_coverage`` (``inductor_...``,
    ``functorch_...``), with ``..._lines_executed`` and ``..._statements``.
    With ``missed_file``, also writes there a tab-separated table of every
    measured file, most missed statements first: ``statements``,
    ``missed``, ``path`` (under torch/), ``accelerator_only`` (1 if
    ``ACCELERATOR_ONLY`` matches it). ``dynamo_files``: for each file
    ``PER_FILE`` matches that this torch has, path under torch/ ->
    ``{"statements", "executed", "share"}``."""
    import coverage
    import torch

    torch_root = os.path.dirname(torch.__file__)
    roots = [os.path.join(torch_root, folder) for folder in BACKENDS[backend]]
    cov = coverage.Coverage(data_file=data_file, include=[os.path.join(r, "*") for r in roots], branch=False)
    cov.combine([os.path.dirname(os.path.abspath(data_file))], keep=True)
    report: dict[str, Any] = {}
    rows: list[tuple[int, int, str, int]] = []
    per_file: dict[str, dict[str, float]] = {}
    for folder, root in zip(BACKENDS[backend], roots):
        statements = executed = cpu_statements = cpu_executed = 0
        for path, _, files in os.walk(root):
            for name in files:
                if name.endswith(".py"):
                    try:
                        _, lines, _, missing, _ = cov.analysis2(os.path.join(path, name))
                    except coverage.exceptions.NoSource:
                        continue
                    except coverage.exceptions.NotPython:
                        continue
                    statements += len(lines)
                    executed += len(lines) - len(missing)
                    relative = os.path.relpath(os.path.join(path, name), torch_root)
                    accelerator = bool(ACCELERATOR_ONLY.search(relative))
                    rows.append((len(lines), len(missing), relative, int(accelerator)))
                    if PER_FILE.match(relative.replace(os.sep, "/")):
                        done = len(lines) - len(missing)
                        per_file[relative.replace(os.sep, "/")] = {
                            "statements": len(lines), "executed": done, "share": done / len(lines) if lines else 0.0}
                    if not accelerator:
                        cpu_statements += len(lines)
                        cpu_executed += len(lines) - len(missing)
        key = folder.strip("_")
        report[f"{key}_line_coverage"] = executed / statements if statements else 0.0
        report[f"{key}_lines_executed"] = executed
        report[f"{key}_statements"] = statements
        if folder == "_inductor":
            report["inductor_cpu_line_coverage"] = cpu_executed / cpu_statements if cpu_statements else 0.0
            report["inductor_cpu_statements"] = cpu_statements
    report["dynamo_files"] = dict(sorted(per_file.items()))
    if missed_file is not None:
        with open(missed_file, "w") as fh:
            fh.write("statements\tmissed\tpath\taccelerator_only\n")
            for row in sorted(rows, key=lambda r: (-r[1], r[2])):
                fh.write("\t".join(map(str, row)) + "\n")
    return report


def census(sources: list[str]) -> dict[str, Any]:
    """The opcode census of ``sources`` (see the module docstring)."""
    seen: set[str] = set()
    uncompilable = 0
    for source in sources:
        try:
            seen |= opnames(compile(source, "<program>", "exec", dont_inherit=True))
        except (SyntaxError, ValueError):
            uncompilable += 1
    handled = dynamo_handled()
    real = real_opcodes()
    dynamo = handled & real
    return {
        "version": f"{sys.version_info.major}.{sys.version_info.minor}"
        + ("t" if not getattr(sys, "_is_gil_enabled", lambda: True)() or "free-threading" in sys.version else ""),
        "programs": len(sources),
        "uncompilable": uncompilable,
        "opcodes_seen": sorted(seen),
        "all_opcodes": sorted(real),
        "dynamo_opcodes": sorted(dynamo),
        "dynamo_pseudo_opcodes": sorted(handled - real),
        "dynamo_opcodes_missed": sorted(dynamo - seen),
        "dynamo_opcode_coverage": len(seen & dynamo) / len(dynamo) if dynamo else 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.coverage_probe")
    parser.add_argument("programs", nargs="?", help="JSON file: a list of program sources")
    parser.add_argument("--timeout-s", type=float, default=20.0, help="per program, for --lines-only")
    parser.add_argument("--lines-only", metavar="DATA_FILE",
                        help="run the programs for line coverage of torch/_dynamo, into DATA_FILE (see measure_lines)")
    parser.add_argument("--start", type=int, default=0, help="with --lines-only: the first program to run")
    parser.add_argument("--report", metavar="DATA_FILE", help="only print the line coverage of DATA_FILE's data")
    parser.add_argument("--missed", metavar="TSV_FILE",
                        help="with --report: also write each measured file's statements and missed ones there")
    parser.add_argument("--settings", metavar="JSON_FILE",
                        help="with --lines-only: a list of compile settings, one per program (harness.settings)")
    parser.add_argument("--backend", choices=sorted(BACKENDS), default="eager",
                        help="with --lines-only and --report: the backend compiled with and the folders measured")
    args = parser.parse_args(argv)
    if args.report:
        sys.stdout.write(json.dumps(line_report(args.report, args.backend, args.missed)) + "\n")
        return 0
    if not args.programs:
        parser.error("PROGRAMS is required unless --report")
    with open(args.programs) as fh:
        sources = json.load(fh)
    if args.lines_only:
        settings = None
        if args.settings:
            with open(args.settings) as fh:
                settings = json.load(fh)
        measure_lines(sources, args.timeout_s, args.lines_only, args.start, args.backend, settings)
        return 0
    sys.stdout.write(json.dumps(census(sources)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
