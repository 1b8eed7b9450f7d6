from harness.outcome import GraphBreak, Outcome, Verdict
from fuzz.signature import Signature, findings, normalise


def outcome(interp, backend, verdict=Verdict.MATCH, **kw):
    return Outcome(program_id="p", interpreter=interp, backend=backend, verdict=verdict, **kw)


def test_key_round_trips_and_id_is_stable():
    sig = Signature("divergence", "dynamo", "value", ("3.12", "3.13"))
    assert Signature.parse(sig.key) == sig
    assert sig.id == Signature("divergence", "dynamo", "value", ("3.12", "3.13")).id
    assert sig.id != Signature("divergence", "dynamo", "value", ("3.13",)).id
    assert len(sig.id) == 12


def test_parse_rejects_malformed_keys():
    import pytest

    with pytest.raises(ValueError, match="Expected a signature key"):
        Signature.parse("nonsense")


def test_normalise_removes_addresses_and_lines():
    assert normalise("obj at 0x7f3a2b1c line 12 in  f") == normalise("obj at 0xdeadbeef line 99 in f")


def test_finding_is_attributed_to_lowest_backend_with_its_interpreters():
    outs = [
        outcome("3.11", "eager"),
        outcome("3.12", "eager", Verdict.DIVERGENCE, aspect="value"),
        outcome("3.11", "inductor", Verdict.DIVERGENCE, aspect="value"),
        outcome("3.12", "inductor", Verdict.DIVERGENCE, aspect="value"),
    ]
    [f] = findings(outs)
    assert f.backend == "eager"
    assert f.signature == Signature("divergence", "dynamo", "value", ("3.12",))


def test_distinct_causes_are_distinct_buckets():
    outs = [
        outcome("3.11", "inductor", Verdict.COMPILE_ERROR, error_type="BackendCompilerFailed(X)", torch_frame="torch/a.py:g"),
        outcome("3.12", "inductor", Verdict.DIVERGENCE, aspect="exception", error_type="IndexError->None"),
    ]
    sigs = {f.signature.kind: f.signature for f in findings(outs)}
    assert sigs["compile-error"].stage == "inductor"
    assert sigs["compile-error"].detail == "BackendCompilerFailed(X)@torch/a.py:g"
    assert sigs["divergence"].detail == "exception:IndexError->None"


def test_graph_breaks_bucket_by_gb_type_and_skip_planted_ones():
    gb = GraphBreak(gb_type="Data-dependent branching", reason="x")
    planted = GraphBreak(gb_type="Call to `torch._dynamo.graph_break()`", reason="y")
    outs = [outcome("3.11", "eager", graph_breaks=[gb, planted]), outcome("3.13t", "eager", graph_breaks=[gb]),
            outcome("3.12", "eager", graph_breaks=[planted])]
    [f] = findings(outs)
    assert f.signature == Signature("graph-break", "dynamo", "Data-dependent branching", ("3.11", "3.13t"))


def test_flaky_and_match_are_not_findings():
    assert findings([outcome("3.11", "eager", Verdict.FLAKY), outcome("3.12", "eager")]) == []
