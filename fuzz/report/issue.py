"""A PyTorch issue body for a corpus case (``tcfuzz repro CASE --markdown``).

The block holds what the PyTorch issue template asks for: a standalone
reproducer (the case itself, runnable with ``python CASE``), the versions
(Python and torch per interpreter it ran on), what was observed (compiled)
against what was expected (eager: torch.compile must not change results), and
the command that reproduces it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.outcome import CallResult, InterpreterInfo, Outcome

# Characters of one value, exception message or stdout kept in the block.
VALUE_CHARS = 300


def _result(calls: Sequence[CallResult]) -> str:
    if not calls:
        return "(not run)"
    parts = []
    for call in calls:
        text = (f"raised {call.exc_type}: {call.exc_message}" if call.exc_type else call.value) or "(nothing)"
        if call.stdout:
            text += f" (printed {call.stdout.strip()!r})"
        parts.append(text[:VALUE_CHARS])
    return "; ".join(parts)


def _observed(o: Outcome) -> tuple[str, str]:
    """(observed under torch.compile, expected = eager) for one outcome."""
    if o.verdict.value in ("compile-error", "crash", "timeout"):
        what = f"{o.verdict.value}: {o.error_type}"
        if o.error_message:
            what += f": {o.error_message.strip().splitlines()[0][:VALUE_CHARS]}"
        if o.torch_frame:
            what += f" (at {o.torch_frame})"
        return what, _result(o.eager)
    if o.graph_breaks and not o.verdict.is_bug:
        reasons = sorted({gb.gb_type or gb.reason for gb in o.graph_breaks})
        return "graph break: " + "; ".join(r[:VALUE_CHARS] for r in reasons), "no graph break"
    return _result(o.compiled), _result(o.eager)


def render_markdown(case: str, text: str, meta: Mapping[str, Any], outcomes: Sequence[Outcome],
                    infos: Mapping[str, InterpreterInfo]) -> str:
    """The Markdown block for ``case`` (path as given), ``text`` (its source),
    ``meta`` (its ``[tool.tcfuzz]`` table), the ``outcomes`` of replaying it and
    the ``infos`` of the interpreters they ran on (name -> InterpreterInfo)."""
    title = meta.get("signature", case)
    lines = [f"### torch.compile: {meta.get('kind', 'finding')} ({title})", "",
             "Found by tcfuzz, a differential fuzzer for `torch.compile`. Standalone reproducer "
             "(needs only torch; exits 1 while the bug is there):", "", "```python", text.rstrip("\n"), "```", "",
             "Command:", "", "```", f"python {case}", "```", "",
             "#### Versions", "", "| interpreter | Python | torch | free-threaded |", "|---|---|---|---|"]
    for name, info in infos.items():
        threaded = ("yes, GIL " + ("on" if info.gil_enabled else "off")) if info.free_threaded else "no"
        lines.append(f"| {name} | {info.version} | {info.torch} | {threaded} |")
    lines += ["", "#### Observed vs expected", "",
              "| interpreter | backend | verdict | observed (compiled) | expected (eager) |", "|---|---|---|---|---|"]
    for o in outcomes:
        observed, expected = _observed(o)
        cells = [o.interpreter, o.backend, o.verdict.value, observed, expected]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines) + "\n"
