"""harness.reach inside a worker env: a compiler line is reported once, then
never again; code outside the compiler's packages is never reported; 3.11
reports nothing."""

from __future__ import annotations

import sys

import pytest

from harness import reach

# A module "in" torch/_dynamo: compiled with that file name, so the collector
# takes it for compiler code.
FAKE_COMPILER_FILE = "/site-packages/torch/_dynamo/fake_reach_module.py"
FAKE_USER_FILE = "/tmp/program_under_test.py"
SOURCE = """\
def branchy(x):
    if x > 0:
        y = x + 1
    else:
        y = x - 1
    return y
"""


def _function(filename: str):
    namespace: dict = {}
    exec(compile(SOURCE, filename, "exec"), namespace)
    return namespace["branchy"]


def _only(condition: bool):
    """Define a test only where ``condition`` holds: the worker-env suites
    must run with no skips (tests/slow/test_oracle.py)."""
    return (lambda test: test) if condition else (lambda test: None)


@pytest.fixture
def collector():
    if not reach.monitoring_available():
        pytest.skip("sys.monitoring is 3.12+")
    made = reach.LineCollector()
    made.start()
    try:
        yield made
    finally:
        made.stop()


def test_compiler_path_keeps_only_the_four_packages():
    assert reach.compiler_path("/a/site-packages/torch/_inductor/lowering.py") == "torch/_inductor/lowering.py"
    assert reach.compiler_path("/a/site-packages/torch/fx/graph.py") == "torch/fx/graph.py"
    assert reach.compiler_path("/a/site-packages/torch/nn/modules/linear.py") is None
    assert reach.compiler_path("/tmp/program.py") is None


@_only(reach.monitoring_available())
def test_a_line_is_reported_once_then_not_again(collector):
    branchy = _function(FAKE_COMPILER_FILE)
    collector.drain()  # whatever ran before this test
    branchy(1)
    first = collector.drain()
    assert first == {"torch/_dynamo/fake_reach_module.py": [2, 3, 6]}
    branchy(2)
    assert collector.drain() == {}
    branchy(-1)  # the other branch: only its line is new
    assert collector.drain() == {"torch/_dynamo/fake_reach_module.py": [5]}


@_only(reach.monitoring_available())
def test_code_outside_the_compiler_is_not_reported(collector):
    user = _function(FAKE_USER_FILE)
    collector.drain()
    user(1)
    user(-1)
    assert "program_under_test.py" not in str(collector.drain())


@_only(reach.monitoring_available())
def test_a_compile_reports_dynamo_lines_and_a_second_one_fewer(collector):
    import torch

    def f(x):
        return torch.sin(x) + 1

    def g(x):
        return torch.cos(x) * 2

    collector.drain()
    torch._dynamo.reset()
    torch.compile(f, backend="eager")(torch.ones(3))
    first = collector.drain()
    assert sum(len(v) for k, v in first.items() if k.startswith("torch/_dynamo/")) > 500
    torch._dynamo.reset()
    torch.compile(g, backend="eager")(torch.ones(3))
    second = collector.drain()
    assert sum(map(len, second.values())) < sum(map(len, first.values())) / 5
    assert not any(set(first.get(path, ())) & set(lines) for path, lines in second.items())


@_only(sys.version_info >= (3, 12))  # sys.monitoring is 3.12+
def test_stop_frees_the_tool_id():
    made = reach.LineCollector()
    made.start()
    tool = made.tool_id
    assert sys.monitoring.get_tool(tool) == reach.TOOL_NAME
    made.stop()
    assert sys.monitoring.get_tool(tool) is None


@_only(sys.version_info < (3, 12))
def test_3_11_workers_report_nothing():
    made = reach.collector()
    made.start()
    try:
        _function(FAKE_COMPILER_FILE)(1)
        assert made.drain() == {}
        assert sys.gettrace() is None
    finally:
        made.stop()
