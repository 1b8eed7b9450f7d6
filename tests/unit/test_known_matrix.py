"""A corpus case filed on one (interpreter, torch) matrix is known on another
by the interpreters its replays say it shows on (fuzz.corpus.filing.shown_on):
a bucket's id holds its interpreter set, so a nightly on the newest torch
releases would otherwise call every case filed on the mission's matrix new."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from harness.program import Program
from fuzz.corpus import filing, render, store
from fuzz.triage.signature import Signature

SOURCE = "import torch\n\ndef f(x, w):\n    return x * w\n\ndef inputs():\n    return (torch.randn(2), {})\n"
MISSION = ("3.11", "3.12", "3.13", "3.13t")


def _case(tmp_path: Path, codes: dict[str, int]) -> Signature:
    """A case filed on the mission's matrix (torch 2.12.0) whose standalone
    runs on torch 2.15.0 exited with ``codes`` (1: reproduces)."""
    sig = Signature("compile-error", "dynamo", "TorchRuntimeError@torch/_dynamo/utils.py:run_node", MISSION)
    text = store.with_replay(render.render_case(Program(SOURCE), sig, backend="eager", torch_version="2.12.0"),
                             codes, "2.15.0")
    path = tmp_path / "compile-error" / f"{sig.id}.py"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return sig


def test_a_case_is_known_on_another_matrix_by_what_its_replays_show(tmp_path):
    newest = {n: "2.15.0+cu132" for n in ("3.11", "3.12", "3.13", "3.14", "3.15")}
    sig = _case(tmp_path, {"3.11": 1, "3.12": 1, "3.13": 1, "3.14": 1, "3.15": 0})
    there = dataclasses.replace(sig, interpreters=("3.11", "3.12", "3.13", "3.14"))
    assert there.id not in filing.known_signature_ids(tmp_path)  # ids hold interpreter sets
    assert there.id in filing.known_signature_ids(tmp_path, newest)
    # a set the replays contradict is not the case's
    everywhere = dataclasses.replace(sig, interpreters=tuple(newest))
    assert everywhere.id not in filing.known_signature_ids(tmp_path, newest)


def test_an_interpreter_without_a_replay_makes_the_case_unknown_on_that_matrix(tmp_path):
    sig = _case(tmp_path, {"3.11": 1})
    newest = {"3.11": "2.15.0", "3.14": "2.15.0"}
    assert filing.shown_on(sig, store.read_case(next(tmp_path.rglob("*.py")))[1], newest) is None
    # the torch it was filed with stands in for a replay on its own interpreters
    mission = {"3.11": "2.12.0+cu130", "3.12": "2.12.0+cu130"}
    assert filing.shown_on(sig, {"torch": "2.12.0"}, mission) == ("3.11", "3.12")


def test_a_saved_case_records_each_interpreter_s_torch_in_its_replays(tmp_path, monkeypatch):
    """``repro --save`` on a matrix of two torch releases: the case pins the
    lowest, and each replay names the release its interpreter ran (measured:
    every replay was recorded as 2.12.0 when 3.13t ran it)."""
    from harness.casefile import read_table
    from harness.program import Program
    from fuzz.campaign.interpreters import Interpreter
    from fuzz.corpus import filing, store
    from fuzz.triage.signature import Finding

    monkeypatch.setattr(store, "run_standalone", lambda text, interps, **kw: {i.name: 1 for i in interps})
    sig = Signature("crash", "inductor", "SIGSEGV", ("3.12", "3.13t"))
    program = Program("import torch\n\ndef f(x):\n    return x\n\ndef inputs():\n    return (1,)\n", generator="manual")
    interps = [Interpreter("3.12", Path("/nonexistent/python3.12")), Interpreter("3.13t", Path("/nonexistent/t"))]
    case = filing.file_unreduced(program, Finding(sig, "inductor"), interps, corpus_dir=tmp_path, device="cpu",
                                 fullgraph=False, torch_version="2.12.0+cu130",
                                 torch_of={"3.12": "2.15.0+cu132", "3.13t": "2.12.0+cu130"})
    table = read_table(case.path.read_text())
    assert table["replay"] == {"3.12/2.15.0": "reproduces", "3.13t/2.12.0": "reproduces"}
    assert table["torch"].startswith("2.12.0")


def test_an_id_merged_into_a_case_is_known_and_one_merged_into_nothing_is_not(tmp_path):
    sig = _case(tmp_path, {"3.11": 1})
    (tmp_path / "known-issues.toml").write_text(
        "[merged]\n"
        f'"0123456789ab" = {{ into = "{sig.id}", reason = "the same bug from another program" }}\n'
        '"ba9876543210" = { into = "0123456789ab", reason = "merged into the merge above" }\n'
        '"fedcba987654" = { into = "000000000000", reason = "into a case that is gone" }\n')
    ids = filing.known_signature_ids(tmp_path)
    assert {sig.id, "0123456789ab", "ba9876543210"} <= ids and "fedcba987654" not in ids


def test_each_channel_a_case_was_seen_through_is_known_on_another_matrix(tmp_path):
    """The default campaign of 2026-12-06 (3.11-3.15 on torch 2.15.0, 3.13t on
    2.12.0) listed as NEW a "global-state" bucket of every interpreter whose
    program was divergence/741b40f445d6's (a set_grad_enabled object entered
    after a graph break): the case, filed on the mission's matrix, had
    "global-state" among its ``observed`` channels, but only its own channel
    was known by the interpreters its replays show."""
    root = " {wrong-result: def f():; .v1 = torch.GRAD_MODE(); .torch._dynamo.graph_break() #32e67766}"
    sig = Signature("divergence", "dynamo", "stdout" + root, MISSION)
    text = store.with_replay(render.render_case(Program(SOURCE), sig, backend="eager", torch_version="2.12.0"),
                             {n: 1 for n in ("3.11", "3.12", "3.13", "3.14", "3.15")}, "2.15.0")
    text = text.replace('# status = "open"\n', '# status = "open"\n# observed = ["global-state"]\n')
    path = tmp_path / "divergence" / f"{sig.id}.py"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    assert store.read_case(path)[1]["observed"] == ["global-state"]
    matrix = {n: "2.15.0+cu132" for n in ("3.11", "3.12", "3.13", "3.14", "3.15")} | {"3.13t": "2.12.0+cu130"}
    seen = Signature("divergence", "dynamo", "global-state", tuple(matrix))
    assert dataclasses.replace(seen, interpreters=MISSION).id in filing.known_signature_ids(tmp_path)
    assert seen.id in filing.known_signature_ids(tmp_path, matrix)
