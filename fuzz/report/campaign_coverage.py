"""A campaign's own compiler coverage, per file (``tcfuzz coverage --campaign DIR``).

The campaign database keeps the coverage map its workers reported
(fuzz.campaign.guidance, meta ``coverage``): per (interpreter, backend) cell,
the lines of ``torch/_dynamo``, ``torch/_functorch``, ``torch/_inductor`` and
``torch/fx`` that its runs executed (harness.reach: ``sys.monitoring`` LINE
events, or ``sys.settrace`` on 3.11). ``file_table`` gives each file's lines
reached per interpreter; ``executable_lines`` counts a file's lines that
can fire a LINE event (the line numbers of its code objects' ``co_lines()``,
compiled by the interpreter the campaign ran), so a share is
reached / executable on the same measure the workers used.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from fuzz.campaign.database import CampaignDB
from fuzz.campaign.guidance import META_KEY
from fuzz.campaign.reach import CoverageMap
from fuzz.errors import UsageError

__all__ = ["KEY_FILES", "executable_lines", "file_table", "load_map", "render"]

# The files of Dynamo's model of Python whose coverage the coverage-guided
# issue measures (variables/user_defined.py, functions.py, builtin.py,
# guards.py), shown first.
KEY_FILES = ("torch/_dynamo/variables/user_defined.py", "torch/_dynamo/variables/functions.py",
             "torch/_dynamo/variables/builtin.py", "torch/_dynamo/guards.py")

# Run by the campaign's interpreter: each path's lines with a LINE event, as JSON.
_COUNT_SCRIPT = r"""
import importlib.util, json, os, sys
root = os.path.dirname(os.path.dirname(importlib.util.find_spec("torch").origin))
def lines(code, out):
    out.update(line for _, _, line in code.co_lines() if line is not None and line > 0)
    for const in code.co_consts:
        if hasattr(const, "co_lines"):
            lines(const, out)
    return out
counts = {}
for path in json.loads(sys.stdin.read()):
    try:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            counts[path] = len(lines(compile(f.read(), path, "exec", dont_inherit=True), set()))
    except (OSError, SyntaxError):
        pass
print(json.dumps(counts))
"""


def load_map(out_dir: Path) -> tuple[CoverageMap, dict[str, Any]]:
    """The coverage map of the campaign in ``out_dir`` and its stored config.
    Raises UsageError when the folder holds no campaign or its campaign
    recorded no coverage (started with --no-coverage, or before coverage)."""
    path = Path(out_dir) / "campaign.sqlite"
    if not path.exists():
        raise UsageError(f"{out_dir} holds no campaign (no campaign.sqlite): pass a tcfuzz run --out folder")
    db = CampaignDB(path)
    try:
        meta = db.meta()
    finally:
        db.close()
    snapshot = meta.get(META_KEY)
    if not snapshot:
        raise UsageError(f"{out_dir}'s campaign recorded no coverage: run it without --no-coverage")
    return CoverageMap.from_json(snapshot.get("map", {})), meta.get("config", {})


def file_table(coverage: CoverageMap) -> dict[str, dict[str, int]]:
    """``{path: {"all": lines reached in any cell, "<interpreter>": lines, ...}}``, by path."""
    table: dict[str, dict[str, int]] = {path: {"all": n} for path, n in coverage.by_file().items()}
    for interpreter, files in sorted(coverage.interpreters.items()):
        for path, lines in files.items():
            table[path][interpreter] = len(lines)
    return table


def executable_lines(python: Path, paths: list[str], timeout_s: float = 120.0) -> dict[str, int]:
    """Lines of each of ``paths`` (under the site-packages folder, e.g.
    "torch/_dynamo/guards.py") that can fire a LINE event, compiled by
    ``python`` (whose env has torch; torch is located, not imported). Files
    it cannot read are left out; an interpreter that fails or runs past
    ``timeout_s`` seconds gives {} (the table then has no shares)."""
    try:
        done = subprocess.run([str(python), "-c", _COUNT_SCRIPT], input=json.dumps(paths), capture_output=True,
                              text=True, timeout=timeout_s, check=True)
        return {str(k): int(v) for k, v in json.loads(done.stdout).items()}
    except (OSError, subprocess.SubprocessError, ValueError):
        return {}


def render(table: dict[str, dict[str, int]], totals: dict[str, int], interpreters: list[str],
           top: int = 30) -> str:
    """A text table: per package, then ``KEY_FILES``, then the ``top`` files
    with most lines reached; "reached (share)" per interpreter where
    ``totals`` knows the file's executable lines."""

    def cell(path: str, column: str) -> str:
        n = table.get(path, {}).get(column, 0)
        return f"{n} ({n / totals[path]:.2f})" if totals.get(path) else str(n)

    packages: dict[str, dict[str, int]] = {}
    for path, row in table.items():
        package = packages.setdefault("/".join(path.split("/")[:2]), {})
        for column, n in row.items():
            package[column] = package.get(column, 0) + n
    columns = ["all", *interpreters]
    lines = [f"{'package':<52}" + "".join(f"{c:>16}" for c in columns)]
    lines += [f"{p:<52}" + "".join(f"{row.get(c, 0):>16}" for c in columns) for p, row in sorted(packages.items())]
    rest = sorted((p for p in table if p not in KEY_FILES), key=lambda p: -table[p]["all"])[:top]
    lines += ["", f"{'file (lines reached, share of its executable lines)':<52}" + "".join(f"{c:>16}" for c in columns)]
    lines += [f"{p.removeprefix('torch/'):<52}" + "".join(f"{cell(p, c):>16}" for c in columns)
              for p in [*KEY_FILES, *rest]]
    return "\n".join(lines)


def describe(out_dir: Path, *, as_json: bool) -> str:
    """``tcfuzz coverage --campaign DIR``: the lines the campaign in
    ``out_dir`` reached per file (``render``), with each file's share where
    its first interpreter's env still exists; or the same as JSON. Raises
    what ``load_map`` raises for a folder without a campaign."""
    reached, config = load_map(out_dir)
    table = file_table(reached)
    interps = [i for i in config.get("interpreters", []) if i in reached.interpreters] or sorted(reached.interpreters)
    pythons = [Path(p) for name in interps if (p := config.get("pythons", {}).get(name)) and Path(p).exists()]
    totals = executable_lines(pythons[0], sorted(table)) if pythons else {}
    if as_json:
        return json.dumps({"statements": reached.statements, "files": table, "executable": totals})
    return render(table, totals, interps)
