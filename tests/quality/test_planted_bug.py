"""The fuzzer finds a planted bug, files minimised standalone cases, and the
real backends report nothing on the same programs but torch bugs already in
the corpus."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fuzz import cli
from fuzz.campaign import interpreters
from fuzz.corpus import render, store
from fuzz.campaign.config import CampaignConfig
from fuzz.campaign.loop import Campaign
from fuzz.corpus.filing import known_signature_ids, narrowed_signature_ids
from tests.conftest import ROOT, env_python

pytestmark = pytest.mark.slow

SEED, PROGRAMS = 100, 6


def campaign(tmp_path, names, backends, *, minimise):
    if minimise:
        # the four required interpreters: no 3.14/3.15-gated programs (the
        # host cannot minimise their grammar), and the run stays short
        names = [n for n in names if n in interpreters.REQUIRED_PYTHONS]
    config = CampaignConfig(
        interpreters=[interpreters.resolve(n) for n in names], backends=backends,
        out_dir=tmp_path / "report", corpus_dir=tmp_path / "corpus", budget_s=None, programs=PROGRAMS,
        seed=SEED, minimise=minimise, minimise_kinds=("divergence",), name="test",
        minimise_budget_s=300,
        filing_floor_s=3600.0,  # every case its whole budget
        guided=False)  # each program its seed's (the pool's mutants depend on which worker ran what)
    return Campaign(config).run()


def test_planted_wrong_backend_is_found_minimised_and_reproducible(tmp_path, available_pythons):
    result = campaign(tmp_path, available_pythons, ["tcfuzz_add_one"], minimise=True)
    summary = result.summary
    assert summary["verdicts"]["divergence"] > 0
    assert set(summary["interpreters"]) == set(available_pythons) & set(interpreters.REQUIRED_PYTHONS)
    for name in ("summary.json", "summary.md", "index.html", "campaign.sqlite"):
        assert (tmp_path / "report" / name).exists()
    filed = [b for b in summary["buckets"] if b["kind"] == "divergence" and b["case"]]
    assert filed, summary["buckets"]
    complete = {m["case"] for m in summary["minimised"] if m.get("complete")}
    # the size bound holds for a minimisation that ended by itself; one cut by its
    # 300 s under load says so (at a load of 7 on 2 cores, CI's 3.13t-only case was
    # left at 38 lines), and at least one case must have ended by itself
    assert complete & {b["case"] for b in filed}, summary["minimised"]
    for bucket in filed:
        text = open(bucket["case"]).read()
        # measured with the operator bypass (source/bypass), at a load of 4-5 on 2 cores: 5 and 14
        if bucket["case"] in complete:
            assert render.code_lines(render.program_body(text)) <= 15, text
        program, meta = store.read_case(Path(bucket["case"]))
        assert meta["signature"] == bucket["signature"] and meta["backend"] == "tcfuzz_add_one"
        for name in bucket["interpreters"]:
            env = interpreters.resolve(name).environ()
            env.pop("PYTHONPATH")
            proc = subprocess.run([str(env_python(name)), bucket["case"]], env=env, capture_output=True, timeout=300)
            assert proc.returncode == 1, (name, proc.stdout, proc.stderr)
        assert cli.main(["repro", bucket["case"], "--python", bucket["interpreters"][0],
                         "--log-dir", str(tmp_path / "logs")]) == 1


def test_real_backends_report_only_known_bugs_on_the_same_programs(tmp_path, available_pythons):
    summary = campaign(tmp_path, available_pythons, ["eager", "aot_eager"], minimise=False).summary
    assert summary["programs"] == PROGRAMS
    # the programs can hit real Dynamo bugs (these seeds reach a caught op error
    # that escapes as TorchRuntimeError): each must be a bucket the corpus holds
    known = known_signature_ids(ROOT / "corpus")
    # a program that runs on some interpreters only (itertools.batched: 3.12+)
    # meets a known bug on those alone, as the campaign's own filing sees it
    unknown = [b["signature"] for b in summary["buckets"]
               if not b["kind"].startswith("graph-break") and b["id"] not in known
               and b["id"] not in narrowed_signature_ids(ROOT / "corpus", b["interpreters"])]
    assert unknown == []
