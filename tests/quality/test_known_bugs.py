"""Real, public torch.compile bugs (../shared/known-bugs) are flagged by the
harness where they reproduce with torch 2.12.0."""

from __future__ import annotations

import ast

import pytest

from harness.program import Program
from fuzz import interpreters
from fuzz.workers import Task, WorkerPool
from tests.conftest import KNOWN_BUGS, env_python

pytestmark = pytest.mark.slow

CASES = sorted(KNOWN_BUGS.glob("*.py")) if KNOWN_BUGS.is_dir() else []


def expectation(path) -> dict:
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "EXPECT" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{path} has no EXPECT dict")


@pytest.mark.skipif(not CASES, reason="../shared/known-bugs is not beside the checkout")
@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_known_bug_is_flagged(path, tmp_path):
    expect = expectation(path)
    # one interpreter per case keeps the suite short; the first where it reproduces
    name = next((n for n in expect["reproduces_on"] if env_python(n).exists()), None)
    if name is None:
        pytest.skip(f"no worker env for any of {expect['reproduces_on']}: run scripts/provision.sh")
    with WorkerPool([interpreters.resolve(name)], log_dir=tmp_path) as pool:
        pool.start()
        [outcome] = pool.run_all([Task(Program.from_file(path), name, expect["backend"],
                                       fullgraph=expect["fullgraph"])])
    assert outcome.verdict.is_bug, (expect["symptom"], outcome)
    if expect["symptom"] == "segfault":
        assert outcome.verdict.value == "crash"
