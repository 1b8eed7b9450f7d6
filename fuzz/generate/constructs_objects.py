"""Constructs around objects: ``match``, f-strings, calls with ``*args``, unpacking, classes.

Registered constructs (see ``fuzz.generate.registry``): ``match`` with
literal, sequence, mapping and class patterns, f-strings with format specs,
calls with ``*args``/``**kwargs``/keyword-only parameters, starred and
nested unpacking, a class statement with ``super()``, a property and
``__getattr__``, dataclasses, ``nn.Module``s with a buffer and a parameter,
attribute mutation and ``isinstance`` on unions and runtime protocols.
Opcodes they reach: ``MATCH_CLASS``/``MATCH_KEYS``/``MATCH_MAPPING``/
``MATCH_SEQUENCE``/``GET_LEN``, ``FORMAT_VALUE`` or ``FORMAT_SIMPLE``/
``FORMAT_WITH_SPEC``/``CONVERT_VALUE``, ``LOAD_SUPER_ATTR``,
``LOAD_BUILD_CLASS``, ``LIST_TO_TUPLE``, ``UNPACK_EX``, ``DICT_MERGE``.
"""

from __future__ import annotations

from fuzz.generate.registry import StatementWriter, construct
from fuzz.generate.scope import Scope


@construct("match", weight=3, compound=True, features={
    "match": "match with literal, sequence, mapping and class patterns",
})
def match_(w: StatementWriter, scope: Scope) -> None:
    w.features.add("match")
    form = w.pick(("literal", "sequence", "mapping", "class", "dataclass"))
    t = w.target(scope)
    # (case line, whether it binds the tensor `a`)
    cases: tuple[tuple[str, bool], ...]
    if form == "literal":
        w.emit(scope, "match n:")
        cases = (("case 1:", False), ("case 2 | 3:", False), ("case _:", False))
    elif form == "sequence":
        w.emit(scope, f"match ({w.atom(scope)}, n, {w.atom(scope)}):")
        cases = (("case (a, 1, b):", True), ("case [a, *rest] if len(rest) == 2:", True), ("case _:", False))
    elif form == "mapping":
        w.emit(scope, f'match {{"w": {w.atom(scope)}, "k": n}}:')
        cases = (('case {"w": a, "k": 2}:', True), ('case {"w": a, **rest}:', True), ("case _:", False))
    elif form == "class":
        w.emit(scope, f"match {w.atom(scope)}:")
        cases = (("case torch.Tensor(ndim=1):", False), ("case torch.Tensor(ndim=2, shape=s):", False),
                 ("case _:", False))
    else:
        w.features.add("dataclass")
        w.need("Pair")
        w.emit(scope, f"match Pair({w.atom(scope)}, n):")
        cases = (("case Pair(k=1):", False), ("case Pair(w=a, k=2):", True), ("case _:", False))
    for case, binds in cases:
        w.emit(scope, case, 1)
        body = scope.block()
        body.indent = scope.indent + 2
        if binds:
            w.emit(body, f"{t} = torch.tanh(a * 0.5)")
        w.body(body, (0, 1) if binds else (1, 1))


@construct("fstring", weight=2, features={"fstring": "f-string with format spec, conversion and `=`"})
def fstring(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"fstring", "print"})
    tensor = w.pick(scope.tensors)
    text = w.pick((
        f'f"{{n:>3}}|{{n=}}|{{{tensor}.shape!r}}"',
        f'f"{{{tensor}.ndim:02d}} {{str({tensor}.dtype)!s:>14}}"',
        f'f"{{n * 2:#x}}-{{len({tensor}.shape)}}"',
        f'f"{{{tensor}.ndim=}} {{n!r:^5}}"',
    ))
    name = w.fresh("s")
    w.emit(scope, f"{name} = {text}")
    w.emit(scope, f"print({name})")
    scope.printables = scope.printables + (name,)


@construct("star-args", weight=2, features={
    "star-args": "*args, **kwargs, keyword-only params and defaults",
})
def star_args(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"star-args", "closure"})
    h = w.fresh("h")
    w.emit_block(scope, f"""
        def {h}(first, *rest, scale=0.5, **named):
            total = first * scale
            for item in rest:
                total = total + torch.tanh(item)
            for key in sorted(named):
                total = total * named[key]
            return torch.tanh(total)
    """)
    w.features.add("for")
    form = w.pick(("plain", "star", "kw", "dict"))
    a, b = w.atom(scope), w.atom(scope)
    if form == "plain":
        call = f"{h}({a}, {b}, scale=0.25)"
    elif form == "star":
        w.features.add("unpacking")
        call = f"{h}(*({a}, {b}), *[{w.atom(scope)}])"
    elif form == "kw":
        call = f"{h}({a}, k=0.5, j=n * 0.25)"
    else:
        w.features.add("dict-merge")
        call = f'{h}({a}, **{{"k": 0.5}}, **{{"j": 0.25}})'
    w.put(scope, call, 1.0)


@construct("unpacking", weight=2, features={"unpacking": "a, *b = ...; nested tuple targets; (*xs, t)"})
def unpacking(w: StatementWriter, scope: Scope) -> None:
    w.features.add("unpacking")
    first, rest = w.fresh("y"), w.fresh("ys")
    items = w.tensors(scope, 3)
    form = w.pick(("star", "nested", "tuple-star"))
    if form == "star":
        w.emit(scope, f"{first}, *{rest} = ({items})")
        w.put(scope, f"({first} + {rest}[-1])", 8.0)
    elif form == "nested":
        other = w.fresh("y")
        w.emit(scope, f"{first}, ({other}, _k) = {w.atom(scope)}, ({w.atom(scope)}, n)")
        w.put(scope, f"({first} * _k * 0.25 + {other})", 8.0)
    else:
        w.emit(scope, f"{rest} = (*[{items}], {w.atom(scope)})")
        w.put(scope, f"({rest}[0] + {rest}[-1])", 8.0)


@construct("class-local", weight=2, features={
    "class-local": "class statement inside f: methods, super(), property, __getattr__",
})
def class_local(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"class-local", "closure"})
    base, child, obj = w.fresh("Base"), w.fresh("Child"), w.fresh("obj")
    w.emit_block(scope, f"""
        class {base}:
            def __init__(self, w):
                self.w = w
            def apply(self, v):
                return torch.tanh(v * self.w)
        class {child}({base}):
            scale: float = 0.5
            def apply(self, v):
    """)
    w.maybe_break(scope, 2, 15)
    w.emit_block(scope, """
            return super().apply(v) * self.scale
        @property
        def doubled(self):
            return self.w * 2
        def __getattr__(self, name):
            return 0.25
    """, 1)
    w.emit(scope, f"{obj} = {child}({w.squashed(scope, 1)})")
    w.put(scope, f"({obj}.apply({w.atom(scope)}) + {obj}.doubled * {obj}.missing)", 3.0)
    if w.chance(40):
        w.features.add("mutation-attr")
        w.emit(scope, f"{child}.scale = 0.75")
        w.put(scope, f"{obj}.apply({w.atom(scope)})", 1.0)


@construct("dataclass", weight=2, features={
    "dataclass": "a @dataclasses.dataclass built and mutated in f",
})
def dataclass(w: StatementWriter, scope: Scope) -> None:
    w.features.add("dataclass")
    w.need("Pair")
    p = w.fresh("p")
    w.emit(scope, f"{p} = Pair({w.squashed(scope, 1)}, k=n)")
    w.features.add("mutation-attr")
    w.emit_block(scope, f"""
        {p}.k += 1
        {p}.tags.append({p}.k)
    """)
    w.maybe_break(scope)
    w.put(scope, f"({p}.w * {p}.k * 0.2)", 3.0 * 5 * 0.2)
    if w.chance(40):
        # not Pair == Pair: from 3.13 a dataclass compares field by field, and a tensor
        # field's == is elementwise, so eager code raises (identity no longer short-cuts it)
        w.emit(scope, f"print({p}.k, {p}.tags, [f.name for f in dataclasses.fields({p})], "
                      f"dataclasses.replace({p}, k=0).k)")
        w.features.update({"print", "comprehension"})


@construct("nn-module", weight=2, features={
    "nn-module": "nn.Module subclass with a buffer and a parameter",
})
def nn_module(w: StatementWriter, scope: Scope) -> None:
    w.features.add("nn-module")
    w.need("Block")
    block = w.fresh("block")
    w.emit(scope, f"{block} = Block(t0.shape[-1])")
    if w.chance(40):
        w.emit(scope, f"{block}.shift.add_(0.5)")
    w.maybe_break(scope)
    w.put(scope, f"{block}({w.squashed(scope, 1)})", 1.0)
    if w.chance(40):
        w.emit(scope, f"print(sorted(k for k, _ in {block}.named_parameters()), len(list({block}.buffers())))")
        w.features.update({"print", "comprehension"})


@construct("mutate-attr", weight=2, features={
    "mutation-attr": "store to an object's or a class's attribute",
})
def mutate_attr(w: StatementWriter, scope: Scope) -> None:
    w.features.add("mutation-attr")
    w.need("State")
    s = w.fresh("st")
    w.emit(scope, f"{s} = State({w.squashed(scope, 1)})")
    w.emit_block(scope, f"""
        {s}.calls += n
        {s}.w = torch.tanh({s}.w * State.scale)
    """)
    if w.chance(50):
        w.emit(scope, "State.scale = State.scale * 0.5")
    w.maybe_break(scope)
    if w.chance(40):
        w.features.add("del")
        w.emit(scope, f"{s}.extra = {s}.calls")
        w.emit(scope, f"del {s}.extra")
    w.put(scope, f"({s}.w * {s}.calls * 0.25)", 4.0)


@construct("isinstance", weight=2, features={
    "isinstance": "isinstance on unions (X | Y, tuples) and runtime protocols",
})
def isinstance_(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"isinstance", "if"})
    w.need("collections.abc")
    w.need("typing")
    t = w.pick(scope.tensors)
    condition = w.pick((
        f"isinstance({t}, torch.Tensor | int)",
        "isinstance(n, (int, float))",
        "isinstance(n, typing.SupportsIndex)",
        f"isinstance(({t},), collections.abc.Sequence)",
        f'isinstance({{"k": {t}}}, collections.abc.Mapping)',
        f"isinstance({t}, collections.abc.Iterable) and not isinstance({t}, list)",
    ))
    w.emit(scope, f"if {condition}:")
    w.body(scope.block(), (1, 1))
    w.emit(scope, "else:")
    w.body(scope.block(), (1, 1))
