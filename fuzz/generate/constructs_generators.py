"""Constructs around names and iteration: globals, cells, generators, iterators, comprehension scopes.

Registered constructs (see ``fuzz.generate.registry``) for ``global`` stores,
lambdas capturing a loop variable's cell, generators driven by
``next``/``send``/``close``, ``yield from`` with a return value, the iterator
builtins and iterator exhaustion, comprehensions whose variable shadows an
outer local, and walrus inside a comprehension. Opcodes they reach:
``STORE_GLOBAL``, ``SEND``/``END_SEND``/``CLEANUP_THROW`` (``yield from``),
``LOAD_FAST_AND_CLEAR`` (inlined comprehensions, 3.12+).
"""

from __future__ import annotations

from fuzz.generate.registry import StatementWriter, construct
from fuzz.generate.scope import Scope


@construct(
    "global-write", weight=2,
    features={"global-write": "global statement and store to a module global"},
    also={"mutation-global": "mutation of a module-level container"},
)
def global_write(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"global-write", "mutation-global"})
    # a fresh global each time: `global X` after a store to X in the same
    # function would be a SyntaxError
    count, log = w.fresh("COUNT"), w.fresh("LOG")
    w.prelude_lines += [f"{count} = 0", f"{log} = []"]
    w.emit_block(scope, f"""
        global {count}
        {count} += 1
        {log}.append({count} * {w.pick((1, 2))})
    """)
    w.maybe_break(scope)
    w.put(scope, f"({w.squashed(scope, 1)} * ({count} % 3 + 1) * 0.25)", 2.25)


@construct("cells-in-loop", weight=2, features={
    "closure-cell-loop": "lambdas capturing a loop variable's cell",
})
def cells_in_loop(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"closure-cell-loop", "closure", "for"})
    fs, i = w.fresh("fns"), w.fresh("i")
    w.emit(scope, f"{fs} = []")
    w.emit(scope, f"for {i} in range({w.pick(('3', 'n'))}):")
    if w.chance(50):
        # late binding: every lambda sees the cell's last value
        w.emit(scope, f"{fs}.append(lambda v: v * ({i} + 1) * 0.25)", 1)
    else:
        w.emit(scope, f"{fs}.append(lambda v, k={i}: v * (k + 1) * 0.25)", 1)
    w.maybe_break(scope, 1, 20)
    w.features.add("comprehension")
    w.put(scope, f"sum(fn({w.atom(scope)}) for fn in {fs})", 3 * 4.0 * 4)


@construct("generator-send", weight=2, features={
    "generator-send": "generator driven by next/send/close",
})
def generator_send(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"generator-send", "generator", "generator-return", "while", "if"})
    gen, it = w.fresh("gen"), w.fresh("it")
    w.emit_block(scope, f"""
        def {gen}(v):
            total = v
            while True:
                got = yield torch.tanh(total)
                if got is None:
                    return total
    """)
    w.maybe_break(scope, 2, 20)
    w.emit(scope, "total = torch.tanh(total + got)", 2)
    w.emit(scope, f"{it} = {gen}({w.squashed(scope, 1)})")
    first, second = w.fresh("y"), w.fresh("y")
    w.emit(scope, f"{first} = next({it})")
    w.emit(scope, f"{second} = {it}.send({w.squashed(scope, 1)})")
    if w.chance(50):
        w.emit(scope, f"{it}.close()")
    else:
        w.features.update({"try-except", "iterator-exhaustion"})
        w.emit_block(scope, f"""
            try:
                {it}.send(None)
            except StopIteration as stop:
                {second} = torch.tanh(stop.value + {second})
        """)
    w.put(scope, f"({first} + {second})", 2.0)


@construct("yield-from", weight=2, features={
    "generator-return": "a generator's return value (yield from / StopIteration.value)",
})
def yield_from(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"generator", "generator-return"})
    inner, outer = w.fresh("gen"), w.fresh("gen")
    w.emit(scope, f"def {inner}(v):")
    w.emit(scope, "yield torch.tanh(v)", 1)
    w.maybe_break(scope, 1, 20)
    w.emit_block(scope, """
        yield torch.sin(v)
        return v * 0.5
    """, 1)
    w.emit_block(scope, f"""
        def {outer}(v):
            r = yield from {inner}(v)
            yield torch.tanh(r)
    """)
    consumer = w.pick(("sum", "list", "for"))
    call = f"{outer}({w.squashed(scope, 1)})"
    if consumer == "sum":
        w.put(scope, f"sum({call})", 3.0)
    elif consumer == "list":
        name = w.fresh("xs")
        w.emit(scope, f"{name} = list({call})")
        scope.lists[name] = 3
        w.put(scope, f"({name}[0] + {name}[-1])", 2.0)
    else:
        w.features.add("for")
        v, t = w.fresh("x"), w.target(scope)
        w.emit(scope, f"for {v} in {call}:")
        w.emit(scope, f"{t} = torch.tanh({t} + {v})", 1)


@construct("iter-builtins", weight=3, features={
    "iter-builtins": "iter/next/reversed/zip/enumerate/map/filter",
})
def iter_builtins(w: StatementWriter, scope: Scope) -> None:
    w.features.add("iter-builtins")
    a, b, c = w.atom(scope), w.atom(scope), w.atom(scope)
    form = w.pick(("zip", "enumerate", "map", "filter", "reversed", "iter-next"))
    if form == "zip":
        w.features.add("comprehension")
        w.put(scope, f"sum(p * q for p, q in zip(({a}, {b}), reversed(({c}, {a}))))", 32.0)
    elif form == "enumerate":
        w.features.add("for")
        i, v, t = w.fresh("i"), w.fresh("x"), w.target(scope)
        w.emit(scope, f"for {i}, {v} in enumerate(({a}, {b}), start=1):")
        w.emit(scope, f"{t} = torch.tanh({t} + {v} * {i} * 0.25)", 1)
        w.maybe_break(scope, 1, 20)
    elif form == "map":
        name = w.fresh("xs")
        fn = w.pick(("torch.tanh", "torch.sigmoid"))
        w.emit(scope, f"{name} = list(map({fn}, ({a}, {b})))")
        scope.lists[name] = 2
        w.put(scope, f"({name}[0] * {name}[1])", 1.0)
    elif form == "filter":
        w.features.add("closure")
        name = w.fresh("xs")
        w.emit(scope, f"{name} = list(filter(lambda v: v.ndim > 0, ({a}, {b}, {c})))")
        scope.lists[name] = 0
        w.put(scope, f"sum({name}, {a})", 16.0)
    elif form == "reversed":
        name = w.fresh("xs")
        w.emit(scope, f"{name} = list(reversed([{a}, {b}]))")
        scope.lists[name] = 2
        w.put(scope, f"({name}[0] - {name}[-1])", 8.0)
    else:
        it = w.fresh("it")
        w.emit(scope, f"{it} = iter(({a}, {b}))")
        w.emit(scope, f"{w.target(scope)} = torch.tanh(next({it}))")
        w.maybe_break(scope, 0, 30)
        w.put(scope, f"next({it}, {c})", 4.0)


@construct("exhaustion", weight=2, features={
    "iterator-exhaustion": "next() on an exhausted iterator, StopIteration caught",
})
def exhaustion(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"iterator-exhaustion", "try-except", "iter-builtins"})
    it, t = w.fresh("it"), w.target(scope)
    source = w.pick(("iter", "reversed", "gen", "zip"))
    a, b = w.atom(scope), w.atom(scope)
    if source == "iter":
        w.emit(scope, f"{it} = iter([{a}, {b}])")
    elif source == "reversed":
        w.emit(scope, f"{it} = reversed([{a}, {b}])")
    elif source == "zip":
        w.emit(scope, f"{it} = map(torch.add, [{a}], [{b}, {a}])")
    else:
        w.features.add("comprehension")
        w.emit(scope, f"{it} = (torch.tanh(v) for v in ({a}, {b}))")
    w.emit(scope, "try:")
    if source == "reversed" or w.chance(30):
        # Bounded: the third next() still raises StopIteration. Over
        # reversed() the unbounded form hangs Dynamo in 2.12 (it never
        # exhausts: pytorch#152262, corpus timeout/bc26fbb9f6fe), which
        # costs a campaign the whole run timeout on every interpreter;
        # bounded, the same missing exhaustion is a divergence in a second.
        w.emit(scope, "for _ in range(3):", 1)
        w.features.add("for")
    else:
        w.emit(scope, "while True:", 1)
        w.features.add("while")
    w.emit(scope, f"{t} = torch.tanh({t} + next({it}))", 2)
    w.maybe_break(scope, 2, 25)
    w.emit(scope, "except StopIteration:")
    w.emit(scope, f"{t} = {t} * 0.5", 1)
    if w.chance(40):
        w.emit(scope, f"{t} = torch.tanh(next({it}, {t}) + 1.0)")


@construct("shadow", weight=2, features={
    "comprehension-shadow": "comprehension variable named like an outer local",
})
def shadow(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"comprehension-shadow", "comprehension"})
    shadowed = w.pick(scope.writable)
    name = w.fresh("xs")
    sources = w.tensors(scope, 2)
    form = w.pick(("list", "dict", "gen"))
    if form == "list":
        w.emit(scope, f"{name} = [torch.tanh({shadowed} * 0.5) for {shadowed} in ({sources})]")
    elif form == "dict":
        w.emit(scope, f"{name} = list({{k: torch.tanh({shadowed}) for k, {shadowed} in enumerate(({sources}))}}.values())")
        w.features.add("iter-builtins")
    else:
        w.emit(scope, f"{name} = list(torch.sin({shadowed}) for {shadowed} in ({sources}))")
    scope.lists[name] = 2
    w.maybe_break(scope)
    # the outer name is untouched by the comprehension
    w.put(scope, f"({shadowed} + {name}[0])", 8.0)


@construct("walrus", weight=2, features={"walrus": ":= inside a comprehension"})
def walrus(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"walrus", "comprehension"})
    name, last = w.fresh("xs"), w.fresh("y")
    sources = w.tensors(scope, 2)
    w.emit(scope, f"{name} = [({last} := torch.tanh(v)) * 0.5 for v in ({sources})]")
    scope.lists[name] = 2
    w.put(scope, f"({last} + {name}[0])", 2.0)
