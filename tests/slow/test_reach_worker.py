"""Compiler line coverage from a real worker (harness.reach through the
protocol): a run asked for reach reports Dynamo lines, the same program
again reports far fewer (each line is sent once per worker), and a run not
asked reports none."""

from __future__ import annotations

import pytest

from fuzz.campaign import interpreters
from fuzz.campaign.guidance import Guidance
from fuzz.campaign.workers import Task, Worker
from fuzz.generate.program import generate
from tests.conftest import require_env

pytestmark = pytest.mark.slow


def test_a_worker_reports_each_compiler_line_once(tmp_path):
    require_env("3.12")
    interp = interpreters.resolve("3.12")
    worker = Worker(interp, tmp_path)
    guidance = Guidance()
    program = generate(3)
    try:
        quiet = worker.run(Task(program, interp.name, "eager"))
        first = worker.run(guidance.task(Task(program, interp.name, "eager")))
        again = worker.run(guidance.task(Task(program, interp.name, "eager")))
    finally:
        worker.close()
    assert quiet.reach == {}
    dynamo = sum(len(lines) for path, lines in first.reach.items() if path.startswith("torch/_dynamo/"))
    assert dynamo > 1000
    assert sum(map(len, again.reach.values())) < dynamo / 10
    assert not any(set(first.reach.get(path, ())) & set(lines) for path, lines in again.reach.items())
    assert guidance.record(0, program, [first]) == sum(map(len, first.reach.values()))
    assert guidance.record(1, program, [again]) == sum(map(len, again.reach.values()))
