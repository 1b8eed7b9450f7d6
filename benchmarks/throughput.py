"""tcfuzz's throughput against a bare loop, and a worker's memory over many programs.

Usage (host venv)::

    .venv/bin/python benchmarks/throughput.py [--python 3.12] [--backend eager,aot_eager,inductor]
        [--programs 40] [--rss-programs 1000] [--seed 0] [--json OUT]

Throughput: the same ``--programs`` generated programs run, per backend,
(a) through tcfuzz's WorkerPool (one worker, the campaign's code path: eager
twice for the flakiness check, the compiled run's calls, comparison, graph
breaks, JSON over the pipe) and (b) through ``benchmarks/bare_loop.py`` in
one process of the same interpreter (``torch._dynamo.reset();
torch.compile(f, backend=b)(*inputs())`` plus the eager call). Both sides
compile one warm-up program per backend first, untimed, and each side has
its own fresh Inductor cache folder, so neither profits from the other's
FX-graph cache. tcfuzz runs twice: with its full call plan (harness.execute:
fresh, cached, guard and shape calls, the last two recompiling) and with the
first two calls only (fresh + cached: the bare loop's compile work, so the
ratio measures the harness's own overhead). Prints programs/s of each, the
ratios tcfuzz / bare, and where tcfuzz's time went (worker time in eager
calls, compiled calls, the rest of the harness, and host + protocol).

Memory: ``--rss-programs`` programs on one worker (eager backend, recycling
off) with the worker's resident set after each; prints it at checkpoints and
the growth over the second half (0 when it stops growing).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fuzz import interpreters  # noqa: E402
from fuzz.generate import generate  # noqa: E402
from fuzz.workers import Task, Worker, WorkerPool  # noqa: E402

# Seed offsets: the warm-up program and the memory run's programs differ from
# the timed ones.
WARMUP_SEED_OFFSET = 1_000_000
RSS_SEED_OFFSET = 2_000_000


def bare(interp: interpreters.Interpreter, backend: str, spec_path: Path, cache_dir: str) -> dict:
    env = interp.environ()
    env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    proc = subprocess.run([str(interp.python), str(ROOT / "benchmarks" / "bare_loop.py"), str(spec_path), backend],
                          env=env, capture_output=True, text=True, timeout=7200)
    if proc.returncode != 0:
        raise SystemExit(f"bare loop failed on {backend}:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def through_tcfuzz(interp: interpreters.Interpreter, backend: str, programs: list, warmup, log_dir: Path,
                   cache_dir: str, calls: int | None = None) -> dict:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache_dir  # Interpreter.environ() passes TORCH* on
    try:
        with WorkerPool([interp], jobs=1, log_dir=log_dir) as pool:
            pool.start()
            pool.run_all([Task(warmup, interp.name, backend)])
            started = time.perf_counter()
            outcomes = pool.run_all(Task(p, interp.name, backend, calls=calls) for p in programs)
            elapsed_s = time.perf_counter() - started
            rss_mib = pool.workers[0].rss_mib
    finally:
        del os.environ["TORCHINDUCTOR_CACHE_DIR"]
    verdicts: dict[str, int] = {}
    for o in outcomes:
        verdicts[o.verdict.value] = verdicts.get(o.verdict.value, 0) + 1
    eager_s = sum(sum(c.elapsed_s for c in o.eager) for o in outcomes) * 2  # eager A and B
    compiled_s = sum(sum(c.elapsed_s for c in o.compiled) for o in outcomes)
    worker_s = sum(o.elapsed_s for o in outcomes)
    return {"programs": len(programs), "elapsed_s": elapsed_s, "verdicts": verdicts, "rss_mib": rss_mib,
            "eager_calls_s": eager_s, "compiled_calls_s": compiled_s,
            "harness_s": max(0.0, worker_s - eager_s - compiled_s), "host_s": max(0.0, elapsed_s - worker_s)}


def memory(interp: interpreters.Interpreter, count: int, seed: int, log_dir: Path) -> list[tuple[int, float, float]]:
    """(programs run, RSS MiB, peak RSS MiB) after each program on one worker."""
    worker = Worker(interp, log_dir, rss_limit_mib=0)
    rows = []
    try:
        worker.start()
        rows.append((0, worker.rss_mib, worker.rss_mib))
        for i in range(count):
            worker.run(Task(generate(seed + RSS_SEED_OFFSET + i), interp.name, "eager"))
            if not worker.alive:  # a crash restarts it: the series would restart too
                print(f"  worker restarted at program {i + 1}", flush=True)
            rows.append((i + 1, worker.rss_mib, worker.peak_rss_mib))
            if (i + 1) % 100 == 0:
                print(f"  {i + 1} programs: RSS {worker.rss_mib:.0f} MiB, peak {worker.peak_rss_mib:.0f} MiB", flush=True)
    finally:
        worker.close()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default="3.12")
    parser.add_argument("--backend", default="eager,aot_eager,inductor")
    parser.add_argument("--programs", type=int, default=40, help="timed programs per backend")
    parser.add_argument("--rss-programs", type=int, default=1000, help="programs for the memory run (0: skip)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    interp = interpreters.resolve(args.python)
    backends = [b for b in args.backend.split(",") if b]
    programs = [generate(args.seed + i) for i in range(args.programs)]
    warmup = generate(args.seed + WARMUP_SEED_OFFSET)
    scratch = Path(tempfile.mkdtemp(prefix="tcfuzz-throughput-"))
    spec_path = scratch / "programs.json"
    spec_path.write_text(json.dumps({"warmup": warmup.to_json(), "programs": [p.to_json() for p in programs]}))
    results: dict = {"python": args.python, "programs": args.programs, "backends": {}}

    print(f"throughput: {args.programs} programs per backend on {args.python}", flush=True)
    plans = {"full": None, "2 calls": 2}
    for backend in backends:
        b = bare(interp, backend, spec_path, str(scratch / "cache-bare"))
        b_rate = b["programs"] / b["elapsed_s"]
        row = results["backends"][backend] = {"bare": b, "bare_per_s": b_rate}
        print(f"  {backend:<10} bare loop        {b_rate:6.3f} prog/s ({b['errors']} programs raised)", flush=True)
        for plan, calls in plans.items():
            t = through_tcfuzz(interp, backend, programs, warmup, scratch / "logs",
                               str(scratch / f"cache-tcfuzz-{calls}"), calls=calls)
            t_rate = t["programs"] / t["elapsed_s"]
            row[plan] = {**t, "per_s": t_rate, "ratio": t_rate / b_rate}
            print(f"  {backend:<10} tcfuzz {plan:<9} {t_rate:6.3f} prog/s  ratio {t_rate / b_rate:5.2f}  "
                  f"(eager calls {t['eager_calls_s']:.1f} s, compiled calls {t['compiled_calls_s']:.1f} s, "
                  f"rest of harness {t['harness_s']:.1f} s, host+protocol {t['host_s']:.1f} s; {t['verdicts']})",
                  flush=True)

    print("\n| backend | bare prog/s | tcfuzz prog/s (full call plan) | ratio | tcfuzz prog/s (fresh+cached calls) | ratio |")
    print("|---|---|---|---|---|---|")
    for backend, r in results["backends"].items():
        print(f"| {backend} | {r['bare_per_s']:.3f} | {r['full']['per_s']:.3f} | {r['full']['ratio']:.2f} | "
              f"{r['2 calls']['per_s']:.3f} | {r['2 calls']['ratio']:.2f} |")

    if args.rss_programs:
        print(f"\nmemory: {args.rss_programs} programs on one {args.python} worker (eager, no recycling)", flush=True)
        rows = memory(interp, args.rss_programs, args.seed, scratch / "logs")
        marks = sorted({0, 1, 10, 100} | {n for n in range(0, args.rss_programs + 1, max(1, args.rss_programs // 4))}
                       | {args.rss_programs})
        print("| programs | RSS MiB | peak RSS MiB |\n|---|---|---|")
        for n, rss, peak in rows:
            if n in marks:
                print(f"| {n} | {rss:.0f} | {peak:.0f} |")
        half = rows[len(rows) // 2]
        growth = rows[-1][2] - half[2]
        print(f"peak RSS growth over the second half ({half[0]} -> {rows[-1][0]} programs): {growth:+.0f} MiB")
        results["memory"] = {"rows": rows, "second_half_peak_growth_mib": growth}
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
