"""The coverage section of ``index.html``: compiler statements reached
against programs and against CPU seconds, one line per interpreter and one
for all of them, with a mark where each new bucket's first program ran.

This is the dashboard view of HypoFuzz and lafleur (coverage over time, finds
on it), drawn from ``summary.json["coverage"]`` (fuzz.campaign.guidance and
fuzz.report.summary.coverage_summary) as inline SVG, so the page stays one
self-contained file.
"""

from __future__ import annotations

import html
from typing import Any

__all__ = ["coverage_section", "coverage_lines"]

# Line colours: "all" first, then one per interpreter in report order.
_COLOURS = ("#222222", "#5b8def", "#e67e22", "#27ae60", "#8e44ad", "#c0392b", "#16a085", "#7f8c8d", "#d35400")
_WIDTH, _HEIGHT, _LEFT, _BOTTOM, _TOP = 620, 260, 64, 34, 26


def coverage_section(coverage: dict[str, Any] | None) -> str:
    """The "Compiler coverage" section (empty for a campaign without coverage)."""
    if not coverage or not coverage.get("curve"):
        return ""
    interpreters = coverage.get("interpreters") or {}
    packages = coverage.get("packages") or {}
    head = (f"<h2>Compiler coverage</h2><p>{coverage.get('statements', 0)} statements of torch's compiler "
            f"reached ({_h(', '.join(f'{p} {n}' for p, n in packages.items()))}); "
            f"{coverage.get('pool', 0)} programs in the pool. "
            f"<span class='muted'>Red marks: the programs where new buckets first showed.</span></p>")
    return head + "".join(_chart(coverage, axis, list(interpreters)) for axis in ("programs", "cpu_s"))


def coverage_lines(coverage: dict[str, Any] | None) -> list[str]:
    """The Markdown lines of the same section: the end figures and a few curve points."""
    if not coverage or not coverage.get("curve"):
        return []
    curve = coverage["curve"]
    picks = sorted({0, len(curve) // 4, len(curve) // 2, 3 * len(curve) // 4, len(curve) - 1})
    per = ", ".join(f"{i} {n}" for i, n in (coverage.get("interpreters") or {}).items())
    lines = ["### Compiler coverage", "",
             f"{coverage.get('statements', 0)} statements reached ({per}); {coverage.get('pool', 0)} programs "
             f"in the pool; {len(coverage.get('found') or [])} new buckets.", "",
             "| programs | CPU s | statements |", "|---|---|---|"]
    lines += [f"| {curve[i]['programs']} | {curve[i]['cpu_s']:.0f} | {curve[i]['statements']} |" for i in picks]
    return lines + [""]


def _chart(coverage: dict[str, Any], axis: str, interpreters: list[str]) -> str:
    """One SVG line chart of statements against ``axis`` ("programs" or "cpu_s")."""
    curve = coverage["curve"]
    series = {"all": [(p[axis], p["statements"]) for p in curve]}
    for name in interpreters:
        series[name] = [(p[axis], p.get("interpreters", {}).get(name, 0)) for p in curve if "interpreters" in p]
    x_max = max((x for points in series.values() for x, _ in points), default=0) or 1
    y_max = max((y for points in series.values() for _, y in points), default=0) or 1
    plot_w, plot_h = _WIDTH - _LEFT - 16, _HEIGHT - _BOTTOM - _TOP

    def at(x: float, y: float) -> str:
        return f"{_LEFT + plot_w * x / x_max:.1f},{_TOP + plot_h * (1 - y / y_max):.1f}"

    label = "programs" if axis == "programs" else "CPU seconds of runs"
    parts = [f"<svg class='chart' id='coverage-{axis}' xmlns='http://www.w3.org/2000/svg' width='{_WIDTH}' "
             f"height='{_HEIGHT}' viewBox='0 0 {_WIDTH} {_HEIGHT}' role='img' "
             f"aria-label='compiler statements reached against {label}'>",
             f"<line x1='{_LEFT}' y1='{_TOP + plot_h}' x2='{_LEFT + plot_w}' y2='{_TOP + plot_h}' stroke='#999'/>",
             f"<line x1='{_LEFT}' y1='{_TOP}' x2='{_LEFT}' y2='{_TOP + plot_h}' stroke='#999'/>",
             f"<text x='{_LEFT - 4}' y='{_TOP + 4}' text-anchor='end'>{y_max}</text>",
             f"<text x='{_LEFT - 4}' y='{_TOP + plot_h}' text-anchor='end'>0</text>",
             f"<text x='{_LEFT + plot_w}' y='{_HEIGHT - 6}' text-anchor='end'>{_number(x_max)} {label}</text>"]
    for k, (name, points) in enumerate(series.items()):
        if not points:
            continue
        colour = _COLOURS[k % len(_COLOURS)]
        parts.append(f"<polyline fill='none' stroke='{colour}' stroke-width='{2 if name == 'all' else 1.2}' "
                     f"points='{' '.join(at(x, y) for x, y in points)}'><title>{_h(name)}</title></polyline>")
        parts.append(f"<rect x='{_LEFT + 8 + 78 * k}' y='6' width='10' height='10' fill='{colour}'/>"
                     f"<text x='{_LEFT + 22 + 78 * k}' y='15'>{_h(name)}</text>")
    for found in coverage.get("found") or []:
        x = found["programs"] if axis == "programs" else _cpu_at(curve, found["programs"])
        px = _LEFT + plot_w * min(x, x_max) / x_max
        parts.append(f"<line class='find' x1='{px:.1f}' y1='{_TOP + plot_h}' x2='{px:.1f}' y2='{_TOP + plot_h - 10}' "
                     f"stroke='#c0392b' stroke-width='2'><title>{_h(found['kind'])} {_h(found['id'])}</title></line>")
    parts.append("</svg>")
    return "".join(parts)


def _cpu_at(curve: list[dict[str, Any]], programs: int) -> float:
    """CPU seconds when ``programs`` programs had run, interpolated between curve points."""
    before = curve[0]
    for point in curve:
        if point["programs"] >= programs:
            span = point["programs"] - before["programs"]
            if not span:
                return float(point["cpu_s"])
            share = (programs - before["programs"]) / span
            return before["cpu_s"] + share * (point["cpu_s"] - before["cpu_s"])
        before = point
    return float(curve[-1]["cpu_s"])


def _number(value: float) -> str:
    return f"{value:.0f}" if isinstance(value, float) else str(value)


def _h(value: object) -> str:
    return html.escape(str(value), quote=True)
