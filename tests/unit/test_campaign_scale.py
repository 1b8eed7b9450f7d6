"""Shards, backend shares and resumable configs (no workers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzz.campaign.config import CampaignConfig, parse_share
from fuzz.errors import UsageError
from fuzz.campaign.interpreters import Interpreter


def config(**kw) -> CampaignConfig:
    base = dict(interpreters=[Interpreter("3.12", Path("/nonexistent/python"))], backends=["eager", "aot_eager"],
                out_dir=Path("out"), corpus_dir=Path("corpus"), budget_s=None, programs=10, seed=100)
    base.update(kw)
    return CampaignConfig(**base)


def test_shards_of_a_seed_range_partition_it():
    whole = config()
    seeds = set()
    for index in range(3):
        shard = config(shard=(index, 3))
        mine = [shard.seed_of(k) for k in range(shard.shard_programs())]
        assert not seeds & set(mine)
        seeds |= set(mine)
    assert seeds == {whole.seed_of(k) for k in range(whole.shard_programs())} == set(range(100, 110))


def test_share_is_decided_by_seed_and_the_lowest_backend_always_runs():
    c = config(share={"aot_eager": 0.25})
    picks = [c.runs_on(s, "aot_eager") for s in range(2000)]
    assert 0.2 < sum(picks) / len(picks) < 0.3
    assert picks == [config(share={"aot_eager": 0.25}).runs_on(s, "aot_eager") for s in range(2000)]
    assert all(c.runs_on(s, "eager") for s in range(100))
    assert all(config(backends=["aot_eager"], share={"aot_eager": 0.0}).runs_on(s, "aot_eager") for s in range(10))


def test_parse_share_rejects_bad_parts():
    assert parse_share("aot_eager=0.5,inductor=0.25") == {"aot_eager": 0.5, "inductor": 0.25}
    for bad in ("inductor", "inductor=2", "=0.5", "inductor=x"):
        with pytest.raises(UsageError):
            parse_share(bad)


def test_a_worker_is_recycled_when_it_grows_past_its_warm_size(tmp_path, monkeypatch):
    """The growth limit counts from the size after the first program of each
    backend (that backend's one-time cost), not from the size after import."""
    from fuzz.campaign.workers import Worker

    w = Worker(Interpreter("3.12", tmp_path / "python"), tmp_path, rss_limit_mib=6144, rss_growth_limit_mib=100)
    closed = []
    monkeypatch.setattr(w, "close", lambda: closed.append(w.programs_run))
    w._check_memory({"rss_mib": 700.0}, first_on_backend=True)   # eager warm
    w._check_memory({"rss_mib": 750.0})
    w._check_memory({"rss_mib": 1000.0}, first_on_backend=True)  # inductor's first compile: +250, re-based
    assert w.warm_rss_mib == 1000.0 and not closed
    w._check_memory({"rss_mib": 1099.0})
    assert not closed and w.recycled == 0
    w._check_memory({"rss_mib": 1101.0})
    assert closed and w.recycled == 1
    off = Worker(Interpreter("3.12", tmp_path / "python"), tmp_path, rss_limit_mib=0, rss_growth_limit_mib=0)
    monkeypatch.setattr(off, "close", lambda: closed.append("off"))
    off._check_memory({"rss_mib": 700.0}, first_on_backend=True)
    off._check_memory({"rss_mib": 9000.0})
    assert "off" not in closed


# The meta that CampaignConfig.to_meta wrote before it was derived from the
# dataclass's fields (fuzz/campaign.py at 17c3829), for FULL's config.
FULL_META = {
    "backends": ["eager", "aot_eager", "inductor"], "interpreters": ["3.12", "3.13t"],
    "pythons": {"3.12": "/x/py312/bin/python", "3.13t": "/y/python3.13t"}, "seed": 4242, "shard": [1, 4],
    "device": "cuda", "fullgraph": True, "budget_s": None, "programs": 10, "jobs": 3, "corpus_dir": "/abs/corpus",
    "minimise": False, "minimise_budget_s": 12.5, "minimise_kinds": ["divergence", "crash"], "name": "n1",
    "sources": {"ours": 0.5, "mutation": 0.25, "hypothesmith": 0.25}, "feedback": False,
    "share": {"inductor": 0.25}, "threads": 4, "worker_rss_mib": 1000.0, "worker_rss_growth_mib": 0,
}


def full_config(out_dir: Path = Path("o")) -> CampaignConfig:
    from fuzz.generate.sources import SourceMix

    return CampaignConfig(
        interpreters=[Interpreter("3.12", Path("/x/py312/bin/python")),
                      Interpreter("3.13t", Path("/y/python3.13t"), (("PYTHON_GIL", "0"),))],
        backends=["eager", "aot_eager", "inductor"], out_dir=out_dir, corpus_dir=Path("/abs/corpus"), device="cuda",
        fullgraph=True, budget_s=None, programs=10, seed=4242, jobs=3, shard=(1, 4), minimise_budget_s=12.5,
        minimise=False, minimise_kinds=("divergence", "crash"), name="n1", sources=SourceMix(0.5, 0.25, 0.25),
        feedback=False, share={"inductor": 0.25}, threads=4, worker_rss_mib=1000.0, worker_rss_growth_mib=0,
        resume=True)


def test_config_meta_is_what_it_was_and_resumes_the_same_config(monkeypatch):
    import dataclasses
    import json

    from fuzz.campaign import interpreters

    meta = full_config().to_meta()
    # fields added since: the (interpreter, torch) cells (fuzz.campaign.cells),
    # the compile-settings draw (harness.settings), the graphs source's share and
    # the cell schedule (fuzz.campaign.schedule) and coverage guidance
    # (fuzz.campaign.guidance), and the runs at once (fuzz.campaign.workers)
    assert {k: meta.pop(k) for k in ("matrix", "torch", "unavailable", "vary_compile", "schedule", "picks",
                                  "filing_floor_s", "coverage", "guided", "running")} == {
        "matrix": "newest", "torch": None, "unavailable": {}, "vary_compile": True, "schedule": "full", "picks": 1,
        "filing_floor_s": None, "coverage": True, "guided": True, "running": 0}
    assert meta["sources"].pop("graphs") == 0.0
    assert meta == FULL_META
    assert json.loads(json.dumps(config().to_meta())) == config().to_meta()  # plain JSON
    by_name = {i.name: i for i in full_config().interpreters}
    monkeypatch.setattr(interpreters, "resolve", lambda spec: by_name[spec])
    resumed = CampaignConfig.from_meta(full_config().to_meta(), Path("elsewhere"))
    assert resumed == dataclasses.replace(full_config(Path("elsewhere")), resume=False)


def test_config_from_meta_ignores_unknown_keys_and_defaults_missing_ones(monkeypatch):
    from fuzz.campaign import interpreters

    monkeypatch.setattr(interpreters, "resolve", lambda spec: Interpreter(spec, Path("/p")))
    meta = config().to_meta()
    meta["written_by_a_newer_tcfuzz"] = {"x": 1}
    meta["sources"]["a_newer_source"] = 0.5
    for key in ("worker_rss_growth_mib", "threads", "share", "minimise_kinds"):
        del meta[key]  # an older tcfuzz did not store these
    resumed = CampaignConfig.from_meta(meta, Path("out"))
    assert resumed.worker_rss_growth_mib == CampaignConfig.worker_rss_growth_mib and resumed.threads == 0
    assert resumed.share == {} and resumed.minimise_kinds is None and resumed.seed == 100
    assert resumed.shard == (0, 1) and isinstance(resumed.corpus_dir, Path)
    with pytest.raises(UsageError, match="without --resume support"):
        CampaignConfig.from_meta({k: v for k, v in meta.items() if k != "budget_s"}, Path("out"))


def test_a_case_is_filed_only_where_python_case_reproduces_it(tmp_path, monkeypatch):
    from harness import casefile
    from harness.program import Program
    from fuzz.corpus import filing, render, store
    from fuzz.triage.signature import Signature

    interps = [Interpreter(n, tmp_path / "python") for n in ("3.11", "3.12")]
    program = Program("import torch\n\ndef f(x):\n    return x.sin()\n\ndef inputs():\n    return (torch.ones(3),)\n")
    codes = {"3.11": 1, "3.12": 0}
    monkeypatch.setattr(store, "run_standalone", lambda text, ran: {i.name: codes[i.name] for i in ran})

    only_311 = Signature("divergence", "dynamo", "value", ("3.11",))
    text = render.render_case(program, only_311, backend="eager")
    case = filing.file_case(text, only_311, interps, corpus_dir=tmp_path, torch_version="2.12.0+cpu",
                            stats={"checks": 3})
    assert case.filed and case.path == store.case_path(tmp_path, only_311) and case.stats == {"checks": 3}
    assert casefile.read_table(case.path.read_text())["replay"] == {
        "3.11/2.12.0": casefile.REPRODUCES, "3.12/2.12.0": casefile.DOES_NOT_REPRODUCE}

    both = Signature("divergence", "dynamo", "value", ("3.11", "3.12"))
    case = filing.file_case(render.render_case(program, both, backend="eager"), both, interps, corpus_dir=tmp_path,
                            torch_version="2.12.0")
    assert not case.filed and case.standalone == codes and "does not reproduce on ['3.12']" in case.reason

    codes["3.12"] = 1  # breaks on both: no regression of 3.11
    regression = Signature("graph-break-regression", "dynamo", "some break", ("3.11",))
    case = filing.file_case(render.render_case(program, regression, backend="eager"), regression, interps,
                            corpus_dir=tmp_path, torch_version="2.12.0", stats={"checks": 5, "lines_before": 9})
    assert not case.filed and "no regression" in case.reason and case.stats == {"checks": 5}
