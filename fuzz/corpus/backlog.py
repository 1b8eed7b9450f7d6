"""Buckets a campaign found but left unminimised: ``corpus/backlog.json``.

A campaign files only the new buckets that its time lets it minimise
properly (fuzz.campaign.loop); the others are written here with the program
that showed them, so they are not lost with the campaign's own database, and
the next campaign that sees one of them minimises it before anything else.
A bucket leaves the backlog when a campaign files it (or finds it known).

Format (JSON, keys sorted)::

    {"version": 1,
     "buckets": {"<signature key, before minimisation>": {
         "backend": "inductor",
         "program": {Program.to_json(): "source", "seed", "generator", "features", ...},
         "first_seen": "2026-12-01T15:00:00+00:00", "last_seen": "...", "campaigns": 2}}}
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from harness.program import Program, ProgramError
from fuzz.errors import CorpusError
from fuzz.triage.signature import Finding, Signature

log = logging.getLogger(__name__)

BACKLOG_NAME = "backlog.json"
FORMAT_VERSION = 1


@dataclasses.dataclass(frozen=True)
class BacklogEntry:
    """One unfiled bucket: its finding (signature before minimisation, backend),
    the program that showed it, when campaigns saw it (ISO 8601 UTC) and how
    many campaigns left it unfiled."""

    finding: Finding
    program: Program
    first_seen: str
    last_seen: str
    campaigns: int = 1

    def to_json(self) -> dict:
        return {"backend": self.finding.backend, "program": self.program.to_json(),
                "first_seen": self.first_seen, "last_seen": self.last_seen, "campaigns": self.campaigns}

    @staticmethod
    def from_json(key: str, data: dict) -> BacklogEntry:
        return BacklogEntry(Finding(Signature.parse(key), data["backend"]), Program.from_json(data["program"]),
                            data.get("first_seen", ""), data.get("last_seen", ""), int(data.get("campaigns", 1)))


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
    no file at all when there are none. Raises CorpusError if it cannot be
    written."""
    path = backlog_path(corpus_dir)
    try:
        if not entries:
            path.unlink(missing_ok=True)
            return
        text = json.dumps({"version": FORMAT_VERSION,
                           "buckets": {k: entries[k].to_json() for k in sorted(entries)}}, indent=1, sort_keys=True)
        fd, tmp = tempfile.mkstemp(prefix=".backlog-", dir=path.parent)
        with os.fdopen(fd, "w") as f:
            f.write(text + "\n")
        os.replace(tmp, path)
    except OSError as e:
        raise CorpusError(f"cannot write the backlog {path}: {e}; check that the corpus folder is writable") from e


def update(corpus_dir: Path, *, unfiled: Iterable[tuple[Finding, Program]], done: Iterable[str], now: str) -> None:
    """Add the buckets ``unfiled`` (a bucket already there keeps its program
    and first sighting, and counts one more campaign) and remove the keys
    ``done`` (filed, or found known); ``now``: the campaign's time, ISO 8601."""
    entries = load(corpus_dir)
    for key in done:
        entries.pop(key, None)
    for finding, program in unfiled:
        key = finding.signature.key
        old = entries.get(key)
        entries[key] = dataclasses.replace(old, last_seen=now, campaigns=old.campaigns + 1) if old else \
            BacklogEntry(finding, program, now, now)
    save(corpus_dir, entries)
