"""Merges of one root cause in the corpus (corpus/known-issues.toml
``[merged]``): no two cases are one bucket, and a merged id is its case's."""

from __future__ import annotations

from pathlib import Path

from fuzz.corpus import store
from fuzz.triage import known
from fuzz.triage.signature import Kind, Signature

CORPUS = Path("corpus")


def test_no_two_corpus_cases_are_one_program_with_one_finding():
    """Two cases of the same kind, stage and finding (a graph break's gb_type,
    a divergence's root cause) whose programs are the same text are one bucket
    filed twice: one of them belongs in ``[merged]``."""
    cases: dict[tuple, list[str]] = {}
    for path in store.list_cases(CORPUS):
        program, table = store.read_case(path)
        sig = Signature.parse(table["signature"])
        finding = sig.root or sig.detail.split(" [absent on ", 1)[0]
        cases.setdefault((sig.kind, sig.stage, finding, program.source.strip()), []).append(path.stem)
    assert [ids for ids in cases.values() if len(ids) > 1] == []


def test_the_print_graph_break_filed_for_3_11_is_merged_into_the_one_of_every_interpreter():
    issues = known.load(CORPUS)
    assert issues.resolve("24849606e526") == "5e3d90a4e723"
    assert not list(CORPUS.glob("*/24849606e526.py"))
    target = CORPUS / "graph-break" / "5e3d90a4e723.py"
    program, table = store.read_case(target)
    assert "print()" in program.source and table["signature"].startswith("graph-break|dynamo|Failed to trace builtin")
    # a campaign that sees the old id reports it as the known case's bucket, not a new one
    bucket = {"id": "24849606e526", "kind": Kind.GRAPH_BREAK.value, "detail": "Failed to trace builtin operator",
              "new": True}
    assert known.standing(bucket, issues) is known.Standing.KNOWN_OPEN
    assert known.standing({**bucket, "id": "000000000000"}, issues) is known.Standing.NEW
