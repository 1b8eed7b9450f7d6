"""Data-flow candidates for the minimiser: a shorter return tuple, the
assignments nothing reads any more, copies, and operator calls bypassed.

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

__all__ = ["assigned_names", "bypass_operands", "bypass_sites", "bypassed", "return_tuple_candidates", "returned_input_candidates",
           "without_copies", "without_dead_assignments", "without_dead_code"]


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


def _simple_target(stmt: ast.stmt) -> str | None:
    """The one name a plain assignment ``name = expr`` binds (None otherwise)."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        return stmt.target.id
    return None


def _assigned_names(stmt: ast.stmt) -> set[str] | None:
    """The names a plain assignment binds (``x = e``, ``a, b = e``,
    ``x: T = e``); None for any other statement or target."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        elts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        if all(isinstance(e, ast.Name) for e in elts):
            return {e.id for e in elts}
        return None
    name = _simple_target(stmt)
    return {name} if name else None


def assigned_names(stmt: ast.stmt) -> set[str] | None:
    """The names a plain assignment binds (``x = e``, ``a, b = e``, ``x: T = e``); None for any other statement."""
    return _assigned_names(stmt)


def _statement_lists(function: ast.FunctionDef) -> Iterator[list[ast.stmt]]:
    """Every statement list of ``function`` outside nested functions and
    classes, the body first."""
    queue: list[ast.AST] = [function]
    while queue:
        node = queue.pop(0)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            if block and isinstance(block[0], ast.stmt):
                yield block
            queue.extend(n for n in block if not isinstance(
                n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))


def without_dead_assignments(source: str, entry: str = "f") -> str | None:
    """``source`` with every assignment in the entry function (at any depth,
    outside nested functions) whose names the function reads nowhere
    removed, repeated until none is left (so whole chains go), or None when
    there is none. A name the function declares ``global`` or ``nonlocal``
    is never removed, and a block left empty gets ``pass``."""
    tree = ast.parse(source)
    function = _entry(tree, entry)
    if function is None:
        return None
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n" if _drop_dead(function) else None


def without_dead_code(source: str) -> str | None:
    """``source`` with ``without_dead_assignments`` applied to every function
    at any depth (helpers, nested functions, methods, ``inputs``), not only
    the entry; None when nothing goes."""
    tree = ast.parse(source)
    changed = False
    for function in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        changed |= _drop_dead(function)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n" if changed else None


def _drop_dead(function: ast.FunctionDef) -> bool:
    """Remove ``function``'s dead assignments in place (see
    ``without_dead_assignments``); True if any went."""
    declared = {name for n in ast.walk(function) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
    removed = False
    while True:
        loaded = _loaded_names([function])
        changed = False
        for block in _statement_lists(function):
            kept = []
            for stmt in block:
                names = _assigned_names(stmt)
                if names and not names & (loaded | declared):
                    changed = True
                    continue
                kept.append(stmt)
            block[:] = kept or [ast.Pass()]
        if not changed:
            break
        removed = True
    return removed


def _local_stores(function: ast.FunctionDef) -> dict[str, int]:
    """How often each name is bound in ``function`` outside nested scopes
    (parameters count once)."""
    counts: dict[str, int] = {}
    args = function.args
    for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if a is not None:
            counts[a.arg] = counts.get(a.arg, 0) + 1
    queue: list[ast.AST] = list(function.body)
    while queue:
        node = queue.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[node.name] = counts.get(node.name, 0) + 1
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            counts[node.id] = counts.get(node.id, 0) + 1
        queue.extend(ast.iter_child_nodes(node))
    return counts


def without_copies(source: str) -> str | None:
    """``source`` with each copy ``a = b`` of a function's body or of the
    ``with``/``try`` blocks in it, never a loop's (both plain local names, each bound once in the function, neither read
    in a nested scope nor declared global or nonlocal) removed and ``a`` read
    as ``b``; None when there is none. ``t2 = t`` / ``return t2`` becomes
    ``return t``."""
    tree = ast.parse(source)
    changed = False
    for function in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        stores = _local_stores(function)
        nested = _loaded_names([n for n in ast.walk(function) if n is not function and isinstance(
            n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))])
        declared = {name for n in ast.walk(function) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
        for block in list(_blocks_outside_loops(function)):
            for stmt in list(block):
                if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                        and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Name)):
                    continue
                a, b = stmt.targets[0].id, stmt.value.id
                if a == b or stores.get(a) != 1 or stores.get(b, 0) > 1 or {a, b} & (nested | declared):
                    continue
                block.remove(stmt)
                for node in ast.walk(function):
                    if isinstance(node, ast.Name) and node.id == a and isinstance(node.ctx, ast.Load):
                        node.id = b
                block[:] = block or [ast.Pass()]
                changed = True
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n" if changed else None


# ---------------------------------------------------------------- operator bypass

def _blocks_outside_loops(function: ast.FunctionDef) -> Iterator[list[ast.stmt]]:
    """The statement lists of ``function`` that run once per call, in full
    unless an exception leaves them: its body and the blocks of ``with`` and
    ``try`` statements in them; never a loop's body, an ``if`` branch (a copy
    made in a branch not taken is unbound after it) or a nested scope's."""
    queue: list[list[ast.stmt]] = [function.body]
    while queue:
        block = queue.pop(0)
        yield block
        for stmt in block:
            if isinstance(stmt, (ast.With, ast.AsyncWith)):
                queue.append(stmt.body)
            elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
                queue += [b for b in (stmt.body, stmt.orelse, stmt.finalbody) if b]
                queue += [h.body for h in stmt.handlers]


def _bypass_sites(function: ast.FunctionDef) -> list[tuple[ast.Assign, list[str]]]:
    """The assignments ``v = expr`` of ``function`` (any depth outside nested
    scopes, in statement-list order) whose value is an operation on local
    values: each with the distinct local names ``expr`` reads (parameters or
    names the function binds) in evaluation order, one of which the bypass
    puts in place of ``expr``. A plain copy ``v = w`` is no site (the copy
    pass handles it)."""
    local = set(_local_stores(function))
    sites = []
    for block in _statement_lists(function):
        for stmt in block:
            name = _simple_target(stmt)
            if name is None or not isinstance(stmt, ast.Assign) or isinstance(stmt.value, (ast.Name, ast.Constant)):
                continue
            if any(isinstance(n, (ast.Lambda, ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await))
                   for n in ast.walk(stmt.value)):
                continue
            # the operands in evaluation order (a method call's receiver, then its arguments)
            reads = [n.id for n in _in_order(stmt.value) if isinstance(n, ast.Name)
                     and isinstance(n.ctx, ast.Load) and n.id in local]
            if reads:
                sites.append((stmt, list(dict.fromkeys(reads))))
    return sites


def _in_order(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes under ``node``, depth first, children in source order."""
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _in_order(child)


def bypass_sites(source: str, entry: str = "f") -> int:
    """How many assignments of the entry function ``bypassed`` can replace."""
    function = _entry(ast.parse(source), entry)
    return len(_bypass_sites(function)) if function else 0


def bypass_operands(source: str, entry: str = "f") -> list[int]:
    """How many distinct local operands each bypass site of the entry function reads."""
    function = _entry(ast.parse(source), entry)
    return [len(reads) for _, reads in _bypass_sites(function)] if function else []


def bypassed(source: str, chosen: set[int], entry: str = "f", rank: int = 0) -> str | None:
    """``source`` with the chosen bypass sites (indices into the entry
    function's sites, ``bypass_sites``) made copies of their first operand
    (``rank`` k: their k+1-th distinct local operand; a site with fewer is left):
    ``y = torch.sin(x) * w`` becomes ``y = x`` (and ``x = op(x)`` goes), then
    copies propagated and dead assignments removed, so an operator chain
    shrinks by one line per bypassed call. None when nothing changes.

    Source of the idea: the "replace a node by one of its children" reduction
    of C-Reduce and Perses, applied here to the data-flow chains that
    operator-heavy programs are made of; the oracle decides every candidate
    (a bypass that changes a shape eager needs is rejected)."""
    tree = ast.parse(source)
    function = _entry(tree, entry)
    if function is None:
        return None
    sites = _bypass_sites(function)
    doomed = []
    chosen = {i for i in chosen if 0 <= i < len(sites) and rank < len(sites[i][1])}
    for index in sorted(chosen):
        stmt, operands = sites[index]
        operand = operands[rank]
        if operand == stmt.targets[0].id:
            doomed.append(stmt)  # ``x = op(x)`` bypassed is ``x = x``: gone
        else:
            stmt.value = ast.Name(id=operand, ctx=ast.Load())
    if doomed:
        for block in _statement_lists(function):
            kept = [s for s in block if not any(s is d for d in doomed)]
            if len(kept) != len(block):
                block[:] = kept or [ast.Pass()]
    if not chosen:
        return None
    text = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    for rewrite in (without_copies, lambda s: without_dead_assignments(s, entry)):
        text = rewrite(text) or text
    return text if text != source else None


# ---------------------------------------------------------------- returned value

# Parameters of the entry function tried as its returned value (first ones first).
MAX_RETURNED_INPUTS = 2


def returned_input_candidates(source: str, entry: str = "f") -> Iterator[str]:
    """``source`` with the entry function's last top-level ``return`` giving
    one of its first MAX_RETURNED_INPUTS parameters instead, with every
    assignment that leaves dead removed (``without_dead_assignments``), then
    without that removal (measured: the dead assignment was the one whose
    value raised, the bug): where
    the finding is not in the returned value (a compile error, a graph break,
    an exception), the whole computation that fed it goes in one check, as
    statement deletion cannot (removing ``gr = torch.autograd.grad(...)`` and
    its chain leaves ``return gr`` unbound). Nothing when the function
    already returns a bare parameter."""
    tree = ast.parse(source)
    function = _entry(tree, entry)
    if function is None or not function.body or not isinstance(function.body[-1], ast.Return):
        return
    params = [a.arg for a in function.args.posonlyargs + function.args.args][:MAX_RETURNED_INPUTS]
    value = function.body[-1].value
    if value is None or (isinstance(value, ast.Name) and value.id in params):
        return
    for name in params:
        copy = ast.parse(source)
        _entry(copy, entry).body[-1].value = ast.Name(id=name, ctx=ast.Load())
        text = ast.unparse(ast.fix_missing_locations(copy)) + "\n"
        pruned = without_dead_assignments(text, entry)
        if pruned is not None:
            yield pruned
        yield text  # a dead assignment may be what raises: statement deletion then takes what is not needed
