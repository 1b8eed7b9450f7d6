"""Shards, backend shares and resumable configs (no workers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzz.campaign.loop import CampaignConfig, parse_share
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
