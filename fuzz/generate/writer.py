"""The program writer's core: its draws, its output lines and its expressions.

``Writer`` takes every decision from a Hypothesis ``draw`` of small integers
(``index``, ``pick``, ``chance``, ``count``, ``weighted``), collects the lines
of ``f`` (``emit``, ``emit_block``), the module-level helpers they need
(``need``) and the feature names they use (``features``), and writes tensor
expressions whose magnitude it bounds (``squashed``, ``expr``, ``atom``) and
conditions that stay the same between eager and compiled runs.

Statements are written by the registered constructs (``fuzz.generate.registry``),
whole programs by ``fuzz.generate.program``. The numeric rules of the
generator live here: every expression carries an upper bound on its
magnitude and assignments squash values back into [-3, 3], so the oracle's
relative tolerance of 1e-4 holds for reordered float32 arithmetic.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import TypeVar

from hypothesis import strategies as st

from fuzz.generate.prelude import PRELUDE_NEEDS, dedented
from fuzz.generate.scope import Expr, Scope

__all__ = ["Writer"]

# Range of the int argument n (loop trip counts, branch conditions); at most 4,
# so two nested loops over range(n) run 16 iterations at most.
N_VALUES: tuple[int, ...] = (3, 2, 4, 1)
# Largest int variable (n, loop counters) used as a scale factor.
MAX_SMALL_INT = max(N_VALUES)

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

_T = TypeVar("_T")


@functools.cache
def _below(n: int) -> st.SearchStrategy[int]:
    """Integers in [0, n): the one kind of draw the writer makes (shrinks to 0)."""
    return st.integers(0, n - 1)


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


class Writer:
    """Writes the lines of one program, taking every decision from a Hypothesis ``draw``.

    ``weights`` multiplies the statement table's weights by kind (a feedback
    scheduler's steer; missing kinds keep 1.0), so a program is a function of
    (choice sequence, weights). The state a construct reads and extends:
    ``lines`` (the body of ``f``, 4-space indented), ``prelude`` (names of
    ``fuzz.generate.prelude.PRELUDE`` helpers, in the order first needed),
    ``prelude_lines`` (module-level globals), ``features`` (names from
    ``FEATURES``), ``counter`` (the last fresh-name suffix), ``budget``
    (statements left, of ``MAX_STATEMENTS``) and ``shape`` (t0's shape).
    """

    def __init__(
        self,
        draw: Callable[[st.SearchStrategy[int]], int],
        weights: dict[str, float] | None = None,
    ) -> None:
        self.draw = draw
        self.weights = weights or {}
        self.lines: list[str] = []
        self.prelude: list[str] = []
        self.prelude_lines: list[str] = []
        self.features: set[str] = set()
        self.counter = 0
        self.budget = MAX_STATEMENTS
        self.shape: tuple[int, ...] = (3, 4)

    # -- choices -------------------------------------------------------------

    def index(self, n: int) -> int:
        """An int in [0, n) (no draw when n <= 1); shrinks to 0."""
        return self.draw(_below(n)) if n > 1 else 0

    def pick(self, options: Sequence[_T]) -> _T:
        """One of ``options``; shrinks to the first."""
        return options[self.index(len(options))]

    def chance(self, percent: int) -> bool:
        """True with ``percent``% probability; shrinks to False."""
        return self.index(100) >= 100 - percent

    def count(self, bounds: tuple[int, int]) -> int:
        """An int in [low, high] (both included); shrinks to low."""
        low, high = bounds
        return low + self.index(high - low + 1)

    def weighted(self, table: Sequence[tuple[_T, int]]) -> _T:
        """A value of ``(value, weight)`` pairs, in proportion to its weight; shrinks to the first."""
        point = self.index(sum(weight for _, weight in table))
        for value, weight in table:
            if point < weight:
                return value
            point -= weight
        raise AssertionError("unreachable: point is below the total weight")

    def fresh(self, prefix: str) -> str:
        """A name never used before in this program: ``prefix`` and a number."""
        self.counter += 1
        return f"{prefix}{self.counter}"

    # -- output --------------------------------------------------------------

    def emit(self, scope: Scope, text: str, extra_indent: int = 0) -> None:
        """One line of ``f``, at ``scope``'s indentation plus ``extra_indent`` levels."""
        self.lines.append("    " * (scope.indent + extra_indent) + text)

    def emit_block(self, scope: Scope, template: str, extra_indent: int = 0) -> None:
        """The lines of a triple-quoted ``template`` (dedented, see
        ``fuzz.generate.prelude.dedented``), each indented as ``emit`` would."""
        for line in dedented(template):
            self.emit(scope, line, extra_indent)

    def need(self, name: str) -> None:
        """Add a module-level helper (and what it needs) to the prelude, once."""
        for dependency in PRELUDE_NEEDS.get(name, ()):
            self.need(dependency)
        if name not in self.prelude:
            self.prelude.append(name)

    def maybe_break(self, scope: Scope, extra_indent: int = 0, percent: int = 30) -> None:
        """A graph break here with ``percent``% probability."""
        if self.chance(percent):
            self.features.add("graph-break")
            self.emit(scope, "torch._dynamo.graph_break()", extra_indent)

    # -- assignments ---------------------------------------------------------

    def target(self, scope: Scope) -> str:
        """A tensor variable ``scope`` may rebind."""
        return self.pick(scope.writable)

    def store(self, scope: Scope, target: str, expr: Expr) -> None:
        """``target = <expr, squashed>``."""
        self.emit(scope, f"{target} = {self.squash(expr)}")

    def put(self, scope: Scope, text: str, bound: float, extra_indent: int = 0) -> None:
        """``<writable> = <text, squashed>``; ``bound`` is an upper bound of |text|."""
        self.emit(scope, f"{self.target(scope)} = {self.squash(Expr(f'({text})', bound))}", extra_indent)

    # -- expressions ---------------------------------------------------------

    def tensors(self, scope: Scope, count: int) -> str:
        """``count`` readable tensor names (repeats allowed), comma-separated."""
        return ", ".join(self.pick(scope.tensors) for _ in range(count))

    def atom(self, scope: Scope) -> str:
        """A tensor name, list or dict item, or row of t0 (|value| <= VAR_MAGNITUDE)."""
        kinds = ["name"]
        lists = [name for name, length in scope.lists.items() if length > 0]
        if lists:
            kinds.append("list")
        if scope.dicts:
            kinds.append("dict")
        if len(self.shape) >= 2:
            kinds.append("row")
        kind = kinds[self.index(len(kinds))] if self.chance(30) else "name"
        if kind == "list":
            name = self.pick(lists)
            return f"{name}[{self.pick((0, -1, *range(1, scope.lists[name])))}]"
        if kind == "dict":
            name = self.pick(sorted(scope.dicts))
            keys = scope.dicts[name]
            if keys and self.chance(75):
                return f'{name}["{self.pick(keys)}"]'
            return f'{name}.get("z", {self.pick(scope.tensors)})'
        if kind == "row":
            return f"t0[{self.pick((0, -1))}]"
        return self.pick(scope.tensors)

    def expr(self, scope: Scope, depth: int) -> Expr:
        """A tensor expression over ``scope``'s names, broadcastable to t0's shape.

        Every variable's shape broadcasts to t0's; elementwise ops keep that,
        and the reductions used either keep dims or drop only leading ones.
        """
        if depth <= 0:
            return Expr(self.atom(scope), VAR_MAGNITUDE)
        form = self.weighted(
            (("atom", 2), ("unary", 4), ("binary", 5), ("reduce", 2), ("scale", 2), ("where", 1))
        )
        if form == "atom":
            return Expr(self.atom(scope), VAR_MAGNITUDE)
        if form == "unary":
            template, magnitude = self.pick(_UNARY)
            inner = self.expr(scope, depth - 1)
            if template in _PERIODIC and inner.magnitude > MAX_PERIODIC_ARGUMENT:
                template, magnitude = _UNARY[0]
            return Expr(template.format(inner.text), magnitude(inner.magnitude))
        if form == "binary":
            template, magnitude = self.pick(_BINARY)
            a, b = self.expr(scope, depth - 1), self.expr(scope, depth - 1)
            bound = magnitude(a.magnitude, b.magnitude)
            if bound > MAX_MAGNITUDE:
                template, bound = "torch.maximum({0}, {1})", max(a.magnitude, b.magnitude)
            return Expr(template.format(a.text, b.text), bound)
        if form == "reduce":
            return self.reduction(scope, depth)
        if form == "scale":
            inner = self.expr(scope, depth - 1)
            options = [
                ("({0} * 2.0)", 2.0 * inner.magnitude),
                ("({0} + 1.0)", inner.magnitude + 1.0),
            ]
            options += [
                (f"({{0}} * ({name} + 1) * 0.25)", inner.magnitude * (MAX_SMALL_INT + 1) * 0.25)
                for name in scope.ints
            ]
            template, bound = self.pick(options)
            if bound > MAX_MAGNITUDE:
                template, bound = "({0} * 0.5)", inner.magnitude / 2
            return Expr(template.format(inner.text), bound)
        # where: the condition reads a variable directly, so a computed value
        # sitting on 0 cannot flip it between eager and compiled.
        a, b = self.expr(scope, depth - 1), self.expr(scope, depth - 1)
        condition = self.atom(scope)
        return Expr(
            f"torch.where({condition} > 0, {a.text}, {b.text})", max(a.magnitude, b.magnitude)
        )

    def reduction(self, scope: Scope, depth: int) -> Expr:
        """A reduction (sum, mean, amax, logsumexp, norm) of an expression of ``depth - 1``."""
        inner = self.expr(scope, depth - 1)
        m = inner.magnitude
        numel = math.prod(self.shape)
        options = (
            ("{0}.sum()", m * numel),
            ("{0}.mean()", m),
            ("{0}.amax(dim=-1, keepdim=True)", m),
            ("{0}.sum(dim=0)", m * self.shape[0]),
            ("{0}.mean(dim=-1, keepdim=True)", m),
            ("torch.logsumexp({0}, dim=-1, keepdim=True)", m + math.log(numel)),
            ("{0}.norm()", m * math.sqrt(numel)),
        )
        template, bound = self.pick(options)
        if bound > MAX_MAGNITUDE:
            template, bound = "{0}.mean()", m
        self.features.add("reduction")
        return Expr(template.format(inner.text), bound)

    def squashed(self, scope: Scope, depth: int | None = None) -> str:
        """An expression whose |value| is at most SQUASHED_MAGNITUDE."""
        expr = self.expr(scope, self.index(MAX_EXPR_DEPTH + 1) if depth is None else depth)
        return self.squash(expr)

    def squash(self, expr: Expr) -> str:
        """``expr`` wrapped so that its |value| is at most SQUASHED_MAGNITUDE."""
        if expr.magnitude <= SQUASHED_MAGNITUDE and self.chance(40):
            return expr.text
        template, periodic = self.pick(_SQUASH)
        if periodic and expr.magnitude > MAX_PERIODIC_ARGUMENT:
            template = _SQUASH[0][0]
        return template.format(expr.text)

    # -- conditions ----------------------------------------------------------

    def tensor_condition(self, scope: Scope) -> str:
        """``(x > c).any()``-style: counts of comparisons, robust to rounding."""
        operand = self.atom(scope)
        if self.chance(30):
            operand = f"torch.tanh({operand})"
        threshold = self.pick(("0", "0.5", "-0.5"))
        form = self.pick(("any", "all", "count"))
        if form == "count":
            return f"({operand} > {threshold}).sum() > {self.pick((1, 2, 5))}"
        if form == "all":
            return f"({operand} > -1.0).all()"
        return f"({operand} > {threshold}).any()"

    def python_condition(self, scope: Scope) -> str:
        """A condition on ints, shapes, lengths and dict keys only."""
        options = [f"n > {self.pick((1, 2, 3))}", "n % 2 == 0"]
        options += [f"{name} == 1" for name in scope.ints if name != "n"]
        options += [f"{name} % 2 == 0" for name in scope.ints if name != "n"]
        options.append(f"{self.pick(scope.tensors)}.ndim == {len(self.shape)}")
        options.append(f"t0.shape[-1] > {self.pick((3, 4))}")
        options += [f"len({name}) > 2" for name in sorted(scope.lists)]
        options += [f'"a" in {name}' for name in sorted(scope.dicts)]
        return self.pick(options)

    def any_condition(self, scope: Scope) -> tuple[str, bool]:
        """A tensor or a Python condition, and whether it reads tensor data."""
        tensor = self.chance(45)
        return (self.tensor_condition(scope) if tensor else self.python_condition(scope)), tensor

    def if_header(self, scope: Scope, condition: str, tensor: bool) -> None:
        """``if <condition>:`` (its body is the caller's), recording if / if-tensor-cond."""
        self.features.add("if")
        if tensor:
            self.features.add("if-tensor-cond")
        self.emit(scope, f"if {condition}:")
