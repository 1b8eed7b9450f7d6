"""The nightly workflow (.github/workflows/nightly.yml): shards by seed range
with every interpreter in each job (so ``tcfuzz merge`` keeps the
cross-version view), passes zizmor with no high or medium finding, and the
merge it relies on refuses shards it cannot join."""

from __future__ import annotations

import json
import logging
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml  # a test dependency (pyproject [test]): this test must not skip

from fuzz.campaign.database import CampaignDB
from fuzz.campaign.merge import merge
from fuzz.errors import UsageError
from tests.conftest import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "nightly.yml"
# zizmor severities that fail the workflow (https://docs.zizmor.sh/usage/#filtering-results)
BLOCKING = {"High", "Medium"}


def load() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text())


def steps_of(job: dict[str, Any]) -> list[dict[str, Any]]:
    return job.get("steps", [])


def zizmor_exe() -> Path:
    """zizmor from the host env (pyproject [test]); skip only when it is missing."""
    exe = Path(sys.executable).parent / "zizmor"
    if not exe.exists():
        found = shutil.which("zizmor")
        if found is None:
            pytest.skip("zizmor is not installed: .venv/bin/pip install -e '.[test]' (or pip install zizmor)")
        exe = Path(found)
    return exe


def zizmor_findings(path: Path) -> list[dict[str, Any]]:
    """zizmor's findings for one workflow file (offline: no GitHub API)."""
    proc = subprocess.run([str(zizmor_exe()), "--offline", "--format", "json", str(path)],
                          capture_output=True, text=True, timeout=120)
    # 0: no findings; 10-15: findings of the worst severity; anything else is an error
    assert proc.returncode == 0 or 10 <= proc.returncode <= 15, proc.stderr
    return json.loads(proc.stdout)


def test_the_jobs_are_there():
    jobs = load()["jobs"]
    assert "self-hosted" in jobs["gpu"]["runs-on"] and "gpu" in jobs["gpu"]["runs-on"]
    assert set(jobs["merge"]["needs"]) == {"shard", "gpu"}
    steps = " ".join(s.get("run", "") for s in steps_of(jobs["merge"]))
    assert "tcfuzz merge" in steps and "GITHUB_STEP_SUMMARY" in steps


def test_shards_split_the_seeds_and_each_runs_every_interpreter_without_feedback():
    workflow = load()
    shard = workflow["jobs"]["shard"]
    matrix = shard["strategy"]["matrix"]
    assert set(matrix) == {"shard"}, "a matrix axis besides the shard would split a program's interpreters"
    assert matrix["shard"] == list(range(1, len(matrix["shard"]) + 1)) and len(matrix["shard"]) >= 2
    assert int(workflow["env"]["SHARDS"]) == len(matrix["shard"])  # --shard I/N covers the seed range once
    (run,) = [s["run"] for s in steps_of(shard) if "tcfuzz run" in s.get("run", "")]
    assert re.search(r"--python all\b", run)
    assert "--no-feedback" in run  # programs a function of the seed: one campaign's programs
    assert '--shard "$SHARD/$SHARDS"' in run and '--seed "$SEED"' in run
    provision = next(s for s in steps_of(shard) if "provision.sh" in s.get("run", ""))
    assert "TCFUZZ_PYTHONS" not in provision.get("env", {}) and "TCFUZZ_PYTHONS" not in provision["run"]


def test_merge_joins_the_cpu_shards_only():
    jobs = load()["jobs"]
    (run,) = [s["run"] for s in steps_of(jobs["merge"]) if "tcfuzz merge" in s.get("run", "")]
    shard_names = {s["with"]["name"] for s in steps_of(jobs["shard"]) if "upload-artifact" in s.get("uses", "")}
    gpu_names = {s["with"]["name"] for s in steps_of(jobs["gpu"]) if "upload-artifact" in s.get("uses", "")}
    pattern = re.search(r"artifacts/(\S+)", run).group(1)
    prefix = pattern.rstrip("*")
    assert all(n.startswith(prefix) for n in shard_names) and not any(n.startswith(prefix) for n in gpu_names)


def test_hardening_without_zizmor():
    """What zizmor checks, read from the file, so it holds where zizmor is missing."""
    text = WORKFLOW.read_text()
    workflow = load()
    assert workflow["permissions"] == {}
    for name, job in workflow["jobs"].items():
        assert job.get("permissions", {}) in ({}, {"contents": "read"}), name
        for step in steps_of(job):
            assert "${{" not in step.get("run", ""), f"{name}: pass values to run: through env:"
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False, name
    uses = re.findall(r"uses:\s*(\S+)(.*)", text)
    assert uses
    for ref, comment in uses:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", ref), ref
        assert re.match(r"\s*# v\d", comment), f"{ref}: say the tag in a # vX comment"


def test_zizmor_reports_no_high_or_medium_finding():
    blocking = [(f["ident"], f["determinations"]["severity"], f["desc"]) for f in zizmor_findings(WORKFLOW)
                if f["determinations"]["severity"] in BLOCKING]
    assert blocking == []


def test_zizmor_check_fails_an_unhardened_workflow(tmp_path):
    """The check above can fail: the same parse flags an unpinned checkout that
    persists its credentials under default permissions."""
    bad = tmp_path / "bad.yml"
    bad.write_text("name: bad\non: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - uses: actions/checkout@v4\n      - run: echo ${{ github.event.head_commit.message }}\n")
    found = {(f["ident"], f["determinations"]["severity"]) for f in zizmor_findings(bad)}
    assert ("unpinned-uses", "High") in found and ("artipacked", "Medium") in found
    assert any(ident == "template-injection" for ident, _ in found)


def _shard(path: Path, *, device: str = "cpu", feedback: bool = False, shard: tuple[int, int] = (0, 2)) -> Path:
    db = CampaignDB(path / "campaign.sqlite")
    db.set_meta("config", {"backends": ["eager"], "interpreters": ["3.12"], "seed": 1, "shard": list(shard),
                           "device": device, "feedback": feedback})
    db.close()
    return path


def test_merge_refuses_shards_of_different_devices(tmp_path):
    shards = [_shard(tmp_path / "cpu"), _shard(tmp_path / "gpu", device="cuda", shard=(1, 2))]
    with pytest.raises(UsageError, match="different devices .*cpu=cpu, gpu=cuda.*merge each device's shards apart"):
        merge(shards, tmp_path / "merged")
    assert not (tmp_path / "merged").exists()


def test_merge_warns_about_shards_that_ran_with_feedback(tmp_path, caplog):
    shards = [_shard(tmp_path / "s1", feedback=True), _shard(tmp_path / "s2", shard=(1, 2))]
    with caplog.at_level(logging.WARNING, logger="fuzz.campaign.merge"):
        merge(shards, tmp_path / "merged")
    assert "shards s1 ran with feedback on" in caplog.text and "--no-feedback" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="fuzz.campaign.merge"):
        merge([_shard(tmp_path / "t1"), _shard(tmp_path / "t2", shard=(1, 2))], tmp_path / "merged2")
    assert "feedback" not in caplog.text
