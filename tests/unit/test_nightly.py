"""The nightly workflow is valid YAML with the matrix, GPU and merge jobs."""

from __future__ import annotations

import yaml  # a test dependency (pyproject [test]): this test must not skip

from tests.conftest import ROOT


def test_nightly_workflow_parses_and_has_the_jobs():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "nightly.yml").read_text())
    jobs = workflow["jobs"]
    matrix = jobs["shard"]["strategy"]["matrix"]
    assert matrix["python"] == ["3.11", "3.12", "3.13", "3.13t"] and len(matrix["shard"]) >= 2
    assert "self-hosted" in jobs["gpu"]["runs-on"] and "gpu" in jobs["gpu"]["runs-on"]
    assert set(jobs["merge"]["needs"]) == {"shard", "gpu"}
    steps = " ".join(s.get("run", "") for s in jobs["merge"]["steps"])
    assert "tcfuzz merge" in steps and "GITHUB_STEP_SUMMARY" in steps
