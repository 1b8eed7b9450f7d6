"""The minimiser's operator-graph passes (``graph/...``): reductions for
tensor programs that statement deletion and pysource-minimize do not find.

A generated tensor program is a chain of operator calls, often inside a
helper that returns a tuple, over inputs and constant tensors of made-up
shapes and dtypes. Each pass here is one idea: a function
``propose(source, entry, inputs) -> [candidate, ...]`` registered with
``@graph_pass(name, phase)``, whose candidates the oracle checks in order,
the first that holds taken and the pass repeated from it (``reduce_graph``).
Every candidate moves down a measure of its own pass (fewer definitions,
smaller literals, fewer non-float32 dtypes), so a pass ends.

Two phases: ``GraphPhase.STRUCTURE`` runs before statement deletion (a
single-use helper inlined and its returned tuple unpacked, so the data-flow
passes see its dead results; unused definitions and parameters; and the
block passes of fuzz.reduce.block_passes); and
``GraphPhase.VALUES`` after the operator bypass (another operand in place of a
result, constant tensors as ``torch.ones``, dtypes towards float32, smaller
shapes and fewer dims). Works on the host's syntax trees only (no torch).
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import enum
import math
from collections.abc import Callable, Iterator
from typing import Any

from fuzz.corpus.render import code_lines
from fuzz.reduce import dataflow

# fuzz.reduce.pipeline._Oracle (that module imports this one)
_Oracle = Any

# Rounds of one pass at most (each takes one candidate); a bound on the checks
# a pass may spend, on top of the measure each candidate lowers.
MAX_ROUNDS = 40
# Candidates of one kind a pass proposes at most per round (one per site
# beyond that is rarely the one that holds, and each costs a check).
MAX_SITES = 12


class GraphPhase(enum.Enum):
    """When in the source stage a graph pass runs."""

    STRUCTURE = "structure"  # before statement deletion
    VALUES = "values"  # after the operator bypass

    def describe(self) -> str:
        return {GraphPhase.STRUCTURE: "before statement deletion: helpers inlined, unused code removed",
                GraphPhase.VALUES: "after the operator bypass: operands, constants, dtypes and shapes"}[self]


Propose = Callable[[str, str, str], list[str]]


@dataclasses.dataclass(frozen=True)
class GraphPass:
    """A registered pass: ``name`` (``graph/...``), ``phase``, and
    ``propose(source, entry, inputs) -> candidates``."""

    name: str
    phase: GraphPhase
    propose: Propose


GRAPH_PASSES: list[GraphPass] = []


def graph_pass(name: str, phase: GraphPhase) -> Callable[[Propose], Propose]:
    """Register ``propose`` as the pass ``name`` of ``phase`` (run in
    registration order). Raises ValueError for a name registered twice."""

    def register(propose: Propose) -> Propose:
        if any(p.name == name for p in GRAPH_PASSES):
            raise ValueError(f"Expected a new graph pass name but got name={name!r}")
        GRAPH_PASSES.append(GraphPass(name, phase, propose))
        return propose

    return register


def reduce_graph(oracle: _Oracle, entry: str, inputs: str, phase: GraphPhase, jobs: int = 1) -> None:
    """Run the passes of ``phase``: each proposes candidates from the best
    source, no longer in lines; the first that holds (in order, ``jobs``
    per interpreter checked at once) becomes the best even where it is not
    shorter (a dtype, a size), and the pass repeats (MAX_ROUNDS at most)."""
    for graph in [p for p in GRAPH_PASSES if p.phase is phase]:
        oracle.current = graph.name
        for _ in range(MAX_ROUNDS):
            source = oracle.best
            try:
                candidates = [c for c in dict.fromkeys(graph.propose(source, entry, inputs))
                              if c != source and code_lines(c) <= code_lines(source)]
            except (SyntaxError, ValueError, RecursionError):  # an AST the pass cannot handle: no candidate
                break
            taken = False
            step = oracle.batch(jobs)
            for k in range(0, len(candidates), step):
                batch = candidates[k:k + step]
                hit = next((c for ok, c in zip(oracle.many(batch), batch) if ok), None)
                if hit is not None:
                    if oracle.best == source:  # else the oracle took it, or a smaller one of the batch
                        oracle.take(hit)
                    taken = True
                    break
            if not taken:
                break


def _unparse(tree: ast.AST) -> str:
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _scopes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes under ``node`` outside nested functions, lambdas and classes."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield from _scopes(child)


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _blocks(tree: ast.AST) -> Iterator[list[ast.stmt]]:
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


def _loads(tree: ast.AST, name: str) -> list[ast.Name]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]


def _read_names(node: ast.AST) -> set[str]:
    """Names ``node`` reads: loads, ``del``s and augmented assignments' targets."""
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}
    return names | {n.target.id for n in ast.walk(node) if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)}


def _bound_names(function: ast.FunctionDef) -> set[str]:
    """Every name ``function``'s subtree binds: parameters, stores, definitions, imports."""
    names = set()
    for n in ast.walk(function):
        if n is not function and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, ast.arg):
            names.add(n.arg)
        elif isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            names.add(n.id)
        elif isinstance(n, ast.alias):
            names.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
    return names


# ---------------------------------------------------------------- structure

def _rename(node: ast.AST, mapping: dict[str, str]) -> None:
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in mapping:
            n.id = mapping[n.id]
        elif isinstance(n, ast.arg) and n.arg in mapping:
            n.arg = mapping[n.arg]


def _unpacked(target: ast.expr, value: ast.expr) -> list[ast.stmt]:
    """``a, b = x, y`` as ``a = x`` and ``b = y`` where no element reads a
    name bound before it; the one assignment otherwise."""
    if (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
            and len(target.elts) == len(value.elts) and all(isinstance(t, ast.Name) for t in target.elts)
            and not any(isinstance(e, ast.Starred) for e in value.elts)):
        bound: set[str] = set()
        for t, e in zip(target.elts, value.elts):
            if _read_names(e) & bound:
                break
            bound.add(t.id)
        else:
            return [ast.Assign(targets=[ast.Name(t.id, ast.Store())], value=e) for t, e in zip(target.elts, value.elts)]
    return [ast.Assign(targets=[target], value=value)]


def _fresh(name: str, used: set[str]) -> str:
    """A name not in ``used`` (added to it): ``name``'s letters and the
    first free number (``t`` -> ``t2``), the generator's style, which the
    tidy stage's readable names rename."""
    prefix = name.rstrip("0123456789_") or "v"
    k = 2
    while f"{prefix}{k}" in used:
        k += 1
    used.add(f"{prefix}{k}")
    return f"{prefix}{k}"


def _inlinable(helper: ast.FunctionDef) -> bool:
    """A helper without decorators, *args/**kwargs or keyword-only
    parameters, whose only ``return`` is its last statement and that neither
    yields, awaits nor declares names global or nonlocal."""
    args = helper.args
    if helper.decorator_list or args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        return False
    body = list(_scopes(helper))
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)) for n in body):
        return False
    returns = [n for n in body if isinstance(n, ast.Return)]
    return not returns or (len(returns) == 1 and helper.body[-1] is returns[0])


def _inline_one(tree: ast.Module, helper: ast.FunctionDef, entry: str, inputs: str) -> bool:
    """Inline ``helper`` at its one call site in ``tree`` (in place); False if it cannot be."""
    parents = _parents(tree)
    uses = _loads(tree, helper.name)
    defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == helper.name]
    stores = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == helper.name
              and not isinstance(n.ctx, ast.Load)]
    if len(uses) != 1 or len(defs) != 1 or stores or not _inlinable(helper):
        return False
    call = parents.get(id(uses[0]))
    if not isinstance(call, ast.Call) or call.func is not uses[0] or call.keywords or \
            any(isinstance(a, ast.Starred) for a in call.args):
        return False
    stmt = parents.get(id(call))
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.value is call) and \
            not (isinstance(stmt, (ast.Expr, ast.Return)) and stmt.value is call):
        return False
    params = helper.args.args
    defaults = [None] * (len(params) - len(helper.args.defaults)) + list(helper.args.defaults)
    if len(call.args) > len(params) or any(d is None for d in defaults[len(call.args):]):
        return False
    # the call's function: the helper's free names must mean there what they meant where it was defined
    caller = stmt
    while caller is not None and not isinstance(caller, (ast.FunctionDef, ast.Module)):
        caller = parents.get(id(caller))
    if caller is None:
        return False
    helper_parent = parents.get(id(helper))
    bound = _bound_names(helper)
    free = {n.id for n in ast.walk(helper) if isinstance(n, ast.Name)} - bound
    in_helper = {id(n) for n in ast.walk(helper)}
    caller_nodes = [n for n in ast.walk(caller) if id(n) not in in_helper]
    caller_names = {n.id for n in caller_nodes if isinstance(n, ast.Name)} | \
        {n.arg for n in caller_nodes if isinstance(n, ast.arg)}
    inside = {n.id for n in ast.walk(helper) if isinstance(n, ast.Name)} | {n.arg for n in ast.walk(helper)
                                                                          if isinstance(n, ast.arg)}
    if helper_parent is not caller and free & (_bound_names(caller) if isinstance(caller, ast.FunctionDef) else set()):
        return False
    stored = {n.id for n in ast.walk(helper) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    used = caller_names | inside | {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    mapping: dict[str, str] = {}
    prelude: list[ast.stmt] = []
    values = list(call.args) + [d for d in defaults[len(call.args):]]
    for param, value in zip(params, values):
        if isinstance(value, ast.Name) and value.id == param.arg and param.arg not in stored:
            continue  # f(y) calls g(y) with its own y: nothing to bind
        mapping[param.arg] = _fresh(param.arg, used) if param.arg in caller_names else param.arg
        prelude.append(ast.Assign(targets=[ast.Name(mapping[param.arg], ast.Store())], value=value))
    outside_call = caller_names - {helper.name}
    for name in (bound - {p.arg for p in params}) & outside_call:
        mapping[name] = _fresh(name, used)
    body = copy.deepcopy(helper.body)
    for statement in body:
        _rename(statement, mapping)
    result: ast.expr = ast.Constant(None)
    if body and isinstance(body[-1], ast.Return):
        result = body.pop().value or ast.Constant(None)
    if isinstance(stmt, ast.Assign):
        tail = _unpacked(stmt.targets[0], result)
    elif isinstance(stmt, ast.Return):
        tail = [ast.Return(value=result)]
    else:
        tail = [] if isinstance(result, (ast.Constant, ast.Name)) else [ast.Expr(value=result)]
    replacement = prelude + body + tail
    for block in _blocks(tree):
        if any(s is stmt for s in block):
            index = next(i for i, s in enumerate(block) if s is stmt)
            block[index:index + 1] = replacement or [ast.Pass()]
            break
    for block in _blocks(tree):
        if any(s is helper for s in block):
            block[:] = [s for s in block if s is not helper] or [ast.Pass()]
            break
    return True


def _tidied(text: str) -> str:
    """``text`` with copies propagated and dead assignments removed everywhere."""
    for rewrite in (dataflow.without_copies, dataflow.without_dead_code):
        text = rewrite(text) or text
    return text


@graph_pass("graph/inline-helper", GraphPhase.STRUCTURE)
def inline_helpers(source: str, entry: str, inputs: str) -> list[str]:
    """Each function called once (not ``entry`` or ``inputs``) inlined at its
    call: parameters bound to the arguments (none where the argument is the
    same name), its locals renamed where the caller uses the name, its
    returned tuple unpacked into the call's targets (``a, b = g(x)`` with
    ``return (x + 1, 0)`` becomes ``a = x + 1`` and ``b = 0``), then copies
    and dead assignments removed, so the helper's unused results go too
    (and without that cleaning as a second candidate)."""
    tree = ast.parse(source)
    candidates = []
    names = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name not in (entry, inputs)]
    for name in names[:MAX_SITES]:
        copy_tree = ast.parse(source)
        helper = next(n for n in ast.walk(copy_tree) if isinstance(n, ast.FunctionDef) and n.name == name)
        parent = _parents(copy_tree).get(id(helper))
        if isinstance(parent, ast.ClassDef):
            continue  # a method is called through its object
        if _inline_one(copy_tree, helper, entry, inputs):
            inlined = _unparse(copy_tree)
            # then as it is (where the results the cleaning dropped mattered; kept if no longer)
            candidates += [_tidied(inlined), inlined]
    return candidates


@graph_pass("graph/dead-code", GraphPhase.STRUCTURE)
def dead_code(source: str, entry: str, inputs: str) -> list[str]:
    """The operator calls whose results nothing reads, in every function
    (fuzz.reduce.dataflow.without_dead_code; the data-flow pass covers only
    the entry), with copies propagated first."""
    text = _tidied(source)
    return [text] if text != source else []


def _unused_definitions(tree: ast.Module, entry: str, inputs: str) -> list[ast.stmt]:
    """Functions and classes at any depth (never methods, ``entry`` or
    ``inputs``) whose names nothing reads, and module-level assignments
    ``obj = Net()`` of names nothing reads (``global`` declarations count as reads)."""
    parents = _parents(tree)
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    read |= {name for n in ast.walk(tree) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
    found: list[ast.stmt] = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                         ast.ClassDef))
                             and n.name not in read | {entry, inputs} and not isinstance(parents.get(id(n)), ast.ClassDef)]
    for stmt in tree.body:
        targets = dataflow.assigned_names(stmt)
        if targets and not targets & read and not any(t.startswith("__") for t in targets):
            found.append(stmt)
    return found


def _unused_attributes(tree: ast.Module) -> list[ast.stmt]:
    """``self.x = ...`` statements in methods whose attribute nothing in the
    program reads (an ``nn.Module``'s submodule or parameter never used)."""
    read = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)}
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    found = []
    for cls in [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]:
        for method in [n for n in cls.body if isinstance(n, ast.FunctionDef)]:
            for stmt in ast.walk(method):
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Attribute) \
                        and isinstance(stmt.targets[0].value, ast.Name) and stmt.targets[0].value.id == "self" \
                        and stmt.targets[0].attr not in read | strings:
                    found.append(stmt)
    return found


def _without_nodes(source: str, pick: Callable[[ast.Module], list[ast.stmt]], chosen: set[int] | None) -> str:
    tree = ast.parse(source)
    doomed = pick(tree)
    doomed = [d for i, d in enumerate(doomed) if chosen is None or i in chosen]
    for block in _blocks(tree):
        if any(s is d for s in block for d in doomed):
            block[:] = [s for s in block if not any(s is d for d in doomed)] or [ast.Pass()]
    return _unparse(tree)


@graph_pass("graph/unused-definitions", GraphPhase.STRUCTURE)
def unused_definitions(source: str, entry: str, inputs: str) -> list[str]:
    """Unused classes, functions, module-level objects and ``self.x = ...``
    attributes (modules, parameters nothing reads): all at once, then one
    each; a class whose one object goes becomes unused for the next round."""
    candidates = []
    for pick in (lambda t: _unused_definitions(t, entry, inputs), _unused_attributes):
        n = len(pick(ast.parse(source)))
        if n:
            candidates.append(_without_nodes(source, pick, None))
            if n > 1:
                candidates += [_without_nodes(source, pick, {i}) for i in range(min(n, MAX_SITES))]
    return candidates


@graph_pass("graph/unused-parameters", GraphPhase.STRUCTURE)
def unused_parameters(source: str, entry: str, inputs: str) -> list[str]:
    """A helper's parameters that its body never reads, dropped with the
    matching argument of each call; only for a helper (not ``entry``,
    ``inputs`` or a method) whose every use is a call with positional
    arguments. All of a helper's at once, then one each."""
    tree = ast.parse(source)
    parents = _parents(tree)
    candidates = []
    for helper in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name not in (entry, inputs)]:
        args = helper.args
        if isinstance(parents.get(id(helper)), ast.ClassDef) or args.vararg or args.kwarg or args.posonlyargs:
            continue
        uses = _loads(tree, helper.name)
        calls = [parents.get(id(u)) for u in uses]
        if not uses or not all(isinstance(c, ast.Call) and c.func is u and not c.keywords
                               and not any(isinstance(a, ast.Starred) for a in c.args) for c, u in zip(calls, uses)):
            continue
        read = set().union(*(_read_names(s) for s in helper.body))
        unused = [i for i, a in enumerate(args.args) if a.arg not in read]
        for drop in ([unused] if len(unused) > 1 else []) + [[i] for i in unused[:MAX_SITES]]:
            copy_tree = ast.parse(source)
            h = next(n for n in ast.walk(copy_tree) if isinstance(n, ast.FunctionDef) and n.name == helper.name
                     and n.lineno == helper.lineno)
            params = h.args.args
            defaults = [None] * (len(params) - len(h.args.defaults)) + list(h.args.defaults)
            h.args.args = [a for i, a in enumerate(params) if i not in drop]
            kept_defaults = [d for i, d in enumerate(defaults) if i not in drop]
            h.args.defaults = [d for d in kept_defaults if d is not None]
            if None in kept_defaults[len(kept_defaults) - len(h.args.defaults):]:
                continue  # a parameter without a default after one with: not a valid signature
            for use in _loads(copy_tree, helper.name):
                call = _parents(copy_tree)[id(use)]
                call.args = [a for i, a in enumerate(call.args) if i not in drop]
            candidates.append(_unparse(copy_tree))
    return candidates


# ---------------------------------------------------------------- values

@graph_pass("graph/other-operand", GraphPhase.VALUES)
def other_operands(source: str, entry: str, inputs: str) -> list[str]:
    """An operator call's result replaced by its second or third distinct
    local operand (the bypass pass tries the first): ``t4 = fmax(t, t2)``
    becomes ``t4 = t2``, then copies and dead assignments go. Where the
    operand's shape differs, the oracle rejects it."""
    counts = dataflow.bypass_operands(source, entry)
    candidates = []
    for rank in (1, 2):
        for site in [i for i, n in enumerate(counts) if n > rank][:MAX_SITES]:
            text = dataflow.bypassed(source, {site}, entry, rank=rank)
            if text is not None:
                candidates.append(text)
    return candidates


def _torch_call(node: ast.AST, names: tuple[str, ...]) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names and \
        isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"


def _int_args(call: ast.Call) -> list[int] | None:
    """The sizes a call's arguments spell: int literals, or one tuple/list of them."""
    args = call.args
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        args = args[0].elts
    if args and all(isinstance(a, ast.Constant) and type(a.value) is int for a in args):
        return [a.value for a in args]
    return None


def _constant_shape(node: ast.Call) -> tuple[list[int], ast.expr | None, list[ast.keyword]] | None:
    """The shape, dtype and other keywords of a constant tensor
    ``torch.linspace(a, b, n)`` / ``torch.arange(...)``, optionally
    ``.reshape(...)``/``.view(...)`` with int sizes; None otherwise."""
    root, shape = node, None
    if isinstance(node.func, ast.Attribute) and node.func.attr in ("reshape", "view") and \
            isinstance(node.func.value, ast.Call):
        shape, root = _int_args(node), node.func.value
        if shape is None or any(d < 0 for d in shape):
            return None
    if not _torch_call(root, ("linspace", "arange")):
        return None
    keywords = {k.arg: k for k in root.keywords}
    dtype = keywords["dtype"].value if "dtype" in keywords else None
    rest = [k for k in root.keywords if k.arg in ("device", "requires_grad")]
    if root.func.attr == "linspace":
        steps = root.args[2] if len(root.args) > 2 else (keywords["steps"].value if "steps" in keywords else None)
        if not (isinstance(steps, ast.Constant) and type(steps.value) is int):
            return None
        n = steps.value
    else:
        bounds = [a.value for a in root.args if isinstance(a, ast.Constant) and type(a.value) is int]
        if len(bounds) != len(root.args) or not 1 <= len(bounds) <= 3 or any(k.arg in ("start", "end", "step")
                                                                              for k in root.keywords):
            return None
        start, end, step = (0, bounds[0], 1) if len(bounds) == 1 else (bounds + [1])[:3]
        n = max(0, math.ceil((end - start) / step)) if step else 0
        dtype = dtype or ast.parse("torch.int64", mode="eval").body
    shape = shape if shape is not None else [n]
    if math.prod(shape) != n or not shape:
        return None
    return shape, dtype, rest


@graph_pass("graph/constant-tensors", GraphPhase.VALUES)
def constant_tensors(source: str, entry: str, inputs: str) -> list[str]:
    """Constant tensors (``torch.linspace(-1, 1, 450).reshape(6, 5, 5, 3)``,
    ``torch.arange(600).reshape(...)``) as ``torch.ones`` of their shape and
    dtype; in ``inputs`` as ``torch.randn`` for a floating one. Not
    ``randn`` in the program itself: eager and compiled code draw different
    random numbers there. All at once, then one each."""
    def sites(tree: ast.Module) -> list[ast.Call]:
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _constant_shape(n)]
        inner = {id(n.func.value) for n in calls if isinstance(n.func, ast.Attribute)}
        return [n for n in calls if id(n) not in inner]  # the reshape, not the linspace inside it

    def rewrite(chosen: set[int] | None) -> str:
        tree = ast.parse(source)
        parents = _parents(tree)
        make = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == inputs), None)
        in_inputs = {id(n) for n in ast.walk(make)} if make else set()
        for i, call in enumerate(sites(tree)):
            if chosen is not None and i not in chosen:
                continue
            shape, dtype, rest = _constant_shape(call)
            floating = dtype is None or "float" in ast.unparse(dtype) or "half" in ast.unparse(dtype)
            factory = "randn" if id(call) in in_inputs and floating else "ones"
            keywords = ([ast.keyword("dtype", dtype)] if dtype is not None else []) + rest
            new = ast.Call(ast.Attribute(ast.Name("torch", ast.Load()), factory, ast.Load()),
                           [ast.Constant(d) for d in shape], keywords)
            parent = parents[id(call)]
            for field, value in ast.iter_fields(parent):
                if value is call:
                    setattr(parent, field, new)
                elif isinstance(value, list):
                    value[:] = [new if v is call else v for v in value]
        return _unparse(tree)

    n = len(sites(ast.parse(source)))
    return ([rewrite(None)] if n else []) + ([rewrite({i}) for i in range(min(n, MAX_SITES))] if n > 1 else [])


# dtypes the dtype pass turns into float32, and tensor methods it turns into .float()
_WIDE_DTYPES = frozenset({"float64", "double", "float16", "half", "bfloat16"})
_WIDE_METHODS = frozenset({"double", "half", "bfloat16"})


def _dtype_sites(tree: ast.Module) -> list[ast.AST]:
    """``torch.float64``-like attributes, ``.double()``-like calls and ``dtype=`` keywords, in walk order."""
    found: list[ast.AST] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and n.attr in _WIDE_DTYPES and isinstance(n.value, ast.Name) \
                and n.value.id == "torch":
            found.append(n)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _WIDE_METHODS \
                and not n.args and not n.keywords:
            found.append(n)
    return found


@graph_pass("graph/dtypes", GraphPhase.VALUES)
def simpler_dtypes(source: str, entry: str, inputs: str) -> list[str]:
    """Dtypes towards float32: ``torch.float64``/``float16``/``bfloat16`` as
    ``torch.float32`` and ``.double()``/``.half()`` as ``.float()`` (all at
    once, then one each); then ``dtype=`` keywords dropped (all, then each)."""
    def retyped(chosen: set[int] | None) -> str:
        tree = ast.parse(source)
        for i, node in enumerate(_dtype_sites(tree)):
            if chosen is None or i in chosen:
                if isinstance(node, ast.Attribute):
                    node.attr = "float32"
                else:
                    node.func.attr = "float"
        return _unparse(tree)

    def keywords(tree: ast.Module) -> list[tuple[ast.Call, ast.keyword]]:
        return [(n, k) for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords if k.arg == "dtype"]

    def undtyped(chosen: set[int] | None) -> str:
        tree = ast.parse(source)
        for i, (call, keyword) in enumerate(keywords(tree)):
            if chosen is None or i in chosen:
                call.keywords = [k for k in call.keywords if k is not keyword]
        return _unparse(tree)

    n, m = len(_dtype_sites(ast.parse(source))), len(keywords(ast.parse(source)))
    candidates = ([retyped(None)] if n else []) + ([retyped({i}) for i in range(min(n, MAX_SITES))] if n > 1 else [])
    candidates += ([undtyped(None)] if m else []) + ([undtyped({i}) for i in range(min(m, MAX_SITES))] if m > 1 else [])
    return candidates


# torch factories whose int arguments (or one tuple of them) are sizes; and
# those whose one int argument is the element count
_SIZED = frozenset({"randn", "rand", "ones", "zeros", "empty"})
_COUNTED = frozenset({"randperm", "arange"})


def _size_holder(call: ast.Call) -> list[ast.expr]:
    """Where a call keeps its sizes: its arguments, or its one tuple/list (``randint``'s third)."""
    if _torch_call(call, ("randint",)):
        return next((a.elts for a in call.args if isinstance(a, (ast.Tuple, ast.List))), [])
    if len(call.args) == 1 and isinstance(call.args[0], (ast.Tuple, ast.List)):
        return call.args[0].elts
    return call.args


def _role(call: ast.Call) -> str | None:
    """"sizes" (a factory's, ``randint``'s, ``reshape``/``view``'s), "count"
    (``randperm(n)``, ``arange(n)``, ``linspace``'s steps) or None."""
    if (isinstance(call.func, ast.Attribute) and call.func.attr in ("reshape", "view")) or \
            _torch_call(call, _SIZED | {"randint"}):
        return "sizes"
    if (_torch_call(call, _COUNTED) and len(call.args) == 1) or (_torch_call(call, ("linspace",)) and len(call.args) > 2):
        return "count"
    return None


@dataclasses.dataclass
class _Chain:
    """The size literals of one outermost chain of calls
    (``torch.arange(600).reshape(6, 5, 4, 5)``): ``count`` (600), the last
    sizes call (the reshape) and its int literals."""

    count: ast.Constant | None
    sized: ast.Call | None
    sizes: list[ast.Constant]
    inner: list[ast.Constant] = dataclasses.field(default_factory=list)  # sizes of calls inside ``sized``

    @property
    def literals(self) -> list[ast.Constant]:
        return ([self.count] if self.count is not None else []) + self.sizes + self.inner


def _int(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _chains(tree: ast.Module) -> list[_Chain]:
    """The chains of ``tree`` with a size literal above 1, in walk order."""
    parents = _parents(tree)
    chains = []
    for node in ast.walk(tree):
        parent = parents.get(id(node))
        if not isinstance(node, ast.Call) or (isinstance(parent, ast.Attribute) and isinstance(
                parents.get(id(parent)), ast.Call) and parents[id(parent)].func is parent):
            continue  # not outermost: its chain's last call holds it
        chain, call = _Chain(None, None, []), node
        while isinstance(call, ast.Call):
            role = _role(call)
            if role == "sizes" and chain.sized is None:
                chain.sized, chain.sizes = call, [a for a in _size_holder(call) if _int(a)]
            elif role == "sizes":  # ``randn(5, 6).reshape(30)``: only all sizes to 1 at once keeps them apart
                chain.inner += [a for a in _size_holder(call) if _int(a)]
            elif role == "count" and chain.count is None:
                counted = call.args[2] if _torch_call(call, ("linspace",)) else call.args[0]
                chain.count = counted if _int(counted) else None
            call = call.func.value if isinstance(call.func, ast.Attribute) else None
        if any(c.value > 1 for c in chain.literals):
            chains.append(chain)
    return chains


@graph_pass("graph/shapes", GraphPhase.VALUES)
def smaller_shapes(source: str, entry: str, inputs: str) -> list[str]:
    """Shapes smaller, anywhere in the program: every size literal of
    factories, counts and ``reshape``/``view`` to 1 at once; each chain's to 1;
    each chain with one dim fewer (its first; a count divided by it, so
    ``arange(600).reshape(6, 100)`` becomes ``arange(100).reshape(100)``);
    each size to 1 (a count divided alike)."""
    def edited(edit: Callable[[list[_Chain]], bool]) -> str | None:
        tree = ast.parse(source)
        return _unparse(tree) if edit(_chains(tree)) else None

    def ones(chains: list[_Chain], only: int | None = None) -> bool:
        for g, chain in enumerate(chains):
            if only is None or g == only:
                for c in chain.literals:
                    c.value = 1
        return True

    def divide(chain: _Chain, by: int) -> bool:
        if chain.inner:
            return False  # the inner sizes' product would have to change with it
        if chain.count is None:
            return True
        if by == 0 or chain.count.value % by:
            return False
        chain.count.value //= by
        return True

    def fewer_dims(chains: list[_Chain], g: int) -> bool:
        chain = chains[g]
        holder = _size_holder(chain.sized) if chain.sized is not None else []
        if len(chain.sizes) < 2 or len(holder) != len(chain.sizes) or not divide(chain, chain.sizes[0].value):
            return False
        holder.remove(chain.sizes[0])
        return True

    def one_size(chains: list[_Chain], g: int, k: int) -> bool:
        chain = chains[g]
        if k >= len(chain.sizes) or chain.sizes[k].value <= 1 or not divide(chain, chain.sizes[k].value):
            return False
        chain.sizes[k].value = 1
        return True

    chains = _chains(ast.parse(source))[:MAX_SITES]
    edits: list[Callable[[list[_Chain]], bool]] = [ones]
    edits += [lambda cs, g=g: ones(cs, g) for g in range(len(chains))] if len(chains) > 1 else []
    edits += [lambda cs, g=g: fewer_dims(cs, g) for g in range(len(chains))]
    edits += [lambda cs, g=g, k=k: one_size(cs, g, k) for g, chain in enumerate(chains) for k in range(len(chain.sizes))]
    return [c for c in (edited(e) for e in edits) if c is not None]
