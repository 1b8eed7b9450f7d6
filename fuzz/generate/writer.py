"""Program generation: Hypothesis strategies that write small torch programs.

``programs()`` draws one ``Program``: a module defining ``f(t0, t1, n, *extras)``
and ``inputs()``. ``f`` mixes tensor arithmetic with the Python constructs that
Dynamo has to trace (branches on tensors, loops, closures, ``nonlocal``,
container mutation, ``try``, ``with``, comprehensions, generators, in-place
argument mutation, ``print``, and the constructs of ``fuzz.constructs``:
generators driven by ``send``, ``except*``, ``match``, classes, ``async def``,
...) and calls ``torch._dynamo.graph_break()`` at random statement
boundaries, inside those constructs too. Extra arguments bring other dtypes
(int64, bool, bfloat16), 0-size and 1-element tensors, leaves that require
grad (f runs backward and returns the gradient), Python scalars, tuples,
lists, dicts and objects.

The programs are written for a differential oracle that compares eager and
compiled results with a relative tolerance of 1e-4, so the generator keeps
them numerically tame: every expression carries an upper bound on its
magnitude, assignments squash values back into [-3, 3], there is no division
by anything that can be near zero and no randomness inside ``f``, Python
control flow only depends on ints, shapes or counts of ``x > c``, and ``print``
shows shapes, ints and strings, never a float. Exceptions are only raised
where an enclosing ``try`` in the same function catches them.

``generate(seed)`` is the deterministic entry point used by campaigns.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import random
from collections.abc import Callable, Sequence
from typing import TypeVar

from hypothesis import strategies as st
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.internal.conjecture.providers import HypothesisProvider

from fuzz.generate.constructs import (
    COMPOUND_CONSTRUCTS,
    CONSTRUCT_FEATURES,
    CONSTRUCTS,
    PRELUDE,
    ConstructWriter,
)
from harness.program import Program

__all__ = ["FEATURES", "GENERATOR", "STATEMENT_KINDS", "generate", "program_from_data", "programs"]

# Name recorded in Program.generator; bump the suffix when the same seed starts
# meaning a different program.
GENERATOR = "tcfuzz.v2"

# Every construct name that can appear in Program.features.
FEATURES: tuple[str, ...] = (
    "break-continue",   # `break` / `continue` under an `if` in a loop
    "broadcast",        # t1's shape differs from t0's and broadcasts against it
    "closure",          # nested def (not a generator) or lambda reading outer names
    "comprehension",    # list/dict comprehension or generator expression
    "dict-mutation",    # d[k] = v, update, setdefault, pop, del on a dict
    "float64",          # an input is float64 (mixed-dtype promotion)
    "for",
    "generator",        # nested def with `yield`, consumed by sum/list/next
    "graph-break",      # torch._dynamo.graph_break()
    "if",
    "if-tensor-cond",   # `if` whose condition reads tensor data: (x > 0).any()
    "inplace-arg",      # in-place op on an argument tensor: t0.add_(1)
    "inplace-local",    # in-place op on a local tensor or closure variable
    "list-mutation",    # append, insert, extend, +=, x[i] = v, pop, del on a list
    "no-grad",          # with torch.no_grad():
    "nonlocal",
    "print",
    "raise",            # explicit raise ValueError / IndexError, caught
    "reduction",        # sum, mean, amax, norm, logsumexp in tensor arithmetic
    "tensor-index-error",  # out-of-range tensor indexing, caught as IndexError
    "try-except",
    "try-finally",
    "while",
    "while-tensor-cond",  # `while` whose condition reads tensor data
) + CONSTRUCT_FEATURES + (
    # inputs beyond t0, t1, n (extra parameters of f, or t1's layout)
    "bfloat16",         # an extra bfloat16 tensor argument
    "bool-input",       # an extra bool tensor argument
    "dict-arg",         # a dict argument, mutated by f
    "int64",            # an extra int64 tensor argument
    "list-arg",         # a list argument, mutated by f
    "non-contiguous",   # t1 is a strided view
    "object-arg",       # a small object argument, mutated by f
    "one-element",      # an extra 1-element tensor argument
    "requires-grad",    # an extra leaf with requires_grad; f runs backward, returns the grad
    "scalar-arg",       # an extra Python float/int argument
    "tuple-arg",        # a (tensor, int) argument
    "zero-size",        # an extra (0, k) tensor argument
)

# Base shapes of t0; t1 has this shape or one that broadcasts against it.
# Small, so that programs run in microseconds and reductions stay short.
SHAPES: tuple[tuple[int, ...], ...] = ((3, 4), (2, 5), (4,), (2, 3, 4), (1,), (17,), (3, 17), (2, 1, 5))
# Range of the int argument n (loop trip counts, branch conditions); at most 4,
# so two nested loops over range(n) run 16 iterations at most.
N_VALUES: tuple[int, ...] = (3, 2, 4, 1)

# Deepest nesting of compound statements (if/for/while/try/with/def) in f.
MAX_DEPTH = 2
# Statements in f's body, and in each nested body.
TOP_STATEMENTS = (2, 5)
BLOCK_STATEMENTS = (1, 3)
# Cap on statements per program, so that a program stays well under ~60 lines
# and a draw can never overrun Hypothesis' choice buffer.
MAX_STATEMENTS = 24
# Deepest operator nesting inside one expression.
MAX_EXPR_DEPTH = 2

# Assumed bound on |value| of a tensor variable, in the units of randn (std 1):
# inputs exceed 4 with probability ~6e-5 per element, assignments squash to
# [-3, 3], and in-place ops move values by at most ~1 per execution.
VAR_MAGNITUDE = 4.0
# Largest |value| an expression may reach. float32 rounds at ~6e-8 relative,
# so a reordered reduction over values this large is off by well under 1e-5
# absolute, far inside the oracle's 1e-4 tolerance even after cancellation.
MAX_MAGNITUDE = 64.0
# Largest argument for sin/cos: their absolute error equals the argument's,
# which grows with its magnitude; tanh/sigmoid saturate instead.
MAX_PERIODIC_ARGUMENT = 16.0
# Upper bound of a squashed assignment's |value| (clamp(-3, 3), tanh, ...).
SQUASHED_MAGNITUDE = 3.0
# Share of raising statements (under an `except IndexError`) that index a
# tensor out of range instead of raising explicitly, in percent.
TENSOR_INDEX_ERROR_PERCENT = 20
# Largest int variable (n, loop counters) used as a scale factor.
MAX_SMALL_INT = max(N_VALUES)

_T = TypeVar("_T")


@functools.lru_cache(maxsize=None)
def _below(n: int) -> st.SearchStrategy[int]:
    """Integers in [0, n): the one kind of draw the writer makes (shrinks to 0)."""
    return st.integers(0, n - 1)


@dataclasses.dataclass
class _Scope:
    """The names that code written at one point of the program may use.

    Blocks get a copy (``block``), so containers defined inside a block are
    never read after it, where they might not exist.
    """

    tensors: tuple[str, ...]  # readable tensor variables
    writable: tuple[str, ...]  # tensor variables this function may rebind
    ints: tuple[str, ...]  # small ints (<= MAX_SMALL_INT): arithmetic, conditions
    printables: tuple[str, ...]  # ints and strings that print() may show
    lists: dict[str, int]  # list-of-tensor variables -> guaranteed length
    dicts: dict[str, tuple[str, ...]]  # dict-of-tensor variables -> guaranteed keys
    frozen: frozenset[str] = frozenset()  # containers being iterated: no mutation
    catches: tuple[str, ...] = ()  # exception types an enclosing try here catches
    enclosing: tuple[str, ...] = ()  # names a nested function may declare nonlocal
    loop: bool = False  # inside a loop of this function: break/continue allowed
    depth: int = 0  # compound statements around this point
    indent: int = 1  # indentation level, in 4-space steps

    def block(self, **changes: object) -> _Scope:
        """A copy for a nested block, one level deeper."""
        fields = {
            "lists": dict(self.lists),
            "dicts": dict(self.dicts),
            "depth": self.depth + 1,
            "indent": self.indent + 1,
        }
        fields.update(changes)
        return dataclasses.replace(self, **fields)


@dataclasses.dataclass(frozen=True)
class _Expr:
    """A tensor-valued expression and an upper bound on its |value|."""

    text: str
    magnitude: float


# Unary ops: template, magnitude of the result given the operand's.
_UNARY: tuple[tuple[str, Callable[[float], float]], ...] = (
    ("torch.tanh({0})", lambda m: 1.0),
    ("torch.sigmoid({0})", lambda m: 1.0),
    ("torch.sin({0})", lambda m: 1.0),
    ("torch.cos({0})", lambda m: 1.0),
    ("torch.relu({0})", lambda m: m),
    ("{0}.abs()", lambda m: m),
    ("{0}.clamp(-1.0, 1.0)", lambda m: 1.0),
    ("({0} * 0.5)", lambda m: m / 2),
    ("(-{0})", lambda m: m),
    ("({0} / (1.0 + {0}.abs()))", lambda m: 1.0),
    ("torch.atan({0})", lambda m: 1.6),
    ("{0}.softmax(dim=-1)", lambda m: 1.0),
)
_PERIODIC = frozenset({"torch.sin({0})", "torch.cos({0})"})

# Binary ops: template, magnitude of the result given the operands'.
_BINARY: tuple[tuple[str, Callable[[float, float], float]], ...] = (
    ("({0} + {1})", lambda a, b: a + b),
    ("({0} - {1})", lambda a, b: a + b),
    ("({0} * {1})", lambda a, b: a * b),
    ("torch.maximum({0}, {1})", max),
    ("torch.minimum({0}, {1})", max),
)

# Squashing wrappers for assignments: template, needs a small argument.
_SQUASH: tuple[tuple[str, bool], ...] = (
    ("torch.tanh({0})", False),
    ("{0}.clamp(-3.0, 3.0)", False),
    ("torch.sigmoid({0})", False),
    ("torch.sin({0})", True),
    ("({0} / (1.0 + {0}.abs()))", False),
    ("torch.cos({0})", True),
    ("torch.atan({0})", False),
)

# In-place ops on a tensor variable (scalar operands only, so shapes never
# matter): template.
_INPLACE: tuple[str, ...] = (
    "{0}.add_(1)",
    "{0}.mul_(0.5)",
    "{0}.clamp_(-1.0, 1.0)",
    "{0}.tanh_()",
    "{0}.sub_(0.5)",
    "{0}.relu_()",
    "{0}.abs_()",
    "{0}.sin_()",
)

# Statement kinds and their weights; the first is the simplest, which is what
# Hypothesis shrinks towards.
_STATEMENTS: tuple[tuple[str, int], ...] = (
    ("assign", 22),
    ("inplace", 6),
    ("print", 5),
    ("graph-break", 9),
    ("list", 6),
    ("dict", 5),
    ("comprehension", 5),
    ("raise", 8),
    ("break", 4),
    ("if", 8),
    ("for", 7),
    ("while", 4),
    ("try", 8),
    ("no-grad", 4),
    ("closure", 6),
    ("generator", 5),
)
_STATEMENTS += CONSTRUCTS
_CONSTRUCT_KINDS = frozenset(kind for kind, _ in CONSTRUCTS)
_COMPOUND = frozenset({"if", "for", "while", "try", "no-grad", "closure", "generator"}) | COMPOUND_CONSTRUCTS
# Every statement kind, in table order: the keys of a feedback weight map.
STATEMENT_KINDS: tuple[str, ...] = tuple(kind for kind, _ in _STATEMENTS)

# Extra arguments of f after (t0, t1, n): feature -> (input expression,
# statements that use it; {a} is the parameter, {t} a new local tensor,
# {dims} t0's dims, {last} t0's last dim). Every use keeps |{t}| <= 3.
_EXTRA_ARGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "int64": ("torch.randint(-3, 4, ({dims},), generator=g)", ("{t} = torch.tanh(t0 + {a}.to(t0.dtype) * 0.25)",)),
    "bool-input": ("torch.randn({dims}, generator=g) > 0", ("{t} = torch.where({a} & (t0 > 0), t0, -t0).clamp(-3.0, 3.0)",)),
    "bfloat16": ("torch.randn({dims}, generator=g).to(torch.bfloat16)", ("{t} = torch.tanh(t0 + ({a} * 2).float())",)),
    "zero-size": ("torch.randn(0, {last}, generator=g)", ("{t} = torch.tanh(t0 + {a}.sum(dim=0) + {a}.shape[0])",)),
    "one-element": ("torch.randn(1, generator=g)", ("{t} = torch.tanh(t0 * {a})",)),
    "scalar-arg": ("{scalar}", ("{t} = torch.tanh(t0 * {a})",)),
    "tuple-arg": ("(torch.randn({dims}, generator=g), 2)", ("{t} = torch.tanh({a}[0] * {a}[1] * 0.25)",)),
    "list-arg": (
        "[torch.randn({dims}, generator=g), torch.randn({dims}, generator=g)]",
        ("{a}.append(t0 * 0.5)", "{t} = torch.tanh(sum({a}))"),
    ),
    "dict-arg": (
        '{{"w": torch.randn({dims}, generator=g), "k": 2}}',
        ('{a}["seen"] = n', '{t} = torch.tanh({a}["w"] * {a}["k"] * 0.25)'),
    ),
    "object-arg": ("Box(torch.randn({dims}, generator=g), 2)", ("{a}.k += 1", "{t} = torch.tanh({a}.w * {a}.k * 0.25)")),
    "requires-grad": ("torch.randn({dims}, generator=g, requires_grad=True)", ()),
}
_EXTRA_PRELUDE: dict[str, tuple[str, ...]] = {
    "object-arg": ("class Box:", "    def __init__(self, w, k):", "        self.w = w", "        self.k = k"),
}
# Chance that f gets extra arguments, and the most it gets, in percent / count.
EXTRA_ARGS_PERCENT = 45
MAX_EXTRA_ARGS = 2
# Chance that t1 is a non-contiguous view, in percent. (New shapes on a later
# call come from the harness's call plan: harness.execute's "shape" call grows
# the inputs, so inputs() itself stays a pure function: the harness may call it
# more often in one run than in another.)
NON_CONTIGUOUS_PERCENT = 20

_DICT_KEYS: tuple[str, ...] = ("a", "b", "c", "d", "e")
_EXCEPTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # handler text, exception types it catches
    ("ValueError", ("ValueError",)),
    ("IndexError", ("IndexError",)),
    ("(ValueError, IndexError)", ("IndexError", "ValueError")),
    ("Exception", ("IndexError", "ValueError")),
)


class _Writer(ConstructWriter):
    """Writes one program, taking every decision from a Hypothesis ``draw``.

    ``weights`` multiplies the statement table's weights by kind (a feedback
    scheduler's steer; missing kinds keep 1.0), so a program is a function of
    (choice sequence, weights).
    """

    def __init__(
        self,
        draw: Callable[[st.SearchStrategy[int]], int],
        weights: dict[str, float] | None = None,
    ) -> None:
        self._draw = draw
        self._weights = weights or {}
        self._lines: list[str] = []
        self._prelude: list[str] = []
        self._prelude_lines: list[str] = []
        self._features: set[str] = set()
        self._counter = 0
        self._budget = MAX_STATEMENTS
        self._shape: tuple[int, ...] = (3, 4)

    # -- choices -------------------------------------------------------------

    def _index(self, n: int) -> int:
        return self._draw(_below(n)) if n > 1 else 0

    def _pick(self, options: Sequence[_T]) -> _T:
        return options[self._index(len(options))]

    def _chance(self, percent: int) -> bool:
        """True with ``percent``% probability; shrinks to False."""
        return self._index(100) >= 100 - percent

    def _count(self, bounds: tuple[int, int]) -> int:
        low, high = bounds
        return low + self._index(high - low + 1)

    def _weighted(self, table: Sequence[tuple[_T, int]]) -> _T:
        point = self._index(sum(weight for _, weight in table))
        for value, weight in table:
            if point < weight:
                return value
            point -= weight
        raise AssertionError("unreachable: point is below the total weight")

    def _fresh(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}{self._counter}"

    def _emit(self, scope: _Scope, text: str, extra_indent: int = 0) -> None:
        self._lines.append("    " * (scope.indent + extra_indent) + text)

    # -- expressions ---------------------------------------------------------

    def _atom(self, scope: _Scope) -> str:
        kinds = ["name"]
        lists = [name for name, length in scope.lists.items() if length > 0]
        if lists:
            kinds.append("list")
        if scope.dicts:
            kinds.append("dict")
        if len(self._shape) >= 2:
            kinds.append("row")
        kind = kinds[self._index(len(kinds))] if self._chance(30) else "name"
        if kind == "list":
            name = self._pick(lists)
            return f"{name}[{self._pick((0, -1, *range(1, scope.lists[name])))}]"
        if kind == "dict":
            name = self._pick(sorted(scope.dicts))
            keys = scope.dicts[name]
            if keys and self._chance(75):
                return f'{name}["{self._pick(keys)}"]'
            return f'{name}.get("z", {self._pick(scope.tensors)})'
        if kind == "row":
            return f"t0[{self._pick((0, -1))}]"
        return self._pick(scope.tensors)

    def _expr(self, scope: _Scope, depth: int) -> _Expr:
        """A tensor expression over ``scope``'s names, broadcastable to t0's shape.

        Every variable's shape broadcasts to t0's; elementwise ops keep that,
        and the reductions used either keep dims or drop only leading ones.
        """
        if depth <= 0:
            return _Expr(self._atom(scope), VAR_MAGNITUDE)
        form = self._weighted(
            (("atom", 2), ("unary", 4), ("binary", 5), ("reduce", 2), ("scale", 2), ("where", 1))
        )
        if form == "atom":
            return _Expr(self._atom(scope), VAR_MAGNITUDE)
        if form == "unary":
            template, magnitude = self._pick(_UNARY)
            inner = self._expr(scope, depth - 1)
            if template in _PERIODIC and inner.magnitude > MAX_PERIODIC_ARGUMENT:
                template, magnitude = _UNARY[0]
            return _Expr(template.format(inner.text), magnitude(inner.magnitude))
        if form == "binary":
            template, magnitude = self._pick(_BINARY)
            a, b = self._expr(scope, depth - 1), self._expr(scope, depth - 1)
            bound = magnitude(a.magnitude, b.magnitude)
            if bound > MAX_MAGNITUDE:
                template, bound = "torch.maximum({0}, {1})", max(a.magnitude, b.magnitude)
            return _Expr(template.format(a.text, b.text), bound)
        if form == "reduce":
            return self._reduction(scope, depth)
        if form == "scale":
            inner = self._expr(scope, depth - 1)
            options = [
                ("({0} * 2.0)", 2.0 * inner.magnitude),
                ("({0} + 1.0)", inner.magnitude + 1.0),
            ]
            options += [
                (f"({{0}} * ({name} + 1) * 0.25)", inner.magnitude * (MAX_SMALL_INT + 1) * 0.25)
                for name in scope.ints
            ]
            template, bound = self._pick(options)
            if bound > MAX_MAGNITUDE:
                template, bound = "({0} * 0.5)", inner.magnitude / 2
            return _Expr(template.format(inner.text), bound)
        # where: the condition reads a variable directly, so a computed value
        # sitting on 0 cannot flip it between eager and compiled.
        a, b = self._expr(scope, depth - 1), self._expr(scope, depth - 1)
        condition = self._atom(scope)
        return _Expr(
            f"torch.where({condition} > 0, {a.text}, {b.text})", max(a.magnitude, b.magnitude)
        )

    def _reduction(self, scope: _Scope, depth: int) -> _Expr:
        inner = self._expr(scope, depth - 1)
        m = inner.magnitude
        numel = math.prod(self._shape)
        options = (
            ("{0}.sum()", m * numel),
            ("{0}.mean()", m),
            ("{0}.amax(dim=-1, keepdim=True)", m),
            ("{0}.sum(dim=0)", m * self._shape[0]),
            ("{0}.mean(dim=-1, keepdim=True)", m),
            ("torch.logsumexp({0}, dim=-1, keepdim=True)", m + math.log(numel)),
            ("{0}.norm()", m * math.sqrt(numel)),
        )
        template, bound = self._pick(options)
        if bound > MAX_MAGNITUDE:
            template, bound = "{0}.mean()", m
        self._features.add("reduction")
        return _Expr(template.format(inner.text), bound)

    def _squashed(self, scope: _Scope, depth: int | None = None) -> str:
        """An expression whose |value| is at most SQUASHED_MAGNITUDE."""
        expr = self._expr(scope, self._index(MAX_EXPR_DEPTH + 1) if depth is None else depth)
        return self._squash(expr)

    def _squash(self, expr: _Expr) -> str:
        if expr.magnitude <= SQUASHED_MAGNITUDE and self._chance(40):
            return expr.text
        template, periodic = self._pick(_SQUASH)
        if periodic and expr.magnitude > MAX_PERIODIC_ARGUMENT:
            template = _SQUASH[0][0]
        return template.format(expr.text)

    def _tensor_condition(self, scope: _Scope) -> str:
        """``(x > c).any()``-style: counts of comparisons, robust to rounding."""
        operand = self._atom(scope)
        if self._chance(30):
            operand = f"torch.tanh({operand})"
        threshold = self._pick(("0", "0.5", "-0.5"))
        form = self._pick(("any", "all", "count"))
        if form == "count":
            return f"({operand} > {threshold}).sum() > {self._pick((1, 2, 5))}"
        if form == "all":
            return f"({operand} > -1.0).all()"
        return f"({operand} > {threshold}).any()"

    def _if_header(self, scope: _Scope, condition: str, tensor: bool) -> None:
        self._features.add("if")
        if tensor:
            self._features.add("if-tensor-cond")
        self._emit(scope, f"if {condition}:")

    def _any_condition(self, scope: _Scope) -> tuple[str, bool]:
        tensor = self._chance(45)
        return (self._tensor_condition(scope) if tensor else self._python_condition(scope)), tensor

    def _python_condition(self, scope: _Scope) -> str:
        options = [f"n > {self._pick((1, 2, 3))}", "n % 2 == 0"]
        options += [f"{name} == 1" for name in scope.ints if name != "n"]
        options += [f"{name} % 2 == 0" for name in scope.ints if name != "n"]
        options.append(f"{self._pick(scope.tensors)}.ndim == {len(self._shape)}")
        options.append(f"t0.shape[-1] > {self._pick((3, 4))}")
        options += [f"len({name}) > 2" for name in sorted(scope.lists)]
        options += [f'"a" in {name}' for name in sorted(scope.dicts)]
        return self._pick(options)

    # -- statements ----------------------------------------------------------

    def _body(self, scope: _Scope, bounds: tuple[int, int]) -> None:
        for _ in range(self._count(bounds)):
            self._statement(scope)

    def _statement(self, scope: _Scope) -> None:
        if self._budget <= 0:
            self._assign(scope)
            return
        self._budget -= 1
        allowed = [
            (kind, max(1, round(weight * self._weights.get(kind, 1.0))))
            for kind, weight in _STATEMENTS
            if (kind not in _COMPOUND or (scope.depth < MAX_DEPTH and self._budget > 3))
            and (kind != "raise" or scope.catches)
            and (kind != "break" or scope.loop)
        ]
        kind = self._weighted(allowed)
        prefix = "_c_" if kind in _CONSTRUCT_KINDS else "_"
        getattr(self, prefix + kind.replace("-", "_"))(scope)

    def _assign(self, scope: _Scope) -> None:
        target = self._pick(scope.writable)
        if self._chance(8):
            # an alias (or a view, for t0[0]): later in-place ops write through it
            self._emit(scope, f"{target} = {self._atom(scope)}")
        else:
            self._emit(scope, f"{target} = {self._squashed(scope)}")

    def _store(self, scope: _Scope, target: str, expr: _Expr) -> None:
        """``target = <expr, squashed>``."""
        self._emit(scope, f"{target} = {self._squash(expr)}")

    def _inplace(self, scope: _Scope) -> None:
        target = self._pick(scope.tensors)
        self._features.add("inplace-arg" if target in ("t0", "t1") else "inplace-local")
        self._emit(scope, self._pick(_INPLACE).format(target))

    def _print(self, scope: _Scope) -> None:
        self._features.add("print")
        tag = f'"p{self._counter}"'
        self._counter += 1
        tensor = self._pick(scope.tensors)
        options = [
            f"{tensor}.shape",
            f"n, {tensor}.ndim",
            f"{tensor}.dtype",
            f"int(({tensor} > 0).sum())",
        ]
        options += [f"len({name})" for name in sorted(scope.lists)]
        options += [f"sorted({name})" for name in sorted(scope.dicts)]
        options += list(scope.printables)
        self._emit(scope, f"print({tag}, {self._pick(options)})")

    def _graph_break(self, scope: _Scope) -> None:
        self._features.add("graph-break")
        self._emit(scope, "torch._dynamo.graph_break()")

    def _list(self, scope: _Scope) -> None:
        existing = sorted(name for name in scope.lists if name not in scope.frozen)
        if existing and self._chance(55):
            self._list_op(scope, self._pick(existing))
            return
        name = self._fresh("xs")
        length = self._count((2, 3))
        items = ", ".join(self._squashed(scope, 1) for _ in range(length))
        self._emit(scope, f"{name} = [{items}]")
        for _ in range(self._index(3)):
            op = self._pick(("append", "setitem", "pop", "insert", "del"))
            if op in ("pop", "del") and length <= 1:
                op = "append"
            self._features.add("list-mutation")
            if op == "append":
                self._emit(scope, f"{name}.append({self._squashed(scope, 1)})")
                length += 1
            elif op == "setitem":
                index = self._pick((0, -1, *range(1, length)))
                self._emit(scope, f"{name}[{index}] = {self._squashed(scope)}")
            elif op == "insert":
                self._emit(scope, f"{name}.insert(0, {self._squashed(scope, 1)})")
                length += 1
            elif op == "pop":
                # popped into the target first: a squash template may repeat its operand
                target = self._pick(scope.writable)
                self._emit(scope, f"{target} = {name}.pop()")
                self._store(scope, target, _Expr(target, VAR_MAGNITUDE))
                length -= 1
            else:
                self._emit(scope, f"del {name}[{self._pick((0, -1))}]")
                length -= 1
        scope.lists[name] = length

    def _list_op(self, scope: _Scope, name: str) -> None:
        op = self._pick(("append", "setitem", "extend", "iadd", "pop", "read"))
        length = scope.lists[name]
        if op == "setitem" and length == 0:
            op = "append"
        if op == "iadd" and scope.enclosing:
            # `xs += ...` would make an outer list local to this nested function
            op = "extend"
        if op == "read":
            target = self._pick(scope.writable)
            read = f"{name}[-1]" if length else f"({name}[-1] if {name} else t0)"
            total = _Expr(f"({read} + {self._atom(scope)})", 2 * VAR_MAGNITUDE)
            self._emit(scope, f"{target} = {self._squash(total)}")
            return
        self._features.add("list-mutation")
        if op == "append":
            self._emit(scope, f"{name}.append({self._squashed(scope, 1)})")
        elif op == "setitem":
            index = self._pick((0, -1, *range(1, length)))
            self._emit(scope, f"{name}[{index}] = {self._squashed(scope)}")
        elif op == "extend":
            self._emit(scope, f"{name}.extend([{self._squashed(scope, 1)}, {self._atom(scope)}])")
        elif op == "iadd":
            self._emit(scope, f"{name} += [{self._squashed(scope, 1)}]")
        else:
            self._emit(scope, f"{name}.append({self._squashed(scope, 1)})")
            target = self._pick(scope.writable)
            self._emit(scope, f"{target} = {name}.pop()")
            self._store(scope, target, _Expr(target, VAR_MAGNITUDE))

    def _dict(self, scope: _Scope) -> None:
        existing = sorted(name for name in scope.dicts if name not in scope.frozen)
        if existing and self._chance(55):
            self._dict_op(scope, self._pick(existing))
            return
        name = self._fresh("d")
        keys = list(_DICT_KEYS[: self._count((1, 3))])
        items = ", ".join(f'"{key}": {self._squashed(scope, 1)}' for key in keys)
        self._emit(scope, f"{name} = {{{items}}}")
        for _ in range(self._index(3)):
            op = self._pick(("setitem", "update", "del", "setdefault"))
            if op == "del" and len(keys) <= 1:
                op = "setitem"
            self._features.add("dict-mutation")
            key = self._pick(_DICT_KEYS)
            if op == "setitem":
                self._emit(scope, f'{name}["{key}"] = {self._squashed(scope)}')
                if key not in keys:
                    keys.append(key)
            elif op == "update":
                self._emit(scope, f"{name}.update({key}={self._squashed(scope, 1)})")
                if key not in keys:
                    keys.append(key)
            elif op == "setdefault":
                self._emit(scope, f'{name}.setdefault("{key}", {self._atom(scope)})')
                if key not in keys:
                    keys.append(key)
            else:
                key = self._pick(keys)
                self._emit(scope, f'del {name}["{key}"]')
                keys.remove(key)
        scope.dicts[name] = tuple(keys)

    def _dict_op(self, scope: _Scope, name: str) -> None:
        op = self._pick(("setitem", "update", "pop", "read"))
        keys = scope.dicts[name]
        if op == "read":
            target = self._pick(scope.writable)
            key = self._pick(keys) if keys else "a"
            read = f'{name}["{key}"]' if keys else f'{name}.get("a", t1)'
            self._store(scope, target, _Expr(f"({read} + {self._atom(scope)})", 2 * VAR_MAGNITUDE))
            return
        self._features.add("dict-mutation")
        if op == "setitem":
            self._emit(scope, f'{name}["{self._pick(_DICT_KEYS)}"] = {self._squashed(scope)}')
        elif op == "update":
            self._emit(scope, f"{name}.update({self._pick(_DICT_KEYS)}={self._squashed(scope, 1)})")
        else:
            # only keys the dict may lack are popped, so guaranteed keys stay
            spare = [key for key in _DICT_KEYS if key not in keys] or ["z"]
            self._emit(scope, f'{name}.pop("{self._pick(spare)}", None)')

    def _comprehension(self, scope: _Scope) -> None:
        self._features.add("comprehension")
        forms = ["sum-tuple", "list-range", "dict-range"]
        lists = sorted(scope.lists)
        if lists:
            forms += ["sum-list", "list-map"]
        if scope.dicts:
            forms.append("dict-map")
        form = self._pick(forms)
        var = self._fresh("x")
        inner = scope.block(tensors=scope.tensors + (var,), indent=scope.indent, depth=scope.depth)
        if form == "sum-tuple":
            sources = ", ".join(sorted({self._pick(scope.tensors) for _ in range(3)}))
            body = self._squashed(inner, 1)
            total = _Expr(f"sum([{body} for {var} in ({sources},)])", 3 * SQUASHED_MAGNITUDE)
            self._emit(scope, f"{self._pick(scope.writable)} = {self._squash(total)}")
        elif form == "sum-list":
            source = self._pick(lists)
            body = self._squashed(inner, 1)
            # the start value keeps the sum a tensor when the list is empty
            total = _Expr(
                f"sum(({body} for {var} in {source}), {self._pick(scope.tensors)})", MAX_MAGNITUDE
            )
            self._emit(scope, f"{self._pick(scope.writable)} = {self._squash(total)}")
        elif form == "list-range":
            index, name = self._fresh("i"), self._fresh("xs")
            self._emit(scope, f"{name} = [{self._indexed(scope, index)} for {index} in range(3)]")
            scope.lists[name] = 3
        elif form == "list-map":
            source = self._pick(lists)
            name = self._fresh("xs")
            body = self._squashed(inner, 1)
            if self._chance(30):
                self._emit(scope, f"{name} = [{body} for {var} in {source} if ({var} > 0).any()]")
                scope.lists[name] = 0
            else:
                self._emit(scope, f"{name} = [{body} for {var} in {source}]")
                scope.lists[name] = scope.lists[source]
        elif form == "dict-range":
            index, name = self._fresh("i"), self._fresh("d")
            body = self._indexed(scope, index)
            self._emit(scope, f'{name} = {{f"k{{{index}}}": {body} for {index} in range(3)}}')
            scope.dicts[name] = ("k0", "k1", "k2")
        else:
            source = self._pick(sorted(scope.dicts))
            key = self._fresh("k")
            name = self._fresh("d")
            body = self._squashed(inner, 1)
            self._emit(scope, f"{name} = {{{key}: {body} for {key}, {var} in {source}.items()}}")
            scope.dicts[name] = scope.dicts[source]

    def _indexed(self, scope: _Scope, index: str) -> str:
        """A squashed expression scaled by ``index`` (an int in [0, 2])."""
        inner = self._expr(scope, 1)
        return self._squash(_Expr(f"({inner.text} * ({index} + 1) * 0.25)", inner.magnitude))

    def _raise(self, scope: _Scope) -> None:
        """Raise an exception that an enclosing ``try`` of this function catches."""
        exception = self._pick(scope.catches)
        # Indexing out of range is rarer than a raise: in torch 2.12 Dynamo lets
        # that IndexError escape the user's handler (pytorch/pytorch#198192),
        # so every such program lands in that one bucket.
        by_indexing = exception == "IndexError" and self._chance(TENSOR_INDEX_ERROR_PERCENT)
        extra = 0
        if self._chance(40):
            condition, tensor = self._any_condition(scope)
            self._if_header(scope, condition, tensor)
            extra = 1
        if by_indexing:
            self._features.add("tensor-index-error")
            dim = self._index(len(self._shape))
            index = self._shape[dim] + self._index(3)
            subscript = ", ".join([":"] * dim + [str(index)])
            target = self._pick(scope.writable)
            self._emit(scope, f"{target} = torch.tanh(t0[{subscript}])", extra)
        else:
            self._features.add("raise")
            message = f"{exception[0].lower()}{self._counter}"
            self._emit(scope, f'raise {exception}("{message}")', extra)

    def _break(self, scope: _Scope) -> None:
        self._features.add("break-continue")
        condition, tensor = self._any_condition(scope)
        self._if_header(scope, condition, tensor)
        self._emit(scope, self._pick(("break", "continue")), 1)

    def _if(self, scope: _Scope) -> None:
        condition, tensor = self._any_condition(scope)
        self._if_header(scope, condition, tensor)
        self._body(scope.block(), BLOCK_STATEMENTS)
        if self._chance(40):
            self._emit(scope, "else:")
            self._body(scope.block(), BLOCK_STATEMENTS)

    def _for(self, scope: _Scope) -> None:
        self._features.add("for")
        forms = ["range", "tuple"]
        lists = sorted(scope.lists)
        if lists:
            forms += ["list", "enumerate"]
        if scope.dicts:
            forms.append("items")
        form = self._pick(forms)
        body = scope.block(loop=True)
        if form == "range":
            index = self._fresh("i")
            bounds = self._pick(("n", "2", "1, n", "n - 1"))
            self._emit(scope, f"for {index} in range({bounds}):")
            body.ints = scope.ints + (index,)
            body.printables = scope.printables + (index,)
        elif form == "tuple":
            var = self._fresh("x")
            sources = ", ".join(sorted({self._pick(scope.tensors) for _ in range(2)}))
            self._emit(scope, f"for {var} in ({sources},):")
            body.tensors = scope.tensors + (var,)
        elif form in ("list", "enumerate"):
            source = self._pick(lists)
            var = self._fresh("x")
            body.tensors = scope.tensors + (var,)
            body.frozen = scope.frozen | {source}
            if form == "list":
                self._emit(scope, f"for {var} in {source}:")
            else:
                index = self._fresh("i")
                self._emit(scope, f"for {index}, {var} in enumerate({source}):")
                body.printables = scope.printables + (index,)
        else:
            source = self._pick(sorted(scope.dicts))
            key, var = self._fresh("k"), self._fresh("x")
            self._emit(scope, f"for {key}, {var} in {source}.items():")
            body.tensors = scope.tensors + (var,)
            body.printables = scope.printables + (key,)
            body.frozen = scope.frozen | {source}
        self._body(body, BLOCK_STATEMENTS)

    def _while(self, scope: _Scope) -> None:
        self._features.add("while")
        counter = self._fresh("i")
        self._emit(scope, f"{counter} = 0")
        if self._chance(40):
            self._features.add("while-tensor-cond")
            self._emit(scope, f"while {counter} < 3 and {self._tensor_condition(scope)}:")
        else:
            # `not` makes 3.11 test at the loop's bottom with POP_JUMP_BACKWARD_IF_FALSE
            self._emit(scope, f"while {self._pick((f'{counter} < n', f'not {counter} >= n'))}:")
        # the counter moves first, so a `continue` below cannot loop forever
        self._emit(scope, f"{counter} += 1", 1)
        body = scope.block(loop=True)
        body.ints = scope.ints + (counter,)
        body.printables = scope.printables + (counter,)
        self._body(body, BLOCK_STATEMENTS)

    def _try(self, scope: _Scope) -> None:
        form = self._pick(("except", "finally", "except-finally", "except-else"))
        self._emit(scope, "try:")
        if form == "finally":
            self._features.add("try-finally")
            self._body(scope.block(), BLOCK_STATEMENTS)
        else:
            self._features.add("try-except")
            handler, caught = self._pick(_EXCEPTIONS)
            body = scope.block(catches=tuple(sorted(set(scope.catches) | set(caught))))
            count = self._count(BLOCK_STATEMENTS)
            raise_at = self._index(count + 1) if self._chance(75) else -1
            for position in range(count + 1):
                if position == raise_at:
                    self._raise(body)
                if position < count:
                    self._statement(body)
            if handler == "Exception":
                name = self._fresh("e")
                self._emit(scope, f"except Exception as {name}:")
                self._emit(scope, f'print("{name}", type({name}).__name__)', 1)
                self._features.add("print")
            else:
                self._emit(scope, f"except {handler}:")
            self._body(scope.block(), (1, 2))
            if form == "except-else":
                self._emit(scope, "else:")
                self._body(scope.block(), (1, 2))
            if form == "except-finally":
                self._features.add("try-finally")
        if form in ("finally", "except-finally"):
            self._emit(scope, "finally:")
            # no break/continue in finally: they would swallow exceptions
            self._body(scope.block(loop=False), (1, 2))

    def _no_grad(self, scope: _Scope) -> None:
        self._features.add("no-grad")
        self._emit(scope, "with torch.no_grad():")
        self._body(scope.block(), BLOCK_STATEMENTS)

    def _function_scope(self, scope: _Scope, params: tuple[str, ...]) -> _Scope:
        """Scope inside a nested def: may read outer names, rebinds only its own."""
        function = scope.block(
            catches=(),
            loop=False,
            enclosing=scope.enclosing + scope.writable,
            tensors=scope.tensors + params,
            writable=params,
        )
        if function.enclosing and self._chance(35):
            target = self._pick(function.enclosing)
            self._features.add("nonlocal")
            self._emit(function, f"nonlocal {target}")
            function.writable = function.writable + (target,)
        local = self._fresh("u")
        self._emit(function, f"{local} = {self._squashed(function)}")
        function.tensors = function.tensors + (local,)
        function.writable = function.writable + (local,)
        return function

    def _closure(self, scope: _Scope) -> None:
        self._features.add("closure")
        name = self._fresh("g")
        if self._chance(25):
            param = self._fresh("x")
            inner = scope.block(tensors=scope.tensors + (param,), indent=scope.indent)
            self._emit(scope, f"{name} = lambda {param}: {self._squashed(inner, 2)}")
        else:
            params = (self._fresh("x"),) if self._chance(75) else ()
            self._emit(scope, f"def {name}({', '.join(params)}):")
            function = self._function_scope(scope, params)
            self._body(function, BLOCK_STATEMENTS)
            self._emit(function, f"return {self._squashed(function)}")
            if not params:
                call = _Expr(f"{name}()", SQUASHED_MAGNITUDE)
                if self._chance(40):
                    self._emit(scope, call.text)
                else:
                    self._emit(scope, f"{self._pick(scope.writable)} = {self._squash(call)}")
                return
        one = f"{name}({self._squashed(scope, 1)})"
        if self._chance(30):
            two = f"{name}({self._atom(scope)})"
            call = _Expr(f"({one} + {two})", 2 * SQUASHED_MAGNITUDE)
        else:
            call = _Expr(one, SQUASHED_MAGNITUDE)
        self._emit(scope, f"{self._pick(scope.writable)} = {self._squash(call)}")

    def _generator(self, scope: _Scope) -> None:
        self._features.add("generator")
        name, param = self._fresh("gen"), self._fresh("x")
        self._emit(scope, f"def {name}({param}):")
        function = self._function_scope(scope, (param,))
        yields = self._count((2, 3))
        if self._chance(50):
            index = self._fresh("i")
            self._features.add("for")
            self._emit(function, f"for {index} in range({yields}):")
            body = function.block()
            body.ints = function.ints + (index,)
            body.printables = function.printables + (index,)
            self._body(body, (0, 2))
            self._emit(body, f"yield {self._squashed(body)}")
        else:
            for _ in range(yields):
                self._body(function, (0, 1))
                self._emit(function, f"yield {self._squashed(function)}")
        call = f"{name}({self._squashed(scope, 1)})"
        consumer = self._pick(("sum", "next", "list"))
        if consumer == "list":
            items = self._fresh("xs")
            self._emit(scope, f"{items} = list({call})")
            scope.lists[items] = yields
            target = self._pick(scope.writable)
            pair = _Expr(f"({items}[0] + {items}[-1])", 2 * SQUASHED_MAGNITUDE)
            self._store(scope, target, pair)
        elif consumer == "sum":
            total = _Expr(f"sum({call})", yields * SQUASHED_MAGNITUDE)
            self._emit(scope, f"{self._pick(scope.writable)} = {self._squash(total)}")
        else:
            self._emit(scope, f"{self._pick(scope.writable)} = next({call})")

    # -- the program ---------------------------------------------------------

    def write(self) -> tuple[str, tuple[str, ...]]:
        """Draw a whole program: its source text and its sorted feature names."""
        self._shape = shape = self._pick(SHAPES)
        other_shapes = [shape, (1,) + shape[1:], shape[1:], shape[:-1] + (1,)]
        other = self._pick([s for s in other_shapes if s] if self._chance(40) else [shape])
        if other != shape:
            self._features.add("broadcast")
        dtypes = ["", ""]
        if self._chance(20):
            dtypes[self._index(2)] = ", dtype=torch.float64"
            self._features.add("float64")
        n = self._pick(N_VALUES)
        rng_seed = self._draw(st.integers(0, 2**31 - 1))
        strided = self._chance(NON_CONTIGUOUS_PERCENT)
        if strided:
            self._features.add("non-contiguous")
        extras: list[str] = []
        if self._chance(EXTRA_ARGS_PERCENT):
            kinds = sorted(_EXTRA_ARGS)
            for _ in range(1 + self._index(MAX_EXTRA_ARGS)):
                kind = self._pick(kinds)
                if kind not in extras:
                    extras.append(kind)
        scalar = self._pick(("0.5", "-1.5", "2"))

        params = ["t0", "t1", "n"] + [f"a{i}" for i in range(len(extras))]
        self._lines = ["", "", f"def f({', '.join(params)}):"]
        scope = _Scope(
            tensors=("t0", "t1"), writable=(), ints=("n",), printables=("n",), lists={}, dicts={}
        )
        for _ in range(self._count((1, 3))):
            name = f"t{len(scope.tensors)}"
            self._emit(scope, f"{name} = {self._squashed(scope)}")
            scope.tensors += (name,)
            scope.writable += (name,)
        grads: list[str] = []
        for i, kind in enumerate(extras):
            self._features.add(kind)
            if kind == "zero-size":
                self._features.add("reduction")
            if kind == "object-arg":
                self._features.add("mutation-attr")
            for line in _EXTRA_ARGS[kind][1]:
                name = f"t{len(scope.tensors)}"
                self._emit(scope, line.format(a=f"a{i}", t=name))
                if line.startswith("{t} ="):
                    scope.tensors += (name,)
                    scope.writable += (name,)
        self._body(scope, TOP_STATEMENTS)
        for i, kind in enumerate(extras):
            if kind == "requires-grad":
                # backward through the traced forward; the gradient is returned
                self._features.add("reduction")
                loss = self._fresh("loss")
                self._emit(scope, f"{loss} = (torch.tanh(a{i} * t0) * {self._squashed(scope, 1)}).sum()")
                if self._chance(50):
                    self._emit(scope, f"{loss}.backward()")
                    grads.append(f"a{i}.grad")
                else:
                    self._emit(scope, f"(grad{i},) = torch.autograd.grad({loss}, [a{i}])")
                    grads.append(f"grad{i}")
        # every local tensor is returned, so a divergence anywhere shows
        self._emit(scope, f"return {', '.join((self._squashed(scope), *scope.writable, *grads))}")

        def arguments(dims0: tuple[int, ...], dims1: tuple[int, ...]) -> str:
            def randn(dims: tuple[int, ...], dtype: str) -> str:
                return f"torch.randn({', '.join(map(str, dims))}, generator=g{dtype})"

            second = randn(dims1, dtypes[1])
            if strided:
                second = randn(dims1 + (2,), dtypes[1]) + "[..., 0]"
            values = [randn(dims0, dtypes[0]), second, str(n)]
            for kind in extras:
                values.append(_EXTRA_ARGS[kind][0].format(
                    dims=", ".join(map(str, dims0)), last=dims0[-1], scalar=scalar))
            return f"({', '.join(values)})"

        inputs = [
            "",
            "",
            "def inputs():",
            f"    g = torch.Generator().manual_seed({rng_seed})",
            f"    return {arguments(shape, other)}",
            "",
        ]

        head = ["import torch"]
        blocks: list[tuple[str, ...]] = [PRELUDE[name] for name in self._prelude]
        if self._prelude_lines:
            blocks.append(tuple(self._prelude_lines))
        blocks += [_EXTRA_PRELUDE[kind] for kind in extras if kind in _EXTRA_PRELUDE]
        imports = [b for b in blocks if all(line.startswith("import ") for line in b)]
        for block in imports:
            head += list(block)
        for block in blocks:
            if block not in imports:
                head += ["", ""] + list(block) if block[0].startswith(("class", "@", "def")) else [""] + list(block)
        source = "\n".join(head + self._lines + inputs)
        return source, tuple(sorted(self._features))


@st.composite
def _programs(draw: st.DrawFn, weights: dict[str, float] | None = None) -> Program:
    source, features = _Writer(draw, weights).write()
    return Program(source=source, generator=GENERATOR, features=features)


def programs(weights: dict[str, float] | None = None) -> st.SearchStrategy[Program]:
    """A Hypothesis strategy for generated ``Program``s (``generator="tcfuzz.v2"``).

    Each program defines ``f(t0, t1, n, *extras)``, where ``t0`` and ``t1`` are
    float32 or float64 tensors (``t0`` of shape (3, 4), (2, 5), (4,),
    (2, 3, 4), (1,), (17,), (3, 17) or (2, 1, 5); ``t1`` of t0's shape or one
    that broadcasts against it, possibly a non-contiguous view), ``n`` is an
    int in [1, 4], and up to two extra arguments of the kinds in
    ``_EXTRA_ARGS`` (int64, bool, bfloat16, 0-size and 1-element tensors, a
    leaf that requires grad, a Python scalar, tuple, list, dict or object);
    and ``inputs()``, which builds them from a seeded ``torch.Generator``
    (a pure function: the harness grows the shapes for its recompile call).
    ``features`` is the sorted tuple of construct names (from ``FEATURES``)
    the program uses. ``weights`` multiplies the statement table's weights by
    kind (keys from ``STATEMENT_KINDS``). Shrinks towards fewer and simpler
    statements.
    """
    return _programs(weights)


class _SeededProvider(HypothesisProvider):
    """Hypothesis' provider without its constant pools, so a seed fixes every draw.

    HypothesisProvider returns, for about 5% of integer draws, a literal found
    in the local modules currently imported (``_get_local_constants``); which
    modules are imported differs between processes, so the same seed would
    write different programs in a test run and in a campaign.
    """

    def _maybe_draw_constant(self, *args: object, **kwargs: object) -> None:
        return None


def program_from_data(data: ConjectureData, weights: dict[str, float] | None = None) -> Program:
    """Draw one program from ``data`` (a fresh one, or one replaying a choice
    sequence, as a reducer does: ``ConjectureData.for_choices(choices)``)."""
    return data.draw(programs(weights))


def generate(seed: int, weights: dict[str, float] | None = None) -> Program:
    """The program for ``seed``: the same source on every run, process and machine.

    Draws ``programs(weights)`` from a ``ConjectureData`` fed by
    ``random.Random(seed)`` and records ``seed`` in the result. The program is
    a function of (seed, weights): a campaign that steers with feedback
    records the weights it used (see ``fuzz.feedback``). Raises ``TypeError``
    if ``seed`` is not an int.
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"Expected seed to be an int but got seed={seed!r}")
    data = ConjectureData(random=random.Random(seed), provider=_SeededProvider)
    program = program_from_data(data, weights)
    return dataclasses.replace(program, seed=seed)
