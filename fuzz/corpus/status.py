"""Where each corpus case stands against the torch releases it was replayed on.

Every replay (``pytest corpus --tcfuzz-record`` in a worker env, run for the
whole corpus by ``scripts/refresh-corpus.sh``) is recorded in the case's
``replay`` table as "<python>/<torch>" -> "reproduces" or "does not
reproduce" (harness.casefile). From that table a case is:

- ``live``: it reproduces on the newest torch any of its replays ran;
- ``fixed``: it reproduced on an older release (a replay, or the release it
  was filed on) and no longer does on the newest; ``fixed_since`` is the
  first release replayed after ``last_seen``, the newest it reproduced on
  (the fix landed in between);
- ``3.13t-only``: it reproduces only on 3.13t, whose newest torch is 2.12.0
  (2.13 and later ship no cp313t wheel), and not where the newest torch ran;
- ``unreplayed``: nothing was replayed on the newest torch.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness import casefile
from fuzz.corpus.store import list_cases


class Standing(enum.Enum):
    """A case's standing on the newest torch its replays ran."""

    LIVE = "live"
    FIXED = "fixed"
    FREE_THREADED_OLD_TORCH = "3.13t-only"
    UNREPLAYED = "unreplayed"


def release_key(release: str) -> tuple[int, ...]:
    """"2.15.0+cu132" -> (2, 15, 0): releases in numeric order (a local part ignored)."""
    return tuple(int(part) for part in re.findall(r"\d+", release.split("+")[0])[:3])


@dataclasses.dataclass
class CaseStanding:
    """One case: its id, kind, path, standing, the newest release replayed,
    the release it is fixed since (or ""), and every replay as
    {python: {torch: reproduces?}}."""

    case_id: str
    kind: str
    path: str
    standing: Standing
    newest: str
    fixed_since: str
    replays: dict[str, dict[str, bool]]
    # the newest release it reproduced on, when fixed ("" if unknown)
    last_seen: str = ""

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["standing"] = self.standing.value
        return data


def standing_of(path: Path, table: dict[str, Any]) -> CaseStanding:
    """The standing of the case at ``path`` from its ``[tool.tcfuzz]`` ``table``."""
    replays: dict[str, dict[str, bool]] = {}
    for key, result in (table.get("replay") or {}).items():
        python, _, release = key.partition("/")
        replays.setdefault(python, {})[release.split("+")[0]] = result == casefile.REPRODUCES
    releases = sorted({r for per in replays.values() for r in per}, key=release_key)
    newest = releases[-1] if releases else ""
    on_newest = [per[newest] for per in replays.values() if newest in per]
    fixed_since = last_seen = ""
    if not on_newest:
        standing = Standing.UNREPLAYED
    elif any(on_newest):
        standing = Standing.LIVE
    elif any(ok for python, per in replays.items() if python.startswith("3.13t") for ok in per.values()) and not any(
            ok for python, per in replays.items() if not python.startswith("3.13t") for ok in per.values()):
        standing = Standing.FREE_THREADED_OLD_TORCH
    else:
        standing = Standing.FIXED
        # after the newest release it reproduced on (a replay, or the release
        # it was filed on), the oldest release replayed: fixed by then
        shown = [r for per in replays.values() for r, ok in per.items() if ok]
        if table.get("torch"):
            shown.append(str(table["torch"]).split("+")[0])
        last = max(shown, key=release_key) if shown else ""
        later = [r for r in releases if not last or release_key(r) > release_key(last)]
        fixed_since = later[0] if later else newest
        last_seen = last
    return CaseStanding(path.stem, str(table.get("kind", path.parent.name)), str(path), standing, newest,
                        fixed_since, replays, last_seen)


def corpus_standings(root: Path) -> list[CaseStanding]:
    """The standing of every case under ``root``; a case whose table cannot be
    read is skipped with nothing lost (``tcfuzz repro`` names its problem)."""
    out = []
    for path in list_cases(root):
        try:
            table = casefile.read_table(path.read_text())
        except (OSError, ValueError):
            continue
        out.append(standing_of(path, table))
    return out


def render_table(standings: Iterable[CaseStanding], *, markdown: bool = False) -> str:
    """Per case: kind, id, standing (with "since X"), and each interpreter's
    replays as "2.12.0 R, 2.15.0 -" (R: reproduces, -: does not)."""
    standings = list(standings)
    pythons = sorted({p for s in standings for p in s.replays}, key=lambda p: (release_key(p), p))
    header = ["kind", "case", "standing", *pythons]
    rows = []
    for s in sorted(standings, key=lambda s: (s.standing.value, s.kind, s.case_id)):
        label = s.standing.value + (f" by {s.fixed_since}" if s.fixed_since else "")
        if s.last_seen:
            label += f" (reproduces on {s.last_seen})"
        if s.standing is Standing.LIVE:
            label += f" on {s.newest}"
        cells = [", ".join(f"{r} {'R' if ok else '-'}" for r, ok in sorted(s.replays.get(p, {}).items(),
                                                                        key=lambda kv: release_key(kv[0])))
                 or "" for p in pythons]
        rows.append([s.kind, s.case_id, label, *cells])
    counts = {st: sum(1 for s in standings if s.standing is st) for st in Standing}
    footer = ", ".join(f"{n} {st.value}" for st, n in counts.items() if n)
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines + ["", f"{len(standings)} cases: {footer}"])
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    return "\n".join(lines + [f"{len(standings)} cases: {footer}"])
