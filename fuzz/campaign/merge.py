"""``tcfuzz merge DIR... -o OUT``: one campaign from the results of its shards.

Shards of one nightly run (``--shard I/N``, each over every interpreter, with
``--no-feedback``) run side by side on different machines; each leaves a
folder with its ``campaign.sqlite`` and, with ``--corpus DIR/corpus``, the
cases it filed. Shards with feedback on can draw different programs for the
same seed (``fuzz.generate.feedback`` learns from what each shard found), so
merge logs a warning for them: their merged buckets are not one campaign's.
Shards of different devices (cpu, cuda) are refused: a run is one cell
(program, interpreter, backend, threads) of one device.
Merging is deterministic: the shard folders are read in sorted order and

- programs are united by program id (interpreter-split shards run the same
  programs) and numbered by (seed, program id);
- runs are united by (program, interpreter, backend, threads); where two
  shards ran the same cell, the first folder's run is kept;
- buckets are recomputed from the united runs, program by program, exactly as
  a campaign's ``_classify`` counts them (``fuzz.triage.signature.findings``; flaky
  programs skipped). So merging the shards of a seed range gives the same
  buckets as one run over it, and a finding seen on 3.11 in one shard and on
  3.13 in another gets the interpreter set {3.11, 3.13} that one run over both
  interpreters would give it;
- a bucket is ``new`` if a shard flagged a bucket of the same kind, stage and
  detail as new; its case is the shard case of the same key, else of the same
  kind, stage and detail (shortest text first, then by text);
- case files are copied into ``OUT/corpus/<kind>/``;
- the merged campaign's corpus is the shards' own when they shared one
  (its backlog already holds every shard's unfiled buckets, under the
  backlog's lock); otherwise ``OUT/corpus``, which gets the union of the
  shards' backlogs (``fuzz.corpus.backlog``; a bucket by id, its earliest
  sighting and program kept) less the buckets the merged campaign has a case
  for, and the first shard's ``known-issues.toml``, so the merged report
  lists the unfiled buckets and orders new, known and fixed buckets as one
  campaign's report would.

Then the reports are written with ``fuzz.report.summary.build_summary`` and
``write_reports``.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import logging
import shutil
from pathlib import Path
from typing import Any

from harness.backends import ladder_rank
from harness.outcome import Outcome, Verdict
from harness.program import Program
from fuzz.campaign.database import CampaignDB
from fuzz.campaign.guidance import META_KEY as GUIDANCE_META_KEY, merge_snapshots
from fuzz.corpus import backlog
from fuzz.errors import UsageError
from fuzz.triage import known
from fuzz.report.summary import build_summary, write_reports
from fuzz.triage.signature import Signature, findings, interpreter_order

log = logging.getLogger(__name__)

DB_NAME = "campaign.sqlite"


def _open_shards(dirs: list[Path], out_dir: Path) -> list[tuple[Path, CampaignDB]]:
    resolved = sorted({d.resolve() for d in dirs}, key=str)
    if out_dir.resolve() in resolved:
        raise UsageError(f"-o {out_dir} is one of the shard folders: pass a new folder for the merged campaign")
    shards = []
    for d in resolved:
        if not (d / DB_NAME).exists():
            raise UsageError(f"{d} holds no {DB_NAME}: pass the --out folders of tcfuzz run --shard I/N")
        shards.append((d, CampaignDB(d / DB_NAME)))
    return shards


def _check_comparable(shards: list[tuple[Path, CampaignDB]]) -> None:
    """Refuse shards of different devices (UsageError); warn about shards that
    ran with feedback on (their programs for a seed may differ)."""
    configs = [(d, s.meta().get("config", {})) for d, s in shards]
    devices = sorted({c.get("device", "cpu") for _, c in configs})
    if len(devices) > 1:
        by_device = ", ".join(f"{d.name}={c.get('device', 'cpu')}" for d, c in configs)
        raise UsageError(f"shards ran on different devices ({by_device}): merge each device's shards apart")
    steered = [d.name for d, c in configs if c.get("feedback") and tuple(c.get("shard") or (0, 1))[1] > 1]
    if steered:
        log.warning("shards %s ran with feedback on: a seed's program may differ between shards, so the merged "
                    "buckets are not one campaign's (run the shards with --no-feedback)", ", ".join(steered))


def _case_file(shard_dir: Path, case_path: str) -> Path | None:
    """A shard's case file: its recorded path, else the same file under the
    shard folder's corpus/ (an artifact copied from another machine)."""
    path = Path(case_path)
    if path.exists():
        return path
    for candidate in (shard_dir / "corpus" / path.parent.name / path.name, shard_dir / path):
        if candidate.exists():
            return candidate
    return None


def _shard_corpus(shard_dir: Path, config: dict[str, Any]) -> Path | None:
    """The corpus folder a shard filed into: its recorded ``--corpus``, else
    the shard folder's corpus/ (an artifact copied from another machine)."""
    for candidate in (config.get("corpus_dir"), shard_dir / "corpus"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate).resolve()
    return None


def _merge_backlogs(corpora: list[Path], out_corpus: Path, filed_ids: set[str]) -> int:
    """Write the union of the backlogs of ``corpora`` (in order) less the
    buckets in ``filed_ids`` (signature ids) into ``out_corpus``; returns how
    many buckets wait there."""
    merged: dict[str, backlog.BacklogEntry] = {}
    for corpus in corpora:
        for key, entry in backlog.load(corpus).items():
            sid = entry.finding.signature.id
            if sid in filed_ids:
                continue
            old = merged.get(sid)
            if old is None:
                merged[sid] = entry
            else:  # the earliest sighting and its program; the latest last sighting
                first, other = (old, entry) if old.first_seen <= entry.first_seen else (entry, old)
                merged[sid] = dataclasses.replace(first, last_seen=max(old.last_seen, entry.last_seen),
                                                  campaigns=max(old.campaigns, entry.campaigns))
    existing = backlog.load(out_corpus)
    if merged or existing:
        backlog.save(out_corpus, {**{k: e for k, e in existing.items() if e.finding.signature.id not in filed_ids},
                                  **{e.finding.signature.key: e for e in merged.values()}})
    return len(merged)


def merge(dirs: list[Path], out_dir: Path, *, name: str | None = None) -> dict[str, Any]:
    """Merge shard folders into ``out_dir`` and write its reports; returns the
    summary (docs/design.md, "Files"). Raises UsageError for a folder without a
    campaign database, shards of different devices, or an output folder that
    already holds a campaign that was not made by ``merge``."""
    if not dirs:
        raise UsageError("Expected at least one shard folder: tcfuzz merge DIR... -o OUT")
    shards = _open_shards(dirs, out_dir)
    try:
        _check_comparable(shards)
    except UsageError:
        for _, shard in shards:
            shard.close()
        raise
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / DB_NAME
    if target.exists():
        existing = CampaignDB(target)
        merged_before = "merged_from" in existing.meta()
        existing.close()
        if not merged_before:
            raise UsageError(f"{out_dir} already holds a campaign that merge did not make: pass a new -o folder")
        for suffix in ("", "-wal", "-shm"):
            Path(str(target) + suffix).unlink(missing_ok=True)
    db = CampaignDB(target)

    # programs: one per id, in (seed, id) order
    programs: dict[str, dict[str, Any]] = {}
    for _, shard in shards:
        for row in shard.programs():
            kept = programs.setdefault(row["program_id"], row)
            kept["done"] = kept["done"] and row["done"] if kept is not row else row["done"]
    ordered = sorted(programs.values(), key=lambda r: (r["seed"] is None, r["seed"] or 0, r["program_id"]))

    # runs: first folder wins per cell
    runs: dict[tuple[str, str, str, int], Outcome] = {}
    for _, shard in shards:
        for outcome in shard.outcomes():
            runs.setdefault((outcome.program_id, outcome.interpreter, outcome.backend, outcome.threads), outcome)
    by_program: dict[str, list[Outcome]] = {}
    for key in sorted(runs):
        by_program.setdefault(key[0], []).append(runs[key])

    # shard buckets: new flags and cases by cause
    new_causes: set[tuple[str, str, str]] = set()
    cases: dict[str, list[tuple[str, Path]]] = {}
    for shard_dir, shard in shards:
        for b in shard.buckets():
            cause = (b["kind"], b["stage"], b["detail"])
            if b["new"]:
                new_causes.add(cause)
            if b["case_path"] and (path := _case_file(shard_dir, b["case_path"])) is not None:
                text = path.read_text()
                cases.setdefault(b["key"], []).append((text, path))
                cases.setdefault("|".join(cause), []).append((text, path))

    for seq, row in enumerate(ordered):
        program = Program(source=row["source"], seed=row["seed"], generator=row["generator"] or "",
                          features=tuple(row["features"]))
        db.add_program(seq, program, row.get("cells"))
        outcomes = by_program.get(row["program_id"], [])
        if not row["done"]:
            continue
        db.finish_program(seq, outcomes)
        if any(o.verdict is Verdict.FLAKY for o in outcomes):
            continue
        for finding in findings(outcomes):
            sig = finding.signature
            db.count_finding(finding, program.program_id, new=(sig.kind, sig.stage, sig.detail) in new_causes)

    corpus_dir = out_dir / "corpus"
    for b in db.buckets():
        candidates = cases.get(b["key"]) or cases.get(f"{b['kind']}|{b['stage']}|{b['detail']}")
        if not candidates:
            continue
        text, source = min(candidates, key=lambda tp: (len(tp[0]), tp[0]))
        dest = corpus_dir / b["kind"] / source.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not dest.exists() or dest.read_text() != text:
            shutil.copyfile(source, dest)
        db.record_case(b["key"], str(dest), lines_before=b["lines_before"], lines_after=b["lines_after"],
                       checks=b["checks"], elapsed_s=b["minimise_s"])

    metas = [(d, s.meta()) for d, s in shards]
    configs = [m.get("config", {}) for _, m in metas]
    corpora = list(dict.fromkeys(c for (d, m) in metas if (c := _shard_corpus(d, m.get("config", {}))) is not None))
    if len(corpora) == 1 and len(shards) > 1 and all(_shard_corpus(d, m.get("config", {})) for d, m in metas):
        merged_corpus = corpora[0]  # one corpus shared by every shard
    else:
        merged_corpus = corpus_dir
        corpus_dir.mkdir(parents=True, exist_ok=True)
        filed_ids = {Signature.parse(b["key"]).id for b in db.buckets() if b["case_path"]}
        waiting = _merge_backlogs(corpora, corpus_dir, filed_ids)
        if waiting:
            log.info("merged backlog: %d buckets wait in %s", waiting, backlog.backlog_path(corpus_dir))
        for corpus in corpora:
            known_file = corpus / known.KNOWN_ISSUES_FILE
            if known_file.exists() and corpus != corpus_dir.resolve():
                if not (corpus_dir / known.KNOWN_ISSUES_FILE).exists():
                    shutil.copyfile(known_file, corpus_dir / known.KNOWN_ISSUES_FILE)
                break
    backends = sorted({b for c in configs for b in c.get("backends", [])}, key=lambda b: (ladder_rank(b), b))
    interps = sorted({i for c in configs for i in c.get("interpreters", [])}, key=interpreter_order)
    infos: dict[str, Any] = {}
    for _, m in metas:
        for k, v in sorted(m.get("interpreters", {}).items()):
            infos.setdefault(k, v)
    seeds = [c["seed"] for c in configs if c.get("seed") is not None]
    db.set_meta("config", {"backends": backends, "interpreters": interps, "seed": min(seeds) if seeds else None,
                           "shard": None, "device": configs[0].get("device", "cpu") if configs else "cpu",
                           "fullgraph": any(c.get("fullgraph") for c in configs),
                           "corpus_dir": str(merged_corpus),
                           "schedule": configs[0].get("schedule", "full") if configs else "full",
                           "share": configs[0].get("share", {}) if configs else {},
                           "shards": sorted({tuple(c["shard"]) for c in configs if c.get("shard")})})
    db.set_meta("interpreters", infos)
    db.set_meta("merged_from", [str(d) for d, _ in shards])
    coverage = [m[GUIDANCE_META_KEY] for _, m in metas if m.get(GUIDANCE_META_KEY)]
    if coverage:  # the shards' coverage maps and pools united
        db.set_meta(GUIDANCE_META_KEY, merge_snapshots(coverage))

    summaries = []
    for d, _ in shards:
        path = d / "summary.json"
        summaries.append(json.loads(path.read_text()) if path.exists() else {})
    elapsed_s = max([float(m.get("elapsed_s", 0.0)) for _, m in metas]
                    + [float(s.get("elapsed_s", 0.0)) for s in summaries])  # shards run side by side
    now = datetime.datetime.now(datetime.timezone.utc)
    started = min((datetime.datetime.fromisoformat(m["started"]) for _, m in metas if m.get("started")), default=now)
    finished = max((datetime.datetime.fromisoformat(s["finished"]) for s in summaries if s.get("finished")),
                   default=now)
    minimised = [entry for s in summaries for entry in s.get("minimised", [])]
    summary = build_summary(db, name=name or out_dir.name, started=started, finished=finished, elapsed_s=elapsed_s,
                            minimised=minimised)
    summary["merged_from"] = [str(d) for d, _ in shards]
    write_reports(db, out_dir, summary)
    db.close()
    for _, shard in shards:
        shard.close()
    log.info("merged %d shards into %s: %d programs, %d buckets", len(shards), out_dir, summary["programs"],
             len(summary["buckets"]))
    return summary
