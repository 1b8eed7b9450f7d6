"""Nightly-scale campaigns: resume after SIGKILL, shards that merge into one
run's buckets, and the free-threaded concurrency oracle (real workers)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fuzz import cli
from fuzz.campaign import interpreters
from fuzz.campaign.config import CampaignConfig
from fuzz.campaign.loop import Campaign
from fuzz.campaign.database import CampaignDB
from fuzz.campaign.merge import merge
from fuzz.generate.sources import SourceMix
from tests.conftest import ROOT, require_env

pytestmark = pytest.mark.slow

OURS_ONLY = SourceMix(ours=1.0, mutation=0.0, hypothesmith=0.0)  # programs a function of the seed alone


def done_count(path: Path) -> int:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM programs WHERE done = 1").fetchone()[0]
    except sqlite3.Error:
        return 0


def finished_runs(path: Path) -> dict[str, str]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT r.program_id, r.outcome FROM runs r JOIN programs p "
                            "ON p.program_id = r.program_id WHERE p.done = 1").fetchall()
    return dict(rows)


def test_campaign_killed_with_sigkill_resumes_where_it_stopped(tmp_path):
    require_env("3.12")
    out, programs = tmp_path / "campaign", 5
    command = [sys.executable, "-m", "fuzz.cli", "run", "--programs", str(programs), "--backend", "eager",
               "--python", "3.12", "--seed", "4242", "--out", str(out), "--no-minimise", "--no-feedback",
               "--corpus", str(tmp_path / "corpus")]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while done_count(out / "campaign.sqlite") < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before = finished_runs(out / "campaign.sqlite")
    assert 2 <= len(before) < programs, "the campaign should be killed mid-way"

    assert cli.main(["run", "--resume", str(out)]) in (0, 1)
    db = CampaignDB(out / "campaign.sqlite")
    try:
        rows = db.programs()
        assert [r["seq"] for r in rows] == list(range(programs)) and all(r["done"] for r in rows)
        assert [r["seed"] for r in rows] == [4242 + k for k in range(programs)]  # next seeds, none twice
        assert len({r["program_id"] for r in rows}) == programs
        runs = db.runs()
        assert len(runs) == programs and len({r["program_id"] for r in runs}) == programs  # no duplicate
    finally:
        db.close()
    after = finished_runs(out / "campaign.sqlite")
    assert {k: after[k] for k in before} == before  # every finished result kept as it was
    summary = json.loads((out / "summary.json").read_text())
    assert summary["programs"] == programs


def _config(tmp_path: Path, name: str, shard: tuple[int, int], python: str = "3.12",
            backend: str = "tcfuzz_add_one", programs: int = 6, threads: int = 0) -> CampaignConfig:
    return CampaignConfig(interpreters=[interpreters.resolve(python)], backends=[backend], out_dir=tmp_path / name,
                          corpus_dir=tmp_path / "corpus", budget_s=None, programs=programs, seed=9100, shard=shard,
                          minimise=False, feedback=False, sources=OURS_ONLY, name=name, threads=threads)


def test_two_shards_merged_equal_one_run_over_the_same_seeds(tmp_path):
    require_env("3.12")
    configs = [_config(tmp_path, "whole", (0, 1)), _config(tmp_path, "shard1", (0, 2)),
               _config(tmp_path, "shard2", (1, 2))]
    errors: list[BaseException] = []

    def run(config: CampaignConfig) -> None:
        try:
            Campaign(config).run()
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(c,)) for c in configs]  # side by side, as on a batch system
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    summary = merge([tmp_path / "shard2", tmp_path / "shard1"], tmp_path / "merged")

    def buckets(path: Path) -> dict[str, int]:
        db = CampaignDB(path / "campaign.sqlite")
        try:
            return {b["key"]: b["count"] for b in db.buckets()}
        finally:
            db.close()

    whole, merged = buckets(tmp_path / "whole"), buckets(tmp_path / "merged")
    assert whole and merged == whole  # same bucket keys and counts
    assert [buckets(tmp_path / s) for s in ("shard1", "shard2")] != [whole, whole]  # each shard saw a part
    assert summary["programs"] == 6 and (tmp_path / "merged" / "summary.md").exists()
    again = merge([tmp_path / "shard1", tmp_path / "shard2"], tmp_path / "merged")  # deterministic, any order
    assert [b["signature"] for b in again["buckets"]] == [b["signature"] for b in summary["buckets"]]


def test_free_threaded_run_records_the_threaded_result_apart(tmp_path):
    require_env("3.13t")
    config = _config(tmp_path, "ft", (0, 1), python="3.13t", backend="eager", programs=3, threads=4)
    Campaign(config).run()
    db = CampaignDB(tmp_path / "ft" / "campaign.sqlite")
    try:
        runs = db.runs()
        outcomes = db.outcomes()
    finally:
        db.close()
    by_program: dict[str, set[int]] = {}
    for r in runs:
        by_program.setdefault(r["program_id"], set()).add(r["threads"])
    assert len(by_program) == 3 and all(t == {0, 4} for t in by_program.values())
    threaded = [o for o in outcomes if o.threads == 4]
    # a worker's outcome records the GIL it ran with; one the host made for a
    # crashed or hung worker (a finding too) has no record
    recorded = [o for o in threaded if o.gil_enabled is not None]
    assert recorded and all(o.gil_enabled is False for o in recorded), [
        (o.verdict.value, o.gil_enabled) for o in threaded]
    # a threaded run that matched compared every result (a finding may stop at
    # the first thread that differs or raises)
    matched = [o for o in threaded if o.verdict.value == "match"]
    assert matched and all(len(o.compiled) == 8 for o in matched), [
        (o.verdict.value, len(o.compiled)) for o in threaded]  # 4 threads x 2 rounds, each compared with eager
