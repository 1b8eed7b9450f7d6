"""A campaign's summary (``summary.json``, docs/design.md) from its database,
and the reports written from it (``fuzz.report.pages``).

``tcfuzz run`` writes them when it ends, ``tcfuzz merge`` for the merged
shards and ``tcfuzz report`` again from a campaign folder.
"""

from __future__ import annotations

import datetime
import json
import logging
from pathlib import Path
from typing import Any

from harness import casefile
from harness.backends import ladder_rank
from harness.outcome import Outcome, Verdict
from fuzz.campaign.database import CampaignDB
from fuzz.campaign.guidance import META_KEY as GUIDANCE_META_KEY, summary_of
from fuzz.corpus import backlog
from fuzz.errors import UsageError
from fuzz.report import pages
from fuzz.triage.signature import interpreter_order

log = logging.getLogger(__name__)


def build_summary(db: CampaignDB, *, name: str, started: datetime.datetime, finished: datetime.datetime,
                  elapsed_s: float, elapsed_by_backend: dict[str, float] | None = None,
                  minimised: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """``summary.json``'s content from the database (docs/design.md, "Files")."""
    meta = db.meta()
    config = meta.get("config", {})
    outcomes = db.outcomes()
    programs = db.programs_done()
    verdicts: dict[str, int] = {v.value: 0 for v in Verdict}
    graph_breaks: dict[str, dict[str, set[str]]] = {}
    by_backend_s: dict[str, float] = dict(elapsed_by_backend or {})
    matrix: dict[str, dict[str, dict[str, str]]] = {}
    for o in outcomes:
        verdicts[o.verdict.value] = verdicts.get(o.verdict.value, 0) + 1
        for gb in o.graph_breaks:
            graph_breaks.setdefault(gb.gb_type or gb.reason, {}).setdefault(o.interpreter, set()).add(o.program_id)
        if elapsed_by_backend is None:
            by_backend_s[o.backend] = by_backend_s.get(o.backend, 0.0) + o.elapsed_s
    by_program: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_program.setdefault(o.program_id, []).append(o)
    buckets = []
    for b in db.buckets():
        for o in by_program.get(b["program_id"], []):
            column = f"{o.backend}+threads{o.threads}" if o.threads else o.backend  # concurrency runs apart
            matrix.setdefault(b["key"], {}).setdefault(o.interpreter, {})[column] = o.verdict.value
        buckets.append({
            "signature": b["key"], "id": b["id"], "kind": b["kind"], "stage": b["stage"], "detail": b["detail"],
            "program_id": b["program_id"],
            "interpreters": [i for i in b["interpreters"].split(",") if i], "backends": [b["backend"]],
            "count": b["count"], "case": b["case_path"], "new": bool(b["new"]),
            "matrix": matrix.get(b["key"], {}),
            # the first error message of its program's runs (a limitation's is matched against it)
            "message": next((o.error_message for o in by_program.get(b["program_id"], [])
                             if o.verdict.value == b["kind"] and o.error_message), ""),
            # free-threaded or torch release, decided by one more cell (fuzz.campaign.attribution)
            "attribution": meta.get("attributions", {}).get(b["id"]),
        })
    buckets = _with_standing(buckets, config.get("corpus_dir"),
                             [str(i.get("executable", "")) for i in meta.get("interpreters", {}).values()])
    cells = cell_table(outcomes, db.programs(), buckets)
    return {
        "campaign": name,
        "started": started.isoformat(timespec="seconds"),
        "finished": finished.isoformat(timespec="seconds"),
        "programs": programs,
        "runs": len(outcomes),
        "elapsed_s": round(elapsed_s, 2),
        "programs_per_s": round(programs / elapsed_s, 4) if elapsed_s else 0.0,
        # programs per second of worker time spent on each backend
        "programs_per_s_by_backend": {
            b: round(sum(1 for o in outcomes if o.backend == b) / s, 4) if s else 0.0 for b, s in by_backend_s.items()
        },
        "verdicts": verdicts,
        "interpreters": {
            name: {"version": info["version"], "torch": info["torch"], "free_threaded": info["free_threaded"],
                   "gil_enabled": _gil(outcomes, name, info["gil_enabled"])}
            for name, info in sorted(meta.get("interpreters", {}).items(), key=lambda kv: interpreter_order(kv[0]))
        },
        # the matrix's cells this campaign could not run, name -> why
        # (fuzz.campaign.cells: not provisioned, no wheel, torch.compile refuses it)
        "matrix": config.get("matrix", "newest"),
        "unavailable": config.get("unavailable", {}),
        "backends": config.get("backends", []),
        "device": config.get("device", "cpu"),
        "seed": config.get("seed"),
        "shard": config.get("shard"),
        "graph_breaks": {gb: {i: len(p) for i, p in per.items()} for gb, per in sorted(graph_breaks.items())},
        "buckets": buckets,
        "new_buckets": sum(1 for b in buckets if b["new"] and b["case"]),
        "new_signatures": sum(1 for b in buckets if b["new"]),
        "minimised": minimised or [],
        "backlog": backlog_summary(config.get("corpus_dir"), minimised or []),
        # per construct: programs using it, how many found new behaviour, how
        # many produced a bucket (fuzz.generate.feedback)
        "features": meta.get("feedback", {}).get("features", {}),
        # per (interpreter, backend) cell: runs, CPU seconds, share, buckets it
        # showed first, new buckets, new bugs (fuzz.campaign.schedule)
        "schedule": config.get("schedule", "full") if not config.get("share") else "share",
        "cells": cells,
        # where the runs' time went, by phase (harness.timing), and the filing time
        "phases": phase_table(outcomes, minimised or []),
        # compiler statements reached, their curve and the pool (fuzz.campaign.guidance)
        **({"coverage": coverage_summary(meta.get(GUIDANCE_META_KEY), db.programs(), buckets)}
           if meta.get(GUIDANCE_META_KEY) else {}),
    }


def coverage_summary(snapshot: dict[str, Any], programs: list[dict[str, Any]],
                     buckets: list[dict[str, Any]]) -> dict[str, Any]:
    """``summary.json["coverage"]``: ``Guidance.summary()`` of the stored
    ``snapshot``, with ``found``: each new bucket's id, kind and the number
    of programs run when its first program ran (its position among the
    campaign's programs in seq order), where the coverage plot marks it."""
    made = summary_of(snapshot) or {}
    position = {row["program_id"]: n for n, row in enumerate(programs, start=1)}
    made["found"] = sorted(({"id": b["id"], "kind": b["kind"], "programs": position[b["program_id"]]}
                            for b in buckets if b["new"] and b["program_id"] in position),
                           key=lambda f: (f["programs"], f["id"]))
    return made


def cell_table(outcomes: list[Outcome], programs: list[dict[str, Any]],
               buckets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``summary.json["cells"]``: one row per (interpreter, backend) cell,
    ``{"interpreter", "backend", "runs", "confirm_runs", "cpu_s", "share",
    "buckets", "new_buckets", "new_bugs"}``. ``runs``/``cpu_s`` count the
    runs the cell was scheduled for; ``confirm_runs`` those that confirmed
    a sampled cell's bug (or placed its stage) there, whose CPU seconds are
    in ``confirm_cpu_s``; ``share`` is the cell's part of all runs' CPU
    seconds. A bucket counts for the cells of its backend and interpreters
    that were scheduled for its first program; ``new_bugs`` are new buckets
    of the bug kinds that are not documented limitations."""
    scheduled: dict[str, set[str] | None] = {}
    for row in programs:
        cells = row.get("cells")
        scheduled[row["program_id"]] = set(cells) if cells is not None else None
    table: dict[tuple[str, str], dict[str, Any]] = {}

    def row_of(interpreter: str, backend: str) -> dict[str, Any]:
        return table.setdefault((interpreter, backend), {
            "interpreter": interpreter, "backend": backend, "runs": 0, "confirm_runs": 0, "cpu_s": 0.0,
            "confirm_cpu_s": 0.0, "share": 0.0, "buckets": 0, "new_buckets": 0, "new_bugs": 0})

    total_cpu_s = 0.0
    for o in outcomes:
        if o.threads:
            continue
        cost_s = o.cpu_s or o.elapsed_s
        total_cpu_s += cost_s
        row = row_of(o.interpreter, o.backend)
        planned = scheduled.get(o.program_id)
        if planned is None or f"{o.interpreter}/{o.backend}" in planned:
            row["runs"] += 1
            row["cpu_s"] += cost_s
        else:
            row["confirm_runs"] += 1
            row["confirm_cpu_s"] += cost_s
    for b in buckets:
        planned = scheduled.get(b.get("program_id", ""))
        for backend in b["backends"]:
            for interpreter in b["interpreters"]:
                if planned is not None and f"{interpreter}/{backend}" not in planned:
                    continue
                row = row_of(interpreter, backend)
                row["buckets"] += 1
                row["new_buckets"] += int(bool(b["new"]))
                row["new_bugs"] += int(bool(b["new"]) and b["kind"] not in ("graph-break", "graph-break-regression")
                                       and b.get("standing") != "limitation")
    rows = sorted(table.values(), key=lambda r: (ladder_rank(r["backend"]), r["backend"],
                                                   interpreter_order(r["interpreter"])))
    for row in rows:
        row["share"] = round((row["cpu_s"] + row["confirm_cpu_s"]) / total_cpu_s, 4) if total_cpu_s else 0.0
        row["cpu_s"], row["confirm_cpu_s"] = round(row["cpu_s"], 2), round(row["confirm_cpu_s"], 2)
    return rows


def phase_table(outcomes: list[Outcome], minimised: list[dict[str, Any]]) -> dict[str, Any]:
    """``summary.json["phases"]``: ``{"runs": {phase: {"wall_s", "cpu_s"}},
    "by_backend": {backend: {phase: {"wall_s", "cpu_s"}}}, "run_cpu_s",
    "filing_s"}``: the runs' time by phase (harness.timing: eager, each
    compiled call ``call:<label>``, compare, fp64, and inside the calls
    torch's compile phases dynamo, aot, inductor-codegen, cpp-compile),
    all runs' CPU seconds, and the wall seconds filing spent minimising."""
    runs: dict[str, list[float]] = {}
    by_backend: dict[str, dict[str, list[float]]] = {}
    run_cpu_s = 0.0
    for o in outcomes:
        run_cpu_s += o.cpu_s or o.elapsed_s
        for phase, (wall_s, cpu_s) in (o.phases or {}).items():
            for table in (runs, by_backend.setdefault(o.backend, {})):
                entry = table.setdefault(phase, [0.0, 0.0])
                entry[0] += wall_s
                entry[1] += cpu_s

    def rounded(table: dict[str, list[float]]) -> dict[str, dict[str, float]]:
        return {k: {"wall_s": round(w, 2), "cpu_s": round(c, 2)} for k, (w, c) in sorted(table.items())}

    return {"runs": rounded(runs), "by_backend": {b: rounded(t) for b, t in sorted(by_backend.items())},
            "run_cpu_s": round(run_cpu_s, 2),
            "filing_s": round(sum(float(m.get("elapsed_s") or 0.0) for m in minimised), 2)}


def backlog_summary(corpus_dir: str | None, minimised: list[dict[str, Any]]) -> dict[str, Any]:
    """``summary.json``'s ``backlog``: the buckets waiting in the corpus
    backlog now (fuzz.corpus.backlog: left unminimised for lack of time, filed
    first by the next campaign) and those this campaign took from it.
    ``{"path", "waiting": N, "buckets": [{"id", "kind", "signature", "backend",
    "first_seen", "last_seen", "campaigns", "reduced"}], "filed": [{"id", "kind",
    "case", "reason"}]}``, ``case`` None where it was tried and not filed
    (``reason``, when known, says why)."""
    entries = backlog.load(Path(corpus_dir)) if corpus_dir else {}
    return {
        "path": str(backlog.backlog_path(Path(corpus_dir))) if corpus_dir else "",
        "waiting": len(entries),
        "buckets": backlog.describe(entries),
        "filed": [{"id": m.get("id", ""), "kind": m.get("kind", ""), "case": m.get("case"),
                   **({"reason": m["reason"]} if m.get("reason") else {})}
                  for m in minimised if m.get("from_backlog")],
    }


def _with_standing(buckets: list[dict[str, Any]], corpus_dir: str | None,
                   executables: list[str] = ()) -> list[dict[str, Any]]:
    """``buckets`` with their ``standing`` and ``upstream`` issue
    (fuzz.triage.known, from the corpus's known-issues.toml, and the
    graph-break registries of the worker envs of ``executables``) in report
    order: new, known-open, fixed-since, then documented limitations."""
    from fuzz.triage import known

    try:
        issues = known.load(Path(corpus_dir)) if corpus_dir else known.KnownIssues()
    except ValueError as e:
        log.warning("%s", e)
        issues = known.KnownIssues()
    issues = issues.with_registry(executables)
    for b in buckets:
        status = ""
        if b.get("case") and Path(b["case"]).exists():
            status = str(casefile.read_table(Path(b["case"]).read_text()).get("status", ""))
        b["standing"] = known.standing(b, issues, status).value
        issue = issues.issue_of(str(b.get("id", "")))
        b["upstream"] = issue.issue if issue else ""
    return known.ordered(buckets)


def _gil(outcomes: list[Outcome], interpreter: str, at_start: bool) -> bool:
    """Whether the GIL was on in any run on this interpreter (it can turn on
    after start, when an extension that is not free-threading-safe loads)."""
    states = [o.gil_enabled for o in outcomes if o.interpreter == interpreter and o.gil_enabled is not None]
    return any(states) if states else at_start


def write_reports(db: CampaignDB, out_dir: Path, summary: dict[str, Any]) -> dict[str, Path]:
    """Write ``summary.json``, ``summary.md`` and ``index.html`` of ``summary``
    into ``out_dir`` (pages.write_report), with the source of each bucket's
    case that still exists and the database's runs; returns the paths by name."""
    cases = {}
    for b in summary["buckets"]:
        if b.get("case") and Path(b["case"]).exists():
            cases[b["case"]] = Path(b["case"]).read_text()
    return pages.write_report(out_dir, summary, cases, db.runs())


def rebuild_reports(campaign_dir: Path) -> dict[str, Path]:
    """``tcfuzz report DIR``: the summary and reports of the campaign in
    ``campaign_dir`` again, from its database (name, elapsed time and filed
    cases kept from the old ``summary.json``, if any; start and finish are the
    database's modification time). Returns the paths by name. Raises
    UsageError if the folder holds no campaign database."""
    path = campaign_dir / "campaign.sqlite"
    if not path.exists():
        raise UsageError(f"{campaign_dir} holds no campaign.sqlite: pass the --out folder of a tcfuzz run")
    db = CampaignDB(path)
    try:
        mtime = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.timezone.utc)
        summary_path = campaign_dir / "summary.json"
        old = json.loads(summary_path.read_text()) if summary_path.exists() else {}
        summary = build_summary(db, name=old.get("campaign", campaign_dir.name), started=mtime, finished=mtime,
                                elapsed_s=float(old.get("elapsed_s", 0.0)), minimised=old.get("minimised"))
        return write_reports(db, campaign_dir, summary)
    finally:
        db.close()
