"""Constructs over Python's object protocols and the methods of builtin containers.

Registered constructs (see ``fuzz.generate.registry``): a user container
class (``__len__``, ``__getitem__``, ``__iter__``, ``__contains__``,
``__bool__``, ``__setitem__``); subclasses of ``dict`` (with
``__missing__``) and ``list`` and a ``collections.UserDict``; a tensor
wrapper with arithmetic dunders (``__add__``, ``__radd__``, ``__mul__``,
``__neg__``, ``__iadd__``), ``__call__``, a property, a classmethod and a
staticmethod; user objects with ``__eq__``/``__hash__`` as dict keys and set
members; the methods of lists, tuples, ``torch.Size`` and dicts (insert,
pop, remove, index, count, sort with key, slice assignment; setdefault,
popitem, fromkeys, views and their set operations); and builtins on ints and
iterables (``map``, ``filter``, ``enumerate(start=)``, ``any``/``all``,
``getattr`` with a default, ``callable``, ``isinstance`` with tuples and
unions, ``sum`` with a start, ``iter`` with a sentinel, ``length_hint``,
``frozenset``, ``id``, ``eval``, ``locals()``); iterator objects advanced by
``next()`` and kept across a graph break; torch's pytree over nested
containers. Dynamo models them in
``torch/_dynamo/variables/user_defined.py``, ``lists.py``, ``dicts.py``,
``builtin.py``, ``iter.py``, ``hashable.py`` and ``object_protocol.py``.

Lists and sets here hold ints and strings, never tensors: ``list.index``,
``in`` and ``remove`` compare with ``==``, which is elementwise on tensors.
Orders shown are ordered containers' only.
"""

from __future__ import annotations

from fuzz.generate.prelude import helper, imported
from fuzz.generate.registry import StatementWriter, construct
from fuzz.generate.scope import Scope

_BAG = helper("Bag", '''
    class Bag:
        def __init__(self, **items): self.items = dict(items)
        def __len__(self): return len(self.items)
        def __getitem__(self, key): return self.items[key]
        def __setitem__(self, key, value): self.items[key] = value
        def __iter__(self): return iter(self.items)
        def __contains__(self, key): return key in self.items
        def __bool__(self): return len(self.items) > 1
''')
_SUBCLASSES = helper("Defaults", '''
    class Defaults(dict):
        def __missing__(self, key): return len(key)


    class Stack(list):
        def top(self): return self[-1]
''')
_COLLECTIONS = imported("collections")
_OPERATOR = imported("operator")
_ITERTOOLS = imported("itertools")
_VEC = helper("Vec", '''
    class Vec:
        def __init__(self, t): self.t = t
        def __add__(self, other): return Vec(self.t + (other.t if isinstance(other, Vec) else other))
        __radd__ = __add__
        def __mul__(self, k): return Vec(self.t * k)
        def __neg__(self): return Vec(-self.t)
        def __call__(self, k): return torch.tanh(self.t * k)

        def __iadd__(self, other):
            self.t = torch.tanh(self.t + other.t)
            return self

        @property
        def size(self): return self.t.numel()

        @classmethod
        def like(cls, other): return cls(torch.zeros_like(other.t))

        @staticmethod
        def squash(t): return t / (1.0 + t.abs())
''')
_KEY = helper("Key", '''
    class Key:
        def __init__(self, name): self.name = name
        def __eq__(self, other): return isinstance(other, Key) and other.name == self.name
        def __hash__(self): return hash(self.name)
''')


@construct("user-container", weight=2, features={
    "user-container": "a user class with __len__/__getitem__/__setitem__/__iter__/__contains__/__bool__",
})
def user_container(w: StatementWriter, scope: Scope) -> None:
    """A Bag of tensors: its length, items, keys, membership and truth."""
    w.features.update({"user-container", "print"})
    w.need(_BAG)
    bag = w.fresh("bag")
    w.emit(scope, f"{bag} = Bag(a={w.atom(scope)}, b={w.atom(scope)})")
    if w.chance(50):
        w.emit(scope, f'{bag}["c"] = {w.atom(scope)} * 0.5')
    w.maybe_break(scope, 0, 25)
    form = w.pick(("items", "iter", "truth"))
    if form == "items":
        w.put(scope, f'{bag}["a"] - {bag}["b"] * 0.5 if "a" in {bag} else {bag}["b"]', 6.0)
    elif form == "iter":
        w.features.add("comprehension")
        w.put(scope, f"sum({bag}[k] for k in {bag}) * 0.25", 3.0)
    else:
        w.put(scope, f'{bag}["a"] if {bag} else {bag}["b"]', 4.0)
    w.emit(scope, f'print(len({bag}), sorted({bag}), "z" in {bag})')


@construct("builtin-subclass", weight=2, features={
    "builtin-subclass": "a dict subclass with __missing__, a list subclass with a method, collections.UserDict",
})
def builtin_subclass(w: StatementWriter, scope: Scope) -> None:
    """``Defaults(...)[missing]``, ``Stack.top()`` after appends, a UserDict's methods."""
    w.features.update({"builtin-subclass", "print"})
    form = w.pick(("dict", "list", "userdict"))
    if form == "dict":
        w.need(_SUBCLASSES)
        d = w.fresh("dd")
        w.emit(scope, f"{d} = Defaults(one=n)")
        w.maybe_break(scope, 0, 25)
        shown = w.fresh("shown")
        w.emit(scope, f'{shown} = ({d}["one"], {d}["three"], sorted({d}), isinstance({d}, dict))')
        w.emit(scope, f"print({shown})")
        w.put(scope, f'{w.atom(scope)} * ({d}["one"] + {d}["four"]) * 0.125', 4.0)
    elif form == "list":
        w.need(_SUBCLASSES)
        s = w.fresh("stack")
        w.emit(scope, f"{s} = Stack([{w.atom(scope)}])")
        w.emit(scope, f"{s}.append({w.atom(scope)} * 0.5)")
        w.emit(scope, f"{s} += [{w.atom(scope)}]")
        w.maybe_break(scope, 0, 25)
        w.emit(scope, f"print(len({s}), type({s}).__name__, type({s}[:1]).__name__)")
        w.put(scope, f"{s}.top() + {s}[0] * 0.5", 6.0)
    else:
        w.need(_COLLECTIONS)
        u = w.fresh("ud")
        w.emit(scope, f"{u} = collections.UserDict(a={w.atom(scope)})")
        w.emit(scope, f'{u}["b"] = {w.atom(scope)} * 0.5')
        w.emit(scope, f'{u}.update(c=n)')
        w.maybe_break(scope, 0, 25)
        shown = w.fresh("shown")
        w.emit(scope, f'{shown} = (sorted({u}), len({u}), {u}.get("c"), "b" in {u})')
        w.emit(scope, f"print({shown})")
        w.put(scope, f'{u}["a"] + {u}["b"] * {u}.get("z", 1)', 6.0)


@construct("operator-overloads", weight=2, features={
    "operator-overloads": "a tensor wrapper's __add__/__radd__/__mul__/__neg__/__iadd__/__call__, a property, "
                          "a classmethod and a staticmethod",
})
def operator_overloads(w: StatementWriter, scope: Scope) -> None:
    """Arithmetic on Vec objects, then back to a tensor through a dunder or a method."""
    w.features.update({"operator-overloads", "print"})
    w.need(_VEC)
    v, u = w.fresh("v"), w.fresh("u")
    w.emit(scope, f"{v} = Vec({w.atom(scope)}.clamp(-3.0, 3.0))")
    w.emit(scope, f"{u} = {w.pick(('-', ''))}({v} + Vec({w.atom(scope)}.clamp(-3.0, 3.0))) * 0.25")
    if w.chance(50):
        w.emit(scope, f"{u} += {w.pick((v, f'Vec.like({v})'))}")
    if w.chance(40):
        w.emit(scope, f"{u} = 0.5 + {u}")
    w.maybe_break(scope, 0, 30)
    w.emit(scope, f"print({v}.size, type({u}).__name__)")
    w.put(scope, w.pick((f"{u}(0.5)", f"Vec.squash({u}.t)", f"{u}.t")), 3.0)


@construct("hashable-keys", weight=2, features={
    "hashable-keys": "user objects with __eq__/__hash__ as dict keys and set members",
})
def hashable_keys(w: StatementWriter, scope: Scope) -> None:
    """A dict keyed by Key objects, looked up by equal ones; a set of them."""
    w.features.update({"hashable-keys", "print"})
    w.need(_KEY)
    table = w.fresh("table")
    w.emit(scope, f'{table} = {{Key("a"): {w.atom(scope)}, Key("b"): {w.atom(scope)}}}')
    w.emit(scope, f'{table}[Key("a")] = {table}[Key("a")] * 0.5')
    w.maybe_break(scope, 0, 25)
    w.emit(scope, f'print(len({table}), Key("b") in {table}, len({{Key("a"), Key("a"), Key("b")}}))')
    w.put(scope, f'{table}[Key("a")] + {table}.get(Key("z"), {table}[Key("b")])', 6.0)


@construct("list-methods", weight=2, features={
    "list-methods": "list, tuple and torch.Size methods on ints: insert, pop, remove, index, count, sort(key=), "
                    "slice assignment, repetition, Size arithmetic",
})
def list_methods(w: StatementWriter, scope: Scope) -> None:
    """An int list edited by its methods, a tuple's and t0.shape's, scaling a tensor."""
    w.features.update({"list-methods", "print"})
    ns = w.fresh("ns")
    w.emit(scope, f"{ns} = [n, 2, 3, n + 1]")
    edits = (f"{ns}.insert(1, n % 3)", f"{ns}.pop(0)", f"{ns}.remove({ns}[0])", f"{ns}.sort(key=lambda i: -i)",
             f"{ns}[1:3] = [4, n]", f"{ns}.extend(range(2))", f"{ns}.reverse()", f"del {ns}[-1]",
             f"{ns} *= 2", f"{ns}[n % 2] = 7", f"{ns} = {ns}[slice(None, None, -2)] + {ns}[::3]")
    # at most 3 edits: the list keeps an item for index() however many remove one
    for _ in range(w.count((2, 3))):
        edit = w.pick(edits)
        if "lambda" in edit:
            w.features.add("closure")
        w.emit(scope, edit)
    w.maybe_break(scope, 0, 25)
    k = w.fresh("k")
    forms = {
        "range": f"(range(n) == range(0, n, 1)) + range(1, 9, 2).count(n) + range(n + 1).index(n) "
                 f"+ ({ns} < [5]) + {{(1, n): 2}}.get((1, n), 0)",
        "list": f"{ns}.count(n) + {ns}.index({ns}[-1]) + len({ns} + [1] * 2)",
        "tuple": f"tuple({ns}).index({ns}[0]) + (1, n, n).count(n) + len(tuple({ns})[::2])",
        "size": "torch.Size(t0.shape[1:] + (2,)).numel() + t0.shape.index(t0.shape[-1]) + len(t0.size()[:1] * 2)",
    }
    first = w.pick(tuple(forms))
    w.emit(scope, f"{k} = {forms[first]}")
    if w.chance(50):
        w.emit(scope, f"{k} += {forms[w.pick([form for form in forms if form != first])]}")
    w.emit(scope, f"print({ns}, {k})")
    w.put(scope, f"{w.atom(scope)} * ({k} % 5) * 0.25", 4.0)


@construct("dict-methods", weight=2, features={
    "dict-methods": "dict methods and views: setdefault, popitem, fromkeys, copy, keys() & and |, "
                    "items() membership, reversed(dict)",
})
def dict_methods(w: StatementWriter, scope: Scope) -> None:
    """A dict of tensors edited by its methods, its views combined as sets."""
    w.features.update({"dict-methods", "print"})
    dm = w.fresh("dm")
    w.emit(scope, f'{dm} = dict.fromkeys(("a", "b"), {w.atom(scope)})')
    edits = (f'{dm}.setdefault("c", {w.atom(scope)} * 0.5)', f'{dm}.update(b={w.atom(scope)}, z=0)',
             f"{dm}.popitem() if len({dm}) > 2 else None", f'{dm} = {dm}.copy() | {{"d": {w.atom(scope)}}}', f'{dm}.pop("z", None)',
             f'{dm} |= dict(e={w.atom(scope)})')
    for _ in range(w.count((1, 3))):
        w.emit(scope, w.pick(edits))
    w.maybe_break(scope, 0, 25)
    keys = w.fresh("keys")
    w.emit(scope, f'{keys} = sorted({dm}.keys() & {{"a", "b", "c"}}) + sorted({dm}.keys() | {{"e"}})')
    order = w.fresh("order")
    w.emit(scope, f'{order} = (list(reversed({dm})), ("a", {dm}["a"]) in {dm}.items(), {dm} == dict({dm}), '
                  f'sorted({dm}.keys() - {{"a"}}), hasattr({dm}, "keys"))')
    w.emit(scope, f"print({keys}, {order})")
    w.put(scope, f'{dm}["a"] * (len({keys}) % 4) * 0.25', 3.0)


@construct("builtins-iter", weight=2, features={
    "builtins-iter": "map/filter/enumerate(start=)/any/all/sum(start=)/iter(callable, sentinel) over ints, "
                     "getattr with a default, callable, isinstance with a tuple and a union, operator.length_hint, "
                     "frozenset, id, eval, bytes, locals(), __bases__",
})
def builtins_iter(w: StatementWriter, scope: Scope) -> None:
    """An int computed by builtins over iterables and objects, scaling a tensor."""
    w.features.update({"builtins-iter", "print"})
    k = w.fresh("k")
    forms = (
        f"{k} = sum(map(lambda i: i * 2, range(n)), 1) + len(list(filter(None, [0, n, 1])))",
        f"{k} = sum(i for i, _ in enumerate(range(n), start=1)) + any(i > 2 for i in range(n))",
        f"{k} = all([n, 1]) + callable(torch.tanh) + isinstance(n, (float, int)) + getattr(t0, 'zz', 2)",
        f"{k} = len(list(iter(iter([3, 2, 1, 0]).__next__, 1))) + max(map(abs, (-n, 1)))",
        f"{k} = sum(divmod(n + 5, 3)) + int(str(n)) + ord(chr(97 + n)) - 97",
        f"{k} = operator.length_hint(iter([1, 2, n])) + operator.length_hint(range(n)) + len(bytes([n, 65]))",
        f"{k} = len(frozenset({{1, n}}) | frozenset((2,))) + (id(t0) == id(t0)) + eval('n * 2 + 1')",
        f"{k} = len(sorted(locals())) + isinstance(n, int | None) + len(type(t0).__bases__)",
    )
    first = w.pick(forms)
    # two of the forms: each draw reaches twice the builtins
    second = w.pick([form for form in forms if form != first]).replace(f"{k} = ", f"{k} += ", 1)
    for text in (first, second):
        if "operator." in text:
            w.need(_OPERATOR)
        if " for " in text:
            w.features.add("comprehension")
        if "lambda" in text:
            w.features.add("closure")
    w.emit(scope, first)
    w.maybe_break(scope, 0, 25)
    w.emit(scope, second)
    w.emit(scope, f"print({k})")
    w.put(scope, f"{w.atom(scope)} * ({k} % 5) * 0.25", 4.0)


# Iterators over f's tensors: the iterator and the first item it yields ({a}, {b}: tensors).
_ITERATORS: tuple[tuple[str, str], ...] = (
    ("map(lambda v: v * 0.5, [{a}, {b}, {a}])", "{it}_0"),
    ("zip([{a}, {b}], range(n + 1))", "{it}_0[0] * {it}_0[1]"),
    ("enumerate([{a}, {b}], start=n)", "{it}_0[1] * ({it}_0[0] % 3)"),
    ("filter(lambda v: v.ndim >= 0, [{a}, {b}])", "{it}_0"),
    ("reversed([{a}, {b}])", "{it}_0"),
    ("iter(({a}, {b}))", "{it}_0"),
    ("itertools.islice(itertools.cycle([{a}, {b}]), 3)", "{it}_0"),
    ("zip(itertools.repeat({a}, 2), itertools.count(n, 2))", "{it}_0[0] * ({it}_0[1] % 3)"),
)


@construct("iterator-objects", weight=2, features={
    "iterator-objects": "map/zip/enumerate/filter/reversed/iter/islice/cycle/repeat/count objects over tensors, "
                        "advanced by next(), live across a graph break, then drained",
})
def iterator_objects(w: StatementWriter, scope: Scope) -> None:
    """An iterator made, advanced once, kept across a graph break, drained with a default."""
    w.features.update({"iterator-objects", "print"})
    make, first = w.pick(_ITERATORS)
    if "lambda" in make:
        w.features.add("closure")
    if "itertools" in make:
        w.need(_ITERTOOLS)
    it = w.fresh("it")
    w.emit(scope, f"{it} = {make.format(a=w.atom(scope), b=w.atom(scope))}")
    w.emit(scope, f"{it}_0 = next({it})")
    w.maybe_break(scope, 0, 50)
    rest = f"{it}_rest"
    w.emit(scope, f"{rest} = list({it})")
    w.emit(scope, f"print(len({rest}), next({it}, None) is None)")
    # an item is a tensor (|value| <= 4) or a tensor times an int below 3
    w.put(scope, first.format(it=it), 8.0)


_PYTREE = helper("pytree", "import torch.utils._pytree as pytree")


@construct("pytree", weight=2, features={
    "pytree": "torch.utils._pytree tree_map/tree_map_only/tree_flatten/tree_unflatten/tree_leaves over nested "
              "dicts, lists and tuples of tensors and ints",
})
def pytree_calls(w: StatementWriter, scope: Scope) -> None:
    """A nested container of tensors and ints mapped, flattened and rebuilt by torch's pytree."""
    w.features.update({"pytree", "print"})
    w.need(_PYTREE)
    tree, out = w.fresh("tree"), w.fresh("mapped")
    w.emit(scope, f'{tree} = {{"a": {w.atom(scope)}, "b": [{w.atom(scope)}, ({w.atom(scope)}, n)]}}')
    form = w.pick(("map_only", "map", "flatten", "leaves"))
    if form == "map_only":
        w.features.add("closure")
        w.emit(scope, f"{out} = pytree.tree_map_only(torch.Tensor, lambda v: torch.tanh(v * 0.5), {tree})")
    elif form == "map":
        w.features.add("closure")
        w.emit(scope, f"{out} = pytree.tree_map(lambda v: v * 0.5 if isinstance(v, torch.Tensor) else v + 1, {tree})")
    elif form == "flatten":
        w.features.add("comprehension")
        leaves, spec = w.fresh("leaves"), w.fresh("spec")
        w.emit(scope, f"{leaves}, {spec} = pytree.tree_flatten({tree})")
        w.maybe_break(scope, 0, 30)
        w.emit(scope, f"{out} = pytree.tree_unflatten([v * 0.5 if isinstance(v, torch.Tensor) else v "
                      f"for v in {leaves}], {spec})")
    else:
        w.emit(scope, f'{out} = {{"a": sum(pytree.tree_leaves({tree})[:2]) * 0.5, "b": [{tree}["b"][0], (0, 0)]}}')
    w.maybe_break(scope, 0, 25)
    w.emit(scope, f'print(len(pytree.tree_leaves({out})), sorted({out}))')
    w.put(scope, f'{out}["a"] + {out}["b"][0]', 8.0)


@construct("function-forms", weight=2, features={
    "function-forms": "nested functions with keyword-only defaults and *args/**kwargs, a closure returned by a "
                      "closure, an attribute set on a function and read inside it, recursion, functions as "
                      "dict keys, a generator's throw()",
})
def function_forms(w: StatementWriter, scope: Scope) -> None:
    """One function form Dynamo models (functions.py), called to rebind a tensor."""
    w.features.add("function-forms")
    fn, x = w.fresh("fn"), w.atom(scope)
    form = w.pick(("kwargs", "factory", "attribute", "recursion", "keys", "throw"))
    if form not in ("keys", "throw"):
        w.features.add("closure")
    if form == "kwargs":
        w.emit(scope, f"def {fn}(v, *args, k=0.5, **kw):")
        w.emit(scope, "return torch.tanh(v * k + len(args) - len(kw))", 1)
        w.maybe_break(scope, 0, 25)
        w.put(scope, w.pick((f"{fn}({x}, 1, 2, k=n * 0.25, extra=3)", f"{fn}({x}, *(1,), **{{'k': 0.25}})")), 1.0)
    elif form == "factory":
        w.emit(scope, f"def {fn}(k):")
        w.emit(scope, "def scaled(v):", 1)
        w.emit(scope, "return torch.tanh(v * k)", 2)
        w.emit(scope, "return scaled", 1)
        w.maybe_break(scope, 0, 25)
        w.put(scope, f"{fn}(n * 0.25)({x}) + {fn}(0.5)({x})", 2.0)
    elif form == "attribute":
        w.emit(scope, f"def {fn}(v):")
        w.emit(scope, f"return torch.sin(v) * {fn}.scale", 1)
        w.emit(scope, f"{fn}.scale = n * 0.25")
        w.maybe_break(scope, 0, 25)
        w.put(scope, f"{fn}({x})", 1.0)
    elif form == "recursion":
        w.features.add("if")
        w.emit(scope, f"def {fn}(v, i):")
        w.emit(scope, "if i <= 0:", 1)
        w.emit(scope, "return v", 2)
        w.emit(scope, f"return {fn}(torch.tanh(v), i - 1)", 1)
        w.maybe_break(scope, 0, 25)
        w.put(scope, f"{fn}({x}, n)", 4.0)
    elif form == "keys":
        table = w.fresh("table")
        w.emit(scope, f"{table} = {{torch.sin: 2, torch.tanh: 1, len: 3}}")
        w.emit(scope, f"print(len({table}), {table}[torch.tanh], torch.sin in {table}, len in {table})")
        w.features.add("print")
        w.put(scope, f"{x} * {table}[torch.sin] * 0.5", 4.0)
    else:
        w.features.update({"generator", "try-except", "print"})
        gen = w.fresh("gen")
        w.emit(scope, f"def {fn}(v):")
        w.emit(scope, "try:", 1)
        w.emit(scope, "yield v * 0.5", 2)
        w.emit(scope, "except ValueError:", 1)
        w.emit(scope, "yield torch.tanh(v)", 2)
        w.emit(scope, f"{gen} = {fn}({x})")
        first = w.fresh("first")
        w.emit(scope, f"{first} = next({gen})")
        w.maybe_break(scope, 0, 25)
        w.emit(scope, f"{first} = {first} + {gen}.throw(ValueError)")
        w.emit(scope, f"print(next({gen}, None) is None)")
        w.put(scope, f"{first}", 3.0)


@construct("sequence-protocols", weight=2, features={
    "sequence-protocols": "range slices, index, count and comparison; hash and equality of t0.shape and tuples; "
                          "rich comparison of lists and tuples; max/min with key and default; deque insert, "
                          "setitem, rotate and repeat under a maxlen; bytearray edits, hex, decode and % "
                          "formatting; list slice assignment and deletion with steps",
})
def sequence_protocols(w: StatementWriter, scope: Scope) -> None:
    """Two ints computed through the sequence protocols of ranges, tuples, t0.shape,
    lists, deques and bytearrays, printed and scaling a tensor."""
    w.features.update({"sequence-protocols", "print"})
    forms = ["range", "shape-hash", "compare", "minmax", "deque", "bytearray", "slice-assign"]
    ks = []
    for _ in range(2):
        form = w.pick(forms)
        forms.remove(form)
        k = w.fresh("k")
        ks.append(k)
        if form == "range":
            r = w.fresh("r")
            w.emit(scope, f"{r} = range(n, 12, {w.pick((2, 3))})")
            w.emit(scope, f"{k} = len({r}[1::2]) + {r}[-1] + {r}.index({r}[1]) + {r}.count(n) + (n in {r}) "
                          f"+ ({r}[:0] == range(0)) + ({r}[::-1][0] == {r}[-1])")
        elif form == "shape-hash":
            w.emit(scope, f"{k} = len({{t0.shape: 1, (1, n): 2, tuple(t0.shape): 3}}) "
                          f"+ (hash(t0.shape) == hash(tuple(t0.shape))) + (t0.shape == tuple(t0.shape)) "
                          f"+ (hash((n, 'a')) == hash((n, 'a')))")
        elif form == "compare":
            w.emit(scope, f"{k} = ([1, n] < [1, n, 0]) + ((n, 2) >= (n, 1)) + ([n] * 2 == [n, n]) "
                          f"+ (t0.shape[:1] <= (99,)) + max([3, n], [n, 1])[0] + min((n, 2), (2, n))[1]")
        elif form == "minmax":
            w.features.add("closure")
            w.emit(scope, f"{k} = max(n, t0.shape[0], 2) + min(t0.ndim, n) + max(t0.shape) "
                          f"+ min(t0.shape[1:], default=0) + max((), default=n) + max([1, n], key=lambda i: -i)")
        elif form == "deque":
            w.need(_COLLECTIONS)
            d = w.fresh("dq")
            w.emit(scope, f"{d} = collections.deque([1, 2, n], maxlen=5)")
            w.emit(scope, f"{d}.insert(1, 7)")
            w.emit(scope, f"{d}[0] = n + 1")
            w.emit(scope, f"{d}.rotate({w.pick((-1, 2))})")
            w.maybe_break(scope, 0, 20)
            w.emit(scope, f"{k} = {d}.index(7) + len({d} * 2) + ({d} * 2)[-1] + {d}.count(n) + ({d}.maxlen or 0)")
            w.emit(scope, f"print({d})")
        elif form == "bytearray":
            b = w.fresh("b")
            w.emit(scope, f"{b} = bytearray(b'ab')")
            w.emit(scope, f"{b} += bytes([97 + n])")
            w.emit(scope, f"{b}[0] = 120")
            w.emit(scope, f"{b} *= 2")
            w.emit(scope, f"{k} = {b}.count(b'b') + {b}.index(98) + len({b}.hex()) + len(b'%d-%s' % (n, b'x')) "
                          f"+ sum({b}) % 7")
            w.emit(scope, f"print({b}, str({b}[:2], \"ascii\"), len({b}.decode()))")
        else:
            ns = w.fresh("ns")
            w.emit(scope, f"{ns} = list(range(8))")
            w.emit(scope, f"{ns}[::2] = [n] * 4")
            w.emit(scope, f"del {ns}[1::3]")
            w.emit(scope, f"{ns}[1:1] = (5, 6)")
            w.emit(scope, f"{ns}[-2:] = []")
            w.emit(scope, f"{k} = sum({ns}) + len({ns})")
            w.emit(scope, f"print({ns})")
    w.emit(scope, f"print({', '.join(ks)})")
    w.put(scope, f"{w.atom(scope)} * (({' + '.join(ks)}) % 5) * 0.25", 4.0)
