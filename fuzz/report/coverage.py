"""Measured coverage of a program source: Dynamo's opcodes and lines, per interpreter.

The host draws the programs; ``harness.coverage_probe`` compiles (and, for
line coverage, runs under ``backend="eager"``, or Inductor with
``backend="inductor"``) them inside each worker env, because opcodes differ
per CPython version. See that module for what each number means. With
Inductor, each interpreter's entry also has ``aten_ops`` (the distinct aten
operators of the graphs Inductor compiled), ``torch_ops`` (those of the
graphs Dynamo captured) and the line coverage of ``torch/_inductor`` and
``torch/_functorch``.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from fuzz.errors import HarnessError
from fuzz.campaign.interpreters import ROOT, Interpreter
from fuzz.generate.sources import SOURCES, draw_program
from harness import settings as compile_settings
from harness.coverage_probe import PROGRESS

__all__ = ["JSON_KEYS", "measure", "render_files", "render_table", "settings_for"]

log = logging.getLogger(__name__)

# Keys of each interpreter's entry in `tcfuzz coverage --json` (docs/design.md, "Command line").
# dynamo_files: path under torch/ -> {"statements", "executed", "share"} for the
# files of harness.coverage_probe.PER_FILE (None without line coverage).
JSON_KEYS = ("opcodes_seen", "dynamo_opcodes", "dynamo_opcode_coverage", "dynamo_line_coverage", "dynamo_files",
             "programs")
# Further keys with --backend inductor: aten_ops and torch_ops are counts
# (the names are in aten_op_names / torch_op_names).
# inductor_cpu_line_coverage: of the torch/_inductor files a CPU run can execute
# (harness.coverage_probe.ACCELERATOR_ONLY leaves out the GPU/distributed ones).
INDUCTOR_JSON_KEYS = ("aten_ops", "torch_ops", "inductor_line_coverage", "functorch_line_coverage",
                      "inductor_cpu_line_coverage", "aten_op_names", "torch_op_names", "outcomes")
# What the probe needs in a worker env besides torch (tox.ini has it;
# `tcfuzz coverage --torch` installs it into the uv-made envs).
PROBE_REQUIREMENTS = ("coverage>=7.6",)
# Backends `tcfuzz coverage --backend` accepts (harness.coverage_probe.BACKENDS).
BACKENDS = ("eager", "inductor")
# Wall-clock limit of one interpreter's probe, per program, in seconds (a
# compile under backend="eager" takes 0.2-3 s on a loaded machine; with
# Inductor, C++ code generation and compilation add 5-60 s).
PROBE_S_PER_PROGRAM = {"eager": 30.0, "inductor": 150.0}
# Per-program limit inside the probe when running programs for line coverage, in seconds.
PROGRAM_TIMEOUT_S = {"eager": 20.0, "inductor": 120.0}


def measure(
    interpreters: list[Interpreter],
    *,
    programs: int,
    generator: str = "ours",
    seed: int = 0,
    lines: bool = True,
    backend: str = "eager",
    vary_compile: bool = True,
    data_dir: Path | None = None,
) -> dict[str, Any]:
    """Coverage of ``programs`` programs from ``generator`` (seeds seed, seed+1, ...).

    Returns ``{"interpreters": {name: probe result}}`` where each probe result
    has at least ``JSON_KEYS`` (``dynamo_line_coverage`` is None without
    ``lines``) plus details (``all_opcodes``, ``dynamo_opcodes_missed``,
    ``dynamo_pseudo_opcodes``, with ``lines`` ``outcomes``: how many programs
    ran "ok", raised, timed out or "crashed", the last killing the probe,
    which goes on with the next program; with ``backend="inductor"`` also
    ``INDUCTOR_JSON_KEYS``). Each program compiles with the settings a
    campaign draws for it (``settings_for``), or torch.compile's defaults
    without ``vary_compile``. With ``data_dir``, the coverage data stays
    in ``data_dir/<interpreter>/.coverage`` (for ``coverage report`` or
    ``coverage html`` in that interpreter's env) beside ``missed.tsv``, the
    measured files by missed statements, most first (``missed_files``:
    statements, missed, path under torch/, accelerator-only). Raises ValueError for an unknown generator or
    backend or a ``data_dir`` that already has data, HarnessError if a probe fails, or runs over its time, for a
    reason other than a program.
    """
    if generator not in SOURCES:
        raise ValueError(f"Expected a generator in {SOURCES} but got generator={generator!r}")
    if backend not in BACKENDS:
        raise ValueError(f"Expected a backend in {BACKENDS} but got backend={backend!r}")
    for interp in interpreters if data_dir is not None and lines else ():
        if any((data_dir / interp.name).glob(".coverage*")):
            raise ValueError(f"{data_dir / interp.name} already has coverage data, which would be combined with "
                             f"this run's: pass an empty --data-dir")
    drawn = [draw_program(s, generator) for s in range(seed, seed + programs)]
    sources = [p.source for p in drawn]
    settings = settings_for(drawn, backend, vary_compile)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="tcfuzz-coverage-") as tmp:
        path = Path(tmp) / "programs.json"
        path.write_text(json.dumps(sources))
        settings_file = Path(tmp) / "settings.json"
        settings_file.write_text(json.dumps(settings))
        for interp in interpreters:
            log.info("probing %s with %d programs", interp.name, programs)
            result = _probe_json(interp, [str(path)], timeout_s=120 + 0.1 * programs)
            result["dynamo_line_coverage"] = None
            result["dynamo_files"] = None
            if lines:
                data_file = (data_dir if data_dir is not None else Path(tmp)) / interp.name / ".coverage"
                data_file.parent.mkdir(parents=True, exist_ok=True)
                ops: dict[str, set[str]] = {"torch_ops": set(), "aten_ops": set()}
                result["outcomes"] = _run_for_lines(interp, path, programs, data_file, backend, ops,
                                                    settings_file=settings_file)
                report_args = ["--report", str(data_file), "--backend", backend]
                if data_dir is not None:
                    report_args += ["--missed", str(data_file.parent / "missed.tsv")]
                result.update(_probe_json(interp, report_args, timeout_s=1200))
                if backend == "inductor":
                    for key, names in ops.items():
                        result[key] = len(names)
                        result[key.replace("_ops", "_op_names")] = sorted(names)
                    log.info("%s: %d aten ops, %d torch ops; torch/_inductor %.3f, torch/_functorch %.3f",
                             interp.name, result["aten_ops"], result["torch_ops"],
                             result["inductor_line_coverage"], result["functorch_line_coverage"])
                log.info("%s: torch/_dynamo line coverage %.3f (%d of %d statements); programs: %s", interp.name,
                         result["dynamo_line_coverage"], result["dynamo_lines_executed"],
                         result["dynamo_statements"], result["outcomes"])
            results[interp.name] = result
    return {"interpreters": results}


def _probe(interp: Interpreter, args: list[str], timeout_s: float, backend: str = "eager") -> subprocess.CompletedProcess:
    command = [str(interp.python), "-m", "harness.coverage_probe", *args,
               "--timeout-s", str(PROGRAM_TIMEOUT_S[backend])]
    try:
        return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=interp.environ(),
                              timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise HarnessError(f"the coverage probe on {interp.name} ran over {timeout_s:.0f} s: "
                           f"try fewer --programs or --no-lines") from None


def _probe_json(interp: Interpreter, args: list[str], timeout_s: float) -> dict[str, Any]:
    done = _probe(interp, args, timeout_s)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["(no output)"]
        raise HarnessError(f"the coverage probe on {interp.name} failed (exit {done.returncode}): {tail[0]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def settings_for(programs: list[Any], backend: str, vary_compile: bool = True) -> list[dict[str, Any]]:
    """The compile settings (harness.settings' JSON) a campaign draws for each
    of ``programs`` on ``backend`` (``harness.settings.draw`` from its seed and
    features), so coverage measures what a campaign reaches: dynamic shapes,
    marked dims, max-autotune, cpp_wrapper, freezing. All defaults ({}) without
    ``vary_compile``, as ``tcfuzz run --default-compile``."""
    return [compile_settings.draw(p.seed, backend, p.features).to_json() if vary_compile else {} for p in programs]


def _run_for_lines(interp: Interpreter, path: Path, programs: int, data_file: Path, backend: str = "eager",
                   ops: dict[str, set[str]] | None = None, *, settings_file: Path | None = None) -> dict[str, int]:
    """Run every program for line coverage into ``data_file``, restarting the
    probe after a program that kills it; the count of each outcome. With
    ``ops``, adds the probe's ``torch_ops``/``aten_ops`` of each program to
    its sets; ``settings_file``: a JSON list of compile settings, one per
    program (``settings_for``; None: the defaults)."""
    outcomes: Counter[str] = Counter()
    start = 0
    while start < programs:
        done = _probe(interp, [str(path), "--lines-only", str(data_file), "--start", str(start), "--backend", backend]
                      + (["--settings", str(settings_file)] if settings_file else []),
                      timeout_s=120 + PROBE_S_PER_PROGRAM[backend] * (programs - start), backend=backend)
        finished = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        outcomes.update(entry["outcome"] for entry in finished)
        for entry in finished:
            for key, names in (ops or {}).items():
                names.update(entry.get(key, ()))
        if done.returncode == 0:
            break
        started = re.findall(rf"^{re.escape(PROGRESS)} (\d+)$", done.stderr, re.MULTILINE)
        killer = int(started[-1]) if started else -1
        if killer < start or any(entry["program"] == killer for entry in finished):
            tail = done.stderr.strip().splitlines()[-1:] or ["(no output)"]
            raise HarnessError(f"the coverage probe on {interp.name} failed (exit {done.returncode}) "
                               f"outside any program: {tail[0]}")
        log.info("%s: program %d killed the coverage probe (exit %d); going on with the next",
                 interp.name, killer, done.returncode)
        outcomes["crashed"] += 1
        start = killer + 1
    return dict(outcomes)


def as_json(measured: dict[str, Any]) -> dict[str, Any]:
    """Only the documented keys: ``{"interpreters": {name: {JSON_KEYS...}}}``
    (and ``INDUCTOR_JSON_KEYS`` where measured with Inductor)."""
    def keys(entry: dict[str, Any]) -> tuple[str, ...]:
        return (*JSON_KEYS, *INDUCTOR_JSON_KEYS) if "aten_ops" in entry else JSON_KEYS

    return {"interpreters": {name: {key: entry[key] for key in keys(entry)}
                             for name, entry in measured["interpreters"].items()}}


def render_table(measured: dict[str, Any], generator: str) -> str:
    """A plain-text table: one row per interpreter, then, where line coverage
    was measured, each interpreter's per-file shares (``render_files``)."""
    rows = [f"generator {generator}",
            f"{'python':<7} {'programs':>8} {'opcodes':>8} {'dynamo ops':>10} {'op cov':>7} {'line cov':>8}  missed"]
    for name, entry in measured["interpreters"].items():
        line_cov = entry.get("dynamo_line_coverage")
        dynamo = entry["dynamo_opcodes"]
        seen_dynamo = len(set(entry["opcodes_seen"]) & set(dynamo))
        rows.append(
            f"{name:<7} {entry['programs']:>8} {len(entry['opcodes_seen']):>8} {f'{seen_dynamo}/{len(dynamo)}':>10} "
            f"{entry['dynamo_opcode_coverage']:>7.3f} {'-' if line_cov is None else f'{line_cov:.3f}':>8}  "
            f"{' '.join(entry.get('dynamo_opcodes_missed', [])) or '-'}"
        )
        if "aten_ops" in entry:
            rows.append(f"{'':<7} inductor: {entry['aten_ops']} aten ops, {entry['torch_ops']} torch ops; line cov "
                        f"torch/_inductor {entry['inductor_line_coverage']:.3f} "
                        f"(its CPU-reachable files {entry.get('inductor_cpu_line_coverage', 0.0):.3f}), "
                        f"torch/_functorch {entry['functorch_line_coverage']:.3f}; programs {entry['outcomes']}")
    for name, entry in measured["interpreters"].items():
        if entry.get("dynamo_files"):
            rows += ["", render_files(name, entry["dynamo_files"])]
    return "\n".join(rows)


def render_files(interpreter: str, files: dict[str, dict[str, Any]]) -> str:
    """The per-file table of one interpreter: each file of ``dynamo_files``
    (path under torch/), its share of statements run, and executed/statements."""
    width = max(len(path) for path in files)
    rows = [f"{interpreter}: per file", f"{'file':<{width}} {'share':>6} {'run/statements':>15}"]
    for path, counts in files.items():
        ratio = f"{counts['executed']}/{counts['statements']}"
        rows.append(f"{path:<{width}} {counts['share']:>6.3f} {ratio:>15}")
    return "\n".join(rows)
