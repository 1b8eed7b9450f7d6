"""Real, public torch.compile bugs (tests/known_bugs) are flagged by the
harness where they reproduce with torch 2.12.0, each in a bucket of its own,
and each is in corpus/ as a seed case."""

from __future__ import annotations

import ast

import pytest

from harness.program import Program
from fuzz.campaign import cells
from fuzz.campaign.torch_releases import Matrix
from fuzz.corpus import store
from fuzz.triage.signature import Signature, findings
from fuzz.campaign.workers import Task, WorkerPool
from tests.conftest import KNOWN_BUGS, ROOT, env_python

pytestmark = pytest.mark.slow

CASES = sorted(KNOWN_BUGS.glob("*.py"))


def expectation(path) -> dict:
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "EXPECT" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{path} has no EXPECT dict")


def test_the_known_bugs_are_in_the_repo():
    assert len(CASES) >= 5, f"expected the known-bug programs under {KNOWN_BUGS}"


@pytest.fixture(scope="module")
def flagged(tmp_path_factory) -> dict:
    """Outcome and signature (with features) of each known bug, run on the
    first interpreter where it reproduces (one interpreter keeps this short)."""
    tasks, names = [], set()
    for path in CASES:
        expect = expectation(path)
        name = next((n for n in expect["reproduces_on"] if env_python(n).exists()), None)
        if name is not None:
            names.add(name)
            tasks.append((path, Task(Program.from_file(path), name, expect["backend"], fullgraph=expect["fullgraph"])))
    if not tasks:
        pytest.skip("no worker env for the known bugs: run scripts/provision.sh")
    # the mission's cells: these bugs are filed against torch 2.12.0 (several are fixed since)
    interps = cells.choose(",".join(sorted(names)), Matrix.MISSION).interpreters
    with WorkerPool(interps, log_dir=tmp_path_factory.mktemp("logs")) as pool:
        pool.start()
        outcomes = pool.run_all([task for _, task in tasks])
    result = {}
    for (path, task), outcome in zip(tasks, outcomes):
        bugs = [f.signature.with_features(task.program.source) for f in findings([outcome])
                if not f.signature.kind.startswith("graph-break")]
        result[path.stem] = (outcome, bugs)
    return result


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_known_bug_is_flagged(path, flagged):
    expect = expectation(path)
    outcome, bugs = flagged[path.stem]
    assert outcome.verdict.is_bug and len(bugs) == 1, (expect["symptom"], outcome)
    if expect["symptom"] == "segfault":
        assert outcome.verdict.value == "crash"


def cause(sig: Signature) -> tuple:
    """What a bucket is known by, less its interpreters: a wrong result's root
    cause (the observation channel is a label), else its detail."""
    return (sig.kind, sig.stage, sig.root or sig.detail)


def test_each_known_bug_has_a_bucket_of_its_own_and_a_seed_case_in_the_corpus(flagged):
    keys = {stem: cause(bugs[0]) for stem, (_, bugs) in flagged.items()}
    assert len(set(keys.values())) == len(keys), keys
    in_corpus = []
    for path in store.list_cases(ROOT / "corpus"):
        sig = Signature.parse(store.read_case(path)[1]["signature"])
        in_corpus.append((cause(sig), sig.interpreters))
    for stem, (outcome, bugs) in flagged.items():
        sig = bugs[0]
        assert any(c == cause(sig) and outcome.interpreter in i for c, i in in_corpus), \
            f"{stem}: no corpus case with {sig.bucket_key}"
