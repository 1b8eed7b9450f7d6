"""Data-flow candidates for the minimiser: a shorter return tuple, and the
assignments nothing reads any more.

Operator-heavy programs (fuzz.generate.tensor_graph) are long chains of
``t7 = op(t3, t5)`` whose results the entry function returns in one tuple.
Statement-level delta debugging cannot delete such a chain: removing any one
assignment leaves a later read of its name, eager raises NameError and the
candidate changes eager's behaviour. Dropping return-tuple elements first
and then every assignment whose name is never read (transitively: dead code
elimination) removes the chain in a few checks. The oracle still decides
every candidate, so an assignment whose call had an effect the bug needs is
kept. Works on the host's syntax trees only (no torch).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

__all__ = ["return_tuple_candidates", "without_dead_assignments"]


def _entry(tree: ast.Module, entry: str) -> ast.FunctionDef | None:
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry), None)


def _returned_tuple(function: ast.FunctionDef) -> ast.Tuple | None:
    """The tuple of the entry function's last top-level ``return``, if it is one."""
    last = function.body[-1] if function.body else None
    if isinstance(last, ast.Return) and isinstance(last.value, ast.Tuple) and len(last.value.elts) > 1:
        return last.value
    return None


def return_tuple_candidates(source: str, entry: str = "f") -> Iterator[str]:
    """``source`` with chunks of the entry function's returned tuple removed:
    halves first, then quarters, ... single elements, keeping at least one
    element (the function keeps returning a tuple). Nothing when the entry
    function does not end by returning a tuple of two or more."""
    tree = ast.parse(source)
    function = _entry(tree, entry)
    returned = _returned_tuple(function) if function else None
    if returned is None:
        return
    n = len(returned.elts)
    chunk = max(1, n // 2)
    while chunk >= 1:
        for start in range(0, n, chunk):
            kept = [e for i, e in enumerate(returned.elts) if not start <= i < start + chunk]
            if kept:
                copy = ast.parse(source)
                target = _returned_tuple(_entry(copy, entry))
                target.elts = [copy_elt for i, copy_elt in enumerate(target.elts) if not start <= i < start + chunk]
                yield ast.unparse(copy) + "\n"
        chunk //= 2


def _loaded_names(nodes: list[ast.AST]) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _scopes(function: ast.FunctionDef) -> list[ast.AST]:
    """The functions, lambdas and classes nested in ``function``."""
    return [n for n in ast.walk(function) if n is not function and isinstance(
        n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))]


def _simple_target(stmt: ast.stmt) -> str | None:
    """The one name a plain assignment ``name = expr`` binds (None otherwise)."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        return stmt.target.id
    return None


def without_dead_assignments(source: str, entry: str = "f") -> str | None:
    """``source`` with every top-level assignment of the entry function whose
    name is read nowhere in the function afterwards removed, repeated until
    none is left (so whole chains go), or None when there is none. A name the
    function declares ``global`` or ``nonlocal`` is never removed, and a
    block left empty gets ``pass``."""
    tree = ast.parse(source)
    function = _entry(tree, entry)
    if function is None:
        return None
    declared = {name for n in ast.walk(function) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
    removed = False
    while True:
        body = function.body
        dead = set()
        for i, stmt in enumerate(body):
            name = _simple_target(stmt)
            if name is None or name in declared:
                continue
            # read later in the body, or in a nested function, lambda or class
            # (which may run later, whenever it was defined)
            if name not in _loaded_names(body[i + 1:]) and name not in _loaded_names(_scopes(function)):
                dead.add(i)
        if not dead:
            break
        function.body = [s for i, s in enumerate(body) if i not in dead] or [ast.Pass()]
        removed = True
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n" if removed else None
