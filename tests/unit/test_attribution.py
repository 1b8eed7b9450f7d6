"""Free-threaded or torch release: the deciding cell (fuzz.campaign.attribution)."""

from harness.outcome import Outcome, Verdict
from harness.program import Program
from fuzz.campaign import attribution
from fuzz.campaign.attribution import Attributor, deciding_cell, pattern_of
from fuzz.triage.signature import Finding, Signature

TORCH = {"3.12": "2.15.0+cu132", "3.13": "2.15.0+cu132", "3.13t": "2.12.0+cu130"}


def sig(*interps):
    return Signature("divergence", "dynamo", "value", interps)


def test_a_313t_only_finding_with_a_different_torch_is_decided_on_313_with_313ts_torch():
    assert deciding_cell(sig("3.13t"), TORCH) == ("3.13", "2.12.0", "3.13t")
    assert deciding_cell(sig("3.12", "3.13"), TORCH) == ("3.13", "2.12.0", "3.13t")  # the mirror case
    assert deciding_cell(sig("3.12", "3.13", "3.13t"), TORCH) is None  # both sides show it
    same = {**TORCH, "3.13t": "2.15.0"}
    assert deciding_cell(sig("3.13t"), same) is None  # one torch: the build is the only difference


def test_the_pattern_follows_the_deciding_cell():
    cell = ("3.13", "2.12.0", "3.13t")
    assert pattern_of(sig("3.13t"), cell, True, TORCH) == "torch 2.12.0 only"
    assert pattern_of(sig("3.13t"), cell, False, TORCH) == "free-threaded only"
    assert pattern_of(sig("3.13"), cell, True, TORCH) == "GIL builds only"
    assert pattern_of(sig("3.13"), cell, False, TORCH) == "torch 2.15.0 only"


def test_the_attributor_runs_the_cell_once_and_names_the_pattern(tmp_path, monkeypatch):
    runs = []

    class FakePool:
        def run_all(self, tasks):
            runs.extend(tasks)
            return [Outcome(program_id="p", interpreter=t.interpreter, backend=t.backend,
                            verdict=Verdict.DIVERGENCE, aspect="value") for t in tasks]

        def close(self):
            pass

    attributor = Attributor(tmp_path)
    monkeypatch.setattr(attributor, "_pool", lambda name, release: FakePool())
    finding = Finding(Signature("divergence", "dynamo", "value", ("3.13t",)), "eager")
    monkeypatch.setattr(attribution, "same_finding", lambda s, o: o.interpreter == "3.13")
    result = attributor.attribute(finding, Program("def f():\n    return 1\n"), TORCH)
    assert (result.interpreter, result.release, result.shows, result.pattern) == ("3.13", "2.12.0", True,
                                                                                  "torch 2.12.0 only")
    assert [(t.interpreter, t.backend) for t in runs] == [("3.13", "eager")]
    assert attributor.attribute(Finding(sig("3.12", "3.13", "3.13t"), "eager"), Program("x = 1\n"), TORCH) is None


def test_a_graph_break_regression_shows_on_the_deciding_cell_when_it_breaks_with_its_gb_type():
    from harness.outcome import GraphBreak

    regression = Signature("graph-break-regression", "dynamo", "Dynamic shape operator [absent on 3.13]", ("3.13t",))
    breaks = Outcome(program_id="p", interpreter="3.13", backend="eager", verdict=Verdict.MATCH,
                     graph_breaks=[GraphBreak("Dynamic shape operator", "x")])
    clean = Outcome(program_id="p", interpreter="3.13", backend="eager", verdict=Verdict.MATCH)
    assert attribution.same_finding(regression, breaks) and not attribution.same_finding(regression, clean)
