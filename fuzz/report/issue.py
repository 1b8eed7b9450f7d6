"""A PyTorch issue body for a corpus case (``tcfuzz repro CASE --markdown``).

The block follows PyTorch's ``pt2-bug-report`` template
(``.github/ISSUE_TEMPLATE/pt2-bug-report.yml``): the bug described (its
signature), the standalone reproducer with its runner (``python CASE`` exits 1
while the bug is there), the command, the fuzzer guidance the template asks a
fuzzer's report to state (a float64 reference as in
``torch._dynamo.utils.same``'s ``fp64_ref``, default tolerances,
``torch._inductor.config.fallback_random`` and the RNG reseeded before each
call) and the ``topic: fuzzer`` label it then suggests, the ablation across
backend x ``dynamic`` x ``fullgraph``, observed against expected, the versions
with whether it reproduces on the newest torch, the ``TORCH_TRACE``/tlparse
output and ``collect_env`` per interpreter (``IssueExtras``).
"""

from __future__ import annotations

import dataclasses
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


# What the template asks a fuzzer's report to state, and what tcfuzz does.
FUZZER_GUIDANCE = (
    "Fuzzer guidance (as the pt2 bug template asks): float results are compared against a float64 run of the "
    "program (`torch._dynamo.utils.same` with `fp64_ref`) at default tolerances; no indices of max/min are "
    "compared; the RNG is reseeded (`torch.manual_seed(0)`) before each call and Inductor runs with "
    "`torch._inductor.config.fallback_random = True`.")
SUGGESTED_LABEL = "topic: fuzzer"


@dataclasses.dataclass(frozen=True)
class IssueExtras:
    """What ``repro --markdown`` gathers besides the replay: ``ablation``
    (fuzz.triage.ablation.Cell list), ``collect_env`` (interpreter name ->
    its output), ``newest_torch`` (the newest release it was run on, "" when
    unknown) and whether it ``reproduces_on_newest``, ``trace_dir`` (the raw
    TORCH_TRACE folder), ``tlparse_dir`` (tlparse's output, "" with
    ``trace_note`` saying why), ``minifier_repro`` (the ``repro.py`` of
    torch's after-AOT minifier, fuzz.triage.minifier; "" with
    ``minifier_note`` saying why, or that it was not run)."""

    ablation: Sequence[Any] = ()
    collect_env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    newest_torch: str = ""
    reproduces_on_newest: bool | None = None
    trace_dir: str = ""
    tlparse_dir: str = ""
    trace_note: str = ""
    minifier_repro: str = ""
    minifier_note: str = ""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(case: str, text: str, meta: Mapping[str, Any], outcomes: Sequence[Outcome],
                    infos: Mapping[str, InterpreterInfo], extras: IssueExtras | None = None) -> str:
    """The Markdown block for ``case`` (path as given), ``text`` (its source),
    ``meta`` (its ``[tool.tcfuzz]`` table), the ``outcomes`` of replaying it,
    the ``infos`` of the interpreters they ran on (name -> InterpreterInfo)
    and the ``extras`` gathered for the template (sections it lacks say so)."""
    extras = extras or IssueExtras()
    title = meta.get("signature", case)
    runnable = "[tool.tcfuzz]" in text or "__main__" in text
    lines = [f"### torch.compile: {meta.get('kind', 'finding')} ({title})", "",
             f"Suggested label: `{SUGGESTED_LABEL}`", "", "#### 🐛 Describe the bug", "",
             f"`{title}`: {meta.get('kind', 'a finding')} found by tcfuzz, a differential fuzzer for "
             "`torch.compile`.", "", FUZZER_GUIDANCE, "",
             "Standalone reproducer (needs only torch; its runner compares eager and compiled and exits 1 while "
             "the bug is there):", "", "```python", text.rstrip("\n"), "```", "", "Command:", "", "```",
             f"python {case}" if runnable else f"tcfuzz repro {case}  # a plain program: tcfuzz runs it; "
             "`python FILE` has no runner", "```", "", "#### Ablation", ""]
    if extras.ablation:
        names = sorted({n for c in extras.ablation for n in c.verdicts})
        lines += ["| backend | dynamic | fullgraph | " + " | ".join(names) + " |",
                  "|---|---|---|" + "---|" * len(names)]
        for c in extras.ablation:
            lines.append(f"| {c.backend} | {c.dynamic} | {c.fullgraph} | "
                         + " | ".join(_cell(c.verdicts.get(n, "-")) for n in names) + " |")
    else:
        lines.append("(not run)")
    lines += ["", "#### Versions", "", "| interpreter | Python | torch | free-threaded |", "|---|---|---|---|"]
    for name, info in infos.items():
        threaded = ("yes, GIL " + ("on" if info.gil_enabled else "off")) if info.free_threaded else "no"
        lines.append(f"| {name} | {info.version} | {info.torch} | {threaded} |")
    if extras.newest_torch:
        where = {True: "reproduces", False: "does not reproduce", None: "not run"}[extras.reproduces_on_newest]
        lines += ["", f"{where.capitalize()} on torch {extras.newest_torch} (the newest release run)."]
    if extras.minifier_repro or extras.minifier_note:
        lines += ["", "#### Minified repro (torch's after-AOT minifier)", ""]
        if extras.minifier_repro:
            lines += [f"{extras.minifier_note}, `TORCHDYNAMO_REPRO_AFTER=aot`; its `repro.py`:", "",
                      "<details><summary>repro.py</summary>", "", "```python", extras.minifier_repro.rstrip("\n"),
                      "```", "", "</details>"]
        else:
            lines.append(f"(none: {extras.minifier_note})")
    lines += ["", "#### TORCH_TRACE and tlparse", ""]
    if extras.tlparse_dir:
        lines.append(f"tlparse output (attach the folder, zipped): `{extras.tlparse_dir}`; raw trace: "
                     f"`{extras.trace_dir}`")
    elif extras.trace_dir:
        lines.append(f"Raw trace folder (attach its .log file): `{extras.trace_dir}`"
                     + (f"; {extras.trace_note}" if extras.trace_note else ""))
    else:
        lines.append("(not run)")
    lines += ["", "#### collect_env", ""]
    for name, output in extras.collect_env.items():
        lines += [f"<details><summary>{name}</summary>", "", "```", output.rstrip("\n"), "```", "", "</details>", ""]
    if not extras.collect_env:
        lines.append("(not run)")
    lines += ["", "#### Error logs: observed vs expected", "",
              "| interpreter | backend | verdict | observed (compiled) | expected (eager) |", "|---|---|---|---|---|"]
    for o in outcomes:
        observed, expected = _observed(o)
        cells = [o.interpreter, o.backend, o.verdict.value, observed, expected]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"
