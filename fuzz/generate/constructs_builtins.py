"""Constructs over builtins applied to sizes and tensor-derived values.

Registered constructs (see ``fuzz.generate.registry``): ``round``,
``divmod``, ``pow`` with a modulus, ``format`` and ``math`` functions of
sizes (symbolic under dynamic shapes); ``int``/``float``/``bool`` of sizes
and of counts read from tensors; ``sorted``/``min``/``max`` with ``key=``;
``zip(strict=True)`` (a mismatch caught); ``range`` with negative steps (and
a zero step, caught) and its ``reversed``/``len``/indexing; ``slice``
objects and ``slice.indices``; ``getattr``/``setattr``/``delattr``/
``hasattr`` with defaults; three-argument ``type()``; ``globals()``,
``vars()`` and ``del`` of a global. Dynamo models them in
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
