"""The worker protocol and crash/timeout isolation, on real worker processes."""

from __future__ import annotations

import pytest

from harness.outcome import Verdict
from harness.program import Program
from fuzz import interpreters
from fuzz.workers import Task, Worker
from tests.conftest import require_env

pytestmark = pytest.mark.slow

INPUTS = "\ndef inputs():\n    return (torch.ones(3),)\n"


def prog(body: str) -> Program:
    return Program("import os, sys, ctypes, torch\n\ndef f(x):\n" + body + INPUTS)


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    require_env("3.11")
    w = Worker(interpreters.resolve("3.11"), tmp_path_factory.mktemp("logs"), run_timeout_s=20)
    w.start()
    yield w
    w.close()


def run(worker: Worker, body: str, backend: str = "eager"):
    return worker.run(Task(prog(body), "3.11", backend))


def test_ready_reports_the_interpreter(worker):
    assert worker.info.version.startswith("3.11") and not worker.info.free_threaded
    assert worker.info.torch.startswith("2.")


def test_protocol_survives_output_on_fds_1_and_2(worker):
    body = ("    print('to sys.stdout')\n    os.write(1, b'raw fd 1 {not json\\n')\n"
            "    os.write(2, b'raw fd 2\\n')\n    return x + 1\n")
    o = run(worker, body)
    assert o.verdict is Verdict.MATCH, o
    assert o.eager[0].stdout == "to sys.stdout\n" and o.compiled[0].stdout == "to sys.stdout\n"


def test_program_closing_stdout_and_raising(worker):
    assert run(worker, "    sys.stdout.close()\n    return x\n").verdict is Verdict.MATCH
    o = run(worker, "    raise KeyError('k')\n")
    assert o.verdict is Verdict.MATCH and o.eager[0].exc_type == "KeyError" == o.compiled[0].exc_type


def test_segfault_is_a_crash_and_the_worker_is_replaced(worker):
    o = run(worker, "    return x + len(ctypes.string_at(0))\n")
    assert o.verdict is Verdict.CRASH and o.error_type == "SIGSEGV"
    assert o.torch_frame == "ctypes/__init__.py:string_at" and o.aspect == "eager"
    assert not worker.alive
    assert run(worker, "    return x * 2\n").verdict is Verdict.MATCH  # a fresh worker took over


def test_os_exit_is_a_crash(worker):
    o = run(worker, "    os._exit(7)\n")
    assert o.verdict is Verdict.CRASH and o.error_type == "exit 7"
    assert run(worker, "    return x\n").verdict is Verdict.MATCH


def test_hang_is_a_timeout(worker):
    run(worker, "    return x\n")  # eager is warm: only run_timeout_s applies
    o = run(worker, "    while True:\n        pass\n")
    assert o.verdict is Verdict.TIMEOUT
    assert run(worker, "    return x - 1\n").verdict is Verdict.MATCH


def test_planted_backend_diverges_and_real_one_does_not(worker):
    body = "    return x.sin() * 2\n"
    assert run(worker, body, "tcfuzz_add_one").verdict is Verdict.DIVERGENCE
    assert run(worker, body, "aot_eager").verdict is Verdict.MATCH


def test_free_threaded_worker_runs_with_the_gil_off(tmp_path):
    require_env("3.13t")
    w = Worker(interpreters.resolve("3.13t"), tmp_path)
    try:
        info = w.start()
        assert info.free_threaded and not info.gil_enabled
        o = w.run(Task(prog("    return x + 1\n"), "3.13t", "aot_eager"))
        assert o.verdict is Verdict.MATCH and o.gil_enabled is False
    finally:
        w.close()


def test_repro_reports_a_segfaulting_program_as_crash(tmp_path, capsys):
    require_env("3.11")
    from fuzz import cli

    case = tmp_path / "segv.py"
    case.write_text(prog("    return x + len(ctypes.string_at(0))\n").source)
    code = cli.main(["repro", str(case), "--python", "3.11", "--backend", "eager,aot_eager",
                     "--log-dir", str(tmp_path / "logs")])
    out = capsys.readouterr().out
    assert code == 1
    assert out.count("crash (SIGSEGV)") == 2 and "SIGSEGV@ctypes/__init__.py:string_at" in out
