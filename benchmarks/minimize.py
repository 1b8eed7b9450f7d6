"""tcfuzz's minimiser against shrinkray and pysource-minimize run alone, in one run.

Cases: the corpus cases that reproduce on the benchmark's interpreter, and N
generated programs of at least --min-lines lines of code run with the planted
backend ``tcfuzz_add_one`` (a known divergence embedded in every program whose
graph returns a float tensor). Every reducer gets the same interestingness
test (a SignatureCheck on the same persistent workers: the exact signature on
one interpreter, default 3.12), the same time budget per case, and starts
from the program body. Printed: final size in lines (one statement a line, as
ast.unparse writes it, whatever layout the reducer left) and tokens, oracle
calls and wall seconds per case and reducer, then medians.

shrinkray needs Python >= 3.12, so it runs from its own venv (--shrinkray, the
path of its `shrinkray` script; made with
`uv venv -p 3.12 V && uv pip install --python V/bin/python --no-build shrinkray`),
as a CLI with an interestingness script that asks this process's check over a
Unix socket. Without it the shrinkray column is skipped.

    .venv/bin/python benchmarks/minimize.py --shrinkray /tmp/srvenv/bin/shrinkray

``--inductor-checks``: checks/s of tcfuzz's own minimiser on the corpus's
Inductor cases (backend inductor, a bug kind, shown on --python alone), the
way ``tcfuzz minimize`` checked until 2026-12-06 (``before``: every check the
whole call plan, one candidate at a time, kernels linked by GNU ld) against
now (``after``: fast checks that stop the plan after the call that showed the
bug, confirmed in full at every stage's end, as many workers as the machine
has cores, and kernels linked by gold where it links, fuzz.campaign.toolchain). Each case and
configuration gets its own pool and an empty Inductor cache
(TORCHINDUCTOR_CACHE_DIR), after one warm-up run of every case (Inductor's
precompiled headers); the configurations alternate which goes first.
Printed per case: final lines, checks, seconds and checks/s of each, and
the ratio; then the totals.

    .venv/bin/python benchmarks/minimize.py --inductor-checks --budget-s 120 --json /tmp/checks.json
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import queue
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pysource_minimize  # noqa: E402

from harness.program import Program  # noqa: E402
from harness.settings import CompileSettings  # noqa: E402
from fuzz.campaign import interpreters  # noqa: E402
from fuzz.corpus import render, store  # noqa: E402
from fuzz.generate.program import generate  # noqa: E402
from fuzz.reduce.check import SignatureCheck  # noqa: E402
from fuzz.reduce.pipeline import minimize_source  # noqa: E402
from fuzz.triage.signature import Kind, Signature, findings  # noqa: E402
from fuzz.campaign.workers import Task, WorkerPool  # noqa: E402

PLANTED = "tcfuzz_add_one"
REDUCERS = ("tcfuzz", "pysource-minimize", "shrinkray")

_TEST_SCRIPT = '''\
import socket, sys
data = open(sys.argv[1], "rb").read()
s = socket.socket(socket.AF_UNIX)
s.connect(SOCKET)
s.sendall(data)
s.shutdown(socket.SHUT_WR)
sys.exit(0 if s.recv(1) == b"1" else 1)
'''


def tokens(source: str) -> int:
    """Python tokens, not counting layout (NEWLINE, NL, INDENT, DEDENT), comments or the end marker."""
    skip = {tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT, tokenize.ENDMARKER}
    try:
        return sum(1 for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in skip)
    except (tokenize.TokenError, SyntaxError):
        return len(source.split())


def code_lines(source: str) -> int:
    """Lines of code of ``source`` as ``ast.unparse`` lays it out (one statement
    a line), so that a reducer that joins lines gains nothing by it."""
    try:
        return render.code_lines(ast.unparse(ast.parse(source)))
    except SyntaxError:
        return render.code_lines(source)


class SharedPool:
    """``run_all`` that many threads may call at once on one WorkerPool (the
    pool's own run_all serves one caller): results are routed by sequence number."""

    def __init__(self, pool: WorkerPool):
        self.pool, self.lock, self.waiting = pool, threading.Lock(), {}
        threading.Thread(target=self._route, daemon=True).start()

    def _route(self) -> None:
        while True:
            seq, _, outcome = self.pool.next_result()
            with self.lock:
                box = self.waiting.pop(seq)
            box.put(outcome)

    def run_all(self, tasks):
        boxes = []
        with self.lock:
            for task in tasks:
                box: queue.Queue = queue.Queue()
                self.waiting[self.pool.submit(task)] = box
                boxes.append(box)
        return [b.get() for b in boxes]


def benchmark_cases(shared: SharedPool, name: str, programs: int, min_lines: int, first_seed: int,
                    log, *, with_corpus: bool = True) -> list[tuple[str, Program, Signature, str, CompileSettings]]:
    """(label, program, signature on ``name`` alone, backend, compile settings) for each case."""
    cases = []
    for path in store.list_cases(ROOT / "corpus") if with_corpus else []:
        program, meta = store.read_case(path)
        if meta.get("kind") not in {k.value for k in Kind} or name not in meta.get("interpreters", []):
            continue
        sig = Signature.parse(meta["signature"])
        sig = Signature(sig.kind, sig.stage, sig.detail, (name,))
        settings = CompileSettings.from_json(meta.get("compile"))  # as the case's table records
        check = SignatureCheck(shared, program, sig, meta["backend"], [name], settings=settings)
        if check(render.program_body(program.source)):
            cases.append((f"corpus/{path.parent.name}/{path.stem}", program, sig, meta["backend"], settings))
        else:
            log(f"skip {path}: does not show {sig.key} on {name} alone")
    seed, found = first_seed, 0
    while found < programs and seed < first_seed + 5000:
        program = generate(seed)
        seed += 1
        if render.code_lines(program.source) < min_lines:
            continue
        outcomes = shared.run_all([Task(program, name, PLANTED)])
        wanted = [f for f in findings(outcomes) if f.signature.kind is Kind.DIVERGENCE and f.backend == PLANTED]
        if any(o.verdict.value == "flaky" for o in outcomes) or not wanted:
            continue
        cases.append((f"generated/seed{program.seed}", program, wanted[0].signature, PLANTED, CompileSettings()))
        found += 1
    return cases


def run_tcfuzz(check, program: Program, budget_s: float, jobs: int) -> str:
    return minimize_source(program.source, check, budget_s=budget_s, program=program, jobs=jobs).source


def run_pysource_minimize(check, program: Program, budget_s: float, jobs: int) -> str:
    body = render.program_body(program.source)
    deadline = time.monotonic() + budget_s
    best = [body]

    class OutOfTime(Exception):
        pass

    def checker(source: str) -> bool:
        if time.monotonic() > deadline:
            raise OutOfTime
        ok = check(source)
        if ok and (render.code_lines(source), len(source)) < (render.code_lines(best[0]), len(best[0])):
            best[0] = source
        return ok

    try:
        reduced = pysource_minimize.minimize(body, checker, compilable=True)
        if checker(reduced):
            best[0] = reduced
    except OutOfTime:
        pass
    except Exception as e:  # noqa: BLE001 - its own bug (0.10.1: "missing case <ast.MatchStar>"): the best it reached
        print(f"pysource-minimize stopped with {type(e).__name__}: {e}", file=sys.stderr, flush=True)
    return best[0]


def run_shrinkray(check, program: Program, budget_s: float, jobs: int, shrinkray: str) -> str:
    body = render.program_body(program.source)
    deadline = time.monotonic() + budget_s
    with tempfile.TemporaryDirectory(prefix="tcfuzz-bench-") as tmp:
        address = os.path.join(tmp, "oracle.sock")

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                source = self.rfile.read().decode(errors="replace")
                ok = False
                if time.monotonic() < deadline:  # past it, shrinkray is being stopped: no more oracle calls
                    try:
                        ok = check(source)
                    except Exception:  # noqa: BLE001 - a candidate the harness cannot take is not interesting
                        ok = False
                try:
                    self.wfile.write(b"1" if ok else b"0")
                except OSError:  # shrinkray was stopped while this candidate ran
                    pass

        server = socketserver.ThreadingUnixStreamServer(address, Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        script = Path(tmp) / "interesting.py"
        script.write_text(_TEST_SCRIPT.replace("SOCKET", repr(address)))
        test = Path(tmp) / "test.sh"
        test.write_text(f"#!/bin/sh\nexec {sys.executable} {script} \"$1\"\n")
        test.chmod(0o755)
        case = Path(tmp) / "case.py"
        case.write_text(body)
        try:
            subprocess.run([shrinkray, "--ui=basic", "--parallelism", str(jobs), "--input-type", "arg",
                            "--timeout", "120", str(test), str(case)], cwd=tmp, timeout=budget_s,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            pass
        finally:
            server.shutdown()
            server.server_close()
        result = case.read_text()
    return result if check(result) else body


def run_reducer(reducer: str, check, program: Program, args: argparse.Namespace) -> str:
    """The source ``reducer`` ends with on ``program`` under ``check``."""
    if reducer == "tcfuzz":
        return run_tcfuzz(check, program, args.budget_s, args.jobs)
    if reducer == "pysource-minimize":
        return run_pysource_minimize(check, program, args.budget_s, args.jobs)
    return run_shrinkray(check, program, args.budget_s, args.jobs, args.shrinkray)


# (fast checks, workers per interpreter (0: the machine's cores), $CXX (None:
# the toolchain's choice)) of each configuration
CHECK_CONFIGS = {"before": (False, 1, "g++"), "after": (True, 0, None)}


def inductor_cases(name: str) -> list[tuple[str, Program, Signature, CompileSettings]]:
    """(label, program, signature on ``name`` alone, compile settings) of
    each corpus case filed with backend inductor, a bug kind and ``name``
    among its interpreters."""
    bugs = {k.value for k in Kind} - {Kind.GRAPH_BREAK.value, Kind.GRAPH_BREAK_REGRESSION.value}
    cases = []
    for path in store.list_cases(ROOT / "corpus"):
        program, meta = store.read_case(path)
        if meta.get("backend") != "inductor" or meta.get("kind") not in bugs or name not in meta["interpreters"]:
            continue
        sig = Signature.parse(meta["signature"])
        alone = Signature(sig.kind, sig.stage, sig.detail, (name,))
        settings = CompileSettings.from_json(meta.get("compile"))
        cases.append((f"{path.parent.name}/{path.stem}", program, alone, settings))
    return cases


def minimise_with(config: str, program: Program, sig: Signature, settings: CompileSettings, interp,
                  budget_s: float, cache_dir: Path, log_dir: Path) -> dict:
    """One minimisation of ``program`` under ``config`` (CHECK_CONFIGS) on a
    pool of its own whose Inductor cache starts empty in ``cache_dir``:
    final lines, checks, elapsed_s (the minimisation alone, not the pool's
    start) and whether the full check accepts the result."""
    fast, jobs, cxx = CHECK_CONFIGS[config]
    jobs = jobs or max(1, os.cpu_count() or 1)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cache_dir)  # fuzz.campaign.interpreters passes TORCH* on
    user_cxx = os.environ.pop("CXX", None)
    if cxx:
        os.environ["CXX"] = cxx  # and CXX
    try:
        with WorkerPool([interp], jobs=jobs, log_dir=log_dir) as pool:
            pool.start()
            check = SignatureCheck(pool, program, sig, "inductor", [interp.name], settings=settings, fast=fast)
            started = time.monotonic()
            result = minimize_source(program.source, check, budget_s=budget_s, program=program, jobs=jobs)
            elapsed_s = time.monotonic() - started
            holds = check.confirm(result.source)
    finally:
        del os.environ["TORCHINDUCTOR_CACHE_DIR"]
        os.environ.pop("CXX", None)
        if user_cxx is not None:
            os.environ["CXX"] = user_cxx
    return {"lines": result.lines_after, "checks": result.checks, "elapsed_s": round(elapsed_s, 1),
            "checks_per_s": round(result.checks / elapsed_s, 3) if elapsed_s else 0.0,
            "complete": result.complete, "holds": holds, "plan_calls": check.plan_calls, "jobs": jobs,
            "passes": result.passes}


def inductor_checks(args: argparse.Namespace, log) -> int:
    """The ``--inductor-checks`` benchmark (see the module's docstring)."""
    interp = interpreters.parse_list(args.python)[0]
    rows = []
    with tempfile.TemporaryDirectory(prefix="tcfuzz-bench-checks-") as tmp:
        tmp_path = Path(tmp)
        cases = inductor_cases(interp.name)
        with WorkerPool([interp], jobs=1, log_dir=tmp_path) as pool:  # warm-up, and the cases that show here
            pool.start()
            shown = []
            for label, program, sig, settings in cases:
                if args.programs and len(shown) == args.programs:
                    break
                check = SignatureCheck(pool, program, sig, "inductor", [interp.name], settings=settings)
                if check(render.program_body(program.source)):
                    shown.append((label, program, sig, settings))
                else:
                    log(f"skip {label}: does not show {sig.key} on {interp.name} alone")
        log(f"{len(shown)} Inductor cases on {interp.name}")
        for k, (label, program, sig, settings) in enumerate(shown):
            row = {"case": label, "lines_before": render.code_lines(render.program_body(program.source))}
            order = list(CHECK_CONFIGS) if k % 2 == 0 else list(reversed(CHECK_CONFIGS))
            for config in order:
                row[config] = minimise_with(config, program, sig, settings, interp, args.budget_s,
                                            tmp_path / f"cache-{k}-{config}", tmp_path)
                log(f"{label} {config}: {row[config]}")
            rows.append(row)
            if args.json:
                Path(args.json).write_text(json.dumps(rows, indent=2))
    print_checks_table(rows)
    return 0


def print_checks_table(rows: list[dict]) -> None:
    heads = [f"{c + ': lines checks      s  checks/s':>36}" for c in CHECK_CONFIGS]
    print(f"{'case':<30} {'lines':>5}  " + "  ".join(heads) + "   ratio")
    for row in rows:
        cells = []
        for c in CHECK_CONFIGS:
            r = row[c]
            mark = "" if r["holds"] else "!"
            cells.append(f"{r['lines']:>12}{mark:1} {r['checks']:>6} {r['elapsed_s']:>6.0f} {r['checks_per_s']:>9.3f}")
        ratio = row["after"]["checks_per_s"] / row["before"]["checks_per_s"] if row["before"]["checks_per_s"] else 0
        print(f"{row['case']:<30} {row['lines_before']:>5}  " + "  ".join(f"{c:>36}" for c in cells)
              + f"  {ratio:>6.2f}")
    totals = {c: (sum(r[c]["checks"] for r in rows), sum(r[c]["elapsed_s"] for r in rows)) for c in CHECK_CONFIGS}
    rates = {c: n / s if s else 0.0 for c, (n, s) in totals.items()}
    said = [f"{c} {n} checks in {s:.0f} s = {rates[c]:.3f} checks/s" for c, (n, s) in totals.items()]
    print("total: " + "; ".join(said)
          + f"; after/before {rates['after'] / rates['before'] if rates['before'] else 0:.2f}x; median lines "
          + ", ".join(f"{c} {statistics.median(r[c]['lines'] for r in rows):.0f}" for c in CHECK_CONFIGS))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default="3.12")
    parser.add_argument("--budget-s", type=float, default=300.0, help="seconds per case and reducer")
    parser.add_argument("--programs", type=int, default=10)
    parser.add_argument("--min-lines", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1000, help="first seed to draw generated programs from")
    parser.add_argument("--jobs", type=int, default=2, help="workers (and shrinkray's parallelism)")
    parser.add_argument("--shrinkray", help="path of a shrinkray script (its own venv, Python >= 3.12)")
    parser.add_argument("--json", help="write the per-case results here")
    parser.add_argument("--no-corpus", action="store_true", help="generated programs only")
    parser.add_argument("--table", nargs="+", metavar="JSON", help="only print the table of earlier --json results")
    parser.add_argument("--inductor-checks", action="store_true",
                        help="checks/s on the corpus's Inductor cases, before and after fast short-plan checks "
                             "(--programs: at most this many cases, 0 all)")
    args = parser.parse_args()
    if args.table:
        rows = [row for path in args.table for row in json.loads(Path(path).read_text())]
        if rows and "before" in rows[0]:
            print_checks_table(rows)
        else:
            print_table(rows, [r for r in REDUCERS if r in rows[0]])
        return 0

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    if args.inductor_checks:
        return inductor_checks(args, log)

    reducers = [r for r in REDUCERS if r != "shrinkray" or args.shrinkray]
    rows = []
    with tempfile.TemporaryDirectory(prefix="tcfuzz-bench-logs-") as logs:
        interp = interpreters.parse_list(args.python)
        with WorkerPool(interp, jobs=args.jobs, log_dir=Path(logs)) as pool:
            pool.start()
            shared = SharedPool(pool)
            cases = benchmark_cases(shared, args.python, args.programs, args.min_lines, args.seed, log,
                                    with_corpus=not args.no_corpus)
            log(f"{len(cases)} cases")
            for label, program, sig, backend, settings in cases:
                body = render.program_body(program.source)
                row = {"case": label, "lines_before": code_lines(body), "tokens_before": tokens(body)}
                for reducer in reducers:
                    check = SignatureCheck(shared, program, sig, backend, [args.python], settings=settings)
                    started = time.monotonic()
                    try:
                        result = run_reducer(reducer, check, program, args)
                    except Exception as e:  # noqa: BLE001 - a reducer's failure is a result, shown as "!"
                        log(f"{label} {reducer} failed: {type(e).__name__}: {e}")
                        result = body
                    elapsed_s = time.monotonic() - started
                    calls = check.calls
                    holds = check(result)
                    row[reducer] = {"lines": code_lines(result), "raw_lines": render.code_lines(result),
                                    "tokens": tokens(result), "calls": calls, "elapsed_s": round(elapsed_s, 1),
                                    "holds": holds, "source": result, "settings": check.settings.describe()}
                    log(f"{label} {reducer}: { {k: v for k, v in row[reducer].items() if k != 'source'} }")
                rows.append(row)
                if args.json:  # after every case, so that a run cut short keeps what it measured
                    Path(args.json).write_text(json.dumps(rows, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    print_table(rows, reducers)
    return 0


def print_table(rows: list[dict], reducers: list[str]) -> None:
    head = f"{'case':<34} {'before':>10}  " + "  ".join(f"{r:>28}" for r in reducers)
    print(head)
    print(f"{'':<34} {'lines/tok':>10}  " + "  ".join(f"{'lines/tok  calls      s':>28}" for _ in reducers))
    for row in rows:
        cells = []
        for r in reducers:
            c = row[r]
            mark = "" if c["holds"] else "!"
            cells.append(f"{c['lines']:>5}/{c['tokens']:<5}{mark:1} {c['calls']:>6} {c['elapsed_s']:>8.1f}")
        print(f"{row['case']:<34} {row['lines_before']:>4}/{row['tokens_before']:<5}  " + "  ".join(f"{c:>28}" for c in cells))
    med = []
    for r in reducers:
        m = [statistics.median(row[r][k] for row in rows) for k in ("lines", "tokens", "calls", "elapsed_s")]
        med.append(f"{m[0]:>5.0f}/{m[1]:<5.0f}  {m[2]:>6.0f} {m[3]:>8.1f}")
    before = f"{statistics.median(r['lines_before'] for r in rows):>4.0f}/{statistics.median(r['tokens_before'] for r in rows):<5.0f}"
    print(f"{'median':<34} {before}  " + "  ".join(f"{c:>28}" for c in med))
    if "tcfuzz" in reducers and len(reducers) > 1:
        def median(r: str, k: str) -> float:
            return statistics.median(row[r][k] for row in rows)

        others = [r for r in reducers if r != "tcfuzz"]
        size_ok = all(median("tcfuzz", k) <= min(median(r, k) for r in others) for k in ("lines", "tokens"))
        time_ok = median("tcfuzz", "elapsed_s") < min(median(r, "elapsed_s") for r in others)
        print(f"tcfuzz median no larger than the best of {', '.join(others)} (lines and tokens): "
              f"{'yes' if size_ok else 'NO'}; in less time: {'yes' if time_ok else 'NO'}")


if __name__ == "__main__":
    sys.exit(main())
