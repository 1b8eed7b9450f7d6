"""What `tcfuzz run` prints: the progress display while a campaign runs
and its closing lines (``tcfuzz.cli`` calls these; library code logs)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any


def print_run(result: Any, name: str, out: Path) -> None:
    """The closing lines of a campaign: counts, verdicts, its new buckets, the backlog, the report's path."""
    s = result.summary
    print(f"campaign {name}: {s['programs']} programs, {s['runs']} runs in {s['elapsed_s']:.0f} s "
          f"({s['programs_per_s']:.3f} programs/s)")
    print("verdicts: " + ", ".join(f"{k} {v}" for k, v in s["verdicts"].items() if v))
    for b in s["buckets"]:
        if b["new"]:  # a documented limitation (known-issues.toml) is never minimised: it says so
            limitation = b.get("standing") == "limitation"
            print(f"  {'LIM' if limitation else 'NEW'} {b['kind']:<14} {b['stage']:<9} {b['detail'][:60]:<60} "
                  f"{','.join(b['interpreters']):<22} "
                  f"{'(documented limitation)' if limitation else b['case'] or '(not filed)'}")
    for line in backlog_lines(s.get("backlog") or {}):
        print(line)
    coverage = s.get("coverage")
    if coverage:
        per = ", ".join(f"{i} {n}" for i, n in coverage.get("interpreters", {}).items())
        print(f"compiler coverage: {coverage['statements']} statements ({per}); {coverage.get('pool', 0)} programs "
              f"in the pool")
    print(f"report: {out / 'index.html'}")


def backlog_lines(backlog: dict[str, Any]) -> list[str]:
    """The end-of-run lines on the corpus backlog (summary.json ``backlog``):
    the buckets filed from it in this run, then those still waiting there for
    the next campaign (left unminimised for lack of time); none when both are none."""
    filed, waiting = backlog.get("filed") or [], backlog.get("buckets") or []
    lines = []
    if filed:
        lines.append(f"backlog: {len(filed)} buckets filed from it in this run")
        lines += [f"  FILED {f['kind']:<22} {f['id']}  {f['case']}" if f.get("case") else
                  f"  TRIED {f['kind']:<22} {f['id']}  (tried, not filed: {f.get('reason') or 'see the log'})"
                  for f in filed]
    if waiting:
        lines.append(f"backlog: {backlog.get('waiting', len(waiting))} buckets wait in {backlog.get('path')} "
                     f"(no time to minimise them; the next campaign files them first)")
        lines += [f"  WAITS {w['kind']:<22} {w['id']}  {w.get('backend', '')}, left by {w.get('campaigns', 1)} "
                  f"campaigns since {w.get('first_seen', '?')}{', reduced' if w.get('reduced') else ''}"
                  for w in waiting]
    return lines


class progress_display:
    """A rich progress bar on a TTY; a status line every 30 s otherwise."""

    def __enter__(self) -> Any:
        self.last = 0.0
        if sys.stderr.isatty():
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self.bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), transient=False)
            self.bar.start()
            self.task = self.bar.add_task("starting")
        else:
            self.bar = None
        return self.show

    def show(self, p: Any) -> None:
        rate = p.runs / p.elapsed_s if p.elapsed_s else 0.0
        text = (f"{p.phase}: {p.programs} programs, {p.runs} runs ({rate:.2f} runs/s), "
                f"{p.buckets} buckets ({p.new_buckets} new)")
        if self.bar is not None:
            self.bar.update(self.task, description=text)
        elif time.monotonic() - self.last > 30:
            self.last = time.monotonic()
            print(f"[{p.elapsed_s:6.0f} s] {text}", file=sys.stderr, flush=True)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
