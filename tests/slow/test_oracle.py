"""The oracle on real workers: every comparison rule (tests/harness, run inside
every worker env), and wrong compilers landing in distinct buckets."""

from __future__ import annotations

import subprocess

import pytest

from harness.outcome import Verdict
from harness.program import Program
from fuzz.campaign import interpreters
from fuzz.triage.signature import findings
from fuzz.campaign.workers import Task, WorkerPool
from tests.conftest import ROOT, env_python, require_env

pytestmark = pytest.mark.slow

RELU = Program("""import torch

def f(x):
    y = torch.relu(x) * 2
    return y.sum(0)

def inputs():
    return (torch.linspace(-1, 1, 12).reshape(3, 4),)
""")


@pytest.mark.parametrize("name", ["3.11", "3.12", "3.13", "3.13t"])
def test_comparison_rules_hold_in_every_worker_env(name):
    require_env(name)
    env = interpreters.resolve(name).environ()  # PYTHONPATH is the repo, PYTHON_GIL=0 on 3.13t
    proc = subprocess.run([str(env_python(name)), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/harness"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "skipped" not in proc.stdout


def test_torch_testing_backends_and_a_planted_one_land_in_distinct_buckets(tmp_path):
    require_env("3.12")
    backends = ["eager", "relu_compile_error_TESTING_ONLY", "relu_runtime_error_TESTING_ONLY",
                "relu_accuracy_error_TESTING_ONLY", "tcfuzz_add_one"]
    with WorkerPool([interpreters.resolve("3.12")], log_dir=tmp_path) as pool:
        pool.start()
        outcomes = pool.run_all(Task(RELU, "3.12", b) for b in backends)
    by_backend = {o.backend: o for o in outcomes}
    assert by_backend["eager"].verdict is Verdict.MATCH
    assert by_backend["relu_compile_error_TESTING_ONLY"].verdict is Verdict.COMPILE_ERROR
    assert by_backend["relu_runtime_error_TESTING_ONLY"].verdict is Verdict.DIVERGENCE
    assert by_backend["relu_accuracy_error_TESTING_ONLY"].verdict is Verdict.DIVERGENCE
    assert by_backend["tcfuzz_add_one"].verdict is Verdict.DIVERGENCE
    found = {f.backend: f.signature for f in findings(outcomes)}
    assert set(found) == set(backends) - {"eager"}
    assert len({s.key for s in found.values()}) == 4
    assert {b: s.stage for b, s in found.items()} == {b: b for b in found}  # each is a compiler of its own
    assert found["relu_compile_error_TESTING_ONLY"].detail.startswith("BackendCompilerFailed(ReluCompileError)@")
    assert found["relu_runtime_error_TESTING_ONLY"].detail == "exception:None->AssertionError"
    assert found["relu_accuracy_error_TESTING_ONLY"].detail == "value"
