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

``... PROGRAMS.json --lines-only DATA_FILE [--start K] [--timeout-s 20]``
runs programs K... under ``torch.compile(backend="eager")`` (two calls each)
with the ``coverage`` package (a worker-env dependency: see tox.ini) measuring
``torch/_dynamo/**.py``, and reports each outcome as it goes (see
``measure_lines``).

``... --report DATA_FILE`` combines the data of every such process and prints
``dynamo_line_coverage``, the share of those statements executed.

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


def run_compiled(source: str, index: int, timeout_s: float, workdir: str) -> str:
    """Run one program's entry under ``backend="eager"``; the outcome as a word."""
    import torch
    import torch._dynamo

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
            exec(compile(source, path, "exec"), module.__dict__)
            compiled = torch.compile(module.f, backend="eager")
            for _ in range(CALLS):
                torch.manual_seed(0)
                compiled(*module.inputs())
        return "ok"
    except _Timeout:
        return "timeout"
    except BaseException as e:  # the program's failure is data here too
        if isinstance(e, KeyboardInterrupt):
            raise
        return f"raised {type(e).__name__}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.modules.pop(name, None)
        torch._dynamo.reset()


def measure_lines(sources: list[str], timeout_s: float, data_file: str, start: int = 0) -> None:
    """Run ``sources[start:]`` under ``backend="eager"`` with torch/_dynamo's
    line coverage collected into ``data_file`` (one file per process:
    ``coverage``'s data suffix), saved after every program so that a program
    that kills the process (a segfault in Dynamo) loses only itself.

    Before each program prints ``tcfuzz-probe: program K`` on stderr, after it
    ``{"program": K, "outcome": WORD}`` on stdout, both flushed: the host
    restarts a probe that died from the program after the one that killed it.
    """
    import coverage
    import torch._dynamo

    if sys.version_info >= (3, 12):
        # sys.monitoring turns a line's event off once it is recorded, so
        # Dynamo runs near full speed; and 3.13t has no C tracer to fall back
        # on (coverage's pure-Python tracer is many times slower)
        os.environ.setdefault("COVERAGE_CORE", "sysmon")
    root = os.path.dirname(torch._dynamo.__file__)
    cov = coverage.Coverage(data_file=data_file, data_suffix=True, include=[os.path.join(root, "*")],
                            branch=False)
    signal.signal(signal.SIGALRM, _alarm)
    with tempfile.TemporaryDirectory(prefix="tcfuzz-probe-") as workdir:
        cov.start()
        try:
            for index in range(start, len(sources)):
                print(f"{PROGRESS} {index}", file=sys.stderr, flush=True)
                word = run_compiled(sources[index], index, timeout_s, workdir)
                cov.save()
                print(json.dumps({"program": index, "outcome": word}), flush=True)
        finally:
            cov.stop()
            cov.save()


def line_report(data_file: str) -> dict[str, Any]:
    """Share of torch/_dynamo's statements in the combined data files of
    ``measure_lines`` (``data_file`` and its suffixed siblings)."""
    import coverage
    import torch._dynamo

    root = os.path.dirname(torch._dynamo.__file__)
    cov = coverage.Coverage(data_file=data_file, include=[os.path.join(root, "*")], branch=False)
    cov.combine([os.path.dirname(os.path.abspath(data_file))], keep=True)
    statements = executed = 0
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                _, lines, _, missing, _ = cov.analysis2(os.path.join(folder, name))
                statements += len(lines)
                executed += len(lines) - len(missing)
    return {
        "dynamo_line_coverage": executed / statements if statements else 0.0,
        "dynamo_lines_executed": executed,
        "dynamo_statements": statements,
    }


def census(sources: list[str]) -> dict[str, Any]:
    """The opcode census of ``sources`` (see the module docstring)."""
    seen: set[str] = set()
    uncompilable = 0
    for source in sources:
        try:
            seen |= opnames(compile(source, "<program>", "exec"))
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
    args = parser.parse_args(argv)
    if args.report:
        sys.stdout.write(json.dumps(line_report(args.report)) + "\n")
        return 0
    if not args.programs:
        parser.error("PROGRAMS is required unless --report")
    with open(args.programs) as fh:
        sources = json.load(fh)
    if args.lines_only:
        measure_lines(sources, args.timeout_s, args.lines_only, args.start)
        return 0
    sys.stdout.write(json.dumps(census(sources)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
