"""The worker protocol and crash/timeout isolation, on real worker processes."""

from __future__ import annotations

import os

import pytest

from harness.outcome import Verdict
from harness.program import Program
from fuzz.campaign import interpreters
from fuzz.campaign.workers import Task, Worker
from tests.conftest import require_env

pytestmark = pytest.mark.slow

INPUTS = "\ndef inputs():\n    return (torch.ones(3),)\n"


def prog(body: str) -> Program:
    return Program("import os, sys, ctypes, torch\n\ndef f(x):\n" + body + INPUTS)


# Eager exiting, hanging or dying is the program's doing (``invalid``); these
# make the compiled run alone do it: the module counts its loads in the
# working directory (eager A, eager B, then compiled), and the first graph
# break makes Dynamo run the rest of f as Python.
COMPILED_ONLY = ("import os, sys, time, ctypes, torch\n"
                 "__LOADS = os.path.getsize('loads') if os.path.exists('loads') else 0\n"
                 "open('loads', 'ab').write(b'x')\n\n"
                 "def f(x):\n    if __LOADS >= 2:\n        torch._dynamo.graph_break()\n")


def compiled_only(body: str) -> Program:
    """A program whose compiled run (only) runs ``body`` (indented 8 spaces)."""
    return Program(COMPILED_ONLY + body + "    return x\n" + INPUTS)


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    require_env("3.11")
    os.environ["MY_SECRET_TOKEN"] = "not for generated programs"  # the scrubbed env must drop it
    try:
        w = Worker(interpreters.resolve("3.11"), tmp_path_factory.mktemp("logs"), run_timeout_s=20)
        w.start()
    finally:
        del os.environ["MY_SECRET_TOKEN"]
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


def crash(worker: Worker, body: str):
    return worker.run(Task(compiled_only(body), "3.11", "eager"))


def test_segfault_is_a_crash_and_the_worker_is_replaced(worker):
    o = crash(worker, "        x = x + len(ctypes.string_at(0))\n")
    assert o.verdict is Verdict.CRASH and o.error_type == "SIGSEGV", o
    assert o.torch_frame and "string_at" in o.detail and o.phase == "compiled"
    assert not worker.alive
    assert run(worker, "    return x * 2\n").verdict is Verdict.MATCH  # a fresh worker took over


def test_eager_exiting_hanging_or_dying_is_invalid_never_a_finding(worker):
    o = run(worker, "    return x + len(ctypes.string_at(0))\n")
    assert o.verdict is Verdict.INVALID and o.error_type == "SIGSEGV" and o.phase == "eager", o
    assert "eager itself ended the process" in o.detail
    assert run(worker, "    os._exit(7)\n").verdict is Verdict.INVALID
    assert run(worker, "    while True:\n        pass\n").verdict is Verdict.INVALID
    assert run(worker, "    return x\n").verdict is Verdict.MATCH


def test_heap_corruption_is_keyed_with_a_segfault(worker):
    """glibc aborts a double free ("free(): double free detected in tcache 2"):
    the outcome keeps the message, the bucket says SIGSEGV as a segfault in
    the same frame does (one corruption shows either way from run to run)."""
    from fuzz.triage.signature import bug_detail

    double_free = ("        libc = ctypes.CDLL(None)\n        libc.malloc.restype = ctypes.c_void_p\n"
                   "        p = ctypes.c_void_p(libc.malloc(64))\n        libc.free(p)\n        libc.free(p)\n")
    o = crash(worker, double_free)
    assert o.verdict is Verdict.CRASH and o.error_type.startswith("SIGABRT: ") and "double free" in o.error_type, o
    assert bug_detail(o).startswith("SIGSEGV@"), bug_detail(o)


def test_abort_is_a_crash_with_its_stack(worker):
    o = crash(worker, "        os.abort()\n")
    assert o.verdict is Verdict.CRASH and o.error_type == "SIGABRT", o
    assert "in f" in o.detail  # faulthandler's traceback, kept for the signature
    assert run(worker, "    return x\n").verdict is Verdict.MATCH


def test_os_exit_is_a_crash(worker):
    o = crash(worker, "        os._exit(7)\n")
    assert o.verdict is Verdict.CRASH and o.error_type == "exit 7"
    assert run(worker, "    return x\n").verdict is Verdict.MATCH


def test_hang_is_a_timeout(worker):
    run(worker, "    return x\n")  # eager is warm: only run_timeout_s applies
    o = crash(worker, "        while True:\n            time.sleep(0.01)\n")
    assert o.verdict is Verdict.TIMEOUT and o.phase == "compiled", o
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
    case.write_text(compiled_only("        x = x + len(ctypes.string_at(0))\n").source)
    code = cli.main(["repro", str(case), "--python", "3.11", "--backend", "eager,aot_eager",
                     "--log-dir", str(tmp_path / "logs")])
    out = capsys.readouterr().out
    assert code == 1
    assert out.count("crash *") == 2 and "SIGSEGV@" in out  # cells as triage writes them


# ---------------------------------------------------------------- isolation and limits (harness.limits)

def test_program_closing_fd_1_and_sys_stdout_leaves_the_worker_alive(worker):
    run(worker, "    return x\n")
    pid = worker.proc.pid
    body = ("    try:\n        os.close(1)\n    except OSError:\n        pass\n"
            "    sys.stdout.close()\n    print('still here')\n    return x + 1\n")
    o = run(worker, body)
    assert o.verdict is Verdict.MATCH and o.eager[0].stdout == "still here\n"
    assert worker.proc.pid == pid  # the reply channel is not fd 1: same worker


def test_program_closing_the_reply_channel_is_a_crash_and_the_worker_is_replaced(worker):
    body = "    for fd in range(3, 256):\n        try:\n            os.close(fd)\n        except OSError:\n            pass\n    return x\n"
    o = run(worker, body)
    assert o.verdict is Verdict.CRASH and o.error_type in ("reply channel closed", "exit 1"), o
    assert o.program_id == prog(body).program_id
    assert run(worker, "    return x * 3\n").verdict is Verdict.MATCH


def test_memory_exhaustion_is_the_programs_error_and_the_worker_goes_on(worker):
    run(worker, "    return x\n")
    pid = worker.proc.pid
    o = run(worker, "    return x + len(bytearray(1 << 42))\n")  # 4 TiB: past RLIMIT_AS
    assert o.eager[0].exc_type == "MemoryError", o
    # torch <= 2.12 lets the MemoryError through compiled code; 2.15's Dynamo
    # constant-folds bytearray() and wraps it (InternalTorchDynamoError): a compile-error
    assert (o.verdict, o.compiled[0].exc_type) in ((Verdict.MATCH, "MemoryError"), (
        Verdict.COMPILE_ERROR, "torch._dynamo.exc.InternalTorchDynamoError")), o
    assert run(worker, "    return x - 2\n").verdict is Verdict.MATCH and worker.proc.pid == pid


def test_worker_over_its_rss_limit_is_replaced_after_the_program(tmp_path):
    require_env("3.11")
    w = Worker(interpreters.resolve("3.11"), tmp_path, run_timeout_s=60)
    try:
        w.start()
        w.rss_limit_mib = w.rss_mib + 300  # MiB above its size after import torch
        assert run(w, "    return x\n").verdict is Verdict.MATCH and w.alive
        # json: a module harness.state does not watch (a rebound builtins.HOG would be put back)
        # allocated outside Dynamo (torch 2.15 constant-folds bytearray(): slow past the timeout)
        hog = ("    import json\n    @torch._dynamo.disable\n    def hog():\n"
               "        json.HOG = getattr(json, 'HOG', []) + [bytearray(200 << 20)]\n    hog()\n    return x\n")
        o = run(w, hog)  # 3 runs x 2 calls x 200 MiB kept alive
        assert o.verdict is Verdict.MATCH and w.rss_mib > w.rss_limit_mib
        assert not w.alive and w.recycled == 1  # replaced after the program, result kept
        assert run(w, "    return x\n").verdict is Verdict.MATCH and w.rss_mib < w.rss_limit_mib
    finally:
        w.close()


def test_cpu_time_limit_is_a_timeout_with_the_stack(tmp_path):
    require_env("3.11")
    w = Worker(interpreters.resolve("3.11"), tmp_path, run_timeout_s=120, cpu_limit_s=2)
    try:
        w.start()
        o = w.run(Task(compiled_only("        while True:\n            pass\n"), "3.11", "eager"))
        assert o.verdict is Verdict.TIMEOUT and o.error_type == "cpu-time limit", o
        assert o.elapsed_s < 60 and "in f" in o.detail  # faulthandler's stack names the program's frame
        assert run(w, "    return x\n").verdict is Verdict.MATCH
    finally:
        w.close()


def test_hang_timeout_keeps_the_hung_stack(worker):
    run(worker, "    return x\n")
    o = crash(worker, "        time.sleep(1000)\n")
    assert o.verdict is Verdict.TIMEOUT and "in f" in o.detail, o.detail[-500:]


def test_programs_run_in_a_private_directory_without_network_or_secrets(worker):
    body = ("    import socket\n    print(os.path.basename(os.getcwd()).startswith('tcfuzz-worker-'), "
            "'MY_SECRET_TOKEN' in os.environ)\n    open('left-behind.txt', 'w').write('x')\n"
            "    socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n")
    o = run(worker, body)
    assert o.eager[0].stdout == "True False\n"
    assert o.eager[0].exc_type == "PermissionError" and "no network" in o.eager[0].exc_message
    assert not any(p.name == "left-behind.txt" for p in __import__("pathlib").Path(worker.workdir).iterdir())
    uds = "    import socket\n    a, b = socket.socketpair()\n    a.close(); b.close()\n    return x\n"
    assert run(worker, uds).eager[0].exc_type is None  # local sockets are not network
