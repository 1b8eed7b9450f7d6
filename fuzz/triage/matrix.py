"""Triage: where does a case show, across interpreters, backends and torch releases?

``tcfuzz triage CASE`` runs the case in every cell of the interpreter x
backend matrix (optionally x torch release, with envs from
``fuzz.campaign.torch_envs``), marks the cells that show it and names the pattern:
"all versions", "3.12+ only", "free-threaded only", "Inductor only",
"aot and later", "3.12+ only, Inductor only", "none". A cell *shows* the case
when its outcome has the cause of the case's filed signature (a corpus case)
or any bug verdict (a plain program). ``--bisect`` binary-searches an ordered
list of torch releases for the first one whose behaviour differs from the
first release's ("introduced in" / "fixed in"), making as few envs as it can.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from harness.backends import ladder_rank
from harness.outcome import Outcome, Verdict
from harness.program import Program
from harness.settings import CompileSettings
from fuzz.campaign.interpreters import Interpreter
from fuzz.triage.signature import PLANTED_GB_TYPES, Kind, Signature, causes, findings

log = logging.getLogger(__name__)

NOT_AVAILABLE = "n/a"
# A cell whose torch refuses torch.compile on its interpreter (harness.support):
# torch's own reason is the cell's ``reason``; never a finding.
UNSUPPORTED = "unsupported"
# Characters of a signature's detail shown in a text-table cell (JSON and
# Markdown carry it whole).
CELL_DETAIL_CHARS = 32


# ---------------------------------------------------------------- pattern names

def interpreter_pattern(where: Sequence[str], interpreters: Sequence[str]) -> str:
    """Name the interpreters ``where`` a case shows, out of ``interpreters`` (ladder order).

    "none"; "all versions"; "free-threaded only"; "3.12+ only" (every
    interpreter from 3.12 on); "3.11 only"; "up to 3.12 only"; a free-threaded
    build goes with its version (3.13t with 3.13), and where it does not the
    name says so: "3.12+ only, not free-threaded", "all but free-threaded",
    "3.11 and free-threaded only"; anything else is the list ("3.11, 3.13 only").
    """
    interpreters = list(interpreters)
    shown = [i for i in interpreters if i in set(where)]
    if not shown:
        return "none"
    if len(shown) == len(interpreters):
        return "all versions" if len(interpreters) > 1 else f"{shown[0]} (the only one run)"
    gil = [i for i in interpreters if not i.endswith("t")]
    threaded = [i for i in interpreters if i.endswith("t")]
    shown_gil = [i for i in gil if i in shown]
    shown_threaded = [i for i in threaded if i in shown]
    listed = ", ".join(shown) + " only"
    if not shown_gil:
        return "free-threaded only"
    if shown == interpreters[interpreters.index(shown[0]):]:
        return f"{shown[0]}+ only"
    expected = [t for t in threaded if t[:-1] in shown_gil]  # free-threaded builds of shown versions
    if shown_gil == gil:
        name = gil[0] if len(gil) == 1 else ""
    elif len(shown_gil) > 1 and shown_gil == gil[gil.index(shown_gil[0]):]:
        name = f"{shown_gil[0]}+"
    elif len(shown_gil) == 1:
        name = shown_gil[0]
    elif shown_gil == gil[:len(shown_gil)]:
        name = f"up to {shown_gil[-1]}"
    else:
        return listed
    if shown_threaded == expected:
        return f"{name} only" if name else "all but free-threaded"
    if not shown_threaded:
        return f"{name} only, not free-threaded" if name else "all but free-threaded"
    if not expected and name:
        return f"{name} and free-threaded only"
    return listed


def backend_pattern(where: Sequence[str], backends: Sequence[str]) -> str:
    """Name the backends ``where`` a case shows, out of ``backends``:
    "none", "every backend", "Inductor only", "aot and later" (aot_eager and
    every backend above it on the ladder), "eager only", else the list."""
    shown = [b for b in backends if b in set(where)]
    if not shown:
        return "none"
    if len(shown) == len(backends):
        return "every backend"
    if shown == ["inductor"]:
        return "Inductor only"
    ranked = sorted(backends, key=lambda b: (ladder_rank(b), b))
    if len(shown) > 1 and "aot_eager" in shown and sorted(shown, key=lambda b: (ladder_rank(b), b)) == \
            ranked[ranked.index("aot_eager"):]:
        return "aot and later"
    return ", ".join(shown) + " only"


def name_pattern(shown: set[tuple[str, str]], interpreters: Sequence[str], backends: Sequence[str]) -> str:
    """One name for the cells ``shown`` ((interpreter, backend) pairs) of the
    interpreters x backends matrix: the interpreter pattern, plus the backend
    pattern when not every backend shows it ("all versions, Inductor only").
    "none" when no cell shows it."""
    if not shown:
        return "none"
    where_i = [i for i in interpreters if any((i, b) in shown for b in backends)]
    where_b = [b for b in backends if any((i, b) in shown for i in interpreters)]
    name = interpreter_pattern(where_i, interpreters)
    backend = backend_pattern(where_b, backends)
    if backend != "every backend" and len(backends) > 1:
        name += f", {backend}"
    return name


# ---------------------------------------------------------------- cells

@dataclasses.dataclass
class Cell:
    """One interpreter x backend (x torch release) run of the case.

    ``verdict`` is a Verdict value or "n/a" (no env for this release);
    ``signature`` the bucket key of what the cell shows ("" for none);
    ``graph_breaks`` counts the breaks Dynamo reported (planted ones too);
    ``shows``: whether it shows what triage looks for; ``torch``: the release
    asked for ("" without a torch axis), ``torch_version`` what the worker ran.
    """

    interpreter: str
    backend: str
    verdict: str
    torch: str = ""
    torch_version: str = ""
    signature: str = ""
    graph_breaks: int = 0
    gb_types: list[str] = dataclasses.field(default_factory=list)
    shows: bool = False
    reason: str = ""

    @property
    def short_signature(self) -> str:
        """``id / detail`` of the cell's signature, or ""."""
        if not self.signature:
            return ""
        sig = Signature.parse(self.signature)
        return f"{sig.id} / {sig.detail}"

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["short_signature"] = self.short_signature
        return data


def cells_of(outcomes: list[Outcome], target: tuple[str, str] | None, *, torch: str = "",
             torch_version: str = "") -> list[Cell]:
    """The cells of one release's outcomes. ``target`` is the (kind, detail)
    cause looked for (None: any bug verdict). A cell's signature is the
    program's finding it shows: the target first, then a bug, then a graph break."""
    found = findings(outcomes)
    cells = []
    for o in outcomes:
        have = causes(o)
        shows = (target in have) if target else o.verdict.is_bug

        def rank(sig: Signature) -> int:
            if target and sig.cause == target:
                return 0
            return 1 if sig.kind not in (Kind.GRAPH_BREAK, Kind.GRAPH_BREAK_REGRESSION) else 2

        mine = sorted((f.signature for f in found if f.signature.cause in have), key=lambda s: (rank(s), s.key))
        cells.append(Cell(
            interpreter=o.interpreter, backend=o.backend, verdict=o.verdict.value, torch=torch,
            torch_version=torch_version, signature=mine[0].key if mine else "", graph_breaks=len(o.graph_breaks),
            gb_types=sorted({g.gb_type or g.reason for g in o.graph_breaks if g.gb_type not in PLANTED_GB_TYPES}),
            shows=shows))
    return cells


def target_of(meta: dict[str, Any]) -> tuple[str, str] | None:
    """The cause a corpus case was filed for (its ``[tool.tcfuzz]`` signature), or None."""
    try:
        return Signature.parse(meta["signature"]).cause if meta.get("signature") else None
    except ValueError:
        log.warning("case signature %r is malformed; looking for any bug instead", meta.get("signature"))
        return None


# ---------------------------------------------------------------- result

@dataclasses.dataclass
class Bisection:
    """Outcome of ``--bisect`` over ``releases`` (the order given): the first
    release whose behaviour differs from the first one's (``first_changed``,
    None when the ends agree), whether the case was ``introduced`` or
    ``fixed`` there, and the releases actually run."""

    releases: list[str]
    evaluated: list[str]
    first_changed: str | None = None
    change: str = ""  # "introduced", "fixed" or ""
    last_before: str | None = None

    def describe(self) -> str:
        if self.first_changed is None:
            ends = f"{self.releases[0]} and {self.releases[-1]}" if len(self.releases) > 1 else self.releases[0]
            return f"no change between {ends} (ran {', '.join(self.evaluated)})"
        return (f"{self.change} in {self.first_changed} (last release without the change: {self.last_before}; "
                f"ran {len(self.evaluated)} of {len(self.releases)} releases: {', '.join(self.evaluated)})")


@dataclasses.dataclass
class TriageResult:
    """Every cell of one triage, plus the pattern per torch release ("" key:
    the interpreters' own torch) and the bisection, if one was asked for."""

    case: str
    interpreters: list[str]
    backends: list[str]
    target: str
    cells: list[Cell]
    releases: list[str] = dataclasses.field(default_factory=list)
    bisection: Bisection | None = None
    # how torch.compile was called in every cell (a case's table's ``compile``)
    settings: CompileSettings = dataclasses.field(default_factory=CompileSettings)

    def cells_for(self, release: str = "") -> list[Cell]:
        return [c for c in self.cells if c.torch == release]

    def pattern(self, release: str = "") -> str:
        """The pattern of one release's cells over the interpreters that had an env."""
        cells = self.cells_for(release)
        interps = [i for i in self.interpreters
                   if any(c.interpreter == i and c.verdict not in (NOT_AVAILABLE, UNSUPPORTED) for c in cells)]
        shown = {(c.interpreter, c.backend) for c in cells if c.shows}
        name = name_pattern(shown, interps, self.backends)
        missing = [i for i in self.interpreters if i not in interps and any(c.interpreter == i for c in cells)]
        refused = [i for i in missing if any(c.interpreter == i and c.verdict == UNSUPPORTED for c in cells)]
        absent = [i for i in missing if i not in refused]
        notes = ([f"n/a: {', '.join(absent)}"] if absent else []) + ([f"unsupported: {', '.join(refused)}"] if refused else [])
        return name + (f" ({'; '.join(notes)})" if notes else "")

    @property
    def run_releases(self) -> list[str]:
        """Torch releases with cells, in the given order ([""] without a torch axis)."""
        return [r for r in (self.releases or [""]) if self.cells_for(r)]

    def patterns(self) -> dict[str, str]:
        return {r: self.pattern(r) for r in self.run_releases}

    def changes(self) -> list[str]:
        """Between consecutive releases that ran (given order): "introduced in
        2.11.0 (after 2.10.0)" / "fixed in ..." where whether any cell shows the case flips."""
        shows = {r: any(c.shows for c in self.cells_for(r)) for r in self.run_releases if r}
        order = list(shows)
        return [f"{'introduced' if shows[b] else 'fixed'} in {b} (after {a})"
                for a, b in zip(order, order[1:]) if shows[a] != shows[b]]

    def summary(self) -> str:
        """One line: the pattern, or per release, plus the bisection."""
        patterns = self.patterns()
        if list(patterns) == [""]:
            text = patterns[""]
        else:
            text = "; ".join(f"torch {r}: {p}" for r, p in patterns.items())
        if self.bisection:
            text += f"; bisect: {self.bisection.describe()}"
        return text

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: case, axes, target, pattern(s), bisection and every cell."""
        return {
            "case": self.case, "interpreters": self.interpreters, "backends": self.backends,
            "torch": self.releases, "target": self.target, "compile": self.settings.to_json(),
            "pattern": self.summary(), "patterns": self.patterns(), "changes": self.changes(),
            "bisect": dataclasses.asdict(self.bisection) if self.bisection else None,
            "cells": [c.to_json() for c in self.cells],
        }


# ---------------------------------------------------------------- running

# Runs one program on some interpreters x backends; returns (outcomes, {interpreter: torch version}).
# (interpreters, backends) -> (outcomes, torch version by interpreter[, torch's
# refusal by interpreter: those ran nothing]); the third item is optional.
MatrixRunner = Callable[[list[Interpreter], list[str]], tuple]


def pool_runner(program: Program, *, device: str, fullgraph: bool, log_dir: Path,
                settings: CompileSettings | None = None) -> MatrixRunner:
    """A MatrixRunner on a fresh WorkerPool per call (one worker per
    interpreter), compiling with ``settings`` (a case's ``compile`` table;
    None: torch.compile's defaults) in every cell."""
    from fuzz.campaign.workers import Task, WorkerPool

    settings = settings or CompileSettings()

    def run(interps: list[Interpreter], backends: list[str]) -> tuple[list[Outcome], dict[str, str]]:
        with WorkerPool(interps, jobs=1, log_dir=log_dir) as pool:
            info = pool.start()
            refused = {name: i.compile_refused for name, i in info.items() if i.compile_refused}
            outcomes = pool.run_all(Task(program, i.name, b, device, fullgraph, settings=settings)
                                    for i in interps if i.name not in refused for b in backends)
        return outcomes, {name: i.torch for name, i in info.items()}, refused

    return run


def triage(case: str, run: MatrixRunner, interps: list[Interpreter], backends: list[str], *,
           target: tuple[str, str] | None = None, releases: Sequence[str] = (), bisect: bool = False,
           env_for: Callable[[Interpreter, str], Any] | None = None,
           settings: CompileSettings | None = None) -> TriageResult:
    """Run the matrix and name its pattern.

    Without ``releases`` the interpreters run in their own envs. With them,
    ``env_for(interpreter, release)`` gives a ``torch_envs.TorchEnv`` (default
    ``torch_envs.ensure_env``); every release is run, or with ``bisect`` only
    those a binary search needs. ``settings``: the compile settings ``run``
    compiles with (``pool_runner``'s), recorded in the result and its
    rendering. Raises HarnessError when a worker cannot start or an env
    cannot be made for a reason other than a missing wheel.
    """
    names = [i.name for i in interps]
    result = TriageResult(case=case, interpreters=names, backends=list(backends),
                          target=f"{target[0]}: {target[1]}" if target else "any bug verdict",
                          cells=[], releases=list(releases), settings=settings or CompileSettings())
    if not releases:
        outcomes, versions, refused = _unpack(run(interps, list(backends)))
        cells = cells_of(outcomes, target) + _unsupported(refused, backends, versions)
        result.cells = _ordered(cells, names, backends)
        for c in result.cells:
            c.torch_version = versions.get(c.interpreter, "")
        return result
    if env_for is None:
        from fuzz.campaign.torch_envs import ensure_env as env_for  # noqa: N811

    def evaluate(release: str) -> list[Cell]:
        if not result.cells_for(release):
            result.cells += _run_release(release, run, interps, backends, target, env_for)
        return result.cells_for(release)

    if bisect:
        result.bisection = _bisect(list(releases), evaluate)
    else:
        for release in releases:
            evaluate(release)
    return result


def _run_release(release: str, run: MatrixRunner, interps: list[Interpreter], backends: Sequence[str],
                 target: tuple[str, str] | None, env_for: Callable[[Interpreter, str], Any]) -> list[Cell]:
    with ThreadPoolExecutor(max_workers=len(interps) or 1) as makers:  # uv downloads in parallel
        envs = list(makers.map(lambda i: env_for(i, release), interps))
    ready = [e.interpreter for e in envs if e.available]
    cells: list[Cell] = []
    if ready:
        log.info("torch %s: running %s", release, ", ".join(i.name for i in ready))
        outcomes, versions, refused = _unpack(run(ready, list(backends)))
        cells = cells_of(outcomes, target, torch=release) + _unsupported(refused, backends, versions, release)
        for c in cells:
            c.torch_version = versions.get(c.interpreter, "")
    for e in envs:
        if not e.available:
            cells += [Cell(e.name, b, NOT_AVAILABLE, torch=release, reason=e.reason) for b in backends]
    return _ordered(cells, [i.name for i in interps], backends)


def _unpack(ran: tuple) -> tuple[list[Outcome], dict[str, str], dict[str, str]]:
    """A MatrixRunner's answer with its optional refusals (empty when absent)."""
    outcomes, versions, *rest = ran
    return outcomes, versions, (rest[0] if rest else {})


def _unsupported(refused: dict[str, str], backends: Sequence[str], versions: dict[str, str],
                 release: str = "") -> list[Cell]:
    """UNSUPPORTED cells of the interpreters whose torch refused torch.compile."""
    return [Cell(name, b, UNSUPPORTED, torch=release, torch_version=versions.get(name, ""), reason=reason)
            for name, reason in refused.items() for b in backends]


def _bisect(releases: list[str], evaluate: Callable[[str], list[Cell]]) -> Bisection:
    """First release whose "shows anywhere" differs from the first release's,
    assuming one change between the ends (binary search, as git bisect).
    Releases where no interpreter has an env are dropped from the search."""

    def shows(release: str) -> bool | None:
        cells = [c for c in evaluate(release) if c.verdict not in (NOT_AVAILABLE, UNSUPPORTED)]
        return any(c.shows for c in cells) if cells else None

    order = list(releases)
    evaluated: list[str] = []

    def at(k: int) -> bool | None:
        if order[k] not in evaluated:
            evaluated.append(order[k])
        return shows(order[k])

    # drop releases without any env from the ends
    while order and at(0) is None:
        order.pop(0)
    while len(order) > 1 and at(len(order) - 1) is None:
        order.pop()
    if len(order) < 2:
        return Bisection(list(releases), evaluated)
    lo, hi = 0, len(order) - 1
    first, last = at(lo), at(hi)
    if first == last:
        return Bisection(list(releases), evaluated)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        value = at(mid)
        if value is None:
            order.pop(mid)
            hi -= 1
            continue
        if value == first:
            lo = mid
        else:
            hi = mid
    return Bisection(list(releases), evaluated, first_changed=order[hi],
                     change="introduced" if last else "fixed", last_before=order[lo])


def _ordered(cells: list[Cell], interps: Sequence[str], backends: Sequence[str]) -> list[Cell]:
    def key(c: Cell) -> tuple[int, int]:
        return (list(interps).index(c.interpreter) if c.interpreter in interps else len(interps),
                list(backends).index(c.backend) if c.backend in backends else len(backends))
    return sorted(cells, key=key)


# ---------------------------------------------------------------- rendering

def cell_text(cell: Cell, *, detail_chars: int | None = CELL_DETAIL_CHARS) -> str:
    """"divergence · 4504074f5450 / exception:None->TypeError · 1 gb" (detail cut to ``detail_chars``)."""
    if cell.verdict in (NOT_AVAILABLE, UNSUPPORTED):
        return cell.verdict
    parts = [cell.verdict + (" *" if cell.shows else "")]
    short = cell.short_signature
    if short:
        if detail_chars is not None and len(short) > 15 + detail_chars:
            short = short[:15 + detail_chars - 1] + "…"
        parts.append(short)
    parts.append(f"{cell.graph_breaks} gb")
    return " · ".join(parts)


def _rows(result: TriageResult, detail_chars: int | None) -> tuple[list[str], list[list[str]]]:
    torch_axis = bool(result.releases)
    header = (["torch"] if torch_axis else []) + ["python", *result.backends]
    rows = []
    for release in result.run_releases:
        cells = {(c.interpreter, c.backend): c for c in result.cells_for(release)}
        for i in result.interpreters:
            row = [release] if torch_axis else []
            row.append(i)
            row += [cell_text(cells[(i, b)], detail_chars=detail_chars) if (i, b) in cells else "-"
                    for b in result.backends]
            rows.append(row)
    return header, rows


def _footer(result: TriageResult) -> list[str]:
    lines = [f"looking for: {result.target} (cells marked *)"]
    if not result.settings.is_default:
        lines.append(f"compile settings: {result.settings.describe()}")
    patterns = result.patterns()
    if list(patterns) == [""]:
        lines.append(f"pattern: {patterns['']}")
    else:
        lines += [f"pattern with torch {r}: {p}" for r, p in patterns.items()]
        lines += [f"change: {c}" for c in result.changes()] if not result.bisection else []
    if result.bisection:
        lines.append(f"bisect: {result.bisection.describe()}")
    reasons = sorted({f"{c.interpreter} with torch {c.torch}: {c.reason}" for c in result.cells
                      if c.verdict == NOT_AVAILABLE})
    lines += [f"n/a: {r}" for r in reasons]
    refusals = sorted({f"{c.interpreter} with torch {c.torch or c.torch_version}: {c.reason}" for c in result.cells
                       if c.verdict == UNSUPPORTED})
    lines += [f"unsupported: {r}" for r in refusals]
    return lines


def render_text(result: TriageResult) -> str:
    """The matrix as a plain-text table plus the pattern line(s) and the signatures seen."""
    header, rows = _rows(result, CELL_DETAIL_CHARS)
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("")
    lines += _footer(result)
    signatures = sorted({c.signature for c in result.cells if c.signature})
    if signatures:
        lines.append("signatures:")
        lines += [f"  {Signature.parse(s).id}  {Signature.parse(s).describe()}" for s in signatures]
    return "\n".join(lines)


def render_markdown(result: TriageResult) -> str:
    """The matrix as a GitHub-flavoured Markdown table (paste into an issue), with
    the pattern line(s); ``|`` in cells is escaped."""
    header, rows = _rows(result, None)

    def md(text: str) -> str:
        return text.replace("|", "\\|")

    lines = [f"**tcfuzz triage** `{md(result.case)}`: **{md(result.summary())}**", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(md(c) for c in row) + " |" for row in rows]
    lines.append("")
    lines += [f"- {md(line)}" for line in _footer(result)]
    return "\n".join(lines) + "\n"


def shown_verdicts(result: TriageResult) -> set[str]:
    """Verdict values of the cells that show the case (for callers that gate on it)."""
    return {c.verdict for c in result.cells if c.shows and c.verdict in {v.value for v in Verdict}}
