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
from harness.outcome import Outcome, Verdict
from fuzz.campaign.database import CampaignDB
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
            "interpreters": [i for i in b["interpreters"].split(",") if i], "backends": [b["backend"]],
            "count": b["count"], "case": b["case_path"], "new": bool(b["new"]),
            "matrix": matrix.get(b["key"], {}),
            # the first error message of its program's runs (a limitation's is matched against it)
            "message": next((o.error_message for o in by_program.get(b["program_id"], [])
                             if o.verdict.value == b["kind"] and o.error_message), ""),
            # free-threaded or torch release, decided by one more cell (fuzz.campaign.attribution)
            "attribution": meta.get("attributions", {}).get(b["id"]),
        })
    buckets = _with_standing(buckets, config.get("corpus_dir"))
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
    }


def backlog_summary(corpus_dir: str | None, minimised: list[dict[str, Any]]) -> dict[str, Any]:
    """``summary.json``'s ``backlog``: the buckets waiting in the corpus
    backlog now (fuzz.corpus.backlog: left unminimised for lack of time, filed
    first by the next campaign) and those this campaign took from it.
    ``{"path", "waiting": N, "buckets": [{"id", "kind", "signature", "backend",
    "first_seen", "last_seen", "campaigns"}], "filed": [{"id", "kind", "case"}]}``,
    ``case`` None where it was tried and not filed."""
    entries = backlog.load(Path(corpus_dir)) if corpus_dir else {}
    return {
        "path": str(backlog.backlog_path(Path(corpus_dir))) if corpus_dir else "",
        "waiting": len(entries),
        "buckets": backlog.describe(entries),
        "filed": [{"id": m.get("id", ""), "kind": m.get("kind", ""), "case": m.get("case")}
                  for m in minimised if m.get("from_backlog")],
    }


def _with_standing(buckets: list[dict[str, Any]], corpus_dir: str | None) -> list[dict[str, Any]]:
    """``buckets`` with their ``standing`` and ``upstream`` issue
    (fuzz.triage.known, from the corpus's known-issues.toml) in report order:
    new, known-open, fixed-since, then documented limitations."""
    from fuzz.triage import known

    try:
        issues = known.load(Path(corpus_dir)) if corpus_dir else known.KnownIssues()
    except ValueError as e:
        log.warning("%s", e)
        issues = known.KnownIssues()
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
