"""A program of grammar the host cannot parse is minimised by the syntax-tree
passes in the worker env of an interpreter that parses it
(fuzz.reduce.remote), its checks answered on the host."""

from __future__ import annotations

import sys

import pytest

from fuzz.campaign.interpreters import Interpreter
from fuzz.errors import CouldNotMinimize
from fuzz.corpus.render import program_body
from fuzz.reduce.pipeline import minimize_source, parses_here
from fuzz.triage.signature import Signature
from tests.conftest import env_python

NEWEST_GRAMMAR = '''import torch

def helper(t):
    return t + 1

def f(t0, n, unused):
    a = t0 * 2
    b = helper(a)
    tm = t"s{t0.shape}/{n}"
    try:
        raise ValueError("u1")
    except ValueError, IndexError:
        c = b.sum()
    flat = [*g for g in [[t0], [t0 * 2]]]
    d = flat[0] + len(tm.strings)
    return d

def inputs():
    return (torch.ones(2), 1, torch.zeros(3))
'''


class _Pool:
    def __init__(self, names):
        self.interpreters = {n: Interpreter(n, env_python(n)) for n in names}


class HostCheck:
    """Holds while the except of two types stays (the remote's ``ast.unparse``
    writes it with parentheses: the same bytecode); a fast check with a full
    ``confirm`` and a batched ``check_many``, as SignatureCheck has, counting
    what the host was asked."""

    def __init__(self, names):
        self.pool, self.signature = _Pool(names), Signature("divergence", "dynamo", "value", tuple(names))
        self.fast, self.spread = True, 1
        self.asked: list[str] = []
        self.confirmed: list[str] = []

    def __call__(self, source: str) -> bool:
        self.asked.append(source)
        return "ValueError, IndexError" in source and "def f(" in source

    def check_many(self, sources):
        return [self(s) for s in sources]

    def confirm(self, source: str) -> bool:
        self.confirmed.append(source)
        return self(source)


def _newest_env() -> str:
    names = [n for n in ("3.15", "3.14") if env_python(n).exists()]
    if not names:
        pytest.skip("no 3.14 or 3.15 worker env: run scripts/provision.sh")
    return names[0]


def test_the_syntax_tree_passes_run_where_the_program_parses_and_beat_the_line_passes():
    if sys.version_info >= (3, 15):
        pytest.skip("this host parses 3.15 grammar")
    name = _newest_env()
    source = NEWEST_GRAMMAR if name == "3.15" else NEWEST_GRAMMAR.replace(
        "    flat = [*g for g in [[t0], [t0 * 2]]]\n    d = flat[0] + len(tm.strings)\n", "    d = len(tm.strings)\n")
    assert not parses_here(source)
    check = HostCheck([name])
    result = minimize_source(source, check, budget_s=120)
    assert "ValueError, IndexError" in result.source
    # the remote's passes ran (their checks answered here), not the host's line passes
    assert "source/lines" not in result.passes
    assert any(p.startswith(("source/", "tidy/")) for p in result.passes), result.passes
    assert result.checks == sum(n for n, _ in result.passes.values()) and len(check.asked) >= result.checks - 1
    assert check.confirmed  # the remote's stage results were confirmed by the host's full check
    # what the line passes cannot do: the unused parameter and its input gone, the helper and dead values dropped
    lines = minimize_source(source, HostCheck([]), budget_s=120)  # no pool: the line passes
    assert "source/lines" in lines.passes
    assert result.lines_after < lines.lines_after, (result.source, lines.source)
    assert "unused" not in result.source


def test_a_remote_that_cannot_start_leaves_the_host_s_line_passes(tmp_path):
    if sys.version_info >= (3, 15):
        pytest.skip("this host parses 3.15 grammar")
    check = HostCheck([])
    check.pool.interpreters = {"3.15": Interpreter("3.15", tmp_path / "no-python")}
    check.signature = Signature("divergence", "dynamo", "value", ("3.15",))
    result = minimize_source(NEWEST_GRAMMAR, check, budget_s=30)
    assert "source/lines" in result.passes and result.lines_after < result.lines_before
    assert "ValueError, IndexError" in result.source


class FlakyCheck(HostCheck):
    """Holds on its first call only: a signature that showed once, as a
    campaign's flaky divergence does."""

    def __call__(self, source: str) -> bool:
        self.asked.append(source)
        return len(self.asked) == 1


def test_a_signature_that_no_longer_holds_on_the_remote_s_first_check_is_not_minimised_by_lines():
    if sys.version_info >= (3, 15):
        pytest.skip("this host parses 3.15 grammar")
    name = _newest_env()
    source = NEWEST_GRAMMAR if name == "3.15" else NEWEST_GRAMMAR.replace(
        "    flat = [*g for g in [[t0], [t0 * 2]]]\n    d = flat[0] + len(tm.strings)\n", "    d = len(tm.strings)\n")
    check = FlakyCheck([name])
    with pytest.raises(CouldNotMinimize, match="checked again"):
        minimize_source(source, check, budget_s=120)
    # the host's check of the input, then the remote's of the same input; no line pass after it
    assert check.asked == [program_body(source)] * 2
