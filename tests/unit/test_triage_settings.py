"""``tcfuzz triage CASE`` compiles with the case's compile settings (its
table's ``compile``), as repro and minimize do; a CUDA fault's reply carries
the request's settings (no workers: a fake pool)."""

from __future__ import annotations

import json

from harness import device
from harness.outcome import InterpreterInfo, Outcome, Verdict
from harness.program import Program
from harness.settings import CompileSettings
from fuzz import cli
from fuzz.campaign import interpreters, workers
from fuzz.corpus import render
from fuzz.triage import matrix
from fuzz.triage.signature import Signature

SOURCE = "import torch\n\ndef f(x):\n    return x.sin()\n\ndef inputs():\n    return (torch.ones(3),)\n"
SETTINGS = CompileSettings(dynamic=True, mark_dynamic=((0, 0),), inductor=(("cpp_wrapper", True),))
CUDA_ASSERT = "CUDA error: device-side assert triggered"


def _fake_pool(tasks: list):
    class FakePool:
        def __init__(self, *args, **kwargs):
            self.info = {"3.12": InterpreterInfo("3.12", "3.12.1", False, True, "2.15.0")}

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

        def start(self):
            return self.info

        def run_all(self, batch):
            batch = list(batch)
            tasks.extend(batch)
            # a worker records the settings it compiled with (harness.execute.run_program)
            return [Outcome(program_id="p", interpreter=t.interpreter, backend=t.backend, verdict=Verdict.DIVERGENCE,
                            aspect="value", compile_settings=t.settings) for t in batch]
    return FakePool


def test_the_pool_runner_compiles_every_cell_with_the_settings_it_is_given(tmp_path, monkeypatch):
    tasks: list = []
    monkeypatch.setattr(workers, "WorkerPool", _fake_pool(tasks))
    run = matrix.pool_runner(Program(SOURCE), device="cpu", fullgraph=False, log_dir=tmp_path, settings=SETTINGS)
    outcomes, versions, refused = run([interpreters.Interpreter("3.12", tmp_path / "python")], ["eager", "inductor"])
    assert [t.settings for t in tasks] == [SETTINGS, SETTINGS] and versions == {"3.12": "2.15.0"}
    tasks.clear()
    matrix.pool_runner(Program(SOURCE), device="cpu", fullgraph=False, log_dir=tmp_path)(
        [interpreters.Interpreter("3.12", tmp_path / "python")], ["eager"])
    assert [t.settings for t in tasks] == [CompileSettings()]


def test_triage_of_a_case_applies_and_shows_its_compile_settings(tmp_path, monkeypatch, capsys):
    tasks: list = []
    monkeypatch.setattr(workers, "WorkerPool", _fake_pool(tasks))
    monkeypatch.setattr(interpreters, "parse_list", lambda v: [interpreters.Interpreter("3.12", tmp_path / "python")])
    case = tmp_path / "case.py"
    sig = Signature("divergence", "dynamo", "value", ("3.12",))
    case.write_text(render.render_case(Program(SOURCE), sig, backend="eager", settings=SETTINGS))
    assert cli.main(["triage", str(case), "--backend", "eager"]) == cli.EXIT_OK
    assert tasks and all(t.settings == SETTINGS for t in tasks)
    out = capsys.readouterr().out
    assert f"compile settings: {SETTINGS.describe()}" in out
    assert cli.main(["triage", str(case), "--backend", "eager", "--json"]) == cli.EXIT_OK
    assert CompileSettings.from_json(json.loads(capsys.readouterr().out)["compile"]) == SETTINGS
    # a case with the defaults: no settings line
    plain = tmp_path / "plain.py"
    plain.write_text(render.render_case(Program(SOURCE), sig, backend="eager"))
    tasks.clear()
    assert cli.main(["triage", str(plain), "--backend", "eager"]) == cli.EXIT_OK
    assert all(t.settings.is_default for t in tasks) and "compile settings" not in capsys.readouterr().out


def test_a_cuda_fault_reply_carries_the_requests_compile_settings():
    request = {"id": 3, "backend": "inductor", "device": "cuda", "compile": SETTINGS.to_json(),
               "program": Program(SOURCE).to_json()}
    outcome = Outcome.from_json(device.fault_reply(request, RuntimeError(CUDA_ASSERT), "3.12")["outcome"])
    assert outcome.verdict is Verdict.CRASH and outcome.compile_settings == SETTINGS
    # the concurrency run ignores the settings (harness.threads): its fault says so, and is a threaded run
    threaded = Outcome.from_json(device.fault_reply({**request, "threads": 4}, RuntimeError(CUDA_ASSERT),
                                                    "3.13t")["outcome"])
    assert threaded.compile_settings.is_default and threaded.threads == 4
    # a malformed entry still gets its crash reply
    broken = device.fault_reply({**request, "compile": {"nosuch": 1}}, RuntimeError(CUDA_ASSERT), "3.12")
    assert Outcome.from_json(broken["outcome"]).compile_settings.is_default
