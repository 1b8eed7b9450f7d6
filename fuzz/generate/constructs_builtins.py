"""Constructs over builtins applied to sizes and tensor-derived values.

Registered constructs (see ``fuzz.generate.registry``): ``round``,
``divmod``, ``pow`` with a modulus, ``format`` and ``math`` functions of
sizes (symbolic under dynamic shapes); ``int``/``float``/``bool`` of sizes
and of counts read from tensors; ``sorted``/``min``/``max`` with ``key=``;
``zip(strict=True)`` (a mismatch caught); ``range`` with negative steps (and
a zero step, caught) and its ``reversed``/``len``/indexing; ``slice``
objects and ``slice.indices``; ``getattr``/``setattr``/``delattr``/
``hasattr`` with defaults; three-argument ``type()``; ``globals()``,
``vars()`` and ``del`` of a global; attributes set on a tensor,
``operator.length_hint`` through each slot, ``fromkeys`` of a dict subclass,
``map`` over unequal iterables, ``isinstance`` against nested tuples and
``collections.abc``, ``frozenset`` algebra, a builtin type's methods called
unbound, and Python ``max``/``min`` of 0-dim tensors (builtins-objects). Dynamo models them in
``torch/_dynamo/variables/builtin.py``, ``lists.py`` (ranges, slices) and
``misc.py``. No ``id()`` or ``hash()`` of an object reaches an output.
"""

from __future__ import annotations

from fuzz.generate.prelude import helper, imported
from fuzz.generate.registry import StatementWriter, construct
from fuzz.generate.scope import Scope

_KNOBS = helper("Knobs", '''
    class Knobs:
        scale = 0.5

        def __init__(self, w):
            self.w = w
''')


@construct("size-arithmetic", weight=3, features={
    "size-arithmetic": "round/divmod/pow(a, b, mod)/format/math.* and int/float/bool of sizes and numel",
})
def size_arithmetic(w: StatementWriter, scope: Scope) -> None:
    """Builtins over a tensor's sizes; the ints scale a tensor and are printed."""
    w.features.update({"size-arithmetic", "print"})
    a = w.pick(scope.tensors)
    k = w.fresh("k")
    # any tensor but t0 may be 0-dim
    size = w.pick(("t0.shape[-1]", f"{a}.numel()", f"len({a}.shape)", f"({a}.size(0) if {a}.ndim else 1)",
                   "t0.shape[0]"))
    w.emit(scope, f"{k} = {size}")
    form = w.pick(("round", "divmod", "pow", "format", "math", "convert"))
    value = w.fresh("m")
    if form == "round":
        w.emit(scope, f"{value} = round({k} / 3) + round({k} * 0.25) + round(-{k} / 2)")
    elif form == "divmod":
        w.emit(scope, f"_q, _r = divmod({k} + n, {w.pick(('2', '3', 'n'))})")
        w.emit(scope, f"{value} = _q * 2 + _r")
    elif form == "pow":
        w.emit(scope, f"{value} = pow({k} + 1, n + 1, 7) + pow({w.pick(('2', '-2'))}, {k} % 4) + {k} ** 2 % 3")
    elif form == "format":
        text = w.fresh("s")
        w.emit(scope, f"{text} = format({k}, '03d') + format({k} * 0.5, '.1f') + f'{{{k}:>4}}'")
        w.emit(scope, f"print({text})")
        w.emit(scope, f"{value} = len({text})")
    elif form == "math":
        w.need(imported("math"))
        w.emit(scope, f"{value} = math.floor(math.sqrt({k})) + math.ceil({k} / 4) + math.gcd({k}, 6) "
                      f"+ math.isqrt({k} + n)")
    else:
        w.emit(scope, f"{value} = int(float({k}) / 2) + bool({k} > 2) + int(({w.atom(scope)} > 0).sum())")
    w.maybe_break(scope)
    w.emit(scope, f"print({value}, {k})")
    w.put(scope, f"({w.atom(scope)} * ({value} % 5) * 0.25)", 4.0)


@construct("key-functions", weight=2, features={
    "key-functions": "sorted/min/max with key= over tensors and ints, reverse=True, default=",
})
def key_functions(w: StatementWriter, scope: Scope) -> None:
    """Tensors ordered by counts of positive elements (ties keep their order)."""
    w.features.update({"key-functions", "closure"})
    items = f"[{w.tensors(scope, 3)}]"
    key = w.pick(("lambda v: int((v > 0).sum())", "lambda v: v.ndim", "lambda v: (v.shape[-1] if v.ndim else 0, 1)"))
    form = w.pick(("sorted", "max", "min", "ints"))
    if form == "sorted":
        order = w.fresh("order")
        w.emit(scope, f"{order} = sorted({items}, key={key}, reverse={w.pick(('False', 'True'))})")
        w.maybe_break(scope)
        w.put(scope, f"({order}[0] - {order}[-1] * 0.5)", 6.0)
    elif form in ("max", "min"):
        w.maybe_break(scope, 0, 20)
        w.put(scope, f"{form}({items}, key={key})", 4.0)
    else:
        best = w.fresh("best")
        w.emit(scope, f"{best} = min(range(n + 2), key=lambda i: (i - 2) ** 2) + max([], default=n)")
        w.emit(scope, f"{best} += max(n, 2, key=lambda i: -i)")
        w.maybe_break(scope)
        w.put(scope, f"({w.atom(scope)} * {best} * 0.1)", 4.0)
        w.features.add("print")
        w.emit(scope, f"print({best})")


@construct("zip-strict", weight=2, features={
    "zip-strict": "zip(strict=True) over tensors, and a length mismatch caught as ValueError",
})
def zip_strict(w: StatementWriter, scope: Scope) -> None:
    """Pairs of tensors zipped strictly; maybe a mismatch, caught."""
    w.features.update({"zip-strict", "comprehension"})
    x, y = w.fresh("x"), w.fresh("y")
    pairs = w.fresh("pairs")
    if w.chance(60):
        w.emit(scope, f"{pairs} = [{x} * {y} for {x}, {y} in zip(({w.tensors(scope, 2)}), "
                      f"({w.tensors(scope, 2)}), strict=True)]")
        w.maybe_break(scope)
        w.put(scope, f"({pairs}[0] + {pairs}[1])", 32.0)
    else:
        w.features.update({"try-except", "print"})
        w.emit(scope, "try:")
        w.emit(scope, f"{pairs} = [{x} + {y} for {x}, {y} in zip(({w.tensors(scope, 2)}), range(n), strict=True)]", 1)
        w.emit(scope, "except ValueError as e:")
        w.emit(scope, f"{pairs} = [{w.atom(scope)}]", 1)
        w.emit(scope, "print(type(e).__name__)", 1)
        w.maybe_break(scope)
        w.put(scope, f"{pairs}[-1]", 8.0)


@construct("range-steps", weight=2, features={
    "range-steps": "range with negative steps (a zero step caught), reversed/len/indexing/slicing of ranges",
})
def range_steps(w: StatementWriter, scope: Scope) -> None:
    """Ranges stepping down; their lengths, items and slices as ints."""
    w.features.update({"range-steps", "print"})
    r = w.fresh("steps")
    w.emit(scope, f"{r} = range({w.pick(('n', 'n * 2', '5'))}, {w.pick(('-1', '0', '-3'))}, {w.pick(('-1', '-2'))})")
    value = w.fresh("m")
    form = w.pick(("for", "index", "slice", "zero"))
    if form == "for":
        i = w.fresh("i")
        w.features.add("for")
        w.emit(scope, f"for {i} in {r}:")
        w.put(scope, f"({w.atom(scope)} * ({i} + 1) * 0.1 + {w.atom(scope)})", 14.0, 1)
        w.maybe_break(scope, 1, 20)
        w.emit(scope, f"{value} = len({r})")
    elif form == "index":
        w.emit(scope, f"{value} = {r}[0] + {r}[-1] + {r}.count(0) + {r}.index({r}[-1]) + len({r})")
    elif form == "slice":
        w.emit(scope, f"{value} = len({r}[::-1]) + sum({r}[1:]) + (3 in {r})")
    else:
        w.features.add("try-except")
        w.emit(scope, "try:")
        w.emit(scope, f"{value} = len(range(0, n, n - n))", 1)
        w.emit(scope, "except ValueError:")
        w.emit(scope, f"{value} = len(list(reversed({r})))", 1)
    w.maybe_break(scope, 0, 20)
    w.emit(scope, f"print({value}, {r}.step)")
    w.put(scope, f"({w.atom(scope)} * ({value} % 4) * 0.25)", 3.0)


@construct("slice-objects", weight=2, features={
    "slice-objects": "slice objects stored and applied to tuples, lists and tensor dims; slice.indices",
})
def slice_objects(w: StatementWriter, scope: Scope) -> None:
    """A slice object built before a graph break, applied after it."""
    w.features.update({"slice-objects", "print"})
    s = w.fresh("sl")
    w.emit(scope, f"{s} = slice({w.pick(('None', '1', '-2'))}, {w.pick(('None', '3', '-1'))}, "
                  f"{w.pick(('None', '-1', '2'))})")
    w.maybe_break(scope)
    seq = w.fresh("seq")
    w.emit(scope, f"{seq} = ({w.tensors(scope, 3)}, {w.atom(scope)})[{s}]")
    w.emit(scope, f"print(len({seq}), str({s}.indices(4)), [n, 2, 3][{s}])")
    if w.chance(50):
        # a slice with a positive step on t0's first dim keeps a prefix that broadcasts
        w.put(scope, f"(t0[slice(0, 1)] * 0.5 + len({seq}))", 6.0)
    else:
        w.put(scope, f"(sum({seq}, {w.atom(scope)} * 0.0) * 0.25)", 4.0)


@construct("attr-builtins", weight=2, features={
    "attr-builtins": "getattr/setattr/delattr/hasattr with defaults and computed names, vars()",
})
def attr_builtins(w: StatementWriter, scope: Scope) -> None:
    """An object's attributes read, written and deleted by name."""
    w.features.update({"attr-builtins", "print"})
    w.need(_KNOBS)
    o = w.fresh("knobs")
    w.emit(scope, f"{o} = Knobs({w.atom(scope)})")
    name = w.pick(('"k"', '"k" + str(n % 2)', '"scale"'))
    w.emit(scope, f"setattr({o}, {name}, n)")
    w.maybe_break(scope)
    w.put(scope, f"({o}.w * getattr({o}, {name}, 1) * getattr({o}, 'missing', 0.25))", 4.0)
    if w.chance(50):
        w.emit(scope, f"delattr({o}, {name})")
    w.emit(scope, f"_has = (hasattr({o}, {name}), hasattr({o}, 'w'), hasattr(Knobs, 'scale'))")
    w.emit(scope, f"print(_has, sorted(vars({o})))")


@construct("type-three-arg", weight=2, features={
    "type-three-arg": "a class made by three-argument type(), instantiated and its method called",
})
def type_three_arg(w: StatementWriter, scope: Scope) -> None:
    """``type(name, bases, namespace)`` with a lambda method; an instance used after a graph break."""
    w.features.update({"type-three-arg", "closure", "print"})
    w.need(_KNOBS)
    cls, o = w.fresh("Made"), w.fresh("made")
    w.emit(scope, f'{cls} = type("{cls}", (Knobs,), {{"scale": n * 0.25, "apply": lambda self, x: x * self.scale}})')
    w.emit(scope, f"{o} = {cls}({w.atom(scope)})")
    w.maybe_break(scope)
    w.put(scope, f"({o}.apply({o}.w) + {o}.apply({w.atom(scope)}))", 8.0)
    w.emit(scope, f"print({cls}.__name__, {cls}.__mro__[1].__name__, isinstance({o}, Knobs) is True)")


@construct("globals-vars", weight=2, features={
    "globals-vars": "globals() read and written by key, a global deleted and rebound, vars() of a module object",
})
def globals_vars(w: StatementWriter, scope: Scope) -> None:
    """Module globals reached through ``globals()``; a global deleted with ``del``."""
    w.features.update({"globals-vars", "print"})
    name = w.fresh("FLAG")
    w.prelude_lines.append(f"{name} = 2")
    form = w.pick(("read", "write", "del"))
    if form == "read":
        w.put(scope, f'({w.atom(scope)} * globals()["{name}"] * 0.25 + globals().get("NOPE", 0))', 8.0)
        w.maybe_break(scope)
        w.emit(scope, f'print("{name}" in globals(), sorted(k for k in globals() if k == "{name}"))')
        w.features.add("comprehension")
    elif form == "write":
        w.emit(scope, f'globals()["{name}"] = globals()["{name}"] + n')
        w.maybe_break(scope)
        w.put(scope, f"({w.atom(scope)} * ({name} % 5) * 0.25)", 8.0)
        w.emit(scope, f"print({name})")
    else:
        w.features.update({"del", "global-write"})
        w.emit(scope, f"global {name}")
        w.emit(scope, f"{name} = n")
        w.put(scope, f"({w.atom(scope)} * {name} * 0.25)", 4.0)
        w.emit(scope, f"del {name}")
        w.maybe_break(scope)
        w.emit(scope, f'print("{name}" in globals())')
        w.emit(scope, f"{name} = 2")


_HINTED = helper("Hinted", '''
    class Hinted:
        """No __len__: operator.length_hint asks __length_hint__."""

        def __init__(self, n): self.n = n
        def __length_hint__(self): return self.n + 1
''')
_HINTED_DICT = helper("Keyed", '''
    class Keyed(dict):
        def __missing__(self, key): return len(str(key))
''')
_OPERATOR = imported("operator")
_COLLECTIONS = imported("collections")
_COLLECTIONS_ABC = imported("collections.abc")
# The forms of builtins-objects: each sets the int k{n} (prefixed) from builtins
# over objects Dynamo models one by one in builtin.py (length_hint's slots,
# fromkeys of a dict subclass, map over several iterables, isinstance against
# nested tuples and ABCs, frozenset algebra, attributes set on a tensor, a
# builtin type's methods called unbound).
_OBJECT_FORMS = ("tensor-attrs", "length-hint", "fromkeys", "map-many", "isinstance", "frozenset",
                 "unbound-methods")


@construct("builtins-objects", weight=2, features={
    "builtins-objects": "attributes set and read on a tensor (setattr, getattr with a default, hasattr); "
                        "operator.length_hint through __len__, __length_hint__ and a default; fromkeys of a dict "
                        "subclass and OrderedDict; map over unequal iterables; isinstance against nested tuples "
                        "and collections.abc; frozenset algebra; a builtin type's methods called unbound "
                        "(int.__neg__, list.__len__, float.__rsub__, int.from_bytes, float.fromhex, str.upper); "
                        "Python max/min of 0-dim tensors and floats",
})
def builtins_objects(w: StatementWriter, scope: Scope) -> None:
    """Three forms each adding to an int that scales a tensor, plus a tensor
    from Python ``max``/``min`` of 0-dim tensors and floats (which Dynamo turns
    into clamps)."""
    w.features.update({"builtins-objects", "print", "reduction"})
    k = w.fresh("k")
    w.emit(scope, f"{k} = 0")
    forms = list(_OBJECT_FORMS)
    for _ in range(3):
        form = w.pick(forms)
        forms.remove(form)
        if form == "tensor-attrs":
            y = w.fresh("tagged")
            w.emit(scope, f"{y} = {w.atom(scope)} * 1.0")
            w.emit(scope, f"{y}.tag = n")
            w.emit(scope, f'setattr({y}, "extra", 2)')
            w.maybe_break(scope, 0, 20)
            w.emit(scope, f'{k} += {y}.tag + getattr({y}, "extra") + hasattr({y}, "missing") '
                          f'+ getattr({y}, "missing", 3)')
        elif form == "length-hint":
            w.need(_OPERATOR)
            w.need(_HINTED)
            w.emit(scope, f"{k} += operator.length_hint(Hinted(n)) + operator.length_hint([1, 2], 7) "
                          f"+ operator.length_hint(iter(range(n)), 3) + operator.length_hint(reversed([n, 1, 2]))")
        elif form == "fromkeys":
            w.need(_HINTED_DICT)
            w.need(_COLLECTIONS)
            fk = w.fresh("fk")
            w.emit(scope, f'{fk} = Keyed.fromkeys("ab", n)')
            w.emit(scope, f'{k} += {fk}["a"] + {fk}[123] + len(collections.OrderedDict.fromkeys([1, n, 1])) '
                          f"+ sum(dict.fromkeys(range(n), 2).values())")
        elif form == "map-many":
            w.need(_OPERATOR)
            w.features.add("closure")
            w.emit(scope, f"{k} += len(list(map(operator.add, [1, n], (2, 3, 4)))) "
                          f"+ sum(map(lambda a, b: a * b, range(n), [2, 3])) + max(map(len, ([1], [n, n])))")
        elif form == "isinstance":
            w.need(_COLLECTIONS_ABC)
            w.emit(scope, f"{k} += isinstance(n, (str, (bytes, int))) + isinstance(t0, (int, torch.Tensor)) "
                          f"+ isinstance(t0, torch.nn.Parameter) + issubclass(bool, int) "
                          f"+ isinstance([n], collections.abc.Sequence) + isinstance({{}}, collections.abc.Mapping)")
        elif form == "unbound-methods":
            # a builtin type's methods called unbound, BuiltinVariable.call_method
            w.emit(scope, f"{k} += int.__neg__(-n) + list.__len__([n, 1]) + len(tuple(tuple.__iter__((1, n)))) "
                          f"+ int(float.__rsub__(3.0, n)) + int.from_bytes(b\"\\x01\\x00\", \"little\") "
                          f"+ int(float.fromhex(\"0x1p+2\")) + len(str.upper(\"ab\")) + int.__abs__(-n)")
        else:
            fs = w.fresh("fs")
            w.emit(scope, f"{fs} = frozenset({{1, n}})")
            w.emit(scope, f"{k} += len({fs} | {{2}}) + len({fs} & frozenset(range(n))) "
                          f"+ ({fs} <= frozenset(range(10))) + len({fs}.union([7], (8,))) + ({fs} == {{n, 1}})")
    a = w.pick(scope.tensors)
    m = w.fresh("m")
    # Python max/min of a 0-dim tensor and a float or another 0-dim tensor: |m| <= 2
    w.emit(scope, f"{m} = max({a}.float().mean().clamp(-1.0, 1.0), 0.25) "
                  f"- min({a}.float().amax().clamp(-1.0, 1.0), {a}.float().amin().clamp(-1.0, 1.0) * 0.5)")
    w.emit(scope, f"print({k})")
    w.put(scope, f"{w.atom(scope)} * ({k} % 5) * 0.25 + {m}", 6.0)
