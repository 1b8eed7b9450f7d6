"""The remaining constructs: ``async def``, ``del``, operators, ``assert``, imports, randomness.

Registered constructs (see ``fuzz.generate.registry``): ``async def`` bodies
driven by ``send``, ``del`` of locals, attributes and items, chained
comparisons, ``is``/``in``, short-circuit values, ``assert``, imports inside
``f``, unary ``+``/``~``/``not``, slices, sets, dict merges, random ops under
``fallback_random`` and a def inside a def with ``nonlocal`` across two
levels. Opcodes they reach: ``LOAD_ASSERTION_ERROR``, ``IMPORT_NAME``/
``IMPORT_FROM``, ``DELETE_FAST``/``DELETE_ATTR``/``DELETE_SUBSCR``,
``LOAD_FAST_CHECK`` (``del``), ``CALL_INTRINSIC_1`` (unary ``+``),
``UNARY_INVERT``, ``BUILD_SLICE``, ``SET_UPDATE``, ``DICT_UPDATE``,
``JUMP_IF_TRUE_OR_POP``/``JUMP_IF_FALSE_OR_POP`` (3.11 ``and``/``or`` values).
"""

from __future__ import annotations

from fuzz.generate.registry import StatementWriter, construct
from fuzz.generate.scope import Scope


@construct("async-def", weight=2, features={
    "async-def": "async def with await / async with / async for, driven by send(None)",
})
def async_def(w: StatementWriter, scope: Scope) -> None:
    w.features.add("async-def")
    for helper in ("Ready", "Gate", "Countdown", "drive"):
        w.need(helper)
    co = w.fresh("co")
    w.emit_block(scope, f"""
        async def {co}(v):
            total = await Ready(v * 0.5)
    """)
    if w.chance(60):
        w.emit_block(scope, """
            async with Gate() as k:
                total = torch.tanh(total * k)
        """, 1)
    if w.chance(60):
        w.emit_block(scope, """
            async for i in Countdown(2):
                total = torch.tanh(total + i * 0.25)
        """, 1)
    w.emit(scope, "return total", 1)
    w.maybe_break(scope)
    w.put(scope, f"drive({co}({w.squashed(scope, 1)}))", 1.0)


@construct("del", weight=2, features={"del": "del of a local, an attribute or an item"})
def del_(w: StatementWriter, scope: Scope) -> None:
    w.features.add("del")
    tmp = w.fresh("tmp")
    w.emit(scope, f"{tmp} = {w.squashed(scope, 1)}")
    w.put(scope, f"({tmp} * 0.5)", 1.5)
    form = w.pick(("local", "item", "maybe"))
    if form == "local":
        w.emit(scope, f"del {tmp}")
    elif form == "item":
        box = w.fresh("box")
        w.emit(scope, f"{box} = [{tmp}, {tmp}]")
        w.emit(scope, f"del {box}[0], {tmp}")
        w.put(scope, f"{box}[0]", 3.0)
    else:
        # the name may be unbound below: LOAD_FAST_CHECK
        w.features.add("if")
        w.emit_block(scope, f"""
            if n > 2:
                del {tmp}
            if n <= 2:
        """)
        w.put(scope, f"{tmp}", 4.0, 1)


@construct("chained-comparison", weight=2, features={"chained-comparison": "0 < n <= 3"})
def chained_comparison(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"chained-comparison", "if"})
    condition = w.pick((
        "0 < n <= 3",
        f"1 <= {w.pick(scope.tensors)}.ndim < 3",
        "n < t0.shape[-1] <= 17",
    ))
    w.emit(scope, f"if {condition}:")
    w.body(scope.block(), (1, 1))


@construct("is-in", weight=2, features={"is-in": "is / is not / in / not in"})
def is_in(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"is-in", "if"})
    a, b = w.pick(scope.tensors), w.pick(scope.tensors)
    condition = w.pick((
        f"{a} is {b}", f"{a} is not None", "n in (1, 3)", "n not in [2, 4]",
        f"{a}.dtype is torch.float32", f'"x" in "{w.pick(("xy", "ab"))}"',
    ))
    w.emit(scope, f"if {condition}:")
    w.body(scope.block(), (1, 1))


@construct("short-circuit", weight=2, features={
    "short-circuit": "and/or as values, on tensors and scalars",
})
def short_circuit(w: StatementWriter, scope: Scope) -> None:
    w.features.add("short-circuit")
    flag = w.fresh("flag")
    form = w.pick(("int", "tensor-bool", "or-default", "and-value"))
    if form == "int":
        w.emit(scope, f"{flag} = n > 1 and n or 2")
        w.emit(scope, f"{w.target(scope)} = torch.tanh({w.squashed(scope, 1)} * {flag} * 0.25)")
    elif form == "tensor-bool":
        w.emit(scope, f"{flag} = ({w.atom(scope)} > 0).any() and n > 1")
        w.features.add("if")
        w.emit(scope, f"if {flag}:")
        w.body(scope.block(), (1, 1))
    elif form == "or-default":
        w.emit(scope, f"{flag} = None")
        w.put(scope, f"({flag} or {w.atom(scope)})", 4.0)
    else:
        w.emit(scope, f"{flag} = [{w.atom(scope)}]")
        w.put(scope, f"({flag} and {flag}[0])", 4.0)


@construct("assert", weight=2, features={
    "assert": "assert statement (LOAD_ASSERTION_ERROR), also caught",
})
def assert_(w: StatementWriter, scope: Scope) -> None:
    w.features.add("assert")
    w.emit(scope, f'assert {w.pick(scope.tensors)}.ndim >= 0, "rank"')
    if w.chance(50):
        w.features.update({"try-except", "print"})
        e = w.fresh("e")
        w.emit(scope, "try:")
        w.emit(scope, 'assert n < 0, f"n is {n}"', 1)
        w.emit(scope, f"except AssertionError as {e}:")
        w.emit(scope, f"print(str({e}))", 1)
        w.maybe_break(scope, 1, 25)


@construct("import", weight=2, features={"import": "import / from-import inside f"})
def import_(w: StatementWriter, scope: Scope) -> None:
    w.features.add("import")
    form = w.pick(("math", "operator", "functools"))
    if form == "math":
        w.emit(scope, "import math")
        w.put(scope, f"({w.squashed(scope, 1)} * math.pi / 4)", 2.4)
    elif form == "operator":
        w.emit(scope, "from operator import mul, add")
        w.put(scope, f"add(mul({w.squashed(scope, 1)}, 0.5), {w.atom(scope)})", 6.0)
    else:
        w.emit(scope, "import functools, operator as op")
        w.put(scope, f"functools.reduce(op.add, ({w.tensors(scope, 3)}))", 12.0)


@construct("unary", weight=2, features={"unary-ops": "+n, ~n, not, ~bool-tensor"})
def unary(w: StatementWriter, scope: Scope) -> None:
    w.features.add("unary-ops")
    m = w.fresh("m")
    w.emit(scope, f"{m} = (+n) * (~n) % 3 + (not n)")
    w.put(scope, f"torch.where(~({w.atom(scope)} > 0), {w.atom(scope)}, +{w.atom(scope)}) * ({m} + 1) * 0.2", 4.0 * 3 * 0.2)


@construct("slice", weight=2, features={
    "slice": "3-part slices and slices with variable bounds",
})
def slice_(w: StatementWriter, scope: Scope) -> None:
    w.features.add("slice")
    # t0 and t1 are never 0-dim (locals may be)
    a = w.pick(("t0", "t1"))
    t = w.target(scope)
    form = w.pick(("step", "bounds", "flip"))
    text = {
        "step": f"{a}[..., ::2].sum(-1, keepdim=True)",
        "bounds": f"{a}[..., :n].mean(dim=-1, keepdim=True)",
        "flip": f"{a}.flip(-1)[..., ::1]",
    }[form]
    if form != "flip":
        w.features.add("reduction")
    w.emit(scope, f"{t} = torch.tanh({t} + {text})")
    name = w.fresh("xs")
    w.emit(scope, f"{name} = [{w.atom(scope)}, {w.atom(scope)}, {w.atom(scope)}][::-1][0:n:2]")
    scope.lists[name] = 1


@construct("set-ops", weight=2, features={
    "set-ops": "set displays, set comprehensions, {*a, *b}",
})
def set_ops(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"set-ops", "comprehension"})
    s, ranks = w.fresh("s"), w.fresh("s")
    w.emit(scope, f"{s} = {{int(({w.atom(scope)} > 0).sum()) for _ in range(2)}}")
    w.emit(scope, f"{ranks} = {{*{s}, *{{n, 1}}, {w.pick(scope.tensors)}.ndim}}")
    w.emit(scope, f"{w.target(scope)} = torch.tanh({w.squashed(scope, 1)} * len({ranks}) * 0.25)")


@construct("dict-merge", weight=2, features={"dict-merge": "{**d, ...} and h(**d)"})
def dict_merge(w: StatementWriter, scope: Scope) -> None:
    w.features.add("dict-merge")
    base, merged = w.fresh("m"), w.fresh("m")
    w.emit(scope, f'{base} = {{"w": {w.atom(scope)}, "k": n}}')
    w.emit(scope, f'{merged} = {{**{base}, "k": 2, **{{"b": {w.atom(scope)}}}}}')
    w.maybe_break(scope)
    w.put(scope, f'({merged}["w"] * {merged}["k"] * 0.5 + {merged}["b"])', 8.0)


@construct("random", weight=1, features={
    "random": "dropout/rand under manual_seed (fallback_random set)",
})
def random_(w: StatementWriter, scope: Scope) -> None:
    w.features.add("random")
    w.need("fallback_random")
    a = w.squashed(scope, 1)
    text = w.pick((
        f"torch.nn.functional.dropout({a}, p=0.5, training=True)",
        f"({a} * torch.rand_like({w.atom(scope)}))",
        f"({a} + torch.randn(t0.shape[-1]) * 0.1)",
    ))
    w.put(scope, text, 7.0)


@construct("nested-function", weight=2, features={
    "nested-function": "def inside def inside f, nonlocal across two levels",
})
def nested_function(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"nested-function", "closure", "nonlocal"})
    outer, inner, acc = w.fresh("outer"), w.fresh("inner"), w.fresh("acc")
    w.emit_block(scope, f"""
        def {outer}(v):
            {acc} = v * 0.5
            def {inner}(w, *, scale=0.5):
                nonlocal {acc}
                {acc} = torch.tanh({acc} + w * scale)
    """)
    w.maybe_break(scope, 2)
    w.emit_block(scope, f"""
            return {acc}
        {inner}(v)
        {inner}(v, scale=0.25)
        return {acc}
    """, 1)
    w.put(scope, f"{outer}({w.squashed(scope, 1)})", 1.0)
