"""Known upstream: which buckets PyTorch already has an issue for, which were
fixed since, which graph breaks and compiled errors are documented limitations, and which
old case ids were merged into which bucket (``corpus/known-issues.toml``).

A nightly list is read top down, so buckets are ordered by ``Standing``: new
buckets first, then known and open, then fixed since (a fixed bucket seen
again is a regression to look at, but its cause is known), and graph breaks
of documented limitations last, folded.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import logging
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from fuzz.triage.gb_registry import fundamental_gb_types

log = logging.getLogger(__name__)

# The file, relative to the corpus folder.
KNOWN_ISSUES_FILE = "known-issues.toml"


class Standing(str, enum.Enum):
    """Where a bucket stands against what is known upstream, in report order."""

    NEW = "new"
    KNOWN_OPEN = "known-open"
    FIXED_SINCE = "fixed-since"
    LIMITATION = "limitation"

    def __str__(self) -> str:
        return self.value

    def describe(self) -> str:
        return {
            "new": "not in the corpus before this campaign",
            "known-open": "in the corpus (with its upstream issue where one is recorded), still open",
            "fixed-since": "recorded as fixed upstream (or its case's status is fixed): seen again",
            "limitation": "a documented limitation: a graph break, or an error torch raises by design",
        }[self.value]

    @property
    def rank(self) -> int:
        return list(Standing).index(self)


@dataclasses.dataclass(frozen=True)
class KnownIssue:
    """One bucket's upstream issue: its URL, state ("open" or "fixed"), the
    release that fixed it ("" when open) and a title."""

    issue: str
    state: str = "open"
    fixed_in: str = ""
    title: str = ""


@dataclasses.dataclass(frozen=True)
class KnownIssues:
    """``cases``: bucket id -> KnownIssue; ``merged``: old case id -> (the
    bucket id it became, the reason); ``limitations``: gb_types of documented
    Dynamo limitations; ``limitation_messages``: text of errors torch raises
    by design in compiled code (a divergence or compile error whose detail
    has one is a limitation, whatever the minimised program it was keyed by);
    ``fundamental``: gb_types torch's graph-break registry marks fundamental
    (fuzz.triage.gb_registry, ``with_registry``), a limitation as a graph
    break but not as a graph-break regression, whose interpreters differ."""

    cases: Mapping[str, KnownIssue] = dataclasses.field(default_factory=dict)
    merged: Mapping[str, tuple[str, str]] = dataclasses.field(default_factory=dict)
    limitations: frozenset[str] = frozenset()
    limitation_messages: frozenset[str] = frozenset()
    fundamental: frozenset[str] = frozenset()

    def with_registry(self, executables: Iterable[str]) -> KnownIssues:
        """These known issues, with the gb_types the graph-break registries
        of the worker envs of ``executables`` (their pythons) mark fundamental."""
        return dataclasses.replace(self, fundamental=self.fundamental | fundamental_gb_types(executables))

    def resolve(self, bucket_id: str) -> str:
        """The bucket id an old case id was merged into (itself otherwise)."""
        seen = set()
        while bucket_id in self.merged and bucket_id not in seen:
            seen.add(bucket_id)
            bucket_id = self.merged[bucket_id][0]
        return bucket_id

    def issue_of(self, bucket_id: str) -> KnownIssue | None:
        return self.cases.get(self.resolve(bucket_id))


def load(corpus_dir: Path) -> KnownIssues:
    """``corpus_dir/known-issues.toml`` (an empty KnownIssues when there is
    none). Raises ValueError naming the file for one that is not valid TOML
    or misses an entry's ``issue`` / a merge's ``into``."""
    path = Path(corpus_dir) / KNOWN_ISSUES_FILE
    if not path.exists():
        return KnownIssues()
    try:
        data = tomllib.loads(path.read_text())
        cases = {k: KnownIssue(str(v["issue"]), str(v.get("state", "open")), str(v.get("fixed-in", "")),
                               str(v.get("title", ""))) for k, v in data.get("cases", {}).items()}
        merged = {k: (str(v["into"]), str(v.get("reason", ""))) for k, v in data.get("merged", {}).items()}
    except (tomllib.TOMLDecodeError, KeyError, TypeError) as e:
        raise ValueError(f"{path}: {type(e).__name__}: {e}; fix the file (format in its header)") from None
    limitations = frozenset(str(g) for g in data.get("limitations", {}).get("gb_types", []))
    messages = frozenset(str(m) for m in data.get("limitations", {}).get("messages", []))
    return KnownIssues(cases, merged, limitations, messages)


def record_rekey(corpus_dir: Path, old_id: str, new_id: str, reason: str) -> None:
    """Record in ``corpus_dir/known-issues.toml`` that case ``old_id`` is
    now ``new_id`` (a re-minimised divergence, re-keyed by its root cause):
    its ``[cases."<old>"]`` entry is renamed, ``[merged]`` gets
    ``"<old>" = { into = "<new>", reason = ... }`` so that campaigns and
    replays that still see the old id know it, and the ids merged into
    ``<old>`` before are merged into ``<new>`` (every ``into`` names a case
    of the corpus). The file's other text (its comments) is kept. Raises
    ValueError if the result is not valid TOML."""
    path = Path(corpus_dir) / KNOWN_ISSUES_FILE
    text = path.read_text() if path.exists() else ""
    text = text.replace(f'[cases."{old_id}"]', f'[cases."{new_id}"]')
    text = text.replace(f'into = "{old_id}"', f'into = "{new_id}"')
    entry = f'"{old_id}" = {{ into = "{new_id}", reason = {json.dumps(reason)} }}\n'
    lines = text.splitlines(keepends=True)
    if "[merged]\n" in lines:
        at = lines.index("[merged]\n") + 1
        lines.insert(at, entry)
        text = "".join(lines)
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + "[merged]\n" + entry
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: re-keying {old_id} -> {new_id} would not be valid TOML: {e}") from None
    path.write_text(text)


def standing(bucket: Mapping[str, Any], known: KnownIssues, case_status: str = "") -> Standing:
    """The Standing of a summary bucket (``id``, ``kind``, ``detail``,
    ``message``: its program's error message, ``new``); ``case_status``: its corpus case's ``status`` ("fixed" counts
    as fixed since). A bucket whose id ``merged`` maps to another case is
    that case's: never new."""
    if bucket.get("kind") in ("graph-break", "graph-break-regression") and \
            str(bucket.get("detail", "")).split(" [absent on ", 1)[0] in known.limitations:
        return Standing.LIMITATION
    if bucket.get("kind") == "graph-break" and str(bucket.get("detail", "")) in known.fundamental:
        return Standing.LIMITATION
    said = f"{bucket.get('detail', '')}\n{bucket.get('message', '')}"
    if bucket.get("kind") in ("divergence", "compile-error") and any(
            message in said for message in known.limitation_messages):
        return Standing.LIMITATION
    bucket_id = str(bucket.get("id", ""))
    issue = known.issue_of(bucket_id)
    if (issue is not None and issue.state == "fixed") or case_status == "fixed":
        return Standing.FIXED_SINCE
    if bucket.get("new") and issue is None and known.resolve(bucket_id) == bucket_id:
        return Standing.NEW  # an old id merged into a corpus case is that case's bucket: known
    return Standing.KNOWN_OPEN


def ordered(buckets: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Summary buckets (with their ``standing``) in report order: by Standing,
    then by count, most first; the order is otherwise kept."""
    return sorted(buckets, key=lambda b: (Standing(b.get("standing", Standing.KNOWN_OPEN.value)).rank,
                                          -int(b.get("count", 0) or 0)))
