import json

import pytest

from harness import protocol
from harness.outcome import Aspect, CallResult, GraphBreak, Outcome, Phase, Verdict
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


def test_every_aspect_and_phase_describes_itself_and_reads_as_its_value():
    for member in [*Aspect, *Phase]:
        assert member.describe() and f"{member}" == str(member) == member.value
    assert Aspect("global-state") is Aspect.GLOBAL_STATE and Phase("after-run") is Phase.AFTER_RUN


def test_outcome_takes_enum_values_as_strings_and_rejects_others():
    o = Outcome("p", "3.12", "eager", verdict="divergence", aspect="value", phase="")
    assert o.verdict is Verdict.DIVERGENCE and o.aspect is Aspect.VALUE and o.phase is None
    with pytest.raises(ValueError):
        Outcome("p", "3.12", "eager", aspect="compiled")  # a phase is no aspect
    crash = Outcome("p", "3.13t", "inductor", verdict=Verdict.CRASH, phase=Phase.COMPILED, threads=4)
    data = json.loads(json.dumps(crash.to_json()))
    assert data["phase"] == "compiled" and data["aspect"] is None
    assert Outcome.from_json(data) == crash


def test_outcome_reads_rows_written_before_phase_and_threads_had_fields():
    """An old campaign database: ``aspect`` held a crash's phase, and a
    threaded run's aspect and error type started with "threads:"."""
    def old(**kw):
        return Outcome.from_json({"program_id": "p", "interpreter": "3.13t", "backend": "inductor", "device": "cpu",
                                  "fullgraph": False, "aspect": "", "call": "", "error_type": "", "error_message": "",
                                  "torch_frame": "", "eager": [], "compiled": [], "graph_count": 0,
                                  "graph_breaks": [], "recompiles": 0, "eager_s": 0.0, "compile_s": 0.0,
                                  "elapsed_s": 1.5, "gil_enabled": None, "detail": "", "threads": 0, **kw})

    crash = old(verdict="crash", aspect="compiled", error_type="SIGSEGV", torch_frame="torch/x.py:f")
    assert (crash.aspect, crash.phase, crash.error_type) == (None, Phase.COMPILED, "SIGSEGV")
    fault = old(verdict="crash", aspect="after-run", error_type="CUDA error: x", torch_frame="after-run")
    assert fault.phase is Phase.AFTER_RUN and fault.torch_frame == "after-run"
    value = old(verdict="divergence", aspect="value", call="cached")
    assert (value.aspect, value.phase, value.call) == (Aspect.VALUE, None, "cached")
    threaded = old(verdict="divergence", aspect="threads:exception", error_type="threads:None->KeyError",
                   detail="round0/thread1", threads=4)
    assert (threaded.aspect, threaded.error_type, threaded.threads) == (Aspect.EXCEPTION, "None->KeyError", 4)
    flaky = old(verdict="flaky", aspect="threads:eager", threads=4)
    assert (flaky.aspect, flaky.phase) == (None, Phase.EAGER)
    timeout = old(verdict="timeout", aspect="eager", error_type="threads:timeout", threads=8)
    assert (timeout.phase, timeout.error_type) == (Phase.EAGER, "timeout")
    assert old(verdict="match") == Outcome("p", "3.13t", "inductor", elapsed_s=1.5)
