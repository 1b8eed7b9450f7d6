"""The Python constructs around tensor code that reach Dynamo's harder paths.

A mixin of ``fuzz.generate._Writer``: each ``_c_<kind>`` method writes one
statement-level construct at the current point of ``f`` (closures and cells
in loops, generators driven by ``send``/``close``, ``yield from`` with return
values, iterator builtins and exhaustion, comprehensions that shadow outer
names, walrus, ``raise ... from``, re-raise, ``except*``, exceptions raised
by tensor ops, grad modes and grad-mode objects entered after a graph break,
context managers, ``match``, f-strings, ``*args``/``**kwargs``, classes with
``super()``/properties/``__getattr__``, dataclasses, ``nn.Module``s with
buffers and parameters, mutation of globals and attributes, ``isinstance`` on
protocols and unions, ``async def`` bodies driven by ``send``, ``del``,
chained comparisons, ``is``/``in``, short-circuits, ``assert``, imports inside
the function, ...), records the feature names it used and, where the
construct has a body, fills it with ordinary statements (so constructs nest,
and ``torch._dynamo.graph_break()`` lands inside them).

The rules of ``fuzz.generate`` hold here too: values stay in [-3, 3] after
every assignment, control flow depends on ints, shapes and counts only, every
exception raised is caught in the same function, and nothing prints a float.
Module-level helpers (classes, context managers, globals) go to the
program's prelude, written once per program.

Opcodes the constructs exist for (CPython 3.11-3.13; see ``tcfuzz coverage``):
``LOAD_ASSERTION_ERROR`` (assert), ``IMPORT_NAME``/``IMPORT_FROM``,
``STORE_GLOBAL``, ``DELETE_FAST``/``DELETE_ATTR``/``DELETE_SUBSCR``,
``MATCH_CLASS``/``MATCH_KEYS``/``MATCH_MAPPING``/``MATCH_SEQUENCE``/``GET_LEN``,
``FORMAT_VALUE`` or ``FORMAT_SIMPLE``/``FORMAT_WITH_SPEC``/``CONVERT_VALUE``,
``LOAD_SUPER_ATTR``, ``LOAD_BUILD_CLASS``, ``SEND``/``END_SEND``/``CLEANUP_THROW``
(``yield from``), ``CALL_INTRINSIC_2`` (``except*``), ``CALL_INTRINSIC_1``
(``(*xs,)``, unary ``+``), ``LIST_TO_TUPLE``, ``UNPACK_EX``, ``DICT_MERGE``,
``DICT_UPDATE``, ``SET_UPDATE``, ``BUILD_SLICE``, ``UNARY_INVERT``/``UNARY_POSITIVE``,
``JUMP_IF_TRUE_OR_POP``/``JUMP_IF_FALSE_OR_POP`` (3.11 ``and``/``or`` values),
``LOAD_FAST_AND_CLEAR`` (inlined comprehensions), ``LOAD_FAST_CHECK`` (``del``),
``NOP`` (``pass``), ``RETURN_CONST``.
"""

from __future__ import annotations

from typing import Any

# Feature names the constructs record (see fuzz.generate.FEATURES).
CONSTRUCT_FEATURES: tuple[str, ...] = (
    "assert",             # assert statement (LOAD_ASSERTION_ERROR), also caught
    "async-def",          # async def with await / async with / async for, driven by send(None)
    "chained-comparison",  # 0 < n <= 3
    "class-local",        # class statement inside f: methods, super(), property, __getattr__
    "closure-cell-loop",  # lambdas capturing a loop variable's cell
    "comprehension-shadow",  # comprehension variable named like an outer local
    "contextmanager",     # with over a @contextlib.contextmanager generator
    "dataclass",          # a @dataclasses.dataclass built and mutated in f
    "del",                # del of a local, an attribute or an item
    "dict-merge",         # {**d, ...} and h(**d)
    "exception-group",    # raise ExceptionGroup ... except*
    "fstring",            # f-string with format spec, conversion and `=`
    "generator-return",   # a generator's return value (yield from / StopIteration.value)
    "generator-send",     # generator driven by next/send/close
    "global-write",       # global statement and store to a module global
    "grad-ctx-object",    # grad-mode object created, graph break, then entered
    "grad-mode",          # with enable_grad / set_grad_enabled / nested grad modes
    "import",             # import / from-import inside f
    "is-in",              # is / is not / in / not in
    "isinstance",         # isinstance on unions (X | Y, tuples) and runtime protocols
    "iter-builtins",      # iter/next/reversed/zip/enumerate/map/filter
    "iterator-exhaustion",  # next() on an exhausted iterator, StopIteration caught
    "match",              # match with literal, sequence, mapping and class patterns
    "mutation-attr",      # store to an object's or a class's attribute
    "mutation-global",    # mutation of a module-level container
    "nested-function",    # def inside def inside f, nonlocal across two levels
    "nn-module",          # nn.Module subclass with a buffer and a parameter
    "random",             # dropout/rand under manual_seed (fallback_random set)
    "raise-from",         # raise X from e, caught
    "reraise",            # bare raise in a handler, caught outside
    "set-ops",            # set displays, set comprehensions, {*a, *b}
    "short-circuit",      # and/or as values, on tensors and scalars
    "slice",              # 3-part slices and slices with variable bounds
    "star-args",          # *args, **kwargs, keyword-only params and defaults
    "tensor-exception",   # a tensor op that raises RuntimeError, caught
    "unary-ops",          # +n, ~n, not, ~bool-tensor
    "unpacking",          # a, *b = ...; nested tuple targets; (*xs, t)
    "user-cm",            # with over a user context-manager class (__enter__/__exit__)
    "walrus",             # := inside a comprehension
)

# Construct kinds and their weights in the statement table.
CONSTRUCTS: tuple[tuple[str, int], ...] = (
    ("global-write", 2),
    ("cells-in-loop", 2),
    ("generator-send", 2),
    ("yield-from", 2),
    ("iter-builtins", 3),
    ("exhaustion", 2),
    ("shadow", 2),
    ("walrus", 2),
    ("raise-from", 2),
    ("reraise", 2),
    ("except-star", 2),
    ("tensor-exception", 2),
    ("grad-mode", 2),
    ("grad-ctx-object", 1),
    ("contextmanager", 2),
    ("user-cm", 2),
    ("match", 3),
    ("fstring", 2),
    ("star-args", 2),
    ("unpacking", 2),
    ("class-local", 2),
    ("dataclass", 2),
    ("nn-module", 2),
    ("mutate-attr", 2),
    ("isinstance", 2),
    ("async-def", 2),
    ("del", 2),
    ("chained-comparison", 2),
    ("is-in", 2),
    ("short-circuit", 2),
    ("assert", 2),
    ("import", 2),
    ("unary", 2),
    ("slice", 2),
    ("set-ops", 2),
    ("dict-merge", 2),
    ("random", 1),
    ("nested-function", 2),
)
# Constructs that contain a body of further statements (nest like if/for).
COMPOUND_CONSTRUCTS = frozenset(
    {"grad-mode", "grad-ctx-object", "contextmanager", "user-cm", "match", "raise-from", "reraise", "except-star"}
)

# Module-level helpers a construct may need, by name: source lines.
PRELUDE: dict[str, tuple[str, ...]] = {
    "contextlib": ("import contextlib",),
    "dataclasses": ("import dataclasses",),
    "collections.abc": ("import collections.abc",),
    "typing": ("import typing",),
    "inductor_config": ("import torch._inductor.config",),
    "fallback_random": (
        "# random ops: compiled code draws from the same RNG stream as eager",
        "torch._inductor.config.fallback_random = True",
    ),
    "scaled": (
        "@contextlib.contextmanager",
        "def scaled(log, factor):",
        "    log.append(1)",
        "    try:",
        "        yield factor * 0.5",
        "    finally:",
        "        log.append(2)",
    ),
    "Suppress": (
        "class Suppress:",
        "    def __init__(self, scale):",
        "        self.scale = scale",
        "        self.entered = 0",
        "",
        "    def __enter__(self):",
        "        self.entered += 1",
        "        return self.scale",
        "",
        "    def __exit__(self, exc_type, exc, tb):",
        "        return exc_type is not None and issubclass(exc_type, ValueError)",
    ),
    "Pair": (
        "@dataclasses.dataclass",
        "class Pair:",
        "    w: torch.Tensor",
        "    k: int = 1",
        "    tags: list = dataclasses.field(default_factory=list)",
    ),
    "Block": (
        "class Block(torch.nn.Module):",
        "    def __init__(self, width):",
        "        super().__init__()",
        "        self.register_buffer('shift', torch.linspace(-0.5, 0.5, width))",
        "        self.weight = torch.nn.Parameter(torch.linspace(-1.0, 1.0, width))",
        "",
        "    def forward(self, x):",
        "        return torch.tanh(x * self.weight + self.shift)",
    ),
    "State": (
        "class State:",
        "    scale = 0.5",
        "",
        "    def __init__(self, w):",
        "        self.w = w",
        "        self.calls = 0",
    ),
    "Ready": (
        "class Ready:",
        "    def __init__(self, value):",
        "        self.value = value",
        "",
        "    def __await__(self):",
        "        yield from ()",
        "        return self.value",
    ),
    "Gate": (
        "class Gate:",
        "    async def __aenter__(self):",
        "        return 0.5",
        "",
        "    async def __aexit__(self, exc_type, exc, tb):",
        "        return False",
    ),
    "Countdown": (
        "class Countdown:",
        "    def __init__(self, n):",
        "        self.n = n",
        "",
        "    def __aiter__(self):",
        "        return self",
        "",
        "    async def __anext__(self):",
        "        if self.n <= 0:",
        "            raise StopAsyncIteration",
        "        self.n -= 1",
        "        return self.n",
    ),
    "drive": (
        "def drive(coroutine):",
        '    """Run a coroutine that never really suspends; its return value."""',
        "    try:",
        "        while True:",
        "            coroutine.send(None)",
        "    except StopIteration as stop:",
        "        return stop.value",
    ),
}
# Helpers that need others first.
PRELUDE_NEEDS: dict[str, tuple[str, ...]] = {
    "scaled": ("contextlib",),
    "Pair": ("dataclasses",),
    "fallback_random": ("inductor_config",),
}


class ConstructWriter:
    """Mixin: the ``_c_*`` construct writers of ``fuzz.generate._Writer``.

    Relies on the writer's draws (``_pick``, ``_chance``, ``_index``, ``_fresh``),
    emitters (``_emit``, ``_body``), expression makers (``_squashed``,
    ``_squash``, ``_atom``) and ``_features``/``_prelude``.
    """

    # the writer provides these; declared for readers and type checkers
    _features: set[str]
    _prelude: list[str]
    _shape: tuple[int, ...]

    # -- helpers -------------------------------------------------------------

    def _need(self, name: str) -> None:
        """Add a module-level helper (and what it needs) to the prelude, once."""
        for dependency in PRELUDE_NEEDS.get(name, ()):
            self._need(dependency)
        if name not in self._prelude:
            self._prelude.append(name)

    def _target(self, scope: Any) -> str:
        return self._pick(scope.writable)

    def _put(self, scope: Any, text: str, bound: float, extra: int = 0) -> None:
        """``<writable> = <text, squashed>``; ``bound`` is an upper bound of |text|."""
        from fuzz.generate.writer import _Expr

        self._emit(scope, f"{self._target(scope)} = {self._squash(_Expr(f'({text})', bound))}", extra)

    def _maybe_break(self, scope: Any, extra: int = 0, percent: int = 30) -> None:
        """A graph break here with ``percent``% probability."""
        if self._chance(percent):
            self._features.add("graph-break")
            self._emit(scope, "torch._dynamo.graph_break()", extra)

    def _tensors(self, scope: Any, count: int) -> str:
        return ", ".join(self._pick(scope.tensors) for _ in range(count))

    # -- closures, cells, nested functions -----------------------------------

    def _c_global_write(self, scope: Any) -> None:
        self._features.update({"global-write", "mutation-global"})
        # a fresh global each time: `global X` after a store to X in the same
        # function would be a SyntaxError
        count, log = self._fresh("COUNT"), self._fresh("LOG")
        self._prelude_lines += [f"{count} = 0", f"{log} = []"]
        self._emit(scope, f"global {count}")
        self._emit(scope, f"{count} += 1")
        self._emit(scope, f"{log}.append({count} * {self._pick((1, 2))})")
        self._maybe_break(scope)
        self._put(scope, f"({self._squashed(scope, 1)} * ({count} % 3 + 1) * 0.25)", 2.25)

    def _c_cells_in_loop(self, scope: Any) -> None:
        self._features.update({"closure-cell-loop", "closure", "for"})
        fs, i = self._fresh("fns"), self._fresh("i")
        self._emit(scope, f"{fs} = []")
        self._emit(scope, f"for {i} in range({self._pick(('3', 'n'))}):")
        if self._chance(50):
            # late binding: every lambda sees the cell's last value
            self._emit(scope, f"{fs}.append(lambda v: v * ({i} + 1) * 0.25)", 1)
        else:
            self._emit(scope, f"{fs}.append(lambda v, k={i}: v * (k + 1) * 0.25)", 1)
        self._maybe_break(scope, 1, 20)
        self._features.add("comprehension")
        self._put(scope, f"sum(fn({self._atom(scope)}) for fn in {fs})", 3 * 4.0 * 4)

    def _c_nested_function(self, scope: Any) -> None:
        self._features.update({"nested-function", "closure", "nonlocal"})
        outer, inner, acc = self._fresh("outer"), self._fresh("inner"), self._fresh("acc")
        self._emit(scope, f"def {outer}(v):")
        self._emit(scope, f"{acc} = v * 0.5", 1)
        self._emit(scope, f"def {inner}(w, *, scale=0.5):", 1)
        self._emit(scope, f"nonlocal {acc}", 2)
        self._emit(scope, f"{acc} = torch.tanh({acc} + w * scale)", 2)
        self._maybe_break(scope, 2)
        self._emit(scope, f"return {acc}", 2)
        self._emit(scope, f"{inner}(v)", 1)
        self._emit(scope, f"{inner}(v, scale=0.25)", 1)
        self._emit(scope, f"return {acc}", 1)
        self._put(scope, f"{outer}({self._squashed(scope, 1)})", 1.0)

    def _c_star_args(self, scope: Any) -> None:
        self._features.update({"star-args", "closure"})
        h = self._fresh("h")
        self._emit(scope, f"def {h}(first, *rest, scale=0.5, **named):")
        self._emit(scope, "total = first * scale", 1)
        self._emit(scope, "for item in rest:", 1)
        self._emit(scope, "total = total + torch.tanh(item)", 2)
        self._emit(scope, "for key in sorted(named):", 1)
        self._emit(scope, "total = total * named[key]", 2)
        self._emit(scope, "return torch.tanh(total)", 1)
        self._features.add("for")
        form = self._pick(("plain", "star", "kw", "dict"))
        a, b = self._atom(scope), self._atom(scope)
        if form == "plain":
            call = f"{h}({a}, {b}, scale=0.25)"
        elif form == "star":
            self._features.add("unpacking")
            call = f"{h}(*({a}, {b}), *[{self._atom(scope)}])"
        elif form == "kw":
            call = f"{h}({a}, k=0.5, j=n * 0.25)"
        else:
            self._features.add("dict-merge")
            call = f'{h}({a}, **{{"k": 0.5}}, **{{"j": 0.25}})'
        self._put(scope, call, 1.0)

    # -- generators and iterators --------------------------------------------

    def _c_generator_send(self, scope: Any) -> None:
        self._features.update({"generator-send", "generator", "generator-return", "while", "if"})
        gen, it = self._fresh("gen"), self._fresh("it")
        self._emit(scope, f"def {gen}(v):")
        self._emit(scope, "total = v", 1)
        self._emit(scope, "while True:", 1)
        self._emit(scope, "got = yield torch.tanh(total)", 2)
        self._emit(scope, "if got is None:", 2)
        self._emit(scope, "return total", 3)
        self._maybe_break(scope, 2, 20)
        self._emit(scope, "total = torch.tanh(total + got)", 2)
        self._emit(scope, f"{it} = {gen}({self._squashed(scope, 1)})")
        first, second = self._fresh("y"), self._fresh("y")
        self._emit(scope, f"{first} = next({it})")
        self._emit(scope, f"{second} = {it}.send({self._squashed(scope, 1)})")
        if self._chance(50):
            self._emit(scope, f"{it}.close()")
        else:
            self._features.update({"try-except", "iterator-exhaustion"})
            self._emit(scope, "try:")
            self._emit(scope, f"{it}.send(None)", 1)
            self._emit(scope, "except StopIteration as stop:")
            self._emit(scope, f"{second} = torch.tanh(stop.value + {second})", 1)
        self._put(scope, f"({first} + {second})", 2.0)

    def _c_yield_from(self, scope: Any) -> None:
        self._features.update({"generator", "generator-return"})
        inner, outer = self._fresh("gen"), self._fresh("gen")
        self._emit(scope, f"def {inner}(v):")
        self._emit(scope, "yield torch.tanh(v)", 1)
        self._maybe_break(scope, 1, 20)
        self._emit(scope, "yield torch.sin(v)", 1)
        self._emit(scope, "return v * 0.5", 1)
        self._emit(scope, f"def {outer}(v):")
        self._emit(scope, f"r = yield from {inner}(v)", 1)
        self._emit(scope, "yield torch.tanh(r)", 1)
        consumer = self._pick(("sum", "list", "for"))
        call = f"{outer}({self._squashed(scope, 1)})"
        if consumer == "sum":
            self._put(scope, f"sum({call})", 3.0)
        elif consumer == "list":
            name = self._fresh("xs")
            self._emit(scope, f"{name} = list({call})")
            scope.lists[name] = 3
            self._put(scope, f"({name}[0] + {name}[-1])", 2.0)
        else:
            self._features.add("for")
            v, t = self._fresh("x"), self._target(scope)
            self._emit(scope, f"for {v} in {call}:")
            self._emit(scope, f"{t} = torch.tanh({t} + {v})", 1)

    def _c_iter_builtins(self, scope: Any) -> None:
        self._features.add("iter-builtins")
        a, b, c = self._atom(scope), self._atom(scope), self._atom(scope)
        form = self._pick(("zip", "enumerate", "map", "filter", "reversed", "iter-next"))
        if form == "zip":
            self._features.add("comprehension")
            self._put(scope, f"sum(p * q for p, q in zip(({a}, {b}), reversed(({c}, {a}))))", 32.0)
        elif form == "enumerate":
            self._features.add("for")
            i, v, t = self._fresh("i"), self._fresh("x"), self._target(scope)
            self._emit(scope, f"for {i}, {v} in enumerate(({a}, {b}), start=1):")
            self._emit(scope, f"{t} = torch.tanh({t} + {v} * {i} * 0.25)", 1)
            self._maybe_break(scope, 1, 20)
        elif form == "map":
            name = self._fresh("xs")
            fn = self._pick(("torch.tanh", "torch.sigmoid"))
            self._emit(scope, f"{name} = list(map({fn}, ({a}, {b})))")
            scope.lists[name] = 2
            self._put(scope, f"({name}[0] * {name}[1])", 1.0)
        elif form == "filter":
            self._features.add("closure")
            name = self._fresh("xs")
            self._emit(scope, f"{name} = list(filter(lambda v: v.ndim > 0, ({a}, {b}, {c})))")
            scope.lists[name] = 0
            self._put(scope, f"sum({name}, {a})", 16.0)
        elif form == "reversed":
            name = self._fresh("xs")
            self._emit(scope, f"{name} = list(reversed([{a}, {b}]))")
            scope.lists[name] = 2
            self._put(scope, f"({name}[0] - {name}[-1])", 8.0)
        else:
            it = self._fresh("it")
            self._emit(scope, f"{it} = iter(({a}, {b}))")
            self._emit(scope, f"{self._target(scope)} = torch.tanh(next({it}))")
            self._maybe_break(scope, 0, 30)
            self._put(scope, f"next({it}, {c})", 4.0)

    def _c_exhaustion(self, scope: Any) -> None:
        self._features.update({"iterator-exhaustion", "try-except", "iter-builtins"})
        it, t = self._fresh("it"), self._target(scope)
        source = self._pick(("iter", "reversed", "gen", "zip"))
        a, b = self._atom(scope), self._atom(scope)
        if source == "iter":
            self._emit(scope, f"{it} = iter([{a}, {b}])")
        elif source == "reversed":
            self._emit(scope, f"{it} = reversed([{a}, {b}])")
        elif source == "zip":
            self._emit(scope, f"{it} = map(torch.add, [{a}], [{b}, {a}])")
        else:
            self._features.add("comprehension")
            self._emit(scope, f"{it} = (torch.tanh(v) for v in ({a}, {b}))")
        self._emit(scope, "try:")
        if source == "reversed" or self._chance(30):
            # Bounded: the third next() still raises StopIteration. Over
            # reversed() the unbounded form hangs Dynamo in 2.12 (it never
            # exhausts: pytorch#152262, corpus timeout/bc26fbb9f6fe), which
            # costs a campaign the whole run timeout on every interpreter;
            # bounded, the same missing exhaustion is a divergence in a second.
            self._emit(scope, "for _ in range(3):", 1)
            self._features.add("for")
        else:
            self._emit(scope, "while True:", 1)
            self._features.add("while")
        self._emit(scope, f"{t} = torch.tanh({t} + next({it}))", 2)
        self._maybe_break(scope, 2, 25)
        self._emit(scope, "except StopIteration:")
        self._emit(scope, f"{t} = {t} * 0.5", 1)
        if self._chance(40):
            self._emit(scope, f"{t} = torch.tanh(next({it}, {t}) + 1.0)")

    # -- comprehensions --------------------------------------------------------

    def _c_shadow(self, scope: Any) -> None:
        self._features.update({"comprehension-shadow", "comprehension"})
        shadowed = self._pick(scope.writable)
        name = self._fresh("xs")
        sources = self._tensors(scope, 2)
        form = self._pick(("list", "dict", "gen"))
        if form == "list":
            self._emit(scope, f"{name} = [torch.tanh({shadowed} * 0.5) for {shadowed} in ({sources})]")
        elif form == "dict":
            self._emit(scope, f"{name} = list({{k: torch.tanh({shadowed}) for k, {shadowed} in enumerate(({sources}))}}.values())")
            self._features.add("iter-builtins")
        else:
            self._emit(scope, f"{name} = list(torch.sin({shadowed}) for {shadowed} in ({sources}))")
        scope.lists[name] = 2
        self._maybe_break(scope)
        # the outer name is untouched by the comprehension
        self._put(scope, f"({shadowed} + {name}[0])", 8.0)

    def _c_walrus(self, scope: Any) -> None:
        self._features.update({"walrus", "comprehension"})
        name, last = self._fresh("xs"), self._fresh("y")
        sources = self._tensors(scope, 2)
        self._emit(scope, f"{name} = [({last} := torch.tanh(v)) * 0.5 for v in ({sources})]")
        scope.lists[name] = 2
        self._put(scope, f"({last} + {name}[0])", 2.0)

    def _c_set_ops(self, scope: Any) -> None:
        self._features.update({"set-ops", "comprehension"})
        s, ranks = self._fresh("s"), self._fresh("s")
        self._emit(scope, f"{s} = {{int(({self._atom(scope)} > 0).sum()) for _ in range(2)}}")
        self._emit(scope, f"{ranks} = {{*{s}, *{{n, 1}}, {self._pick(scope.tensors)}.ndim}}")
        self._emit(scope, f"{self._target(scope)} = torch.tanh({self._squashed(scope, 1)} * len({ranks}) * 0.25)")

    def _c_dict_merge(self, scope: Any) -> None:
        self._features.add("dict-merge")
        base, merged = self._fresh("m"), self._fresh("m")
        self._emit(scope, f'{base} = {{"w": {self._atom(scope)}, "k": n}}')
        self._emit(scope, f'{merged} = {{**{base}, "k": 2, **{{"b": {self._atom(scope)}}}}}')
        self._maybe_break(scope)
        self._put(scope, f'({merged}["w"] * {merged}["k"] * 0.5 + {merged}["b"])', 8.0)

    # -- exceptions -------------------------------------------------------------

    def _handler_body(self, scope: Any, extra_indent: int) -> Any:
        body = scope.block(catches=(), loop=False)
        body.indent = scope.indent + extra_indent
        self._body(body, (1, 2))
        return body

    def _c_raise_from(self, scope: Any) -> None:
        self._features.update({"raise-from", "raise", "try-except", "print"})
        e = self._fresh("e")
        self._emit(scope, "try:")
        self._emit(scope, "try:", 1)
        inner = scope.block(catches=("ValueError",), loop=False)
        inner.indent = scope.indent + 2
        self._body(inner, (0, 2))
        self._emit(scope, f'raise ValueError("inner{self._index(9)}")', 2)
        self._emit(scope, f"except ValueError as {e}:", 1)
        self._maybe_break(scope, 2, 25)
        self._emit(scope, f'raise KeyError("outer") from {e}', 2)
        self._emit(scope, f"except KeyError as {e}:")
        self._emit(scope, f"print(type({e}.__cause__).__name__, {e}.__suppress_context__)", 1)
        self._handler_body(scope, 1)

    def _c_reraise(self, scope: Any) -> None:
        self._features.update({"reraise", "raise", "try-except"})
        self._emit(scope, "try:")
        self._emit(scope, "try:", 1)
        self._emit(scope, f'raise IndexError("again{self._index(9)}")', 2)
        self._emit(scope, "except IndexError:", 1)
        body = scope.block(catches=(), loop=False)
        body.indent = scope.indent + 2
        self._body(body, (1, 2))
        self._emit(scope, "raise", 2)
        self._emit(scope, "except (IndexError, KeyError):")
        self._handler_body(scope, 1)

    def _c_except_star(self, scope: Any) -> None:
        self._features.update({"exception-group", "raise"})
        members = self._pick((("ValueError",), ("ValueError", "KeyError"), ("KeyError", "ValueError")))
        listed = ", ".join(f'{m}("m{i}")' for i, m in enumerate(members))
        self._emit(scope, "try:")
        body = scope.block(catches=(), loop=False)
        body.indent = scope.indent + 1
        self._body(body, (0, 1))
        self._emit(scope, f'raise ExceptionGroup("group", [{listed}])', 1)
        for kind in ("ValueError", "KeyError"):
            group = self._fresh("eg")
            self._emit(scope, f"except* {kind} as {group}:")
            self._emit(scope, f'print("{kind}", len({group}.exceptions))', 1)
            self._features.add("print")
            handler = scope.block(catches=(), loop=False)
            handler.indent = scope.indent + 1
            self._body(handler, (0, 1))

    def _c_tensor_exception(self, scope: Any) -> None:
        self._features.update({"tensor-exception", "try-except"})
        t = self._target(scope)
        bad = self._pick((
            f"{t} = torch.tanh({self._atom(scope)} @ torch.ones(7, 3))",
            f"{t} = torch.tanh({self._atom(scope)}.reshape(7, 11))",
            f"{t} = torch.tanh({self._atom(scope)}.view(-1, 7, 11))",
        ))
        self._emit(scope, "try:")
        self._emit(scope, bad, 1)
        self._emit(scope, f"except RuntimeError as {self._fresh('e')}:")
        self._emit(scope, f"{t} = {t} * 0.5", 1)
        self._maybe_break(scope, 1, 25)

    def _c_assert(self, scope: Any) -> None:
        self._features.add("assert")
        self._emit(scope, f'assert {self._pick(scope.tensors)}.ndim >= 0, "rank"')
        if self._chance(50):
            self._features.update({"try-except", "print"})
            e = self._fresh("e")
            self._emit(scope, "try:")
            self._emit(scope, f'assert n < 0, f"n is {{n}}"', 1)
            self._emit(scope, f"except AssertionError as {e}:")
            self._emit(scope, f"print(str({e}))", 1)
            self._maybe_break(scope, 1, 25)

    # -- with -------------------------------------------------------------------

    def _with_body(self, scope: Any, **changes: Any) -> None:
        body = scope.block(**changes)
        self._body(body, (1, 2))

    def _c_grad_mode(self, scope: Any) -> None:
        self._features.add("grad-mode")
        manager = self._pick((
            "torch.enable_grad()",
            "torch.set_grad_enabled(False)",
            "torch.set_grad_enabled(n > 2)",
            "torch.no_grad(), torch.enable_grad()",
            "torch.autograd.grad_mode.no_grad()",
        ))
        if manager.startswith("torch.no_grad()"):
            self._features.add("no-grad")
        self._emit(scope, f"with {manager}:")
        self._with_body(scope)
        if self._chance(40):
            self._emit(scope, f"print(torch.is_grad_enabled())")
            self._features.add("print")

    def _c_grad_ctx_object(self, scope: Any) -> None:
        self._features.update({"grad-ctx-object", "graph-break"})
        ctx = self._fresh("ctx")
        self._emit(scope, f"{ctx} = {self._pick(('torch.no_grad()', 'torch.enable_grad()', 'torch.set_grad_enabled(False)'))}")
        self._emit(scope, "torch._dynamo.graph_break()")
        self._emit(scope, f"with {ctx}:")
        self._with_body(scope)

    def _c_contextmanager(self, scope: Any) -> None:
        self._features.add("contextmanager")
        self._need("scaled")
        log, k = self._fresh("log"), self._fresh("k")
        self._emit(scope, f"{log} = []")
        self._emit(scope, f"with scaled({log}, {self._pick(('1.0', 'n'))}) as {k}:")
        body = scope.block()
        self._emit(body, f"{self._target(scope)} = torch.tanh({self._atom(scope)} * {k})")
        self._body(body, (0, 2))
        self._emit(scope, f"print({log})")
        self._features.add("print")

    def _c_user_cm(self, scope: Any) -> None:
        self._features.update({"user-cm", "try-except"})
        self._need("Suppress")
        cm, k = self._fresh("cm"), self._fresh("k")
        self._emit(scope, f"{cm} = Suppress({self._pick(('0.5', '0.25'))})")
        # the try is a safety net: Suppress swallows the ValueError itself
        self._emit(scope, "try:")
        self._emit(scope, f"with {cm} as {k}:", 1)
        body = scope.block(catches=(), loop=False)
        body.indent = scope.indent + 2
        self._emit(body, f"{self._target(scope)} = torch.tanh({self._atom(scope)} * {k})")
        self._body(body, (0, 1))
        if self._chance(60):
            self._features.add("raise")
            self._emit(body, 'raise ValueError("swallowed")')
        self._emit(scope, "except ValueError:")
        self._emit(scope, "pass", 1)
        self._emit(scope, f"print({cm}.entered)")
        self._features.add("print")

    # -- match, f-strings, operators ---------------------------------------------

    def _c_match(self, scope: Any) -> None:
        self._features.add("match")
        form = self._pick(("literal", "sequence", "mapping", "class", "dataclass"))
        t = self._target(scope)
        # (case line, whether it binds the tensor `a`)
        cases: tuple[tuple[str, bool], ...]
        if form == "literal":
            self._emit(scope, "match n:")
            cases = (("case 1:", False), ("case 2 | 3:", False), ("case _:", False))
        elif form == "sequence":
            self._emit(scope, f"match ({self._atom(scope)}, n, {self._atom(scope)}):")
            cases = (("case (a, 1, b):", True), ("case [a, *rest] if len(rest) == 2:", True), ("case _:", False))
        elif form == "mapping":
            self._emit(scope, f'match {{"w": {self._atom(scope)}, "k": n}}:')
            cases = (('case {"w": a, "k": 2}:', True), ('case {"w": a, **rest}:', True), ("case _:", False))
        elif form == "class":
            self._emit(scope, f"match {self._atom(scope)}:")
            cases = (("case torch.Tensor(ndim=1):", False), ("case torch.Tensor(ndim=2, shape=s):", False),
                     ("case _:", False))
        else:
            self._features.add("dataclass")
            self._need("Pair")
            self._emit(scope, f"match Pair({self._atom(scope)}, n):")
            cases = (("case Pair(k=1):", False), ("case Pair(w=a, k=2):", True), ("case _:", False))
        for case, binds in cases:
            self._emit(scope, case, 1)
            body = scope.block()
            body.indent = scope.indent + 2
            if binds:
                self._emit(body, f"{t} = torch.tanh(a * 0.5)")
            self._body(body, (0, 1) if binds else (1, 1))

    def _c_fstring(self, scope: Any) -> None:
        self._features.update({"fstring", "print"})
        tensor = self._pick(scope.tensors)
        text = self._pick((
            f'f"{{n:>3}}|{{n=}}|{{{tensor}.shape!r}}"',
            f'f"{{{tensor}.ndim:02d}} {{str({tensor}.dtype)!s:>14}}"',
            f'f"{{n * 2:#x}}-{{len({tensor}.shape)}}"',
            f'f"{{{tensor}.ndim=}} {{n!r:^5}}"',
        ))
        name = self._fresh("s")
        self._emit(scope, f"{name} = {text}")
        self._emit(scope, f"print({name})")
        scope.printables = scope.printables + (name,)

    def _c_unpacking(self, scope: Any) -> None:
        self._features.add("unpacking")
        first, rest = self._fresh("y"), self._fresh("ys")
        items = self._tensors(scope, 3)
        form = self._pick(("star", "nested", "tuple-star"))
        if form == "star":
            self._emit(scope, f"{first}, *{rest} = ({items})")
            self._put(scope, f"({first} + {rest}[-1])", 8.0)
        elif form == "nested":
            other = self._fresh("y")
            self._emit(scope, f"{first}, ({other}, _k) = {self._atom(scope)}, ({self._atom(scope)}, n)")
            self._put(scope, f"({first} * _k * 0.25 + {other})", 8.0)
        else:
            self._emit(scope, f"{rest} = (*[{items}], {self._atom(scope)})")
            self._put(scope, f"({rest}[0] + {rest}[-1])", 8.0)

    def _c_chained_comparison(self, scope: Any) -> None:
        self._features.update({"chained-comparison", "if"})
        condition = self._pick((
            "0 < n <= 3",
            f"1 <= {self._pick(scope.tensors)}.ndim < 3",
            "n < t0.shape[-1] <= 17",
        ))
        self._emit(scope, f"if {condition}:")
        self._body(scope.block(), (1, 1))

    def _c_is_in(self, scope: Any) -> None:
        self._features.update({"is-in", "if"})
        a, b = self._pick(scope.tensors), self._pick(scope.tensors)
        condition = self._pick((
            f"{a} is {b}", f"{a} is not None", "n in (1, 3)", "n not in [2, 4]",
            f"{a}.dtype is torch.float32", f'"x" in "{self._pick(("xy", "ab"))}"',
        ))
        self._emit(scope, f"if {condition}:")
        self._body(scope.block(), (1, 1))

    def _c_short_circuit(self, scope: Any) -> None:
        self._features.add("short-circuit")
        flag = self._fresh("flag")
        form = self._pick(("int", "tensor-bool", "or-default", "and-value"))
        if form == "int":
            self._emit(scope, f"{flag} = n > 1 and n or 2")
            self._emit(scope, f"{self._target(scope)} = torch.tanh({self._squashed(scope, 1)} * {flag} * 0.25)")
        elif form == "tensor-bool":
            self._emit(scope, f"{flag} = ({self._atom(scope)} > 0).any() and n > 1")
            self._features.add("if")
            self._emit(scope, f"if {flag}:")
            self._body(scope.block(), (1, 1))
        elif form == "or-default":
            self._emit(scope, f"{flag} = None")
            self._put(scope, f"({flag} or {self._atom(scope)})", 4.0)
        else:
            self._emit(scope, f"{flag} = [{self._atom(scope)}]")
            self._put(scope, f"({flag} and {flag}[0])", 4.0)

    def _c_unary(self, scope: Any) -> None:
        self._features.add("unary-ops")
        m = self._fresh("m")
        self._emit(scope, f"{m} = (+n) * (~n) % 3 + (not n)")
        self._put(scope, f"torch.where(~({self._atom(scope)} > 0), {self._atom(scope)}, +{self._atom(scope)}) * ({m} + 1) * 0.2", 4.0 * 3 * 0.2)

    def _c_slice(self, scope: Any) -> None:
        self._features.add("slice")
        # t0 and t1 are never 0-dim (locals may be)
        a = self._pick(("t0", "t1"))
        t = self._target(scope)
        form = self._pick(("step", "bounds", "flip"))
        text = {
            "step": f"{a}[..., ::2].sum(-1, keepdim=True)",
            "bounds": f"{a}[..., :n].mean(dim=-1, keepdim=True)",
            "flip": f"{a}.flip(-1)[..., ::1]",
        }[form]
        if form != "flip":
            self._features.add("reduction")
        self._emit(scope, f"{t} = torch.tanh({t} + {text})")
        name = self._fresh("xs")
        self._emit(scope, f"{name} = [{self._atom(scope)}, {self._atom(scope)}, {self._atom(scope)}][::-1][0:n:2]")
        scope.lists[name] = 1

    # -- classes, objects, mutation ----------------------------------------------

    def _c_class_local(self, scope: Any) -> None:
        self._features.update({"class-local", "closure"})
        base, child, obj = self._fresh("Base"), self._fresh("Child"), self._fresh("obj")
        self._emit(scope, f"class {base}:")
        self._emit(scope, "def __init__(self, w):", 1)
        self._emit(scope, "self.w = w", 2)
        self._emit(scope, "def apply(self, v):", 1)
        self._emit(scope, "return torch.tanh(v * self.w)", 2)
        self._emit(scope, f"class {child}({base}):")
        self._emit(scope, "scale: float = 0.5", 1)
        self._emit(scope, "def apply(self, v):", 1)
        self._maybe_break(scope, 2, 15)
        self._emit(scope, "return super().apply(v) * self.scale", 2)
        self._emit(scope, "@property", 1)
        self._emit(scope, "def doubled(self):", 1)
        self._emit(scope, "return self.w * 2", 2)
        self._emit(scope, "def __getattr__(self, name):", 1)
        self._emit(scope, "return 0.25", 2)
        self._emit(scope, f"{obj} = {child}({self._squashed(scope, 1)})")
        self._put(scope, f"({obj}.apply({self._atom(scope)}) + {obj}.doubled * {obj}.missing)", 3.0)
        if self._chance(40):
            self._features.add("mutation-attr")
            self._emit(scope, f"{child}.scale = 0.75")
            self._put(scope, f"{obj}.apply({self._atom(scope)})", 1.0)

    def _c_dataclass(self, scope: Any) -> None:
        self._features.add("dataclass")
        self._need("Pair")
        p = self._fresh("p")
        self._emit(scope, f"{p} = Pair({self._squashed(scope, 1)}, k=n)")
        self._features.add("mutation-attr")
        self._emit(scope, f"{p}.k += 1")
        self._emit(scope, f"{p}.tags.append({p}.k)")
        self._maybe_break(scope)
        self._put(scope, f"({p}.w * {p}.k * 0.2)", 3.0 * 5 * 0.2)
        if self._chance(40):
            self._emit(scope, f"print({p}.k, {p}.tags, {p} == Pair({p}.w, {p}.k, [{p}.k]))")
            self._features.add("print")

    def _c_nn_module(self, scope: Any) -> None:
        self._features.add("nn-module")
        self._need("Block")
        block = self._fresh("block")
        self._emit(scope, f"{block} = Block(t0.shape[-1])")
        if self._chance(40):
            self._emit(scope, f"{block}.shift.add_(0.5)")
        self._maybe_break(scope)
        self._put(scope, f"{block}({self._squashed(scope, 1)})", 1.0)
        if self._chance(40):
            self._emit(scope, f"print(sorted(k for k, _ in {block}.named_parameters()), len(list({block}.buffers())))")
            self._features.update({"print", "comprehension"})

    def _c_mutate_attr(self, scope: Any) -> None:
        self._features.add("mutation-attr")
        self._need("State")
        s = self._fresh("st")
        self._emit(scope, f"{s} = State({self._squashed(scope, 1)})")
        self._emit(scope, f"{s}.calls += n")
        self._emit(scope, f"{s}.w = torch.tanh({s}.w * State.scale)")
        if self._chance(50):
            self._emit(scope, "State.scale = State.scale * 0.5")
        self._maybe_break(scope)
        if self._chance(40):
            self._features.add("del")
            self._emit(scope, f"{s}.extra = {s}.calls")
            self._emit(scope, f"del {s}.extra")
        self._put(scope, f"({s}.w * {s}.calls * 0.25)", 4.0)

    def _c_isinstance(self, scope: Any) -> None:
        self._features.update({"isinstance", "if"})
        self._need("collections.abc")
        self._need("typing")
        t = self._pick(scope.tensors)
        condition = self._pick((
            f"isinstance({t}, torch.Tensor | int)",
            "isinstance(n, (int, float))",
            "isinstance(n, typing.SupportsIndex)",
            f"isinstance(({t},), collections.abc.Sequence)",
            f'isinstance({{"k": {t}}}, collections.abc.Mapping)',
            f"isinstance({t}, collections.abc.Iterable) and not isinstance({t}, list)",
        ))
        self._emit(scope, f"if {condition}:")
        self._body(scope.block(), (1, 1))
        self._emit(scope, "else:")
        self._body(scope.block(), (1, 1))

    # -- async, del, imports, randomness ------------------------------------------

    def _c_async_def(self, scope: Any) -> None:
        self._features.add("async-def")
        for helper in ("Ready", "Gate", "Countdown", "drive"):
            self._need(helper)
        co = self._fresh("co")
        self._emit(scope, f"async def {co}(v):")
        self._emit(scope, "total = await Ready(v * 0.5)", 1)
        if self._chance(60):
            self._emit(scope, "async with Gate() as k:", 1)
            self._emit(scope, "total = torch.tanh(total * k)", 2)
        if self._chance(60):
            self._emit(scope, "async for i in Countdown(2):", 1)
            self._emit(scope, "total = torch.tanh(total + i * 0.25)", 2)
        self._emit(scope, "return total", 1)
        self._maybe_break(scope)
        self._put(scope, f"drive({co}({self._squashed(scope, 1)}))", 1.0)

    def _c_del(self, scope: Any) -> None:
        self._features.add("del")
        tmp = self._fresh("tmp")
        self._emit(scope, f"{tmp} = {self._squashed(scope, 1)}")
        self._put(scope, f"({tmp} * 0.5)", 1.5)
        form = self._pick(("local", "item", "maybe"))
        if form == "local":
            self._emit(scope, f"del {tmp}")
        elif form == "item":
            box = self._fresh("box")
            self._emit(scope, f"{box} = [{tmp}, {tmp}]")
            self._emit(scope, f"del {box}[0], {tmp}")
            self._put(scope, f"{box}[0]", 3.0)
        else:
            # the name may be unbound below: LOAD_FAST_CHECK
            self._features.add("if")
            self._emit(scope, "if n > 2:")
            self._emit(scope, f"del {tmp}", 1)
            self._emit(scope, "if n <= 2:")
            self._put(scope, f"{tmp}", 4.0, 1)

    def _c_import(self, scope: Any) -> None:
        self._features.add("import")
        form = self._pick(("math", "operator", "functools"))
        if form == "math":
            self._emit(scope, "import math")
            self._put(scope, f"({self._squashed(scope, 1)} * math.pi / 4)", 2.4)
        elif form == "operator":
            self._emit(scope, "from operator import mul, add")
            self._put(scope, f"add(mul({self._squashed(scope, 1)}, 0.5), {self._atom(scope)})", 6.0)
        else:
            self._emit(scope, "import functools, operator as op")
            self._put(scope, f"functools.reduce(op.add, ({self._tensors(scope, 3)}))", 12.0)

    def _c_random(self, scope: Any) -> None:
        self._features.add("random")
        self._need("fallback_random")
        a = self._squashed(scope, 1)
        text = self._pick((
            f"torch.nn.functional.dropout({a}, p=0.5, training=True)",
            f"({a} * torch.rand_like({self._atom(scope)}))",
            f"({a} + torch.randn(t0.shape[-1]) * 0.1)",
        ))
        self._put(scope, text, 7.0)
