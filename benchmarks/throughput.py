"""tcfuzz's throughput against a bare loop, and a worker's memory over many programs.

Usage (host venv)::

    .venv/bin/python benchmarks/throughput.py [--python 3.12] [--backend eager,aot_eager,inductor]
        [--programs 40 | --programs eager=100,aot_eager=40,inductor=12] [--rss-programs 1000]
        [--seed 0] [--json OUT] [--reach]

Throughput: the same ``--programs`` generated programs (a count, or one per
backend: programs that compile in 0.2 s on ``eager`` need many more for a
stable ratio than Inductor's 4 s) run, per backend,
(a) through tcfuzz's WorkerPool (one worker, the campaign's code path: eager
twice for the flakiness check, the compiled run's calls, comparison, graph
breaks, JSON over the pipe) and (b) through ``benchmarks/bare_loop.py`` in
one process of the same interpreter (``torch._dynamo.reset();
torch.compile(f, backend=b)(*inputs())`` plus the eager call), interleaved
program by program so that other load on a shared machine falls on both
alike. Every side compiles one warm-up program per backend first, untimed,
and has its own fresh Inductor cache folder, so none profits from another's
FX-graph cache. tcfuzz runs three times: with its full call plan
(harness.execute: fresh, cached, guard and shape calls, the last two
recompiling), with the first two calls (fresh + cached: the cached call
re-runs guards and recompiles where a program changed what they check) and
with the fresh call alone (exactly the bare loop's compile
work, so its ratio is the harness's own overhead: two eager runs, the
comparisons, isolation, memory release, the pipe). Prints programs/s of each, the
ratios tcfuzz / bare, and where tcfuzz's time went (worker time in eager
calls, compiled calls, the rest of the harness, and host + protocol).

``--reach`` adds a fourth tcfuzz side, the full call plan with compiler line
coverage on (harness.reach, Outcome.reach), interleaved with the others, and
prints what it costs in programs/s against the full plan without it.

Memory: ``--rss-programs`` programs on one worker (eager backend, the
campaign's full call plan), recycled as a campaign recycles it (resident set
past ``--rss-growth-mib`` over its warm size; 0: never) with the worker's
resident set after each program. Prints it at checkpoints, where the worker
was replaced, the MiB kept per program between replacements (a least-squares
slope: what Dynamo leaks), and the growth of the peak over the second half
(0 when the peak stops growing).
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

from fuzz.campaign import interpreters  # noqa: E402
from fuzz.generate.program import generate  # noqa: E402
from fuzz.campaign.workers import RSS_GROWTH_LIMIT_MIB, Task, Worker, WorkerPool  # noqa: E402

# Seed offsets: the warm-up program and the memory run's programs differ from
# the timed ones.
WARMUP_SEED_OFFSET = 1_000_000
RSS_SEED_OFFSET = 2_000_000
# The side with compiler line coverage on (--reach): the full call plan plus harness.reach.
REACH_SIDE = "full+reach"


class BareLoop:
    """benchmarks/bare_loop.py as a server in the interpreter's worker env."""

    def __init__(self, interp: interpreters.Interpreter, cache_dir: str):
        env = interp.environ()
        env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
        self.proc = subprocess.Popen([str(interp.python), str(ROOT / "benchmarks" / "bare_loop.py")], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.index = 0

    def run(self, program, backend: str) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.index += 1
        self.proc.stdin.write(json.dumps({"program": program.to_json(), "backend": backend, "index": self.index}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"the bare loop died on {backend}")
        return json.loads(line)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def start_pool(interp: interpreters.Interpreter, log_dir: Path, cache_dir: str) -> WorkerPool:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache_dir  # Interpreter.environ() passes TORCH* on
    try:
        pool = WorkerPool([interp], jobs=1, log_dir=log_dir)
        pool.start()
    finally:
        del os.environ["TORCHINDUCTOR_CACHE_DIR"]
    return pool


def measure(interp: interpreters.Interpreter, backend: str, programs: list, warmup, scratch: Path,
            reach: bool = False) -> dict:
    """Each program through the bare loop, tcfuzz (full call plan) and tcfuzz
    (first two calls), interleaved program by program in rotating order, so
    that load from other processes falls on all three alike. Times are wall
    seconds per program as each side's caller sees them (tcfuzz: including
    the host, the pipe and JSON). ``reach``: a fourth side, the full call plan
    with compiler line coverage on (harness.reach), beside "full" without it."""
    bare = BareLoop(interp, str(scratch / f"cache-bare-{backend}"))
    calls = {"full": None, "2 calls": 2, "1 call": 1}
    if reach:
        calls[REACH_SIDE] = None
    pools = {side: start_pool(interp, scratch / "logs", str(scratch / f"cache-{side.replace(' ', '')}-{backend}"))
             for side in calls}
    sides = ["bare", *calls]
    totals = {side: 0.0 for side in sides}
    per_program: dict[str, list[float]] = {side: [] for side in sides}
    outcomes: dict[str, list] = {side: [] for side in calls}
    raised = 0
    try:
        bare.run(warmup, backend)  # each side's first compile of the backend, not timed
        for name, pool in pools.items():
            pool.run_all([Task(warmup, interp.name, backend, calls=calls[name], reach=name == REACH_SIDE)])
        for i, program in enumerate(programs):
            for side in sides[i % len(sides):] + sides[:i % len(sides)]:
                started = time.perf_counter()
                if side == "bare":
                    raised += bare.run(program, backend)["raised"]
                else:
                    outcomes[side] += pools[side].run_all([Task(program, interp.name, backend, calls=calls[side],
                                                                reach=side == REACH_SIDE)])
                per_program[side].append(time.perf_counter() - started)
                totals[side] += per_program[side][-1]
    finally:
        bare.close()
        for pool in pools.values():
            pool.close()
    result: dict = {"programs": len(programs), "bare_s": totals["bare"], "bare_raised": raised,
                    "per_program_s": per_program}
    # tcfuzz skips the compile of a program whose eager runs disagree (flaky);
    # the bare loop cannot tell and compiles it: compare the others too
    judged = [i for i, o in enumerate(outcomes["full"]) if o.verdict.value != "flaky"]
    result["judged"] = len(judged)
    for side in calls:
        done = outcomes[side]
        verdicts: dict[str, int] = {}
        for o in done:
            verdicts[o.verdict.value] = verdicts.get(o.verdict.value, 0) + 1
        eager_s = sum(sum(c.elapsed_s for c in o.eager) for o in done) * 2  # eager A and B
        compiled_s = sum(sum(c.elapsed_s for c in o.compiled) for o in done)
        worker_s = sum(o.elapsed_s for o in done)
        judged_ratio = (sum(per_program["bare"][i] for i in judged) / sum(per_program[side][i] for i in judged)
                        if judged else 0.0)
        result[side] = {"elapsed_s": totals[side], "ratio": totals["bare"] / totals[side], "verdicts": verdicts,
                        "ratio_judged": judged_ratio,
                        "eager_calls_s": eager_s, "compiled_calls_s": compiled_s,
                        "harness_s": max(0.0, worker_s - eager_s - compiled_s),
                        "host_s": max(0.0, totals[side] - worker_s)}
    return result


def memory(interp: interpreters.Interpreter, count: int, seed: int, log_dir: Path,
           growth_limit_mib: float) -> list[tuple[int, float, float, int]]:
    """(programs run, RSS MiB, peak RSS MiB so far, workers replaced so far)
    after each program on one worker recycled past ``growth_limit_mib``."""
    worker = Worker(interp, log_dir, rss_growth_limit_mib=growth_limit_mib)
    rows = []
    restarts = 0
    try:
        worker.start()
        rows.append((0, worker.rss_mib, worker.rss_mib, 0))
        for i in range(count):
            recycled_before = worker.recycled
            outcome = worker.run(Task(generate(seed + RSS_SEED_OFFSET + i), interp.name, "eager"))
            if not worker.alive:  # recycled, or died with the program (a crash): the next task starts a fresh one
                restarts += 1
                why = "recycled" if worker.recycled > recycled_before else f"died ({outcome.verdict.value})"
                print(f"  worker replaced after program {i + 1}: {why} at {worker.rss_mib:.0f} MiB", flush=True)
            rows.append((i + 1, worker.rss_mib, worker.peak_rss_mib, restarts))
            if (i + 1) % 100 == 0:
                print(f"  {i + 1} programs: RSS {worker.rss_mib:.0f} MiB, peak {worker.peak_rss_mib:.0f} MiB, "
                      f"{restarts} replaced", flush=True)
    finally:
        worker.close()
    return rows


def kept_per_program_mib(rows: list[tuple[int, float, float, int]]) -> float:
    """Least-squares slope of RSS over programs within each worker's life
    (segments between replacements, their first 10 programs left out: warm-up),
    pooled: MiB kept per program."""
    segments: dict[int, list[tuple[int, float]]] = {}
    for n, rss, _, restarts in rows[1:]:
        segments.setdefault(restarts, []).append((n, rss))
    sxy = sxx = 0.0
    for points in segments.values():
        points = points[10:]
        if len(points) < 10:
            continue
        mx = sum(n for n, _ in points) / len(points)
        my = sum(r for _, r in points) / len(points)
        sxy += sum((n - mx) * (r - my) for n, r in points)
        sxx += sum((n - mx) ** 2 for n, _ in points)
    return sxy / sxx if sxx else 0.0


def parse_counts(text: str, backends: list[str]) -> dict[str, int]:
    """``"40"`` -> 40 for every backend; ``"eager=100,inductor=12"`` -> per
    backend (the others: 40)."""
    if "=" not in text:
        return {b: int(text) for b in backends}
    given = {k.strip(): int(v) for k, v in (part.split("=", 1) for part in text.split(",") if part.strip())}
    return {b: given.get(b, 40) for b in backends}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default="3.12")
    parser.add_argument("--backend", default="eager,aot_eager,inductor")
    parser.add_argument("--programs", default="40", help="timed programs per backend: N, or backend=N,...")
    parser.add_argument("--rss-programs", type=int, default=1000, help="programs for the memory run (0: skip)")
    parser.add_argument("--rss-growth-mib", type=float, default=RSS_GROWTH_LIMIT_MIB,
                        help="memory run: recycle the worker past this growth over its warm size (0: never)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--reach", action="store_true",
                        help="also run the full call plan with compiler line coverage on (harness.reach) and "
                             "print its programs/s against the full plan's")
    args = parser.parse_args()

    interp = interpreters.resolve(args.python)
    backends = [b for b in args.backend.split(",") if b]
    counts = parse_counts(args.programs, backends)
    programs = [generate(args.seed + i) for i in range(max(counts.values(), default=0))]
    warmup = generate(args.seed + WARMUP_SEED_OFFSET)
    scratch = Path(tempfile.mkdtemp(prefix="tcfuzz-throughput-"))
    results: dict = {"python": args.python, "programs": counts, "backends": {}}

    print(f"throughput: {counts} programs on {args.python}, interleaved", flush=True)
    for backend in backends:
        r = results["backends"][backend] = measure(interp, backend, programs[:counts[backend]], warmup, scratch,
                                                   reach=args.reach)
        print(f"  {backend:<10} bare loop {r['programs'] / r['bare_s']:.3f} prog/s ({r['bare_raised']} raised)",
              flush=True)
        for side in ("full", "2 calls", "1 call", *((REACH_SIDE,) if args.reach else ())):
            t = r[side]
            print(f"  {backend:<10} tcfuzz {side:<8} {r['programs'] / t['elapsed_s']:.3f} prog/s  ratio {t['ratio']:.2f} "
                  f"(on the {r['judged']} non-flaky programs {t['ratio_judged']:.2f}) "
                  f"(eager calls {t['eager_calls_s']:.1f} s, compiled calls {t['compiled_calls_s']:.1f} s, rest of "
                  f"harness {t['harness_s']:.1f} s, host+protocol {t['host_s']:.1f} s: "
                  f"{t['compiled_calls_s'] / t['elapsed_s']:.0%} of the time in compiled calls; {t['verdicts']})",
                  flush=True)
        if args.reach:
            r["reach_overhead"] = 1 - r["full"]["elapsed_s"] / r[REACH_SIDE]["elapsed_s"]
            print(f"  {backend:<10} coverage (harness.reach) costs {r['reach_overhead']:.1%} of the full call plan's "
                  f"programs/s", flush=True)

    print("\n| backend | bare prog/s | tcfuzz prog/s, full call plan | ratio | in compiled calls "
          "| tcfuzz prog/s, fresh + cached calls | ratio | in compiled calls "
          "| tcfuzz prog/s, fresh call (the bare loop's work) | ratio | in compiled calls |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for backend, r in results["backends"].items():
        n = r["programs"]
        cells = " | ".join(f"{n / r[side]['elapsed_s']:.3f} | {r[side]['ratio']:.2f} | "
                           f"{r[side]['compiled_calls_s'] / r[side]['elapsed_s']:.0%}" for side in ("full", "2 calls", "1 call"))
        print(f"| {backend} | {n / r['bare_s']:.3f} | {cells} |")

    if args.rss_programs:
        print(f"\nmemory: {args.rss_programs} programs on one {args.python} worker (eager, recycled past "
              f"{args.rss_growth_mib:.0f} MiB of growth)", flush=True)
        rows = memory(interp, args.rss_programs, args.seed, scratch / "logs", args.rss_growth_mib)
        marks = sorted({0, 1, 10, 100} | {n for n in range(0, args.rss_programs + 1, max(1, args.rss_programs // 10))}
                       | {args.rss_programs})
        print("| programs | RSS MiB | peak RSS MiB | workers replaced |\n|---|---|---|---|")
        for n, rss, peak, restarts in rows:
            if n in marks:
                print(f"| {n} | {rss:.0f} | {peak:.0f} | {restarts} |")
        half = rows[len(rows) // 2]
        growth = rows[-1][2] - half[2]
        kept = kept_per_program_mib(rows)
        print(f"kept per program within a worker's life: {kept:.2f} MiB")
        print(f"peak RSS growth over the second half ({half[0]} -> {rows[-1][0]} programs): {growth:+.0f} MiB")
        results["memory"] = {"rows": rows, "second_half_peak_growth_mib": growth, "kept_per_program_mib": kept,
                             "growth_limit_mib": args.rss_growth_mib}
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
