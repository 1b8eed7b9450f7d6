"""tcfuzz diff on two synthetic campaigns with a planted difference (no workers)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness.outcome import GraphBreak, Outcome, Verdict
from harness.program import Program
from fuzz import cli
from fuzz.triage import diff
from fuzz.campaign.database import CampaignDB
from fuzz.triage.signature import findings

ALL = ("3.11", "3.12", "3.13", "3.13t")
GB = "Attempt to trace generator"


def program(n: int) -> Program:
    return Program(source=f"import torch\ndef f(x):\n    return x + {n}\ndef inputs():\n    return (torch.ones(1),)\n",
                   seed=n)


def make_campaign(folder: Path, torch: str, outcomes_of) -> Path:
    """A campaign.sqlite with three programs; ``outcomes_of(n, program_id)`` gives each program's outcomes."""
    db = CampaignDB(folder / "campaign.sqlite")
    db.set_meta("interpreters", {i: {"version": i, "torch": torch, "free_threaded": i.endswith("t"),
                                     "gil_enabled": not i.endswith("t")} for i in ALL})
    db.set_meta("config", {"name": folder.name, "backends": ["eager", "inductor"]})
    for n in range(3):
        p = program(n)
        db.add_program(n, p)
        outs = outcomes_of(n, p.program_id)
        db.finish_program(n, outs)
        for f in findings(outs):
            db.count_finding(f, p.program_id, new=True)
    db.close()
    return folder


def run(pid: str, interp: str, backend: str = "eager", verdict=Verdict.MATCH, breaks=(), **kw) -> Outcome:
    return Outcome(program_id=pid, interpreter=interp, backend=backend, verdict=verdict,
                   graph_breaks=[GraphBreak(gb, "x") for gb in breaks], **kw)


def old_outcomes(n: int, pid: str) -> list[Outcome]:
    if n == 0:  # diverges on 3.12+: its interpreter set changes in NEW
        return [run(pid, i, verdict=Verdict.DIVERGENCE if i != "3.11" else Verdict.MATCH, aspect="value") for i in ALL]
    if n == 1:  # a compile error everywhere, fixed in NEW
        return [run(pid, i, "inductor", Verdict.COMPILE_ERROR, error_type="LoweringException",
                    torch_frame="torch/_inductor/lowering.py:make_fallback") for i in ALL]
    return [run(pid, i, breaks=[GB]) for i in ALL]  # breaks everywhere


def new_outcomes(n: int, pid: str) -> list[Outcome]:
    if n == 0:
        return [run(pid, i, verdict=Verdict.DIVERGENCE if i in ("3.13", "3.13t") else Verdict.MATCH, aspect="value")
                for i in ALL]
    if n == 1:  # fixed; a new crash instead on 3.13t
        return [run(pid, i, "inductor", Verdict.CRASH if i == "3.13t" else Verdict.MATCH, error_type="SIGSEGV")
                for i in ALL]
    return [run(pid, i, breaks=[GB] if i in ("3.13", "3.13t") else []) for i in ALL]  # no longer on 3.11/3.12


def planted(tmp_path: Path) -> tuple[Path, Path]:
    return (make_campaign(tmp_path / "old", "2.11.0", old_outcomes),
            make_campaign(tmp_path / "new", "2.12.0", new_outcomes))


def test_diff_lists_new_fixed_changed_and_version_specific_breaks(tmp_path):
    old, new = planted(tmp_path)
    d = diff.diff(diff.load(old), diff.load(new))
    assert [(b["kind"], b["detail"], b["interpreters"]) for b in d.new_buckets] == [
        ("crash", "SIGSEGV", ["3.13t"]),
        ("graph-break-regression", f"{GB} [absent on 3.11, 3.12]", ["3.13", "3.13t"])]
    assert [(b["kind"], b["interpreters"]) for b in d.fixed_buckets] == [
        ("compile-error", list(ALL)), ("graph-break", list(ALL))]
    [changed] = d.interpreters_changed
    assert (changed["detail"], changed["lost"], changed["gained"]) == ("value", ["3.12"], [])
    assert d.common_programs == 3
    [gb] = d.version_breaks_new
    assert (gb["gb_type"], gb["present_on"], gb["absent_on"], gb["before"]) == (GB, ["3.13", "3.13t"],
                                                                              ["3.11", "3.12"], None)
    assert d.version_breaks_gone == [] and d.changed


def test_diff_renders_text_json_and_markdown(tmp_path):
    old, new = planted(tmp_path)
    d = diff.diff(diff.load(old), diff.load(new))
    text = diff.render_text(d)
    assert text.startswith("diff old (2.11.0) -> new (2.12.0): 2 new, 2 fixed, 1 changed interpreter set")
    assert "divergence at dynamo: value: 3.12, 3.13, 3.13t -> 3.13, 3.13t" in text
    assert f"{GB} on 3.13, 3.13t, not on 3.11, 3.12" in text
    data = json.loads(json.dumps(d.to_json()))
    assert data["old"]["torch"]["3.12"] == "2.11.0" and data["changed"] is True
    md = diff.render_markdown(d)
    assert md.startswith("## tcfuzz diff: old → new")
    assert "### New buckets" in md and "- crash at inductor: SIGSEGV (on 3.13t; 1 programs)" in md


def test_same_campaign_twice_is_no_change(tmp_path, capsys):
    old, _ = planted(tmp_path)
    d = diff.diff(diff.load(old), diff.load(old))
    assert not d.changed and "(none)" in diff.render_text(d)
    assert cli.main(["diff", str(old), str(old)]) == cli.EXIT_OK


def test_cli_diff_exit_code_and_summary_fallback(tmp_path, capsys):
    old, new = planted(tmp_path)
    assert cli.main(["diff", str(old), str(new), "--json"]) == cli.EXIT_FOUND
    assert json.loads(capsys.readouterr().out)["new_buckets"]
    # a folder with only summary.json compares buckets and says breaks were not compared
    summary_only = tmp_path / "summary-only"
    summary_only.mkdir()
    (summary_only / "summary.json").write_text(json.dumps({"campaign": "s", "buckets": [
        {"kind": "crash", "stage": "inductor", "detail": "SIGSEGV", "interpreters": ["3.13t"], "count": 1}]}))
    assert cli.main(["diff", str(summary_only), str(new)]) == cli.EXIT_FOUND
    out = capsys.readouterr().out
    assert "not compared" in out and "crash at inductor" not in out.split("New buckets:")[1].split("Fixed")[0]
    shutil.rmtree(summary_only)
    assert cli.main(["diff", str(summary_only), str(new)]) == cli.EXIT_USAGE
