"""Constructs over the standard library Dynamo re-implements: functools, collections, itertools, heapq, bisect, operator.

Registered constructs (see ``fuzz.generate.registry``), one small idea each,
over tensors, sizes and the program's own ints, with ``graph_break()`` where
the library call is half done (a cache filled, a deque rotated, an iterator
partly consumed): Dynamo models these modules with its own variable trackers
and polyfills (``torch/_dynamo/variables/functions.py``, ``lists.py``,
``dicts.py``, ``iter.py``, ``misc.py``, ``torch/_dynamo/polyfills/``), so
each call site here is a path through one of them. ``itertools.batched``
needs 3.12 (``min_python``). Every order a program shows is an ordered
container's (lists, deques, dicts), never a set's.
"""

from __future__ import annotations

from fuzz.generate.prelude import helper, imported
from fuzz.generate.registry import StatementWriter, construct
from fuzz.generate.scope import Scope

PY312 = (3, 12)

_CACHED = helper("cached_scale", '''
    CACHE_MISSES = []


    @functools.lru_cache(maxsize=2)
    def cached_scale(k):
        CACHE_MISSES.append(k)
        return 0.25 * (k + 1)


    @functools.cache
    def cached_offset(k, sign=1):
        CACHE_MISSES.append(-k)
        return sign * 0.125 * k
''', needs=(imported("functools"),))
_MIX = helper("mix", '''
    def mix(a, b, scale=1.0, shift=0.0):
        return torch.tanh(a * scale + b + shift)
''')
_LOGGED = helper("logged", '''
    LOGGED = []


    def logged(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            LOGGED.append(fn.__name__)
            return fn(*args, **kwargs)
        return inner


    @logged
    def softsign(x, k=1):
        """x / (1 + |x|), scaled by k."""
        return k * x / (1.0 + x.abs())
''', needs=("functools",))
_LAZY = helper("Lazy", '''
    class Lazy:
        def __init__(self, w):
            self.w = w
            self.computed = 0

        @functools.cached_property
        def squashed(self):
            self.computed += 1
            return torch.tanh(self.w * 2)
''', needs=("functools",))
_DESCRIBE = helper("describe", '''
    @functools.singledispatch
    def describe(x):
        return 0


    @describe.register
    def _(x: int):
        return x + 1


    @describe.register(torch.Tensor)
    def _(x):
        return x.ndim * 10


    @describe.register(list)
    @describe.register(tuple)
    def _(x):
        return len(x) * 100
''', needs=("functools",))
_POINT = helper("Point", '''
    Point = collections.namedtuple("Point", ["w", "k"], defaults=[1])
''', needs=(imported("collections"),))
_HISTORY = helper("HISTORY", '''
    HISTORY = collections.deque([0], maxlen=3)
    SEEN = collections.OrderedDict(first=0)
''', needs=("collections",))


@construct("lru-cache", weight=2, features={
    "lru-cache": "functools.lru_cache/cache functions hit and missed, their cache_info and cache_clear",
})
def lru_cache(w: StatementWriter, scope: Scope) -> None:
    """Cached module functions called with the program's ints; misses logged in a global."""
    w.features.update({"lru-cache", "print"})
    w.need(_CACHED)
    k = w.pick(scope.ints)
    w.put(scope, f"({w.atom(scope)} * cached_scale({k}) + cached_offset({k}, sign=-1))", 5.0)
    w.maybe_break(scope)
    form = w.pick(("again", "info", "clear"))
    if form == "again":
        w.put(scope, f"({w.atom(scope)} * cached_scale({k} % 2))", 4.0)
    elif form == "info":
        info = w.fresh("info")
        w.emit(scope, f"{info} = cached_scale.cache_info()")
        w.emit(scope, f"print({info}.hits + {info}.misses, {info}.maxsize)")
    else:
        w.emit(scope, "cached_scale.cache_clear()")
        w.put(scope, f"({w.atom(scope)} * cached_scale(n))", 4.0)
    w.emit(scope, "print(len(CACHE_MISSES))")


@construct("functools-partial", weight=2, features={
    "functools-partial": "functools.partial, nested, with keywords, its func/args/keywords read",
})
def functools_partial(w: StatementWriter, scope: Scope) -> None:
    """A partial of a partial of ``mix``, called after a graph break."""
    w.features.add("functools-partial")
    w.need("functools")
    w.need(_MIX)
    p, q = w.fresh("part"), w.fresh("part")
    w.emit(scope, f"{p} = functools.partial(mix, scale=0.5)")
    form = w.pick(("nested", "positional", "override"))
    if form == "nested":
        w.emit(scope, f"{q} = functools.partial({p}, {w.atom(scope)}, shift=-0.25)")
        call = f"{q}({w.atom(scope)})"
    elif form == "positional":
        w.emit(scope, f"{q} = functools.partial({p}, {w.atom(scope)})")
        call = f"{q}({w.atom(scope)}, scale={w.pick(scope.ints)} * 0.25)"
    else:
        w.emit(scope, f"{q} = functools.partial({p}, shift=0.5, scale=0.25)")
        call = f"{q}({w.atom(scope)}, {w.atom(scope)})"
    w.maybe_break(scope)
    w.put(scope, call, 1.0)
    if w.chance(40):
        w.features.add("print")
        w.emit(scope, f"print({q}.func is {p}, sorted({q}.keywords), len({q}.args))")


@construct("functools-wraps", weight=2, features={
    "functools-wraps": "a functools.wraps decorator around a module function: __wrapped__, __name__, __doc__",
})
def functools_wraps(w: StatementWriter, scope: Scope) -> None:
    """A wrapped module function called, its metadata read through the wrapper."""
    w.features.update({"functools-wraps", "print"})
    w.need(_LOGGED)
    w.put(scope, f"softsign({w.atom(scope)}, k={w.pick(scope.ints)})", 4.0)
    w.maybe_break(scope)
    if w.chance(50):
        w.put(scope, f"softsign.__wrapped__({w.atom(scope)})", 1.0)
    w.emit(scope, "print(softsign.__name__, softsign.__doc__, len(LOGGED))")


@construct("functools-reduce", weight=2, features={
    "functools-reduce": "functools.reduce with a lambda or operator function, with and without an initial value",
})
def functools_reduce(w: StatementWriter, scope: Scope) -> None:
    """``functools.reduce`` over a tuple of tensors."""
    w.features.add("functools-reduce")
    w.need("functools")
    items = w.tensors(scope, 3)
    form = w.pick(("lambda", "operator", "initial"))
    if form == "operator":
        w.need(imported("operator"))
        w.put(scope, f"functools.reduce(operator.add, ({items},))", 12.0)
    elif form == "lambda":
        w.features.add("closure")
        w.put(scope, f"functools.reduce(lambda acc, x: torch.tanh(acc * 0.5 + x), ({items},))", 1.0)
    else:
        w.features.add("closure")
        w.put(scope, f"functools.reduce(lambda acc, x: acc + x * 0.25, [{items}], {w.atom(scope)})", 7.0)
    w.maybe_break(scope, 0, 15)


@construct("cached-property", weight=2, features={
    "cached-property": "functools.cached_property computed once per object, read twice",
})
def cached_property(w: StatementWriter, scope: Scope) -> None:
    """An object whose cached property is read before and after a graph break."""
    w.features.update({"cached-property", "print"})
    w.need(_LAZY)
    obj = w.fresh("lazy")
    w.emit(scope, f"{obj} = Lazy({w.atom(scope)})")
    w.put(scope, f"{obj}.squashed", 1.0)
    w.maybe_break(scope)
    if w.chance(30):
        w.features.add("del")
        w.emit(scope, f"del {obj}.squashed")
    w.put(scope, f"({obj}.squashed + {w.atom(scope)})", 5.0)
    w.emit(scope, f"print({obj}.computed, 'squashed' in vars({obj}))")


@construct("singledispatch", weight=2, features={
    "singledispatch": "functools.singledispatch dispatching on int, Tensor, list and tuple",
})
def singledispatch(w: StatementWriter, scope: Scope) -> None:
    """A singledispatch function called on values of several types; its results scale a tensor."""
    w.features.update({"singledispatch", "print"})
    w.need(_DESCRIBE)
    code = w.fresh("code")
    a = w.pick(scope.tensors)
    w.emit(scope, f"{code} = describe(n) + describe({a}) + describe([{a}, n]) + describe(({a},)) + describe(0.5)")
    w.maybe_break(scope, 0, 20)
    w.put(scope, f"({w.atom(scope)} * ({code} % 7) * 0.1)", 2.4)
    w.emit(scope, f"print({code}, describe.dispatch(bool).__name__)")


@construct("deque", weight=2, features={
    "deque": "collections.deque with maxlen: append/appendleft/extend/rotate/pop/popleft, and a global deque",
})
def deque(w: StatementWriter, scope: Scope) -> None:
    """A bounded deque of tensors mutated, then summed; maybe a global deque of ints too."""
    w.features.update({"deque", "print"})
    w.need("collections")
    dq = w.fresh("dq")
    w.emit(scope, f"{dq} = collections.deque([{w.tensors(scope, 2)}], maxlen=3)")
    ops = [f"{dq}.append({w.atom(scope)})", f"{dq}.appendleft({w.atom(scope)} * 0.5)",
           f"{dq}.extend([{w.atom(scope)}, {w.atom(scope)}])", f"{dq}.rotate({w.pick(('1', '-1', 'n'))})",
           f"{dq}.pop()", f"{dq}.popleft()", f"{dq}.extendleft(({w.atom(scope)},))"]
    for _ in range(w.count((2, 4))):
        w.emit(scope, w.pick(ops))
        w.maybe_break(scope, 0, 15)
    # a pop may empty it; sum's start keeps a tensor
    w.put(scope, f"sum({dq}, {w.atom(scope)} * 0.0)", 12.0)
    w.emit(scope, f"print(len({dq}), {dq}.maxlen)")
    if w.chance(40):
        w.need(_HISTORY)
        w.features.add("mutation-global-container")
        w.emit(scope, "HISTORY.append(n + len(HISTORY))")
        w.emit(scope, "print(str(list(HISTORY)))")


@construct("ordered-dict", weight=2, features={
    "ordered-dict": "collections.OrderedDict: move_to_end, popitem(last=False), setdefault, key order",
}, also={
    "mutation-global-container": "a module-level deque or OrderedDict mutated by f",
})
def ordered_dict(w: StatementWriter, scope: Scope) -> None:
    """An OrderedDict reordered and popped; its key order printed."""
    w.features.update({"ordered-dict", "print"})
    w.need("collections")
    od = w.fresh("od")
    w.emit(scope, f'{od} = collections.OrderedDict(a={w.atom(scope)}, b={w.atom(scope)})')
    w.emit(scope, f'{od}["c"] = {w.atom(scope)} * 0.5')
    w.emit(scope, f'{od}.move_to_end("a"{w.pick(("", ", last=False"))})')
    w.maybe_break(scope)
    form = w.pick(("popitem", "setdefault", "reversed"))
    if form == "popitem":
        w.emit(scope, f"_key, _value = {od}.popitem(last={w.pick(('False', 'True'))})")
        w.put(scope, f"(_value + sum({od}.values()))", 12.0)
    elif form == "setdefault":
        w.emit(scope, f'{od}.setdefault("d", {w.atom(scope)})')
        w.put(scope, f'({od}["d"] - {od}["b"])', 8.0)
    else:
        w.put(scope, f"{od}[next(reversed({od}))]", 4.0)
    w.emit(scope, f"print(str(list({od})))")
    if w.chance(40):
        w.need(_HISTORY)
        w.features.add("mutation-global-container")
        w.emit(scope, "SEEN[str(n)] = len(SEEN)")
        w.emit(scope, "SEEN.move_to_end('first')")
        w.emit(scope, "print(str(list(SEEN.items())))")


@construct("defaultdict", weight=2, features={
    "defaultdict": "collections.defaultdict(list/int) filled in a loop, missing keys made on read",
})
def defaultdict(w: StatementWriter, scope: Scope) -> None:
    """A defaultdict grouping tensors by an int key."""
    w.features.update({"defaultdict", "for", "print"})
    w.need("collections")
    dd, i = w.fresh("groups"), w.fresh("i")
    kind = w.pick(("list", "int"))
    w.emit(scope, f"{dd} = collections.defaultdict({kind})")
    w.emit(scope, f"for {i} in range({w.pick(scope.ints)} + 1):")
    if kind == "list":
        w.emit(scope, f"{dd}[{i} % 2].append({w.atom(scope)} * ({i} + 1) * 0.2)", 1)
        w.maybe_break(scope, 1, 15)
        w.put(scope, f"(sum({dd}[0]) + sum({dd}[1], {w.atom(scope)} * 0.0))", 16.0)
    else:
        w.emit(scope, f"{dd}[{i} % 3] += {i}", 1)
        w.maybe_break(scope, 1, 15)
        w.put(scope, f"({w.atom(scope)} * ({dd}[0] + {dd}[5]) * 0.1)", 4.0)
    w.emit(scope, f"print(sorted({dd}), {dd}.default_factory.__name__)")


@construct("counter", weight=2, features={
    "counter": "collections.Counter of ints: update, subtract, most_common, arithmetic",
})
def counter(w: StatementWriter, scope: Scope) -> None:
    """A Counter over sizes and ints; its counts scale a tensor."""
    w.features.update({"counter", "print"})
    w.need("collections")
    c = w.fresh("counts")
    a = w.pick(scope.tensors)
    w.emit(scope, f"{c} = collections.Counter([{a}.ndim, n, n, len({a}.shape), t0.shape[-1]])")
    form = w.pick(("update", "subtract", "add"))
    if form == "update":
        w.emit(scope, f"{c}.update([n, {w.pick(scope.ints)}])")
    elif form == "subtract":
        w.emit(scope, f"{c}.subtract({{n: 1}})")
    else:
        w.emit(scope, f"{c} = {c} + collections.Counter({{n: 2}})")
    w.maybe_break(scope)
    w.put(scope, f"({w.atom(scope)} * {c}[n] * 0.25)", 4.0)
    w.emit(scope, f"print(str({c}.most_common(2)), {c}[n] + {c}[1])")


@construct("chain-map", weight=2, features={
    "chain-map": "collections.ChainMap lookups, writes to the first map, new_child",
})
def chain_map(w: StatementWriter, scope: Scope) -> None:
    """A ChainMap over two dicts of tensors."""
    w.features.update({"chain-map", "print"})
    w.need("collections")
    cm = w.fresh("cm")
    w.emit(scope, f'{cm} = collections.ChainMap({{"a": {w.atom(scope)}}}, {{"a": {w.atom(scope)}, "b": n}})')
    if w.chance(50):
        w.emit(scope, f'{cm} = {cm}.new_child({{"b": 2}})')
    w.emit(scope, f'{cm}["c"] = {w.atom(scope)}')
    w.maybe_break(scope)
    w.put(scope, f'({cm}["a"] * {cm}["b"] * 0.25 + {cm}["c"])', 6.0)
    w.emit(scope, f"print(str(list({cm})), len({cm}.maps))")


@construct("namedtuple", weight=2, features={
    "namedtuple": "a collections.namedtuple: defaults, _replace, _fields, unpacking, indexing",
})
def namedtuple(w: StatementWriter, scope: Scope) -> None:
    """A namedtuple built, replaced and unpacked."""
    w.features.update({"namedtuple", "print"})
    w.need(_POINT)
    p, q = w.fresh("pt"), w.fresh("pt")
    w.emit(scope, f"{p} = Point({w.atom(scope)})")
    w.emit(scope, f"{q} = {p}._replace(k={w.pick(scope.ints)})")
    w.maybe_break(scope)
    form = w.pick(("attrs", "unpack", "index"))
    if form == "attrs":
        w.put(scope, f"({q}.w * {q}.k * 0.25 + {p}.w * {p}.k)", 8.0)
    elif form == "unpack":
        w.emit(scope, f"_w, _k = {q}")
        w.put(scope, "(_w * _k * 0.25)", 4.0)
    else:
        w.put(scope, f"({q}[0] * {q}[-1] * 0.25)", 4.0)
    w.emit(scope, f"print({q}._fields, {q}.k, {q}.w is {p}.w, Point._field_defaults)")


@construct("heapq-bisect", weight=2, features={
    "heapq-bisect": "heapq push/pop/nsmallest and bisect/insort on (count, index) keys of tensors",
})
def heapq_bisect(w: StatementWriter, scope: Scope) -> None:
    """A heap keyed by counts of positive elements, or a sorted list kept by bisect."""
    w.features.update({"heapq-bisect", "print"})
    heap, i, x = w.fresh("heap"), w.fresh("i"), w.fresh("x")
    items = w.tensors(scope, 3)
    if w.chance(50):
        w.features.add("for")
        w.need(imported("heapq"))
        w.emit(scope, f"{heap} = []")
        w.emit(scope, f"for {i}, {x} in enumerate(({items})):")
        w.emit(scope, f"heapq.heappush({heap}, (int(({x} > 0).sum()), {i}))", 1)
        w.maybe_break(scope)
        w.emit(scope, f"_count, _first = heapq.heappop({heap})")
        w.put(scope, f"(({items},)[_first] * 0.5 + len(heapq.nsmallest(2, {heap})))", 4.0)
        w.emit(scope, f"print(_count, _first, {heap}[0][1], str(heapq.nlargest(1, [n, 3, 1])))")
    else:
        w.need(imported("bisect"))
        w.emit(scope, f"{heap} = [1, 3, 3, 5]")
        w.emit(scope, f"bisect.insort({heap}, {w.pick(scope.ints)})")
        w.emit(scope, f"{i} = bisect.bisect_left({heap}, n) + bisect.bisect_right({heap}, 3, lo=1)")
        w.maybe_break(scope)
        w.put(scope, f"({w.atom(scope)} * {i} * 0.1)", 4.0)
        w.emit(scope, f"print({heap}, {i})")


_ITERTOOLS = (
    # form, statement(s) producing `_parts` (a list of tensors, maybe empty), what it needs
    ("chain", "_parts = list(itertools.chain(({a}, {b}), [{c}], ()))"),
    ("chain-from", "_parts = list(itertools.chain.from_iterable([[{a}], [{b}, {c}]]))"),
    ("islice", "_parts = list(itertools.islice(iter([{a}, {b}, {c}, {a}]), 1, None, 2))"),
    ("accumulate", "_parts = list(itertools.accumulate([{a}, {b}, {c}], lambda acc, x: torch.tanh(acc + x)))"),
    ("product", "_parts = [x * k for x, k in itertools.product([{a}, {b}], range(1, n))]"),
    ("zip-longest", "_parts = [x * 0.5 + y for x, y in itertools.zip_longest([{a}, {b}], [{c}], fillvalue=0.0)]"),
    ("pairwise", "_parts = [x - y for x, y in itertools.pairwise([{a}, {b}, {c}])]"),
    ("tee", "_it1, _it2 = itertools.tee(iter([{a}, {b}]))\n_parts = [next(_it1) * 0.5] + list(_it2) + list(_it1)"),
    ("groupby", "_parts = [sum(g) for k, g in itertools.groupby([{a}, {b}, {c}], key=lambda x: x.ndim)]"),
    ("count-repeat", "_parts = [x * k for x, k in zip(itertools.repeat({a}, 3), itertools.count(n, -1))]"),
    ("starmap", "_parts = list(itertools.starmap(torch.maximum, [({a}, {b}), ({c}, {a})]))"),
    ("compress", "_parts = list(itertools.compress([{a}, {b}, {c}], [n > 1, 1, n % 2]))"),
    ("takewhile", "_parts = list(itertools.takewhile(lambda x: x.ndim > 0, [{a}, {b}]))"
                  " + list(itertools.dropwhile(lambda x: x.ndim > 0, [{c}]))"),
)


def _itertools_parts(w: StatementWriter, scope: Scope, forms: tuple[tuple[str, str], ...]) -> None:
    """One of ``forms`` writes ``_parts``; a graph break after; their mean rebinds a tensor."""
    w.need(imported("itertools"))
    form, template = w.pick(forms)
    a, b, c = w.atom(scope), w.atom(scope), w.atom(scope)
    text = template.format(a=a, b=b, c=c)
    if "lambda" in text:
        w.features.add("closure")
    if " for " in text:
        w.features.add("comprehension")
    for line in text.split("\n"):
        w.emit(scope, line)
    w.maybe_break(scope)
    # every part is at most 4 * n (product) or 8 in size; len(...) + 1 keeps it a tensor
    w.put(scope, f"(sum(_parts, {w.atom(scope)} * 0.0) / (len(_parts) + 1))", 16.0)
    w.features.add("print")
    w.emit(scope, "print(len(_parts))")


@construct("itertools", weight=3, features={
    "itertools": "itertools chain/islice/accumulate/product/zip_longest/pairwise/tee/groupby/count/repeat/...",
})
def itertools_(w: StatementWriter, scope: Scope) -> None:
    """An itertools function over tensors, its parts summed."""
    w.features.add("itertools")
    _itertools_parts(w, scope, tuple(_ITERTOOLS))


@construct("itertools-batched", weight=2, min_python=PY312, features={
    "itertools-batched": "itertools.batched (3.12+) over tensors",
})
def itertools_batched(w: StatementWriter, scope: Scope) -> None:
    """``itertools.batched`` groups of tensors, each group summed."""
    w.features.update({"itertools-batched", "comprehension"})
    _itertools_parts(w, scope, (("batched", "_parts = [sum(b) for b in itertools.batched([{a}, {b}, {c}], n)]"),))


@construct("operator-getters", weight=2, features={
    "operator-getters": "operator.itemgetter/attrgetter/methodcaller and operator functions as values",
})
def operator_getters(w: StatementWriter, scope: Scope) -> None:
    """A getter built, maybe across a graph break, then applied."""
    w.features.add("operator-getters")
    w.need(imported("operator"))
    getter = w.fresh("get")
    form = w.pick(("item", "attr", "method", "function"))
    if form == "item":
        w.emit(scope, f"{getter} = operator.itemgetter(0, -1)")
        w.maybe_break(scope)
        w.emit(scope, f"_first, _last = {getter}([{w.tensors(scope, 3)}])")
        w.put(scope, "(_first - _last)", 8.0)
    elif form == "attr":
        w.features.add("print")
        w.emit(scope, f'{getter} = operator.attrgetter("shape", "ndim")')
        w.maybe_break(scope)
        w.emit(scope, f"_shape, _ndim = {getter}({w.pick(scope.tensors)})")
        w.emit(scope, "print(_shape, _ndim)")
    elif form == "method":
        w.emit(scope, f'{getter} = operator.methodcaller("clamp", min=-1.0, max={w.pick(("1.0", "0.5"))})')
        w.maybe_break(scope)
        w.put(scope, f"{getter}({w.atom(scope)})", 1.0)
    else:
        op = w.pick(("operator.mul", "operator.sub", "operator.add"))
        w.emit(scope, f"{getter} = {op}")
        w.maybe_break(scope)
        w.put(scope, f"{getter}({w.atom(scope)}, {w.atom(scope)})", 16.0)
