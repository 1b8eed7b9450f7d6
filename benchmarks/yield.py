"""Yield: two campaign configurations side by side, in one run, on equal CPU.

The number tcfuzz steers by: new, real bugs per CPU-hour on the newest torch.
Each configuration runs as one campaign of its own, from an empty copy of
the corpus (only ``known-issues.toml`` kept, so documented limitations and
upstream issues are still known), over the same seed range. The two
alternate in slices: configuration A runs a slice (``tcfuzz run --budget``,
then ``--resume`` with a larger budget), then B, and so on, so a machine that
slows down mid-run slows both alike. Each slice's CPU seconds (the campaign
process and every worker, from ``resource.getrusage(RUSAGE_CHILDREN)``) are
measured; the next slice of the configuration that is behind is stretched
until both have had the same CPU time, within one slice.

Printed for each configuration: programs, runs, CPU seconds, CPU seconds per
cell (interpreter x backend), distinct new buckets by kind, distinct bug
buckets that are not documented limitations, and distinct root causes after
filing (the filed cases' bucket ids once minimisation refined them). With
``--json PATH`` the same as JSON.

    .venv/bin/python benchmarks/yield.py --cpu-minutes 30 \\
        --a "--schedule full" --b "--schedule yield"

Coverage guidance against blind draws (compiler statements reached, the
curve by fifths of the CPU time, the key files' shares):

    .venv/bin/python benchmarks/yield.py --cpu-minutes 30 --a "--no-guidance" --b ""

Before and after a change, in one run (A runs a git worktree of the earlier
commit, whose .tox links to this checkout's):

    git worktree add /tmp/before HEAD~1 && ln -s $PWD/.tox /tmp/before/.tox
    .venv/bin/python benchmarks/yield.py --cpu-minutes 30 --a "" --b "" --a-checkout /tmp/before

Defaults: A is the configuration the default campaign ran before the cell
scheduler (every backend on every interpreter), B today's default.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TCFUZZ = [sys.executable, "-m", "fuzz.cli"]
BUG_KINDS = ("divergence", "compile-error", "crash", "timeout")
# The packages whose statements the coverage comparison counts.
COMPILER_PACKAGES = ("torch/_dynamo", "torch/_inductor", "torch/_functorch")
# Seconds a slice may run past its budget before it is stopped (SIGTERM:
# the campaign writes its report; then the next slice resumes it).
SLICE_GRACE_S = 240.0


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def empty_corpus(source: Path, dest: Path) -> Path:
    """A corpus folder with only ``source``'s known-issues.toml (if any)."""
    dest.mkdir(parents=True, exist_ok=True)
    known = source / "known-issues.toml"
    if known.exists():
        shutil.copyfile(known, dest / "known-issues.toml")
    return dest


class Arm:
    """One configuration's campaign: its folder, corpus, the checkout it runs and the CPU it had."""

    def __init__(self, name: str, extra: list[str], work: Path, common: list[str], root: Path = ROOT):
        self.name, self.extra, self.common, self.root = name, extra, common, root
        self.out = work / f"campaign-{name}"
        self.corpus = empty_corpus(root / "corpus", work / f"corpus-{name}")
        self.cpu_s = 0.0
        self.wall_s = 0.0
        self.budget_s = 0.0
        self.slices = 0

    def run_slice(self, slice_s: float) -> None:
        """Run the campaign ``slice_s`` more wall seconds (started or resumed)."""
        self.budget_s += slice_s
        if self.slices == 0:
            cmd = TCFUZZ + ["run", *self.common, *self.extra, "--corpus", str(self.corpus), "--out", str(self.out),
                            "--budget", f"{int(self.budget_s)}s"]
        else:
            cmd = TCFUZZ + ["run", "--resume", str(self.out), "--budget", f"{int(self.budget_s)}s"]
        before_cpu, started = children_cpu_s(), time.monotonic()
        log = (self.out.parent / f"{self.name}.log").open("a")
        print(f"[yield] {self.name} slice {self.slices + 1}: {shlex.join(cmd[2:])}", file=sys.stderr, flush=True)
        proc = subprocess.Popen(cmd, cwd=self.root, stdout=log, stderr=subprocess.STDOUT)
        try:
            proc.wait(timeout=slice_s + SLICE_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.terminate()  # the campaign writes its report (SIGTERM), the next slice resumes it
            proc.wait(timeout=120)
        log.close()
        self.slices += 1
        self.cpu_s += children_cpu_s() - before_cpu
        self.wall_s += time.monotonic() - started

    def summary(self) -> dict[str, Any]:
        path = self.out / "summary.json"
        return json.loads(path.read_text()) if path.exists() else {}


def figures(arm: Arm) -> dict[str, Any]:
    """The benchmark's row for one configuration (module docstring)."""
    s = arm.summary()
    buckets = s.get("buckets", [])
    new = [b for b in buckets if b.get("new")]
    by_kind: dict[str, int] = {}
    for b in new:
        by_kind[b["kind"]] = by_kind.get(b["kind"], 0) + 1
    bugs = [b for b in buckets if b["kind"] in BUG_KINDS and b.get("standing") != "limitation"]
    root_causes = {b["id"] for b in bugs if b.get("case")}
    cells = {f"{c['interpreter']}/{c['backend']}": round(c["cpu_s"] + c.get("confirm_cpu_s", 0.0), 1)
             for c in s.get("cells", [])}
    return {"config": arm.extra, "programs": s.get("programs", 0), "runs": s.get("runs", 0),
            "cpu_s": round(arm.cpu_s, 1), "wall_s": round(arm.wall_s, 1), "slices": arm.slices,
            "cells_cpu_s": cells, "new_buckets_by_kind": by_kind, "bug_buckets": len({b["id"] for b in bugs}),
            "root_causes_filed": len(root_causes),
            "bugs_per_cpu_hour": round(len({b["id"] for b in bugs}) / (arm.cpu_s / 3600), 2) if arm.cpu_s else 0.0,
            "phases": (s.get("phases") or {}).get("runs", {}), **coverage_figures(arm, s)}


def coverage_figures(arm: Arm, s: dict[str, Any]) -> dict[str, Any]:
    """Compiler coverage at the end (``summary.json["coverage"]``): statements
    of torch/_dynamo + _inductor + _functorch, per package, the curve at
    each fifth of the CPU time, what the last fifth added, and the lines
    reached in ``KEY_FILES`` with their share of the file's executable lines."""
    coverage = s.get("coverage") or {}
    curve = coverage.get("curve") or []
    if not curve:
        return {"statements": 0}
    packages = coverage.get("packages", {})
    end_cpu_s = curve[-1]["cpu_s"] or 1.0
    fifths = [next((p for p in curve if p["cpu_s"] >= end_cpu_s * k / 5), curve[-1]) for k in range(1, 6)]
    made: dict[str, Any] = {
        "statements": sum(n for p, n in packages.items() if p in COMPILER_PACKAGES),
        "packages": packages, "pool": coverage.get("pool", 0),
        "curve_fifths": [{"cpu_s": p["cpu_s"], "programs": p["programs"], "statements": p["statements"]}
                         for p in fifths],
        "last_fifth_added": fifths[-1]["statements"] - fifths[-2]["statements"],
    }
    try:
        from fuzz.report import campaign_coverage

        reached, config = campaign_coverage.load_map(arm.out)
        table = campaign_coverage.file_table(reached)
        pythons = [Path(p) for p in config.get("pythons", {}).values() if Path(p).exists()]
        totals = campaign_coverage.executable_lines(pythons[0], list(campaign_coverage.KEY_FILES)) if pythons else {}
        made["key_files"] = {path: {"lines": table.get(path, {}).get("all", 0),
                                    "share": round(table.get(path, {}).get("all", 0) / totals[path], 3)
                                    if totals.get(path) else None}
                             for path in campaign_coverage.KEY_FILES}
    except Exception as e:  # a campaign without a map: the summary's figures alone
        made["key_files"] = {"error": str(e)}
    return made


def print_table(rows: dict[str, dict[str, Any]]) -> None:
    names = list(rows)
    print(f"{'':<34}" + "".join(f"{n:>22}" for n in names))
    for key, label in (("programs", "programs"), ("runs", "runs"), ("cpu_s", "CPU-s"), ("wall_s", "wall-s"),
                       ("bug_buckets", "bug buckets (not limitations)"),
                       ("root_causes_filed", "root causes filed"), ("bugs_per_cpu_hour", "bug buckets / CPU-h")):
        print(f"{label:<34}" + "".join(f"{rows[n][key]:>22}" for n in names))
    kinds = sorted({k for r in rows.values() for k in r["new_buckets_by_kind"]})
    for kind in kinds:
        print(f"{'new ' + kind:<34}" + "".join(f"{rows[n]['new_buckets_by_kind'].get(kind, 0):>22}" for n in names))
    print(f"{'compiler statements (dynamo+inductor+functorch)':<34}"
          + "".join(f"{rows[n].get('statements', 0):>22}" for n in names))
    print(f"{'added in the last fifth of CPU':<34}" + "".join(f"{rows[n].get('last_fifth_added', 0):>22}" for n in names))
    for k in range(5):
        print(f"{f'  all four packages at {k + 1}/5 CPU':<34}" + "".join(
            f"{(rows[n].get('curve_fifths') or [{}] * 5)[k].get('statements', 0):>22}" for n in names))
    for path in sorted({p for r in rows.values() for p in (r.get("key_files") or {}) if p != "error"}):
        print(f"  {path.removeprefix('torch/_dynamo/'):<32}" + "".join(
            f"{str(rows[n]['key_files'].get(path, {}).get('share')):>22}" for n in names))
    cells = sorted({c for r in rows.values() for c in r["cells_cpu_s"]})
    print("CPU-s per cell:")
    for cell in cells:
        print(f"  {cell:<32}" + "".join(f"{rows[n]['cells_cpu_s'].get(cell, 0.0):>22}" for n in names))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", default="--schedule full", help="tcfuzz run flags of configuration A")
    parser.add_argument("--b", default="--schedule yield", help="tcfuzz run flags of configuration B")
    parser.add_argument("--common", default="--backend eager,aot_eager,inductor",
                        help="flags both get (interpreters, backends, sources)")
    parser.add_argument("--cpu-minutes", type=float, default=30.0, help="CPU minutes each configuration gets")
    parser.add_argument("--slice-minutes", type=float, default=6.0, help="wall minutes of one slice")
    parser.add_argument("--seed", type=int, default=7000000)
    parser.add_argument("--a-checkout", type=Path, default=ROOT,
                        help="the tcfuzz checkout configuration A runs (default this one): a git worktree of an "
                             "earlier commit, with .tox linked to this checkout's, compares before and after a change")
    parser.add_argument("--b-checkout", type=Path, default=ROOT, help="the tcfuzz checkout configuration B runs")
    parser.add_argument("--work", help="folder for both campaigns (default: a new temporary one)")
    parser.add_argument("--json", help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="tcfuzz-yield-"))
    work.mkdir(parents=True, exist_ok=True)
    common = shlex.split(args.common) + ["--seed", str(args.seed)]
    arms = [Arm("A", shlex.split(args.a), work, common, args.a_checkout.resolve()),
            Arm("B", shlex.split(args.b), work, common, args.b_checkout.resolve())]
    target_cpu_s = 60.0 * args.cpu_minutes
    slice_s = 60.0 * args.slice_minutes
    cores = os.cpu_count() or 1
    while min(a.cpu_s for a in arms) < target_cpu_s:
        arm = min(arms, key=lambda a: a.cpu_s)  # the one behind runs next
        other = max(arms, key=lambda a: a.cpu_s)
        # stretch a slice to catch up on CPU, at most by one slice; never past the target
        catch_up_s = max(0.0, other.cpu_s - arm.cpu_s) / cores
        wall_s = min(slice_s + min(catch_up_s, slice_s), max(60.0, (target_cpu_s - arm.cpu_s) / cores))
        arm.run_slice(wall_s)
        if arm.slices > 4 * target_cpu_s / max(slice_s, 1.0) + 4:
            print("[yield] error: slices use no CPU; see the logs in " + str(work), file=sys.stderr)
            return 3
    rows = {f"{a.name}: {' '.join(a.extra)}" + (f" ({a.root.name})" if a.root != ROOT else ""): figures(a) for a in arms}
    print_table(rows)
    print(f"campaigns and logs: {work}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
