"""Campaign diff: what changed between two campaigns (another torch, another day).

``tcfuzz diff OLD NEW`` compares two campaign folders (their
``campaign.sqlite``, or ``summary.json`` where the database is gone):

- new buckets (a cause, i.e. kind, stage and detail, that OLD never showed),
- fixed buckets (OLD showed it, NEW does not),
- buckets whose interpreter set changed (same cause, other interpreters),
- version-specific graph breaks: for each program run by both campaigns
  (same seeds give the same programs), the graph-break reasons that show on
  some Python versions and not others (``graph-break-regression`` findings),
  new in NEW or gone from it.

Program-level graph breaks need the databases; with only ``summary.json`` the
diff compares buckets and says so. This is the regression view a nightly run
posts.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from harness.outcome import Outcome
from fuzz.errors import UsageError
from fuzz.triage.signature import ABSENT_ON, Kind, findings, interpreter_order

Cause = tuple[str, str, str]  # (kind: a Kind's value, stage, detail)


@dataclasses.dataclass
class CampaignView:
    """What the diff needs of one campaign: its buckets by cause (with the
    union of their interpreters and counts), the torch version per
    interpreter, and per program the version-specific graph breaks
    (``{program_id: {gb_type: (present on, absent on)}}``; None without a database)."""

    name: str
    path: str
    torch: dict[str, str]
    causes: dict[Cause, dict[str, Any]]
    version_breaks: dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] | None


def load(path: Path) -> CampaignView:
    """Read a campaign folder, its ``campaign.sqlite`` or its ``summary.json``.
    Raises UsageError when the path holds neither."""
    path = Path(path)
    folder = path.parent if path.is_file() else path
    db_path = path if path.suffix == ".sqlite" else folder / "campaign.sqlite"
    summary_path = path if path.suffix == ".json" else folder / "summary.json"
    if path.suffix != ".json" and db_path.is_file():
        return _from_db(db_path)
    if summary_path.is_file():
        return _from_summary(summary_path)
    raise UsageError(f"{path} holds no campaign.sqlite or summary.json: pass the --out folder of a tcfuzz run")


def _add(causes: dict[Cause, dict[str, Any]], kind: str, stage: str, detail: str, interps: list[str],
         count: int, case: str | None) -> None:
    entry = causes.setdefault((kind, stage, detail), {"interpreters": set(), "count": 0, "cases": set()})
    entry["interpreters"].update(interps)
    entry["count"] += count
    if case:
        entry["cases"].add(case)


def _from_db(path: Path) -> CampaignView:
    from fuzz.campaign.database import CampaignDB

    db = CampaignDB(path)
    try:
        meta = db.meta()
        causes: dict[Cause, dict[str, Any]] = {}
        for b in db.buckets():
            _add(causes, b["kind"], b["stage"], b["detail"], [i for i in b["interpreters"].split(",") if i],
                 b["count"], b["case_path"])
        by_program: dict[str, list[Outcome]] = {}
        for o in db.outcomes():
            by_program.setdefault(o.program_id, []).append(o)
    finally:
        db.close()
    breaks = {pid: version_specific_breaks(outs) for pid, outs in by_program.items()}
    torch = {name: info.get("torch", "") for name, info in meta.get("interpreters", {}).items()}
    name = (meta.get("config") or {}).get("name") or meta.get("name") or path.parent.name
    return CampaignView(str(name), str(path.parent), torch, causes, breaks)


def _from_summary(path: Path) -> CampaignView:
    summary = json.loads(path.read_text())
    causes: dict[Cause, dict[str, Any]] = {}
    for b in summary.get("buckets", []):
        _add(causes, b.get("kind", ""), b.get("stage", ""), b.get("detail", ""), b.get("interpreters", []),
             int(b.get("count", 0)), b.get("case"))
    torch = {name: info.get("torch", "") for name, info in (summary.get("interpreters") or {}).items()}
    return CampaignView(summary.get("campaign", path.parent.name), str(path.parent), torch, causes, None)


def version_specific_breaks(outcomes: list[Outcome]) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """One program's graph breaks that show on some interpreters and not on
    others that traced it: ``{gb_type: (present on, absent on)}``, as the
    ``graph-break-regression`` findings of ``fuzz.triage.signature.findings``."""
    result = {}
    for f in findings(outcomes):
        sig = f.signature
        if sig.kind is Kind.GRAPH_BREAK_REGRESSION:
            absent = sig.detail.split(ABSENT_ON, 1)[1].rstrip("]").split(", ")
            result[sig.cause[1]] = (sig.interpreters, tuple(absent))
    return result


@dataclasses.dataclass
class CampaignDiff:
    """The changes from ``old`` to ``new`` (see the module docstring); each
    list entry is a JSON-ready dict."""

    old: CampaignView
    new: CampaignView
    new_buckets: list[dict[str, Any]]
    fixed_buckets: list[dict[str, Any]]
    interpreters_changed: list[dict[str, Any]]
    version_breaks_new: list[dict[str, Any]]
    version_breaks_gone: list[dict[str, Any]]
    common_programs: int | None

    @property
    def changed(self) -> bool:
        return any((self.new_buckets, self.fixed_buckets, self.interpreters_changed,
                    self.version_breaks_new, self.version_breaks_gone))

    def to_json(self) -> dict[str, Any]:
        return {
            "old": {"campaign": self.old.name, "path": self.old.path, "torch": self.old.torch},
            "new": {"campaign": self.new.name, "path": self.new.path, "torch": self.new.torch},
            "new_buckets": self.new_buckets, "fixed_buckets": self.fixed_buckets,
            "interpreters_changed": self.interpreters_changed,
            "version_breaks_new": self.version_breaks_new, "version_breaks_gone": self.version_breaks_gone,
            "common_programs": self.common_programs, "changed": self.changed,
        }


def _ordered(interps: set[str] | tuple[str, ...]) -> list[str]:
    return sorted(interps, key=interpreter_order)


def _bucket(cause: Cause, entry: dict[str, Any]) -> dict[str, Any]:
    return {"kind": cause[0], "stage": cause[1], "detail": cause[2],
            "interpreters": _ordered(entry["interpreters"]), "count": entry["count"], "cases": sorted(entry["cases"])}


def diff(old: CampaignView, new: CampaignView) -> CampaignDiff:
    """Compare two campaigns' buckets by cause and, for the programs both ran,
    their version-specific graph breaks."""
    new_buckets = [_bucket(c, e) for c, e in sorted(new.causes.items()) if c not in old.causes]
    fixed = [_bucket(c, e) for c, e in sorted(old.causes.items()) if c not in new.causes]
    changed = []
    for cause in sorted(set(old.causes) & set(new.causes)):
        before, after = old.causes[cause]["interpreters"], new.causes[cause]["interpreters"]
        if before != after:
            changed.append({**_bucket(cause, new.causes[cause]), "interpreters_before": _ordered(before),
                            "interpreters_after": _ordered(after), "gained": _ordered(after - before),
                            "lost": _ordered(before - after)})
    gained, gone, common = [], [], None
    if old.version_breaks is not None and new.version_breaks is not None:
        programs = sorted(set(old.version_breaks) & set(new.version_breaks))
        common = len(programs)
        for pid in programs:
            a, b = old.version_breaks[pid], new.version_breaks[pid]
            for gb_type in sorted(set(a) | set(b)):
                if a.get(gb_type) == b.get(gb_type):
                    continue
                if gb_type in b:
                    gained.append({"program_id": pid, "gb_type": gb_type, "present_on": list(b[gb_type][0]),
                                   "absent_on": list(b[gb_type][1]),
                                   "before": None if gb_type not in a else
                                   {"present_on": list(a[gb_type][0]), "absent_on": list(a[gb_type][1])}})
                else:
                    gone.append({"program_id": pid, "gb_type": gb_type, "present_on": list(a[gb_type][0]),
                                 "absent_on": list(a[gb_type][1])})
    return CampaignDiff(old, new, new_buckets, fixed, changed, gained, gone, common)


def _torch(view: CampaignView) -> str:
    versions = sorted(set(view.torch.values()))
    return ", ".join(versions) if versions else "torch ?"


def _sections(d: CampaignDiff) -> list[tuple[str, list[str]]]:
    def bucket_line(b: dict[str, Any]) -> str:
        return f"{b['kind']} at {b['stage']}: {b['detail']} (on {', '.join(b['interpreters'])}; {b['count']} programs)"

    sections = [
        ("New buckets", [bucket_line(b) for b in d.new_buckets]),
        ("Fixed buckets", [bucket_line(b) for b in d.fixed_buckets]),
        ("Interpreter set changed", [
            f"{b['kind']} at {b['stage']}: {b['detail']}: {', '.join(b['interpreters_before'])} -> "
            f"{', '.join(b['interpreters_after'])}" for b in d.interpreters_changed]),
    ]
    if d.common_programs is None:
        sections.append(("Version-specific graph breaks", ["(not compared: a campaign has no campaign.sqlite)"]))
    else:
        lines = [f"program {g['program_id']}: {g['gb_type']} on {', '.join(g['present_on'])}, not on "
                 f"{', '.join(g['absent_on'])}" + ("" if g["before"] is None else
                                                   f" (was on {', '.join(g['before']['present_on'])})")
                 for g in d.version_breaks_new]
        lines += [f"program {g['program_id']}: gone: {g['gb_type']} on {', '.join(g['present_on'])}, not on "
                  f"{', '.join(g['absent_on'])}" for g in d.version_breaks_gone]
        sections.append((f"Version-specific graph breaks ({d.common_programs} programs in both)", lines))
    return sections


def render_text(d: CampaignDiff) -> str:
    """A plain-text report: a headline, then one section per kind of change."""
    lines = [f"diff {d.old.name} ({_torch(d.old)}) -> {d.new.name} ({_torch(d.new)}): "
             f"{len(d.new_buckets)} new, {len(d.fixed_buckets)} fixed, {len(d.interpreters_changed)} changed "
             f"interpreter set, {len(d.version_breaks_new)} version-specific graph breaks new, "
             f"{len(d.version_breaks_gone)} gone"]
    for title, items in _sections(d):
        lines.append(f"\n{title}:")
        lines += [f"  {item}" for item in items] or ["  (none)"]
    return "\n".join(lines)


def render_markdown(d: CampaignDiff) -> str:
    """GitHub-flavoured Markdown for a nightly post: headline, then a bullet list per section."""
    def md(text: str) -> str:
        return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")

    lines = [f"## tcfuzz diff: {md(d.old.name)} → {md(d.new.name)}", "",
             f"torch {md(_torch(d.old))} → {md(_torch(d.new))}: **{len(d.new_buckets)} new**, "
             f"**{len(d.fixed_buckets)} fixed**, {len(d.interpreters_changed)} with another interpreter set, "
             f"{len(d.version_breaks_new)} version-specific graph breaks new, {len(d.version_breaks_gone)} gone", ""]
    for title, items in _sections(d):
        lines.append(f"### {title}")
        lines += [f"- {md(item)}" for item in items] or ["- none"]
        lines.append("")
    return "\n".join(lines)
