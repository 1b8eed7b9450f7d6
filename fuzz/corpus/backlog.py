"""Buckets a campaign found but left unminimised: ``corpus/backlog.json``.

A campaign files only the new buckets that its time lets it minimise
properly (fuzz.campaign.loop); the others are written here with the program
that showed them, so they are not lost with the campaign's own database, and
the next campaign that sees one of them minimises it before anything else.
A bucket leaves the backlog when a campaign files it (or finds it known).
A campaign with filing time left after its own new buckets also files the
waiting buckets it did not see, where it runs their backend on every
interpreter of their signature (``unseen``). A bucket whose minimisation ran
out of time above the campaign's size limit (fuzz.campaign.loop
CASE_MAX_LINES) comes back here with its reduced program (``reduced``), which
the next campaign minimises on from.

Several campaigns may share one corpus (shards run at the same time): an
update is a read-merge-write under ``fcntl.flock`` on ``.backlog.lock`` beside
the file (harness.casefile.locked), merging by bucket id with what the file
holds at that moment and removing only the buckets the caller filed, then
replacing the file in one rename of a temp file (``.backlog.*.tmp``); so no
campaign's entries are lost to another's write, and a reader never sees a
partial file. Both helper files are git-ignored (corpus/.gitignore).

Format (JSON, keys sorted)::

    {"version": 1,
     "buckets": {"<signature key, before minimisation>": {
         "backend": "inductor",
         "program": {Program.to_json(): "source", "seed", "generator", "features", ...},
         "first_seen": "2026-12-01T15:00:00+00:00", "last_seen": "...", "campaigns": 2,
         "reduced": true}}}

``reduced`` (absent when false): the program is a minimisation's partial
result, not the program the fuzzer generated.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness import casefile
from harness.program import Program, ProgramError
from fuzz.errors import CorpusError
from fuzz.triage.signature import Finding, Signature

log = logging.getLogger(__name__)

BACKLOG_NAME = "backlog.json"
FORMAT_VERSION = 1


@dataclasses.dataclass(frozen=True)
class BacklogEntry:
    """One unfiled bucket: its finding (signature before minimisation, backend),
    the program that showed it, when campaigns saw it (ISO 8601 UTC), how
    many campaigns left it unfiled, and whether ``program`` is a partial
    minimisation's result (``reduced``)."""

    finding: Finding
    program: Program
    first_seen: str
    last_seen: str
    campaigns: int = 1
    reduced: bool = False

    def to_json(self) -> dict:
        data = {"backend": self.finding.backend, "program": self.program.to_json(),
                "first_seen": self.first_seen, "last_seen": self.last_seen, "campaigns": self.campaigns}
        return {**data, "reduced": True} if self.reduced else data

    @staticmethod
    def from_json(key: str, data: dict) -> BacklogEntry:
        return BacklogEntry(Finding(Signature.parse(key), data["backend"]), Program.from_json(data["program"]),
                            data.get("first_seen", ""), data.get("last_seen", ""), int(data.get("campaigns", 1)),
                            bool(data.get("reduced", False)))


def backlog_path(corpus_dir: Path) -> Path:
    return Path(corpus_dir) / BACKLOG_NAME


def load(corpus_dir: Path) -> dict[str, BacklogEntry]:
    """The backlog of ``corpus_dir`` by signature key ({} when there is none).
    An unreadable file is logged and read as empty: a backlog only orders work."""
    path = backlog_path(corpus_dir)
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
        return {key: BacklogEntry.from_json(key, entry) for key, entry in data.get("buckets", {}).items()}
    except (ValueError, KeyError, TypeError, ProgramError) as e:
        log.warning("%s: unreadable backlog (%s: %s); treated as empty", path, type(e).__name__, e)
        return {}


def save(corpus_dir: Path, entries: dict[str, BacklogEntry]) -> None:
    """Write ``entries`` as the backlog (atomically: a temp file renamed);
    no file at all when there are none. The caller holds the lock (``update``
    does). Raises CorpusError if it cannot be written."""
    path = backlog_path(corpus_dir)
    try:
        if not entries:
            path.unlink(missing_ok=True)
            return
        text = json.dumps({"version": FORMAT_VERSION,
                           "buckets": {k: entries[k].to_json() for k in sorted(entries)}}, indent=1, sort_keys=True)
        casefile.atomic_write(path, text + "\n")
    except OSError as e:
        raise CorpusError(f"cannot write the backlog {path}: {e}; check that the corpus folder is writable") from e


def update(corpus_dir: Path, *, unfiled: Iterable[tuple[Finding, Program]], done: Iterable[str], now: str,
           reduced: Iterable[tuple[Finding, Program]] = ()) -> None:
    """Add the buckets ``unfiled`` (a bucket already there keeps its program
    and first sighting, and counts one more campaign) and ``reduced`` (the
    same, but their program, a partial minimisation's result, replaces the
    one there), and remove the buckets ``done`` (signature keys this
    campaign filed, tried, or found known);
    ``now``: the campaign's time, ISO 8601. A locked read-merge-write (module
    docstring): buckets other campaigns wrote since this one read the backlog
    stay, a bucket is matched by its id (``Signature.id``). Raises CorpusError
    if the backlog cannot be written."""
    path = backlog_path(corpus_dir)
    done_ids = {Signature.parse(key).id for key in done}
    try:
        with casefile.locked(path):
            entries = load(corpus_dir)  # as it is now, under the lock: other campaigns' writes included
            entries = {k: e for k, e in entries.items() if e.finding.signature.id not in done_ids}
            by_id = {e.finding.signature.id: k for k, e in entries.items()}
            for (finding, program), is_reduced in [*((fp, False) for fp in unfiled),
                                                   *((fp, True) for fp in reduced)]:
                key = by_id.setdefault(finding.signature.id, finding.signature.key)
                old = entries.get(key)
                entry = dataclasses.replace(old, last_seen=now, campaigns=old.campaigns + 1) if old \
                    else BacklogEntry(finding, program, now, now)
                entries[key] = dataclasses.replace(entry, program=program, reduced=True) if is_reduced else entry
            save(corpus_dir, entries)
    except OSError as e:  # the lock file (save raises CorpusError itself)
        raise CorpusError(f"cannot lock the backlog {path}: {e}; check that the corpus folder is writable") from e


def unseen(entries: dict[str, BacklogEntry], *, seen: Iterable[str], interpreters: Iterable[str],
           backends: Iterable[str], known_ids: Iterable[str] = ()) -> list[tuple[Finding, BacklogEntry]]:
    """The waiting buckets a campaign can file though it did not see them:
    not among ``seen`` (signature ids), not known (``known_ids``), their
    backend among ``backends`` and every interpreter of their signature among
    ``interpreters`` (names); oldest first."""
    skip, names, kinds = {*seen, *known_ids}, set(interpreters), set(backends)
    fit = [e for e in entries.values() if e.finding.signature.id not in skip and e.finding.backend in kinds
           and set(e.finding.signature.interpreters) <= names]
    return [(e.finding, e) for e in sorted(fit, key=lambda e: (e.first_seen, e.finding.signature.id))]


def describe(entries: dict[str, BacklogEntry]) -> list[dict[str, Any]]:
    """The backlog's buckets as reports list them, oldest first:
    ``{"id", "kind", "signature", "backend", "first_seen", "last_seen",
    "campaigns", "reduced"}``."""
    rows = [{"id": e.finding.signature.id, "kind": e.finding.signature.kind.value, "signature": key,
             "backend": e.finding.backend, "first_seen": e.first_seen, "last_seen": e.last_seen,
             "campaigns": e.campaigns, "reduced": e.reduced} for key, e in entries.items()]
    return sorted(rows, key=lambda r: (r["first_seen"], r["id"]))
