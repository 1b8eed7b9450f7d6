import json

import pytest

from harness import protocol
from harness.outcome import CallResult, GraphBreak, Outcome, Verdict
from harness.program import Program, ProgramError


def test_program_json_round_trip():
    p = Program(source="def f():\n  pass\ndef inputs():\n  return ()\n", seed=3, features=("for", "if"))
    assert Program.from_json(json.loads(p.dumps())) == p
    assert len(p.program_id) == 16


def test_program_check_names_the_problem():
    with pytest.raises(ProgramError, match="not a Python program"):
        Program(source="def f(:\n").check()
    with pytest.raises(ProgramError, match="no top-level 'inputs'"):
        Program(source="def f(x):\n  return x\n").check()


def test_from_file_rejects_non_programs(tmp_path):
    bad = tmp_path / "notes.py"
    bad.write_text("hello world, not python\n")
    with pytest.raises(ProgramError, match="notes.py"):
        Program.from_file(bad)


def test_outcome_json_round_trip():
    o = Outcome(program_id="p", interpreter="3.13t", backend="eager", verdict=Verdict.DIVERGENCE, aspect="value",
                eager=[CallResult(value="1", stdout="hi\n")], compiled=[CallResult(exc_type="IndexError")],
                graph_breaks=[GraphBreak("Data-dependent branching", "r", "f.py", 3)], gil_enabled=False)
    back = Outcome.from_json(json.loads(json.dumps(o.to_json())))
    assert back == o and back.verdict is Verdict.DIVERGENCE


def test_protocol_rejects_garbage():
    assert protocol.decode(protocol.encode({"a": 1})) == {"a": 1}
    with pytest.raises(ValueError, match="not JSON"):
        protocol.decode(b"hello from a C printf\n")
    with pytest.raises(ValueError, match="JSON object"):
        protocol.decode(b"[1, 2]\n")


def test_every_verdict_describes_itself():
    for v in Verdict:
        assert v.describe()
    assert {v.value for v in Verdict if v.is_bug} == {"divergence", "compile-error", "crash", "timeout"}
