"""Constructs with a graph break inside a comprehension.

On 3.12+ a list, set or dict comprehension is inlined into its function
(PEP 709): no frame of its own, its iteration variable a local of ``f``
that is saved and restored around it. Since torch 2.15 Dynamo resumes a
graph break inside one without giving up the frame
(``torch/_dynamo/comprehension_graph_break.py``); on 3.11, and for generator
expressions everywhere, the comprehension is a nested function and the
break is an inlined call's. These constructs run on every interpreter and
put ``torch._dynamo.graph_break()`` at each place of a comprehension:

- ``before``: in its ``if`` clause, before the element is computed;
- ``inside``: in the element expression (``(graph_break(), x)[1]``);
- ``after``: after the element (``(element, graph_break())[0]``);
- ``iterable``: in the iterable of a second ``for`` clause.

Registered constructs (see ``fuzz.generate.registry``): the break in a
list, set, dict or generator comprehension; in a nested comprehension; with a
walrus target read after it; with the iteration variable shadowing a tensor
of ``f`` or closed over by lambdas; inside ``try``/``except``/``finally`` and
``with`` (the comprehension may raise after the break); and inside a
generator function.
"""

from __future__ import annotations

from fuzz.generate.registry import StatementWriter, construct
from fuzz.generate.scope import Scope

GRAPH_BREAK = "torch._dynamo.graph_break()"
# Where in a comprehension the break goes (see the module docstring).
PLACES = ("inside", "before", "after", "iterable")


def _inner(w: StatementWriter, scope: Scope, var: str) -> Scope:
    """The scope of a comprehension's element: ``scope`` plus its iteration variable."""
    return scope.block(tensors=scope.tensors + (var,), indent=scope.indent, depth=scope.depth)


def _clauses(w: StatementWriter, element: str, var: str, iterable: str) -> tuple[str, str]:
    """(element, clauses) of a comprehension over ``iterable`` with a graph break
    at a drawn place; ``clauses`` starts with ``for``."""
    w.features.update({"graph-break", "comprehension"})
    place = w.pick(PLACES)
    w.features.add(f"comprehension-break-{place}")
    clauses = f"for {var} in {iterable}"
    if place == "inside":
        element = element.replace(var, f"({GRAPH_BREAK}, {var})[1]", 1)
    elif place == "before":
        clauses += f" if {GRAPH_BREAK} is None"
    elif place == "after":
        element = f"({element}, {GRAPH_BREAK})[0]"
    else:
        clauses += f" for _ in ({GRAPH_BREAK}, range(1))[1]"
    return element, clauses


def _source(w: StatementWriter, scope: Scope) -> str:
    """A tuple or list of two or three of ``scope``'s tensors."""
    items = w.tensors(scope, w.pick((2, 3)))
    return w.pick((f"({items},)", f"[{items}]"))


@construct("comprehension-break-nested", weight=2, features={
    "comprehension-break-nested": "graph_break() inside a comprehension nested in another's element",
})
def comprehension_break_nested(w: StatementWriter, scope: Scope) -> None:
    """``[[... for k in range(..)] for x in xs]`` with the break in the inner or the outer one."""
    w.features.add("comprehension-break-nested")
    var, k = w.fresh("x"), w.fresh("k")
    source = _source(w, scope)
    inner_element = f"torch.tanh({var} * ({k} + 1) * 0.25)"
    if w.chance(50):
        body, clauses = _clauses(w, inner_element, var, f"range({w.pick(scope.ints)})")
        inner = f"[{body} {clauses}]".replace(f"for {var} in", f"for {k} in", 1)
        outer = f"[{inner} for {var} in {source}]"
    else:
        inner = f"[{inner_element} for {k} in range({w.pick(scope.ints)})]"
        body, clauses = _clauses(w, inner, var, source)
        outer = f"[{body} {clauses}]"
    w.features.add("comprehension")
    name = w.fresh("rows")
    w.emit(scope, f"{name} = {outer}")
    w.put(scope, f"sum((sum(row, {w.atom(scope)} * 0.0) for row in {name}), {w.atom(scope)} * 0.5)", 16.0)
    w.features.add("print")
    w.emit(scope, f"print([len(row) for row in {name}])")


@construct("comprehension-break-walrus", weight=2, features={
    "comprehension-break-walrus": "a walrus target in a comprehension with a graph break, read after it",
})
def comprehension_break_walrus(w: StatementWriter, scope: Scope) -> None:
    """``[(last := ...) for x in xs]`` with a break; ``last`` (a local of f) read afterwards."""
    w.features.update({"comprehension-break-walrus", "walrus"})
    var, last = w.fresh("x"), w.fresh("last")
    source = _source(w, scope)
    element = f"({last} := torch.tanh({var} * 0.5 + {w.atom(scope)}))"
    body, clauses = _clauses(w, element, var, source)
    w.emit(scope, f"{last} = {w.atom(scope)}")
    name = w.fresh("vals")
    w.emit(scope, f"{name} = [{body} * 0.5 {clauses}]")
    w.put(scope, f"({last} + {name}[0])", 4.0)


@construct("comprehension-break-shadow", weight=2, features={
    "comprehension-break-shadow": "a comprehension with a graph break whose variable shadows a tensor of f",
})
def comprehension_break_shadow(w: StatementWriter, scope: Scope) -> None:
    """The iteration variable is one of f's writable tensors; it must be unchanged after."""
    w.features.update({"comprehension-break-shadow", "comprehension-shadow"})
    var = w.target(scope)
    others = [t for t in scope.tensors if t != var] or [var]
    source = f"({w.pick(others)}, {w.pick(others)} * 0.5)"
    body, clauses = _clauses(w, f"torch.tanh({var} * 2)", var, source)
    name = w.fresh("vals")
    w.emit(scope, f"{name} = [{body} {clauses}]")
    w.put(scope, f"({var} + {name}[-1])", 5.0)


@construct("comprehension-break-closure", weight=2, features={
    "comprehension-break-closure": "a comprehension with a graph break over names closed over by lambdas",
})
def comprehension_break_closure(w: StatementWriter, scope: Scope) -> None:
    """Lambdas made in a comprehension close over its variable (late binding), or a
    comprehension calls a closure over f's locals; a graph break inside."""
    w.features.update({"comprehension-break-closure", "closure"})
    var = w.fresh("x")
    source = _source(w, scope)
    name = w.fresh("fns")
    if w.chance(50):
        body, clauses = _clauses(w, f"(lambda: {var} * 0.5)", var, source)
        w.emit(scope, f"{name} = [{body} {clauses}]")
        # late binding: every lambda sees the last value of the cell
        w.put(scope, f"sum(fn() for fn in {name})", 6.0)
    else:
        scale, fn = w.fresh("scale"), w.fresh("fn")
        w.emit(scope, f"{scale} = {w.pick(scope.ints)} * 0.25")
        w.emit(scope, f"{fn} = lambda v: torch.tanh(v * {scale})")
        body, clauses = _clauses(w, f"{fn}({var})", var, source)
        w.emit(scope, f"{name} = [{body} {clauses}]")
        w.emit(scope, f"{scale} = 0.0")
        w.put(scope, f"({name}[0] + {fn}({w.atom(scope)}) + len({name}))", 5.0)


@construct("comprehension-break-try", weight=2, compound=True, features={
    "comprehension-break-try": "a comprehension with a graph break in try/except/finally or with, maybe raising",
})
def comprehension_break_try(w: StatementWriter, scope: Scope) -> None:
    """The comprehension in a ``try`` body (raising IndexError after the break, caught),
    a ``finally`` or a ``with`` block."""
    w.features.add("comprehension-break-try")
    var = w.fresh("x")
    items = [w.pick(scope.tensors) for _ in range(2)]
    seq = w.fresh("seq")
    name = w.fresh("vals")
    w.emit(scope, f"{seq} = [{', '.join(items)}]")
    form = w.pick(("except", "finally", "with"))
    if form == "except":
        w.features.add("try-except")
        body, clauses = _clauses(w, f"torch.tanh({seq}[{var}])", var, f"range(len({seq}) + {w.pick(('0', '1'))})")
        w.emit(scope, "try:")
        w.emit(scope, f"{name} = [{body} {clauses}]", 1)
        w.emit(scope, "except IndexError:")
        w.emit(scope, f"{name} = [{w.atom(scope)} * 0.5]", 1)
        if w.chance(50):
            w.emit(scope, "else:")
            w.emit(scope, f"{name}.append({seq}[0])", 1)
    elif form == "finally":
        w.features.update({"try-finally"})
        body, clauses = _clauses(w, f"torch.tanh({var})", var, seq)
        w.emit(scope, "try:")
        w.body(scope.block(catches=(), loop=False), (1, 1))
        w.emit(scope, "finally:")
        w.emit(scope, f"{name} = [{body} {clauses}]", 1)
    else:
        manager = w.pick(("torch.enable_grad()", "torch.no_grad()", "contextlib.nullcontext()"))
        if manager == "torch.no_grad()":
            w.features.add("no-grad")
        if manager.startswith("contextlib"):
            w.need("contextlib")
        body, clauses = _clauses(w, f"torch.tanh({var})", var, seq)
        w.emit(scope, f"with {manager}:")
        w.emit(scope, f"{name} = [{body} {clauses}]", 1)
        w.body(scope.block(), (0, 1))
    w.put(scope, f"({name}[0] + len({name}))", 4.0)


@construct("comprehension-break-generator", weight=2, features={
    "comprehension-break-generator": "a comprehension with a graph break inside a generator function",
})
def comprehension_break_generator(w: StatementWriter, scope: Scope) -> None:
    """A nested generator yields comprehensions with breaks; f drains it."""
    w.features.update({"comprehension-break-generator", "generator", "for"})
    gen, var, row = w.fresh("rows"), w.fresh("x"), w.fresh("row")
    source = _source(w, scope)
    body, clauses = _clauses(w, f"torch.tanh({var} * {row})", var, source)
    w.emit(scope, f"def {gen}(k):")
    w.emit(scope, f"for {row} in range(1, k + 1):", 1)
    w.emit(scope, f"yield [{body} {clauses}]", 2)
    total = w.fresh("total")
    w.emit(scope, f"{total} = [sum(r) for r in {gen}({w.pick(scope.ints)})]")
    w.put(scope, f"(sum({total}, {w.atom(scope)} * 0.0) * 0.1)", 5.0)


@construct("comprehension-break", weight=4, features={
    "comprehension-break": "graph_break() inside a list/set/dict comprehension or generator expression",
    "comprehension-break-inside": "the comprehension's graph break is in its element expression",
    "comprehension-break-before": "the comprehension's graph break is in its if clause",
    "comprehension-break-after": "the comprehension's graph break comes after its element",
    "comprehension-break-iterable": "the comprehension's graph break is in a second for clause's iterable",
})
def comprehension_break(w: StatementWriter, scope: Scope) -> None:
    """A comprehension of each kind with a graph break at a drawn place; its values rebind a tensor."""
    w.features.add("comprehension-break")
    var = w.fresh("x")
    source = _source(w, scope)
    kind = w.pick(("list", "set", "dict", "generator", "tuple"))
    if kind == "set":
        # a set of ints: its order is never shown
        count = f"int(({var} > 0).sum())"
        body, clauses = _clauses(w, count, var, source)
        name = w.fresh("counts")
        w.emit(scope, f"{name} = {{{body} {clauses}}}")
        w.put(scope, f"({w.atom(scope)} * (len({name}) + max({name}, default=0)) * 0.05)", 4.0)
        w.features.add("print")
        w.emit(scope, f"print(sorted({name}))")
        return
    # drawn only where it is written: the features it records are the program's
    element = w.squashed(_inner(w, scope, var), 1)
    if var not in element:
        element = f"torch.tanh({var} + {element})"
    body, clauses = _clauses(w, element, var, source)
    if kind == "dict":
        index = w.fresh("i")
        clauses = clauses.replace(f"for {var} in {source}", f"for {index}, {var} in enumerate({source})", 1)
        name = w.fresh("byindex")
        w.emit(scope, f"{name} = {{{index}: {body} {clauses}}}")
        w.put(scope, f"sum({name}.values(), {w.atom(scope)} * 0.0)", 12.0)
    elif kind == "list":
        name = w.fresh("vals")
        w.emit(scope, f"{name} = [{body} {clauses}]")
        w.put(scope, f"({name}[0] - {name}[-1] + len({name}))", 10.0)
    elif kind == "generator":
        w.put(scope, f"sum(({body} {clauses}), {w.atom(scope)} * 0.5)", 12.0)
    else:
        name = w.fresh("vals")
        w.emit(scope, f"{name} = tuple({body} {clauses})")
        w.put(scope, f"({name}[-1] * len({name}) * 0.25)", 3.0)
