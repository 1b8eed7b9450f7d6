"""The nightly's sharding keeps the cross-version view: shards of one seed
range, each over every interpreter with ``--no-feedback`` (as
.github/workflows/nightly.yml runs them), merge into one campaign over all
the interpreters: the same programs on the same cells (the cell scheduler
rotates aot_eager's interpreter by seed), and the same buckets, with the
same interpreter sets (real workers on 3.11 and 3.12)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fuzz import cli
from fuzz.campaign.database import CampaignDB
from fuzz.campaign.merge import merge
from tests.conftest import require_env

pytestmark = pytest.mark.slow

PYTHONS = ("3.11", "3.12")
# with torch 2.12.0, seeds 9316-9321 give buckets on 3.11 only, on 3.12 only and on both
SEED, PROGRAMS, SHARDS = 9316, 6, 2


def campaign(out: Path, *extra: str) -> None:
    """``tcfuzz run`` with the nightly shard job's flags (default source mix,
    --no-feedback, a corpus folder of its own, the default cell schedule), on
    two interpreters, eager and aot_eager."""
    argv = ["run", "--python", ",".join(PYTHONS), "--backend", "eager,aot_eager", "--seed", str(SEED),
            "--programs", str(PROGRAMS), "--no-feedback", "--no-minimize", "--out", str(out),
            "--corpus", str(out / "corpus"), *extra]
    assert cli.main(argv) in (cli.EXIT_OK, cli.EXIT_FOUND)  # 1: new buckets


def read(path: Path) -> tuple[list[tuple[int, str]], set[tuple[str, str, str]], dict[str, tuple[Any, ...]]]:
    """(seed, program id) per program, the run cells, and per bucket key its
    kind, stage, detail, interpreter set, backend and count."""
    db = CampaignDB(path / "campaign.sqlite")
    try:
        programs = sorted((r["seed"], r["program_id"]) for r in db.programs() if r["done"])
        cells = {(r["program_id"], r["interpreter"], r["backend"]) for r in db.runs()}
        buckets = {b["key"]: (b["kind"], b["stage"], b["detail"], b["interpreters"], b["backend"], b["count"])
                   for b in db.buckets()}
        return programs, cells, buckets
    finally:
        db.close()


def test_merged_nightly_shards_equal_one_campaign_over_every_interpreter(tmp_path):
    for name in PYTHONS:
        require_env(name)
    # one after the other: each campaign already runs a worker per interpreter
    campaign(tmp_path / "whole")
    for index in range(1, SHARDS + 1):
        campaign(tmp_path / f"shard-{index}", "--shard", f"{index}/{SHARDS}")
    merge([tmp_path / f"shard-{i}" for i in range(SHARDS, 0, -1)], tmp_path / "merged")

    whole_programs, whole_cells, whole_buckets = read(tmp_path / "whole")
    merged_programs, merged_cells, merged_buckets = read(tmp_path / "merged")
    assert [seed for seed, _ in whole_programs] == list(range(SEED, SEED + PROGRAMS))
    assert merged_programs == whole_programs  # the same program for every seed
    assert merged_cells == whole_cells  # every shard gave each program the cells one run gives it
    assert {c for c in whole_cells if c[2] == "eager"} == {(p, i, "eager") for _, p in whole_programs for i in PYTHONS}
    assert {p for p, _, b in whole_cells if b == "aot_eager"} == {p for _, p in whole_programs}
    assert whole_buckets, "the seed range should give buckets to compare (pick another SEED)"
    assert merged_buckets == whole_buckets  # same keys, interpreter sets and counts

    shard_programs = [read(tmp_path / f"shard-{i}")[0] for i in range(1, SHARDS + 1)]
    assert all(shard_programs) and sorted(p for ps in shard_programs for p in ps) == whole_programs
    for index in range(1, SHARDS + 1):  # every program of a shard ran on every interpreter there
        programs, cells, _ = read(tmp_path / f"shard-{index}")
        assert {c for c in cells if c[2] == "eager"} == {(p, i, "eager") for _, p in programs for i in PYTHONS}
