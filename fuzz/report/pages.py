"""Campaign reports: ``summary.json``, ``summary.md`` and ``index.html``.

``fuzz.report.summary`` computes a summary dict (its shape is fixed by
docs/design.md, "Files"); this module only renders it. ``summary.md`` is sized for a
GitHub Actions job summary; ``index.html`` is one self-contained page (inline
CSS, no scripts, no external assets) that opens from disk. Unknown keys in the
summary are ignored and missing ones render as empty, so an old or partial
summary (a merge of shards, a crashed campaign) still gives a report.
"""

from __future__ import annotations

import html
import json
import logging
import os
import tempfile
from pathlib import Path

from fuzz.report.coverage_chart import coverage_lines, coverage_section

log = logging.getLogger(__name__)

# Cell colours by verdict kind in the HTML matrices; anything else is grey.
_VERDICT_COLOURS: dict[str, str] = {
    "match": "#cdeccd", "divergence": "#f4a6a6", "compile-error": "#f7c98b",
    "crash": "#d98080", "timeout": "#d8b4e8", "flaky": "#e4e4e4",
    "invalid": "#f0f0f0", "graph-break": "#b9d4f2", "graph-break-regression": "#8fb3e8",
}
# One letter or two per verdict for the compact matrix in the bucket table.
_VERDICT_ABBREVIATIONS: dict[str, str] = {
    "match": "M", "divergence": "D", "compile-error": "CE", "crash": "C", "timeout": "T",
    "flaky": "F", "invalid": "I",
}
# Bar colours per interpreter in the graph-break chart, in ladder order.
_INTERPRETER_COLOURS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1")
# Graph-break reasons drawn in the chart (the most frequent); the table lists all.
CHART_MAX_REASONS = 25
# Buckets up to which each case's source is shown open (more: collapsed).
OPEN_SOURCES_MAX = 10

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1300px;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1em}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3} td.n{text-align:right}
pre{background:#f7f7f7;padding:.6em;overflow-x:auto}
.new{color:#fff;background:#c0392b;border-radius:3px;padding:0 .3em;font-size:80%}
.bar{background:#5b8def;height:.7em;display:inline-block;margin-right:.3em}
.muted{color:#777} td.path{word-break:break-all;min-width:13em}
table.mini{margin:0;font-size:80%} table.mini td,table.mini th{padding:0 .3em;text-align:center}
table.mini td.shows{outline:2px solid #1f4e9c;outline-offset:-2px;font-weight:bold}
svg.chart text{font:12px system-ui,sans-serif;fill:#222} svg.chart .vs{fill:#c0392b}
"""


def write_report(out_dir: Path, summary: dict, cases: dict[str, str],
                 runs: list[dict] | None = None) -> dict[str, Path]:
    """Write ``summary.json``, ``summary.md`` and ``index.html`` into ``out_dir``.

    ``cases`` maps a bucket's ``case`` path to the case file's source text (a
    bucket without an entry is shown without source); ``runs`` is the optional
    list of per-run rows (see ``render_html``). ``out_dir`` is created if
    missing. Each file is written atomically (temp file in ``out_dir``, then
    ``os.replace``), so a reader never sees a half-written report. Returns
    ``{"json": path, "md": path, "html": path}``; raises ``OSError`` on I/O errors.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"json": out_dir / "summary.json", "md": out_dir / "summary.md",
             "html": out_dir / "index.html"}
    _write_atomic(paths["json"], json.dumps(summary, indent=2, sort_keys=True) + "\n")
    _write_atomic(paths["md"], render_markdown(summary))
    _write_atomic(paths["html"], render_html(summary, cases, runs))
    log.info("wrote report for %s into %s", summary.get("campaign", "?"), out_dir)
    return paths


def render_markdown(summary: dict) -> str:
    """Render the summary as GitHub-flavoured Markdown (a job summary).

    Sections: headline (programs, runs, elapsed in seconds, programs/s, new
    buckets), verdict counts, interpreters, programs/s per backend, buckets,
    minimisation statistics when ``summary["minimised"]`` is present, and the
    corpus backlog (filed from it, still waiting) when it is not empty.
    ``|`` and HTML metacharacters in table cells are escaped.
    """
    lines = [f"## tcfuzz campaign {_md(summary.get('campaign', '?'))}", "", _headline(summary), ""]

    def table(header: list[str], rows: list[list[object]]) -> None:
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "---|" * len(header))
        lines.extend("| " + " | ".join(_md(c) for c in row) + " |" for row in rows)
        lines.append("")

    verdicts = summary.get("verdicts") or {}
    if verdicts:
        lines.append("### Verdicts")
        table(["verdict", "runs"], [[k, n] for k, n in verdicts.items()])
    interpreters = summary.get("interpreters") or {}
    if interpreters:
        lines.append("### Interpreters")
        table(["name", "version", "torch", "free-threaded", "GIL"], _interpreter_rows(interpreters))
    unavailable = summary.get("unavailable") or {}
    if unavailable:
        lines.append("### Not run here")
        table(["name", "why"], [[name, why] for name, why in unavailable.items()])
    by_backend = summary.get("programs_per_s_by_backend") or {}
    if by_backend:
        lines.append("### Programs/s by backend")
        table(["backend", "programs/s"], [[b, _num(r)] for b, r in by_backend.items()])
    if summary.get("cells"):
        lines.append(f"### Cells ({summary.get('schedule', 'full')} schedule)")
        table(CELL_HEADER, cell_rows(summary["cells"]))
    if (summary.get("phases") or {}).get("runs"):
        lines.append("### Where the runs' time went")
        table(PHASE_HEADER, phase_rows(summary["phases"]))
    lines += coverage_lines(summary.get("coverage"))
    lines.append("### Buckets")
    buckets = summary.get("buckets") or []
    bugs = [b for b in buckets if b.get("standing") != "limitation"]
    limitations = [b for b in buckets if b.get("standing") == "limitation"]

    def rows(some: list[dict]) -> list[list]:
        return [[_standing_label(b), b.get("kind", ""), b.get("stage", ""), b.get("detail", ""),
                 _join(b.get("interpreters")) + _attribution(b), b.get("count", ""), b.get("upstream") or "",
                 b.get("case") or "(not filed)"] for b in some]

    header = ["", "kind", "stage", "detail", "interpreters", "count", "upstream", "case"]
    if bugs:
        table(header, rows(bugs))
    elif not limitations:
        lines += ["No buckets.", ""]
    if limitations:  # after the bugs, folded (GitHub renders <details> in Markdown)
        lines += [f"<details><summary>{len(limitations)} buckets of documented limitations (graph breaks, errors "
                  f"torch raises by design)</summary>",
                  ""]
        table(header, rows(limitations))
        lines += ["</details>", ""]
    if summary.get("minimised"):
        lines.append("### Minimised")
        table(_MINIMISED_HEADER, _minimised_rows(summary["minimised"]))
    lines += _backlog_lines(summary.get("backlog") or {})
    return "\n".join(lines)


def _backlog_lines(backlog: dict) -> list[str]:
    """summary.md's backlog section (summary.json ``backlog``): how many
    buckets were filed from the corpus backlog in this campaign and how many
    still wait there, each as a table row; nothing when both are none."""
    waiting, filed = backlog.get("buckets") or [], backlog.get("filed") or []
    if not waiting and not filed:
        return []

    def table(header: list[str], rows: list[list[object]]) -> list[str]:
        return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
                *("| " + " | ".join(_md(c) for c in row) + " |" for row in rows), ""]

    lines = ["### Backlog", "",
             f"{len(filed)} buckets filed from the backlog in this campaign; {backlog.get('waiting', len(waiting))} "
             f"wait in `{backlog.get('path') or 'backlog.json'}` (left unminimised, or reduced and "
             f"not yet small enough, for lack of time; the next campaign files them first).", ""]
    if filed:
        lines += ["Filed from the backlog:", ""] + table(
            ["id", "kind", "case"], [[f.get("id", ""), f.get("kind", ""),
                                      f.get("case") or f"(not filed{': ' + f['reason'] if f.get('reason') else ''})"]
                                     for f in filed])
    if waiting:
        lines += ["Waiting:", ""] + table(
            ["id", "kind", "backend", "first seen", "campaigns", "program"],
            [[w.get("id", ""), w.get("kind", ""), w.get("backend", ""), w.get("first_seen", ""),
              w.get("campaigns", ""), "reduced" if w.get("reduced") else "as found"] for w in waiting])
    return lines


def _standing_label(bucket: dict) -> str:
    """NEW, known, fixed since or limitation (fuzz.triage.known.Standing); a
    summary without standings: NEW for a new bucket."""
    standing = bucket.get("standing")
    if standing is None:
        return "NEW" if bucket.get("new") else ""
    return {"new": "NEW", "known-open": "known", "fixed-since": "fixed since", "limitation": "limitation"}[standing]


def render_html(summary: dict, cases: dict[str, str], runs: list[dict] | None = None) -> str:
    """Render the summary as one self-contained HTML page.

    Besides the Markdown's sections it shows, per bucket, the interpreter x
    backend verdict matrix (when the bucket has ``matrix``) and the case
    source; a "graph breaks by Python version" table with inline bars from
    ``summary["graph_breaks"]`` (``{gb_type: {interpreter: programs}}``); and,
    when ``runs`` is given, run counts per interpreter x backend x verdict
    (rows need ``interpreter``, ``backend`` and ``verdict`` keys; others are
    skipped). All text is HTML-escaped.
    """
    name = _h(summary.get("campaign", "?"))
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
             f"<title>tcfuzz {name}</title><style>{_CSS}</style></head><body>",
             f"<h1>tcfuzz campaign {name}</h1><p>{_h(_headline(summary, bold=''))}</p>"]
    meta = [f"{k}: {summary[k]}" for k in ("started", "finished", "device", "seed") if k in summary]
    if meta:
        parts.append(f"<p class='muted'>{_h(' · '.join(meta))}</p>")
    verdicts = summary.get("verdicts") or {}
    parts.append("<h2>Verdicts</h2>" + _html_table(
        ["verdict", "runs"], [[_cell(k, k), _cell(n, num=True)] for k, n in verdicts.items()]))
    parts.append("<h2>Interpreters</h2>" + _html_table(
        ["name", "version", "torch", "free-threaded", "GIL"],
        [[_cell(c) for c in row] for row in _interpreter_rows(summary.get("interpreters") or {})]))
    by_backend = summary.get("programs_per_s_by_backend") or {}
    if by_backend:
        parts.append("<h2>Programs/s by backend</h2>" + _html_table(
            ["backend", "programs/s"], [[_cell(b), _cell(_num(r), num=True)] for b, r in by_backend.items()]))
    if summary.get("cells"):
        parts.append(f"<h2>Cells ({_h(summary.get('schedule', 'full'))} schedule)</h2>" + _html_table(
            CELL_HEADER, [[_cell(c, num=i >= 2) for i, c in enumerate(row)] for row in cell_rows(summary["cells"])]))
    if (summary.get("phases") or {}).get("runs"):
        parts.append("<h2>Where the runs' time went</h2>" + _html_table(
            PHASE_HEADER, [[_cell(c, num=i >= 1) for i, c in enumerate(row)]
                           for row in phase_rows(summary["phases"])]))
    parts.append(coverage_section(summary.get("coverage")))
    parts.append(_buckets_section(summary))
    parts.append(_graph_breaks_section(summary))
    parts.append(_bucket_details(summary, cases))
    if runs:
        parts.append(_runs_section(runs))
    if summary.get("minimised"):
        parts.append("<h2>Minimised</h2>" + _html_table(
            _MINIMISED_HEADER, [[_cell(c) for c in row] for row in _minimised_rows(summary["minimised"])]))
    return "\n".join(parts) + "\n</body></html>\n"


def _buckets_section(summary: dict) -> str:
    """The bucket table, each row with its interpreter x backend mini-matrix."""
    buckets = summary.get("buckets") or []
    if not buckets:
        return "<h2>Buckets</h2><p>No buckets.</p>"
    backends = list(summary.get("backends") or [])
    order = list(summary.get("interpreters") or {})
    rows = []
    for b in buckets:
        link = f"<a href='#b-{_h(b.get('id', ''))}'>{_h(b.get('id', ''))}</a>"
        label = _standing_label(b)
        new = f"<span class='new'>{label}</span>" if label == "NEW" else _h(label)
        shows = {(i, k) for i in b.get("interpreters") or [] for k in b.get("backends") or []}
        mini = _mini_matrix(_in_order(b["matrix"], order), backends, shows) if b.get("matrix") else ""
        rows.append([f"<td>{new}</td>", f"<td>{link}</td>", _cell(b.get("kind", ""), b.get("kind")),
                     _cell(b.get("stage", "")), _cell(b.get("detail", "")),
                     _cell(_join(b.get("interpreters"))), _cell(_join(b.get("backends"))),
                     f"<td class='matrix'>{mini}</td>",
                     _cell(b.get("count", ""), num=True),
                     f"<td class='path'>{_h(b.get('case') or '(not filed)')}</td>"])
    legend = ", ".join(f"{a} {v}" for v, a in _VERDICT_ABBREVIATIONS.items()) + \
        "; outlined: the cells where the bucket's signature shows (its interpreters on its backend)"
    out = ["<h2>Buckets</h2>", _html_table(
        ["", "id", "kind", "stage", "detail", "interpreters", "backends", "interpreter x backend", "count", "case"],
        rows), f"<p class='muted'>matrix: {_h(legend)}</p>"]
    return "\n".join(out)


def _bucket_details(summary: dict, cases: dict[str, str]) -> str:
    """Per bucket: its signature, full interpreter x backend matrix and case source."""
    buckets = summary.get("buckets") or []
    if not buckets:
        return ""
    backends = list(summary.get("backends") or [])
    order = list(summary.get("interpreters") or {})
    out = ["<h2>Cases</h2>"]
    details = "<details open>" if len(buckets) <= OPEN_SOURCES_MAX else "<details>"
    for b in buckets:
        out.append(f"<h3 id='b-{_h(b.get('id', ''))}'>{_h(b.get('kind', ''))} {_h(b.get('id', ''))}</h3>"
                   f"<p><code>{_h(b.get('signature', ''))}</code></p>")
        if b.get("matrix"):
            out.append(_matrix_table(_in_order(b["matrix"], order), backends))
        source = cases.get(b.get("case", ""))
        if source is not None:
            out.append(f"{details}<summary>{_h(b.get('case', ''))}</summary><pre>{_h(source)}</pre></details>")
        else:
            out.append(f"<p class='muted'>no source for {_h(b.get('case') or 'this bucket')}</p>")
    return "\n".join(out)


def _matrix_table(matrix: dict, backends: list[str]) -> str:
    """Interpreter x backend table, each cell the verdict, coloured by it."""
    columns = backends + sorted({k for row in matrix.values() for k in row} - set(backends))
    columns = [c for c in columns if any(c in row for row in matrix.values())]
    rows = [[_cell(interp)] + [_cell(row.get(c, ""), row.get(c)) for c in columns]
            for interp, row in matrix.items()]
    return _html_table(["interpreter"] + columns, rows)


def _in_order(matrix: dict, interpreters: list[str]) -> dict:
    """``matrix``'s rows with ``interpreters`` (the summary's, ladder order) first, then any others."""
    rank = {name: k for k, name in enumerate(interpreters)}
    return dict(sorted(matrix.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))


def _mini_matrix(matrix: dict, backends: list[str], shows: set[tuple[str, str]] = frozenset()) -> str:
    """A compact interpreter x backend table for the bucket table: one
    abbreviated, coloured verdict per cell (full verdict in the cell's title);
    the (interpreter, backend) cells in ``shows`` are outlined."""
    columns = backends + sorted({k for row in matrix.values() for k in row} - set(backends))
    columns = [c for c in columns if any(c in row for row in matrix.values())]
    head = "<th></th>" + "".join(f"<th title='{_h(c)}'>{_h(_short_backend(c))}</th>" for c in columns)
    body = []
    for interp, row in matrix.items():
        cells = []
        for c in columns:
            verdict = row.get(c, "")
            colour = _VERDICT_COLOURS.get(verdict)
            style = f" style='background:{colour}'" if colour else ""
            mark = " class='shows'" if (interp, c) in shows else ""
            cells.append(f"<td{style}{mark} title='{_h(interp)} {_h(c)}: {_h(verdict)}'>"
                         f"{_h(_VERDICT_ABBREVIATIONS.get(verdict, verdict))}</td>")
        body.append(f"<tr><th>{_h(interp)}</th>{''.join(cells)}</tr>")
    return f"<table class='mini'><tr>{head}</tr>{''.join(body)}</table>"


def _short_backend(backend: str) -> str:
    return {"eager": "eager", "aot_eager": "aot", "inductor": "ind"}.get(backend, backend)


def _graph_break_chart(breaks: dict, interps: list[str]) -> str:
    """An inline SVG grouped bar chart: per graph-break reason (the
    CHART_MAX_REASONS most frequent), one bar per interpreter, its length the
    number of programs breaking there. Reasons that show on some interpreters
    and not others are labelled in red ("version-specific")."""
    rows = sorted(breaks.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))[:CHART_MAX_REASONS]
    peak = max((n for _, row in rows for n in row.values()), default=0) or 1
    label_w, bar_w, bar_h, gap = 330, 520, 11, 10
    legend_h = 24
    group_h = bar_h * len(interps) + gap
    height = legend_h + group_h * len(rows) + 4
    width = label_w + bar_w + 60
    parts = [f"<svg class='chart' id='gb-chart' xmlns='http://www.w3.org/2000/svg' width='{width}' "
             f"height='{height}' viewBox='0 0 {width} {height}' role='img' "
             f"aria-label='graph-break reasons by Python version'>"]
    for k, interp in enumerate(interps):
        x = label_w + k * 90
        colour = _INTERPRETER_COLOURS[k % len(_INTERPRETER_COLOURS)]
        parts.append(f"<rect x='{x}' y='4' width='12' height='12' fill='{colour}'/>"
                     f"<text x='{x + 16}' y='14'>{_h(interp)}</text>")
    for r, (gb_type, row) in enumerate(rows):
        top = legend_h + r * group_h
        specific = any(row.get(i, 0) for i in interps) and not all(row.get(i, 0) for i in interps)
        label = gb_type if len(gb_type) <= 48 else gb_type[:47] + "…"
        mark = " class='vs'" if specific else ""
        parts.append(f"<text{mark} x='{label_w - 8}' y='{top + group_h / 2}' text-anchor='end'>"
                     f"<title>{_h(gb_type)}{' (version-specific)' if specific else ''}</title>{_h(label)}</text>")
        for k, interp in enumerate(interps):
            n = row.get(interp, 0)
            y = top + k * bar_h
            colour = _INTERPRETER_COLOURS[k % len(_INTERPRETER_COLOURS)]
            w = bar_w * n / peak
            parts.append(f"<rect x='{label_w}' y='{y}' width='{w:.1f}' height='{bar_h - 2}' fill='{colour}'>"
                         f"<title>{_h(interp)}: {n} programs</title></rect>"
                         f"<text x='{label_w + w + 4:.1f}' y='{y + bar_h - 2}'>{n}</text>")
    parts.append("</svg>")
    return "".join(parts)


def _graph_breaks_section(summary: dict) -> str:
    breaks = summary.get("graph_breaks") or {}
    head = "<h2>Graph breaks by Python version</h2>"
    if not breaks:
        return head + "<p>No graph breaks.</p>"
    interps = list(summary.get("interpreters") or {})
    interps += sorted({i for row in breaks.values() for i in row} - set(interps))
    peak = max((n for row in breaks.values() for n in row.values()), default=0) or 1
    rows = []
    for gb_type, row in sorted(breaks.items(), key=lambda kv: -sum(kv[1].values())):
        cells = [_cell(gb_type)]
        for i in interps:
            n = row.get(i, 0)
            cells.append(f"<td><span class='bar' style='width:{100 * n / peak:.0f}px'></span>{n}</td>")
        rows.append(cells)
    return head + "<p class='muted'>programs breaking for each reason, per interpreter; reasons in red break " \
        "on some Python versions and not others</p>" + _graph_break_chart(breaks, interps) + \
        _html_table(["gb_type"] + interps, rows)


def _runs_section(runs: list[dict]) -> str:
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for run in runs:
        if not all(k in run for k in ("interpreter", "backend", "verdict")):
            continue
        cell = counts.setdefault((str(run["interpreter"]), str(run["backend"])), {})
        cell[str(run["verdict"])] = cell.get(str(run["verdict"]), 0) + 1
    rows = [[_cell(i), _cell(b), _cell(", ".join(f"{v}: {n}" for v, n in sorted(c.items())))]
            for (i, b), c in sorted(counts.items())]
    return "<h2>Runs by interpreter and backend</h2>" + _html_table(["interpreter", "backend", "verdicts"], rows)


def _headline(summary: dict, bold: str = "**") -> str:
    """One line: programs, runs, elapsed time, programs/s, new buckets; ``bold`` wraps the numbers."""
    def b(value: object) -> str:
        return f"{bold}{value}{bold}"
    return (f"{b(summary.get('programs', 0))} programs, {b(summary.get('runs', 0))} runs in "
            f"{b(_duration(summary.get('elapsed_s')))} ({_num(summary.get('programs_per_s'))} programs/s); "
            f"{b(summary.get('new_buckets', 0))} new buckets")


_MINIMISED_HEADER = ["id", "lines before", "lines after", "checks", "elapsed (s)"]


def _minimised_rows(minimised: list[dict]) -> list[list[object]]:
    return [[m.get("id", ""), m.get("lines_before", ""), m.get("lines_after", ""), m.get("checks", ""),
             _num(m.get("elapsed_s"))] for m in minimised]


def _interpreter_rows(interpreters: dict) -> list[list[object]]:
    return [[name, info.get("version", ""), info.get("torch", ""),
             _yes_no(info.get("free_threaded")), _yes_no(info.get("gil_enabled"))]
            for name, info in interpreters.items()]


CELL_HEADER = ["interpreter", "backend", "runs", "CPU-s", "share", "confirm runs", "buckets", "new buckets",
               "new bugs"]
PHASE_HEADER = ["phase", "wall-s", "CPU-s", "share of run CPU"]


def cell_rows(cells: list[dict]) -> list[list[object]]:
    """Rows of the per-cell table (summary.json ``cells``)."""
    return [[c["interpreter"], c["backend"], c["runs"], _num(c["cpu_s"]), f"{100 * c['share']:.1f}%",
             c["confirm_runs"], c["buckets"], c["new_buckets"], c["new_bugs"]] for c in cells]


def phase_rows(phases: dict) -> list[list[object]]:
    """Rows of the phase table (summary.json ``phases``): each phase of the
    runs, then the runs' CPU in all and filing's wall seconds."""
    total = float(phases.get("run_cpu_s") or 0.0)
    rows: list[list[object]] = [
        [name, _num(t["wall_s"]), _num(t["cpu_s"]), f"{100 * t['cpu_s'] / total:.1f}%" if total else ""]
        for name, t in sorted(phases["runs"].items(), key=lambda kv: -kv[1]["cpu_s"])]
    rows.append(["all runs", "", _num(total), "100.0%" if total else ""])
    rows.append(["filing (minimise + confirm)", _num(phases.get("filing_s", 0.0)), "", ""])
    return rows


def _html_table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{_h(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell(value: object, verdict: object = None, num: bool = False) -> str:
    """A ``<td>`` with escaped text, background from ``verdict`` if it is a known kind."""
    colour = _VERDICT_COLOURS.get(verdict) if isinstance(verdict, str) else None
    attrs = (f" style='background:{colour}'" if colour else "") + (" class='n'" if num else "")
    return f"<td{attrs}>{_h(value)}</td>"


def _h(value: object) -> str:
    return html.escape(str(value), quote=True)


def _md(value: object) -> str:
    text = html.escape(str(value), quote=False).replace("|", "\\|")
    return " ".join(text.splitlines())


def _join(values: object) -> str:
    return ", ".join(map(str, values)) if isinstance(values, (list, tuple, set)) else str(values or "")


def _yes_no(value: object) -> str:
    return {True: "yes", False: "no"}.get(value, "?") if isinstance(value, bool) else "?"


def _num(value: object) -> str:
    return f"{value:.3g}" if isinstance(value, (int, float)) else "?"


def _duration(seconds: object) -> str:
    """``812.4`` -> ``"13m 32s"``; ``seconds`` is elapsed time in seconds."""
    if not isinstance(seconds, (int, float)):
        return "?"
    if seconds < 60:
        return f"{seconds:.1f}s"
    hours, rest = divmod(int(round(seconds)), 3600)
    return (f"{hours}h " if hours else "") + f"{rest // 60}m {rest % 60}s"


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` via a temp file in the same directory and ``os.replace``."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; a report is meant to be read by others
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _attribution(bucket: dict) -> str:
    """" (free-threaded only: 3.13 with torch 2.12.0 does not show it)" for a
    bucket decided by fuzz.campaign.attribution, else ""."""
    a = bucket.get("attribution")
    if not a:
        return ""
    shows = "shows it" if a.get("shows") else "does not show it"
    return f" ({a.get('pattern')}: {a.get('interpreter')} with torch {a.get('release')} {shows})"
