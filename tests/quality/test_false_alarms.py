"""No false alarm from the oracle's newest parts: the carried call and the
snapshots of ordered containers, sets and attribute names, over a batch of
generated programs run with the planted backends that cannot be wrong about
a program's semantics (benchmarks/false_alarms.py measures the same at
scale). Under ``tcfuzz_force_eager`` the compiled function runs its own
bytecode: any bug verdict is the oracle's. Under ``tcfuzz_identity`` Dynamo
runs the graph it captured unchanged: a bug verdict is Dynamo's or a false
alarm; the generator's constructs find Dynamo bugs the corpus does not have
yet at the other calls (zip(strict=True), comprehension graph breaks), so
under it only the carried call is held to "explained by the corpus"."""

from __future__ import annotations

import pytest

from fuzz.campaign import interpreters
from fuzz.campaign.config import CampaignConfig
from fuzz.campaign.database import CampaignDB
from fuzz.campaign.loop import Campaign
from fuzz.corpus import store
from fuzz.triage.signature import Signature, causes
from harness.outcome import Verdict
from harness.plan import Call
from tests.conftest import ROOT, require_env

pytestmark = pytest.mark.slow

# 16 programs x 2 backends: about a minute on an idle 2-core machine.
SEED, PROGRAMS = 7000, 16


def test_the_planted_semantics_preserving_backends_raise_no_alarm(tmp_path):
    require_env("3.12")
    backends = ["tcfuzz_identity", "tcfuzz_force_eager"]
    config = CampaignConfig(
        interpreters=[interpreters.resolve("3.12")], backends=backends, out_dir=tmp_path / "report",
        corpus_dir=tmp_path / "corpus", budget_s=None, programs=PROGRAMS, seed=SEED, minimise=False, name="test")
    Campaign(config).run()
    outcomes = CampaignDB(tmp_path / "report" / "campaign.sqlite").outcomes()
    assert {o.backend for o in outcomes} == set(backends) and len(outcomes) == 2 * PROGRAMS
    ran = [o for o in outcomes if o.eager]
    assert len(ran) >= PROGRAMS  # most programs load and run
    assert all(o.eager[-1].label == Call.CARRIED.value for o in ran if o.verdict is not Verdict.INVALID)
    known = [Signature.parse(store.read_case(p)[1]["signature"]) for p in store.list_cases(ROOT / "corpus")]
    alarms = []
    for o in outcomes:
        if not o.verdict.is_bug:
            continue
        bug = next(c for c in causes(o) if c[0] != "graph-break")
        explained = o.backend != "tcfuzz_force_eager" and (o.call != Call.CARRIED.value or any(
            s.cause == bug and o.interpreter in s.interpreters for s in known))
        if not explained:
            alarms.append((o.program_id, o.backend, o.verdict.value, o.aspect, o.call, bug))
    assert not alarms, alarms
