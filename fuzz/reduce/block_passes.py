"""The minimiser's block passes (``graph/...``, phase STRUCTURE): rewrites of
a statement and its block that statement deletion cannot make, each a line
less where the bug holds. A do-nothing ``except`` handler given the
statements after its ``try``; a loop that only drains its iterable as
``list(...)``; a statement of several lines as an explicit graph break.
Registered with fuzz.reduce.graph_passes' ``@graph_pass`` and run by its
``reduce_graph`` (fuzz.reduce.pipeline imports this module). Works on the
host's syntax trees only (no torch).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from fuzz.reduce.graph_passes import MAX_SITES, GraphPhase, _blocks, _unparse, graph_pass

Site = tuple[list[ast.stmt], int]  # a statement: its block and index there


def _rewritten_at_each(source: str, sites: Callable[[ast.Module], list[Site]],
                       rewrite: Callable[[list[ast.stmt], int], None]) -> list[str]:
    """One candidate per site that ``sites`` finds in ``source`` (MAX_SITES
    at most): ``source`` parsed anew and ``rewrite(block, index)`` applied
    at that one site."""
    candidates = []
    for k in range(min(MAX_SITES, len(sites(ast.parse(source))))):
        tree = ast.parse(source)
        block, i = sites(tree)[k]
        rewrite(block, i)
        candidates.append(_unparse(tree))
    return candidates


def _handler_tail_sites(tree: ast.AST) -> list[Site]:
    """(block, index) of each ``try`` (no ``else`` or ``finally``) in a block,
    with statements after it, one of whose handlers does nothing but ``pass``."""
    sites = []
    for block in _blocks(tree):
        for i, stmt in enumerate(block[:-1]):
            if (isinstance(stmt, ast.Try) and not stmt.orelse and not stmt.finalbody
                    and any(len(h.body) == 1 and isinstance(h.body[0], ast.Pass) for h in stmt.handlers)):
                sites.append((block, i))
    return sites


@graph_pass("graph/handler-tail", GraphPhase.STRUCTURE)
def handler_tail(source: str, entry: str, inputs: str) -> list[str]:
    """A ``try`` whose handler does nothing (``except E: pass``), and the
    statements after it in its block moved into that handler in place of its
    ``pass``: ``try: x[2]`` / ``except IndexError: pass`` / ``return x + 1``
    becomes ``try: x[2]`` / ``except IndexError: return x + 1``, one line
    less. The tail then runs only when the handler catches; a bug that needs
    the exception raised (a compiled call raising what eager catches, a
    handler Dynamo mistraces) keeps its signature, and the oracle rejects the
    candidate of any other. One candidate per such ``try`` (MAX_SITES at most)."""
    def move_tail(block: list[ast.stmt], i: int) -> None:
        handler = next(h for h in block[i].handlers if len(h.body) == 1 and isinstance(h.body[0], ast.Pass))
        handler.body = block[i + 1:]
        del block[i + 1:]

    return _rewritten_at_each(source, _handler_tail_sites, move_tail)


def _drained_loops(tree: ast.AST) -> list[Site]:
    """(block, index) of each ``for`` loop whose body is ``pass`` alone,
    without ``else``, whose target is a plain name."""
    return [(block, i) for block in _blocks(tree) for i, stmt in enumerate(block)
            if isinstance(stmt, ast.For) and not stmt.orelse and isinstance(stmt.target, ast.Name)
            and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Pass)]


@graph_pass("graph/drained-loop", GraphPhase.STRUCTURE)
def drained_loop(source: str, entry: str, inputs: str) -> list[str]:
    """A loop that only drains its iterable (``for i in g(): pass``) as
    ``list(g())``: the same iteration in one line, without the loop's
    target (the oracle rejects the candidate where a later read of the
    target, or a program that rebinds ``list``, mattered). One candidate per
    such loop (MAX_SITES at most)."""
    def drain(block: list[ast.stmt], i: int) -> None:
        block[i] = ast.Expr(ast.Call(ast.Name("list", ast.Load()), [block[i].iter], []))

    return _rewritten_at_each(source, _drained_loops, drain)


GRAPH_BREAK_CALL = "torch._dynamo.graph_break()"


def _compound_statements(tree: ast.Module, inputs: str) -> list[Site]:
    """(block, index) of each statement of more than one line inside a
    function other than ``inputs`` (a class, a loop, a ``with``, a ``try``,
    a nested function)."""
    return [(block, i) for function in ast.walk(tree) if isinstance(function, ast.FunctionDef)
            and function.name != inputs for block in _blocks(function) for i, stmt in enumerate(block)
            if (stmt.end_lineno or stmt.lineno) > stmt.lineno]


@graph_pass("graph/explicit-break", GraphPhase.STRUCTURE)
def explicit_break(source: str, entry: str, inputs: str) -> list[str]:
    """A statement of several lines in a function replaced by an explicit
    ``torch._dynamo.graph_break()``: many Dynamo bugs need only a graph
    break at some point, and a generated program gets it from a construct
    Dynamo does not trace (a class body, a ``with`` of an unsupported
    context). Only where the module imports ``torch``; one candidate per such
    statement (MAX_SITES at most), outermost first."""
    if not any(isinstance(n, ast.Import) and any(a.name == "torch" and a.asname is None for a in n.names)
               for n in ast.parse(source).body):
        return []
    def break_here(block: list[ast.stmt], i: int) -> None:
        block[i] = ast.parse(GRAPH_BREAK_CALL).body[0]

    return _rewritten_at_each(source, lambda tree: _compound_statements(tree, inputs), break_here)
