"""Shards, backend shares and resumable configs (no workers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzz.campaign import CampaignConfig, parse_share
from fuzz.errors import UsageError
from fuzz.interpreters import Interpreter


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
