import pytest

from fuzz.corpus import code_lines
from fuzz.errors import CouldNotMinimize
from fuzz.minimize import minimize_source, tidy

SOURCE = """import torch

def f(t0, t1, n):
    t2 = t0 * 2
    for i in range(n):
        t2 = t2 + i
    lst = [t0, t1]
    lst.append(t2)
    if n > 1:
        t2 = t2.sin()
        marker = 12345
    return t2 + lst[0]

def inputs():
    return (torch.ones(3), torch.ones(3), 3)
"""


def keeps_marker(source: str) -> bool:
    return "12345" in source and "def inputs" in source


def test_reduces_while_the_check_holds_and_never_grows():
    result = minimize_source(SOURCE, keeps_marker, budget_s=60)
    assert keeps_marker(result.source)
    assert result.lines_after < result.lines_before == code_lines(SOURCE)
    assert result.lines_after <= 6, result.source
    assert result.checks > 1 and result.complete


def test_refuses_a_case_that_does_not_show_its_signature():
    with pytest.raises(CouldNotMinimize):
        minimize_source(SOURCE, lambda s: False, budget_s=10)


def test_budget_stops_with_the_best_so_far():
    calls = []

    def slow_check(source: str) -> bool:
        calls.append(source)
        import time

        time.sleep(0.05)
        return keeps_marker(source)

    result = minimize_source(SOURCE, slow_check, budget_s=0.3)
    assert not result.complete and keeps_marker(result.source)
    assert result.lines_after <= result.lines_before


def test_tidy_drops_placeholder_constants_but_keeps_blocks_valid():
    assert tidy("def f():\n    0\n    return 1\n") == "def f():\n    return 1\n"
    assert tidy("def f():\n    0\n") == "def f():\n    pass\n"
    assert tidy("try:\n    x()\nexcept E:\n    0\nfinally:\n    0\n") == "try:\n    x()\nexcept E:\n    pass\nfinally:\n    pass\n"
