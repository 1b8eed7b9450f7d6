"""Operator rules of the tensor generator: elementwise, reductions and scans.

An operator rule is one function registered with ``@op_rule(name, family)``:
given a ``Chooser`` (the draws) and the pool of typed values in reach, it
picks operands it accepts and returns a ``Call``: the expression, the
``TensorType`` of its result, a bound on its magnitude and whether it is
exact. It returns None when no value in the pool fits, so every call a rule
writes is valid eagerly: the rule checks the dtypes the operator accepts,
broadcasting, type promotion (``fuzz.generate.tensor_types.promote``) and
which dims are legal. tests/harness/test_tensor_ops.py runs every rule on
random pools under torch and checks the result's shape and dtype.

Operator names, accepted dtypes and result-dtype flags of the elementwise
families come from torch's OpInfo database (cached in
``fuzz/generate/data/opinfo.json`` by scripts/opinfo_cache.py); what OpInfo
does not say (domains torch checks only numerically, which ops are
discontinuous, magnitudes) is written here, next to the exclusions and their
reasons. The layout, indexing and joining families are in
``tensor_ops_layout``, the neural-network ones (matmul, normalisation,
activations, convolution) in ``tensor_ops_nn``.

Numerics, for the oracle: float operands are kept within a magnitude bound
(``tame``), outputs of operators with an unknown range are clamped to
``UNKNOWN_RANGE``, denominators are kept away from 0, and discontinuous
operators (floor, sign, comparisons, remainder, ...) take only exact
operands, whose values cannot differ by rounding between eager and compiled.

Needs only the standard library (no Hypothesis): the property test imports it
in a worker env.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import math
import pathlib
import random
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from fuzz.generate.tensor_types import (
    DTYPES_BY_NAME,
    DType,
    TensorType,
    Value,
    broadcast,
    promote,
)

__all__ = [
    "RULES", "Call", "Chooser", "Family", "OpRule", "RandomChooser", "op_rule", "opinfo",
]

_T = TypeVar("_T")

OPINFO_PATH = pathlib.Path(__file__).parent / "data" / "opinfo.json"
# Largest |value| an operand of an operator with unbounded growth may have
# (exp, sinh, products), in randn's units.
SMALL = 2.0
# Largest |value| any float operand may have before a rule clamps it.
LARGE = 32.0
# Clamp applied to the output of elementwise operators whose range the rule
# does not know (exp, sinh, i0, erfcx, ...): keeps values far inside float16.
UNKNOWN_RANGE = 16.0
# Largest |value| of an integer operand of a multiplying operator (keeps
# int32 products far from overflow).
INT_SMALL = 64


class Family(enum.Enum):
    """Operator families; the graph builder draws a family first, then a rule."""

    UNARY = "unary"
    BINARY = "binary"
    TERNARY = "ternary"
    REDUCTION = "reduction"
    SCAN = "scan"
    VIEW = "view"
    INDEXING = "indexing"
    JOIN = "join"
    SORT = "sort"
    INPLACE = "inplace"
    MATMUL = "matmul"
    NORM = "norm"
    ACTIVATION = "activation"
    CONV = "conv"
    LOSS = "loss"
    HIGHER_ORDER = "higher-order"

    def describe(self) -> str:
        return f"{self.value} operators"


class Chooser(Protocol):
    """The draws a rule makes (``fuzz.generate.writer.Writer`` is one)."""

    def index(self, n: int) -> int: ...

    def pick(self, options: Sequence[_T]) -> _T: ...

    def chance(self, percent: int) -> bool: ...


class RandomChooser:
    """A ``Chooser`` over ``random.Random(seed)``: for tests and scripts without Hypothesis."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def index(self, n: int) -> int:
        return self.rng.randrange(n) if n > 1 else 0

    def pick(self, options: Sequence[_T]) -> _T:
        return options[self.index(len(options))]

    def chance(self, percent: int) -> bool:
        return self.index(100) >= 100 - percent


@dataclasses.dataclass(frozen=True)
class Call:
    """An operator call a rule wrote.

    ``text``: the expression. ``type``/``bound``/``exact``: of its result (see
    ``Value``). ``after``: statements run right after the result is bound
    (``{out}`` is its name): in-place operators on views of it. ``needs``:
    module-level lines the expression uses, by their name in
    ``fuzz.generate.prelude.PRELUDE`` (an import).
    """

    text: str
    type: TensorType
    bound: float
    exact: bool = False
    after: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class OpRule:
    """One registered operator rule: ``write(chooser, pool)`` gives a ``Call`` or None."""

    name: str
    family: Family
    write: Callable[[Chooser, Sequence[Value]], Call | None]


# Every registered rule, in registration order (part of what a seed means).
RULES: list[OpRule] = []


def op_rule(name: str, family: Family) -> Callable[[Callable], Callable]:
    """Register the decorated ``write(chooser, pool) -> Call | None`` as rule ``name``.

    Raises ValueError for a name registered twice.
    """

    def register(write: Callable) -> Callable:
        if any(rule.name == name for rule in RULES):
            raise ValueError(f"Expected a new operator rule but got name={name!r} twice")
        RULES.append(OpRule(name, family, write))
        return write

    return register


@dataclasses.dataclass(frozen=True)
class OpInfoEntry:
    """One OpInfo entry of the cache (see scripts/opinfo_cache.py)."""

    name: str
    variant: str
    kind: str
    dtypes: frozenset[DType]
    domain: tuple[float | None, float | None] | None
    autograd: bool
    promotes_int_to_float: bool
    always_returns_bool: bool
    promotes_int_to_int64: bool


@functools.cache
def opinfo() -> dict[tuple[str, str], OpInfoEntry]:
    """The OpInfo cache by (name, variant). Raises FileNotFoundError naming the script that makes it."""
    if not OPINFO_PATH.exists():
        raise FileNotFoundError(f"{OPINFO_PATH} is missing: run scripts/opinfo_cache.py in a worker env")
    data = json.loads(OPINFO_PATH.read_text())
    entries = {}
    for raw in data["ops"]:
        entries[(raw["name"], raw["variant"])] = OpInfoEntry(
            raw["name"], raw["variant"], raw["kind"],
            frozenset(DTYPES_BY_NAME[d] for d in raw["dtypes"] if d in DTYPES_BY_NAME),
            tuple(raw["domain"]) if raw["domain"] is not None else None,
            raw["autograd"], raw["promotes_int_to_float"], raw["always_returns_bool"],
            raw["promotes_int_to_int64"],
        )
    return entries


def dtypes_of(name: str, variant: str = "") -> frozenset[DType]:
    """The dtypes OpInfo says ``name`` supports on CPU (all of ours if it has no entry)."""
    entry = opinfo().get((name, variant))
    return entry.dtypes if entry is not None else frozenset(DType)


# -- operand helpers ---------------------------------------------------------

def choose(c: Chooser, pool: Sequence[Value], accept: Callable[[Value], bool]) -> Value | None:
    """A value of ``pool`` that ``accept``s, or None."""
    fits = [v for v in pool if accept(v)]
    return c.pick(fits) if fits else None


def partner(c: Chooser, pool: Sequence[Value], a: Value, accept: Callable[[Value], bool]) -> Value | None:
    """A value that broadcasts with ``a`` and that ``accept``s (``a``'s shape more often)."""
    fits = [v for v in pool if accept(v) and broadcast(a.shape, v.shape) is not None]
    same = [v for v in fits if v.shape == a.shape]
    if same and c.chance(50):
        return c.pick(same)
    return c.pick(fits) if fits else None


def tame(v: Value, limit: float) -> tuple[str, float]:
    """``v``'s name, clamped to [-limit, limit] where its bound is larger; and the new bound."""
    if v.bound <= limit:
        return v.name, v.bound
    if v.dtype.is_float:
        return f"{v.name}.clamp({-limit}, {limit})", limit
    return f"{v.name}.clamp({-int(limit)}, {int(limit)})", float(int(limit))


def literal(x: float) -> str:
    return repr(float(x)) if not float(x).is_integer() else f"{x:.1f}"


def grad_of(*values: Value) -> bool:
    return any(v.type.requires_grad for v in values)


def elementwise_type(values: Sequence[Value], dtype: DType) -> TensorType:
    """The type of an elementwise result over ``values``: broadcast shape,
    contiguous only where every operand is, ``requires_grad`` from them."""
    shape = broadcast(*(v.shape for v in values))
    assert shape is not None, "operands were chosen to broadcast"
    return TensorType(shape, dtype, contiguous=all(v.type.contiguous for v in values),
                      requires_grad=grad_of(*values) and dtype.is_float)


def is_float(v: Value) -> bool:
    return v.dtype.is_float


def is_numeric(v: Value) -> bool:
    return v.dtype is not DType.BOOL


# -- elementwise unary, from OpInfo -------------------------------------------

# UnaryUfuncInfo entries left out, and why.
_UNARY_EXCLUDED: dict[str, str] = {
    **{name: "a dtype conversion, written by the cast rule" for name in (
        "bfloat16", "bool", "byte", "char", "double", "float", "half", "int", "long", "short",
        "cdouble", "cfloat", "chalf")},
    **{name: "complex-only or complex-valued" for name in ("angle", "conj", "conj_physical", "imag", "real",
                                                            "isreal")},
    "fill": "needs a value argument", "frexp": "returns a tuple", "jiterator_unary": "CUDA-only",
    "nn.functional.prelu": "needs a weight", "nn.functional.rrelu": "random in training mode",
    "nn.functional.threshold": "needs threshold and value arguments",
    "tan": "poles at +-pi/2 inside the operand range",
    "special.airy_ai": "CPU kernel is slow to compile; grows fast for negative arguments",
    "nan_to_num": "kept for the NaN rules of issue 19",
}
# Domains OpInfo does not declare but the rule needs (singularities at or below 0).
_DOMAIN_OVERRIDES: dict[str, tuple[float | None, float | None]] = {
    name: (0.0, None) for name in (
        "reciprocal", "lgamma", "digamma", "special.entr", "special.bessel_y0", "special.bessel_y1",
        "special.modified_bessel_k0", "special.modified_bessel_k1", "special.scaled_modified_bessel_k0",
        "special.scaled_modified_bessel_k1")
}
# Unary ops with a bounded output (|result| <= bound), so no clamp is needed.
_BOUNDED: dict[str, float] = {
    "sigmoid": 1.0, "tanh": 1.0, "sin": 1.0, "cos": 1.0, "erf": 1.0, "erfc": 2.0, "atan": 1.6,
    "nn.functional.softsign": 1.0, "nn.functional.hardsigmoid": 1.0, "nn.functional.hardtanh": 1.0,
    "nn.functional.relu6": 6.0, "special.ndtr": 1.0, "special.i0e": 1.0, "special.i1e": 1.0,
    "special.bessel_j0": 1.0, "special.bessel_j1": 1.0, "special.spherical_bessel_j0": 1.0,
    "sinc": 1.0, "signbit": 1.0, "sign": 1.0, "sgn": 1.0, "isfinite": 1.0, "isinf": 1.0, "isnan": 1.0,
    "isneginf": 1.0, "isposinf": 1.0, "logical_not": 1.0, "nn.functional.hardshrink": LARGE,
}
# Ops whose result keeps the operand's bound (or adds to it).
_SAME_BOUND: frozenset[str] = frozenset({
    "abs", "neg", "positive", "nn.functional.relu", "ceil", "floor", "round", "trunc", "frac",
    "nn.functional.softshrink", "nn.functional.tanhshrink", "nn.functional.silu", "nn.functional.mish",
    "nn.functional.elu", "nn.functional.celu", "nn.functional.selu", "nn.functional.softplus",
    "nn.functional.logsigmoid", "asinh", "bitwise_not", "deg2rad",
})
# Discontinuous (or boolean-valued) ops: only exact operands, whose values
# cannot move across a jump between eager and compiled code.
_DISCONTINUOUS: frozenset[str] = frozenset({
    "ceil", "floor", "round", "trunc", "frac", "sign", "sgn", "signbit", "isfinite", "isinf", "isnan",
    "isneginf", "isposinf", "logical_not", "bitwise_not", "nn.functional.hardshrink",
    "nn.functional.softshrink",
})
# Ops whose result on an exact operand is exact too.
_EXACT_PRESERVING: frozenset[str] = _DISCONTINUOUS | {"abs", "neg", "positive", "nn.functional.relu"}


# Ops that compute in floating point for int and bool operands too, though
# their OpInfo does not set promotes_int_to_float (found by the property test).
_INT_TO_FLOAT: frozenset[str] = frozenset({
    "nn.functional.softsign", "nn.functional.tanhshrink", "nn.functional.mish", "nn.functional.silu",
    "nn.functional.elu", "nn.functional.selu", "nn.functional.celu", "nn.functional.logsigmoid",
    "nn.functional.softplus", "nn.functional.hardsigmoid",
})


def _unary_result(entry: OpInfoEntry, dtype: DType) -> DType | None:
    if dtype not in entry.dtypes:
        return None
    if entry.name in ("isfinite", "isinf", "isnan", "isneginf", "isposinf", "signbit", "logical_not"):
        return DType.BOOL
    if dtype.is_float:
        return dtype
    if entry.promotes_int_to_float or entry.name.startswith("special.") or entry.name in _INT_TO_FLOAT:
        return DType.FLOAT32
    if entry.name == "square" and dtype is DType.BOOL:
        return DType.INT64
    return dtype


def _unary_ufunc(entry: OpInfoEntry, c: Chooser, pool: Sequence[Value]) -> Call | None:
    mapped = _DOMAIN_OVERRIDES.get(entry.name, entry.domain or (None, None)) != (None, None)

    def accept(v: Value) -> bool:
        if _unary_result(entry, v.dtype) is None or (mapped and v.dtype is DType.BOOL):
            return False
        if v.type.requires_grad and not entry.autograd:
            return False
        return v.exact or entry.name not in _DISCONTINUOUS

    x = choose(c, pool, accept)
    if x is None:
        return None
    out = _unary_result(entry, x.dtype)
    assert out is not None
    domain = _DOMAIN_OVERRIDES.get(entry.name, entry.domain or (None, None))
    low, high = domain
    if low is not None and high is not None:
        arg = f"({literal(low)} + {literal(high - low)} * (0.05 + 0.9 * torch.sigmoid({x.name})))"
        bound_in = max(abs(low), abs(high))
    elif low is not None:
        # int operands become float here, so the op sees the same dtype it promotes to
        arg = f"({x.name}.abs() + {literal(low + 0.25)})"
        bound_in = x.bound + abs(low) + 0.25
    elif high is not None:
        arg = f"({literal(high - 0.25)} - {x.name}.abs())"
        bound_in = x.bound + abs(high) + 0.25
    else:
        arg, bound_in = tame(x, 3.0 if entry.name not in _SAME_BOUND else LARGE)
    text = f"torch.{entry.name}({arg})"
    if entry.name in _BOUNDED:
        bound = _BOUNDED[entry.name]
    elif entry.name in _SAME_BOUND:
        bound = 1.1 * bound_in + 2.0
    elif out.is_float:
        text, bound = f"{text}.clamp({-UNKNOWN_RANGE}, {UNKNOWN_RANGE})", UNKNOWN_RANGE
    else:
        text, bound = f"{text}.clamp({-INT_SMALL}, {INT_SMALL})", float(INT_SMALL)
    exact = x.exact and entry.name in _EXACT_PRESERVING and arg == x.name
    result_type = elementwise_type([x], out)
    if not entry.autograd:
        result_type = result_type.with_(requires_grad=False)
    return Call(text, result_type, bound, exact)


def _register_unary() -> None:
    for (name, variant), entry in sorted(opinfo().items()):
        if entry.kind != "UnaryUfuncInfo" or variant or name in _UNARY_EXCLUDED:
            continue
        if not entry.dtypes:
            continue
        RULES.append(OpRule(name, Family.UNARY, functools.partial(_unary_ufunc, entry)))


_register_unary()


@op_rule("cast", Family.UNARY)
def cast(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``x.to(dtype)`` to another of our dtypes (float -> int only from exact values, truncating)."""
    x = choose(c, pool, lambda v: True)
    if x is None:
        return None
    targets = [d for d in DType if d is not x.dtype and (x.exact or not (x.dtype.is_float and not d.is_float))]
    if not targets:
        return None
    dtype = c.pick(targets)
    bound = 1.0 if dtype is DType.BOOL else x.bound
    text = f"{x.name}.to({dtype.torch})"
    if dtype in (DType.FLOAT16, DType.BFLOAT16) and x.bound > 1000:
        text = f"{x.name}.clamp(-1000, 1000).to({dtype.torch})"
    exact = x.exact and (dtype.is_float or not x.dtype.is_float) and not (
        dtype.is_low_precision and not x.dtype.is_low_precision)
    return Call(text, elementwise_type([x], dtype), bound, exact)


# -- elementwise binary, from OpInfo ------------------------------------------

# BinaryUfuncInfo entries the rule writes: name -> (form, needs exact operands).
# form: "plain"; "denominator" (second operand kept away from 0); "positive"
# (first operand made positive); "shift" (second operand in [0, 3]).
_BINARY_FORMS: dict[str, tuple[str, bool]] = {
    "add": ("plain", False), "sub": ("plain", False), "mul": ("plain", False), "atan2": ("plain", False),
    "clamp_max": ("plain", False), "clamp_min": ("plain", False), "copysign": ("plain", True),
    "fmax": ("plain", False), "fmin": ("plain", False), "maximum": ("plain", False),
    "minimum": ("plain", False), "hypot": ("plain", False), "logaddexp": ("plain", False),
    "eq": ("plain", True), "ne": ("plain", True), "lt": ("plain", True), "le": ("plain", True),
    "gt": ("plain", True), "ge": ("plain", True), "logical_and": ("plain", True),
    "logical_or": ("plain", True), "logical_xor": ("plain", True), "heaviside": ("plain", True),
    "bitwise_and": ("plain", True), "bitwise_or": ("plain", True), "bitwise_xor": ("plain", True),
    "gcd": ("plain", True), "lcm": ("plain", True), "nextafter": ("plain", True),
    "true_divide": ("denominator", False), "floor_divide": ("denominator", True),
    "remainder": ("denominator", True), "fmod": ("denominator", True),
    "pow": ("positive", False), "xlogy": ("positive", False), "float_power": ("positive", False),
    "bitwise_left_shift": ("shift", True), "bitwise_right_shift": ("shift", True),
}
# Results bounded by the sum of the operand bounds (or a fixed value).
_BINARY_ADDS = frozenset({"add", "sub", "hypot", "logaddexp"})
_BINARY_MAX = frozenset({"clamp_max", "clamp_min", "copysign", "fmax", "fmin", "maximum", "minimum",
                         "remainder", "fmod", "gcd", "nextafter"})
_BINARY_EXACT = frozenset({"clamp_max", "clamp_min", "copysign", "fmax", "fmin", "maximum", "minimum",
                           "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
                           "heaviside", "bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "nextafter"})


def _binary_result(entry: OpInfoEntry, a: TensorType, b: TensorType) -> DType | None:
    common = promote([a, b])
    if common not in entry.dtypes or a.dtype not in entry.dtypes or b.dtype not in entry.dtypes:
        return None
    if entry.always_returns_bool:
        return DType.BOOL
    if entry.name == "heaviside" and a.dtype != b.dtype:
        return None  # heaviside requires equal dtypes
    if entry.name in ("nextafter", "copysign") and not common.is_float:
        return None if entry.name == "nextafter" else DType.FLOAT32
    if entry.name == "float_power":
        return DType.FLOAT64
    if entry.promotes_int_to_float and not common.is_float:
        return DType.FLOAT32
    return common


def _binary_ufunc(entry: OpInfoEntry, form: str, exact_only: bool, c: Chooser,
                  pool: Sequence[Value]) -> Call | None:
    def usable(v: Value) -> bool:
        if exact_only and not v.exact:
            return False
        if v.type.requires_grad and not entry.autograd:
            return False
        return v.dtype in entry.dtypes

    a = choose(c, pool, usable)
    if a is None:
        return None
    b = partner(c, pool, a, lambda v: usable(v) and _binary_result(entry, a.type, v.type) is not None)
    if b is None:
        return None
    out = _binary_result(entry, a.type, b.type)
    assert out is not None
    common = promote([a.type, b.type])
    limit = LARGE if entry.name in _BINARY_ADDS | _BINARY_MAX else 6.0
    ta, ba = tame(a, limit)
    tb, bb = tame(b, limit)
    if form != "plain" and DType.BOOL in (a.dtype, b.dtype):
        return None  # abs() and shifts are not defined for bool
    if form == "denominator":
        # an int offset for an int operand keeps the promotion torch sees the same
        tb = f"({tb}.abs() + {'0.5' if b.dtype.is_float else '1'})"
    elif form == "positive":
        if not common.is_float and entry.name == "pow":
            tb, bb = f"{b.name}.abs().clamp(0, 3)", 3.0
            ta, ba = tame(a, 8.0)
        else:
            ta = f"({ta}.abs() + {'0.5' if a.dtype.is_float else '1'})"
            tb, bb = tame(b, 2.0)
            ba += 1
    elif form == "shift":
        tb, bb = f"{b.name}.abs().clamp(0, 3)", 3.0
        ta, ba = tame(a, 1024.0)
    text = f"torch.{entry.name}({ta}, {tb})"
    if entry.name in _BINARY_ADDS:
        bound = ba + bb + 1
    elif entry.name in _BINARY_MAX:
        bound = max(ba, bb) + 1
    elif out is DType.BOOL:
        bound = 1.0
    elif entry.name in ("mul", "lcm"):
        bound = ba * bb
    elif entry.name in ("true_divide", "floor_divide"):
        bound = ba * 2 + 1
    elif entry.name == "atan2":
        bound = 3.2
    elif form == "shift":
        bound = ba * 8 + 1
    elif form == "positive" and out.is_float:
        text, bound = f"{text}.clamp({-UNKNOWN_RANGE}, {UNKNOWN_RANGE})", UNKNOWN_RANGE
    elif form == "positive":
        text, bound = f"{text}.clamp({-INT_SMALL}, {INT_SMALL})", float(INT_SMALL)
    else:
        bound = ba + bb
    exact = a.exact and b.exact and (entry.name in _BINARY_EXACT or (not out.is_float and form != "positive"))
    result_type = elementwise_type([a, b], out)
    if not entry.autograd:
        result_type = result_type.with_(requires_grad=False)
    return Call(text, result_type, bound, exact)


def _register_binary() -> None:
    for name, (form, exact_only) in _BINARY_FORMS.items():
        entry = opinfo().get((name, ""))
        if entry is None or entry.kind != "BinaryUfuncInfo":
            continue
        RULES.append(OpRule(name, Family.BINARY, functools.partial(_binary_ufunc, entry, form, exact_only)))


_register_binary()


@op_rule("scalar-arith", Family.BINARY)
def scalar_arith(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``x * 0.5``, ``x + 2``, ``2 - x``, ``-x``: a tensor with a Python scalar (scalar promotion)."""
    x = choose(c, pool, is_numeric)
    if x is None:
        return None
    form = c.pick(("{x} * 0.5", "{x} + 1.5", "{x} * 2", "3 - {x}", "{x} + 1", "-{x}"))
    scalar = float if "." in form else int
    dtype = x.dtype if scalar is int or x.dtype.is_float else DType.FLOAT32
    name, bound = tame(x, LARGE)
    factor = 2.0 if "* 2" in form and "0.5" not in form else 1.0
    exact = x.exact and (not dtype.is_float or "0.5" in form or "* 2" in form or "-" in form)
    return Call(f"({form.format(x=name)})", elementwise_type([x], dtype), bound * factor + 3, exact)


# -- elementwise ternary -----------------------------------------------------

@op_rule("where", Family.TERNARY)
def where(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``torch.where(cond, a, b)``: cond an exact bool (or ``x > 0`` of an exact x), a and b broadcast."""
    cond = choose(c, pool, lambda v: v.exact)
    if cond is None:
        return None
    cond_text = cond.name if cond.dtype is DType.BOOL else f"({cond.name} > 0)"
    a = partner(c, pool, cond, is_numeric)
    if a is None:
        return None
    b = choose(c, pool, lambda v: is_numeric(v) and broadcast(cond.shape, a.shape, v.shape) is not None)
    if b is None:
        return None
    dtype = promote([a.type, b.type])
    shape = broadcast(cond.shape, a.shape, b.shape)
    assert shape is not None
    typ = TensorType(shape, dtype, contiguous=all(v.type.contiguous for v in (cond, a, b)),
                     requires_grad=grad_of(a, b) and dtype.is_float)
    return Call(f"torch.where({cond_text}, {a.name}, {b.name})", typ, max(a.bound, b.bound), a.exact and b.exact)


@op_rule("lerp", Family.TERNARY)
def lerp(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``torch.lerp(a, b, w)``: a, b floats of the same dtype, w a float in [0, 1] or a tensor."""
    a = choose(c, pool, is_float)
    if a is None:
        return None
    b = partner(c, pool, a, lambda v: v.dtype is a.dtype)
    if b is None:
        return None
    ta, ba = tame(a, LARGE)
    tb, bb = tame(b, LARGE)
    return Call(f"torch.lerp({ta}, {tb}, {c.pick(('0.25', '0.5', '0.75'))})", elementwise_type([a, b], a.dtype),
                max(ba, bb))


@op_rule("addcmul", Family.TERNARY)
def addcmul(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``torch.addcmul(a, b, c, value=v)`` / ``addcdiv`` with the denominator kept from 0; float operands."""
    a = choose(c, pool, is_float)
    if a is None:
        return None
    b = partner(c, pool, a, lambda v: v.dtype is a.dtype)
    d = partner(c, pool, a, lambda v: v.dtype is a.dtype and b is not None
                and broadcast(a.shape, b.shape, v.shape) is not None)
    if b is None or d is None:
        return None
    ta, ba = tame(a, LARGE)
    tb, bb = tame(b, 6.0)
    td, bd = tame(d, 6.0)
    if c.chance(50):
        return Call(f"torch.addcmul({ta}, {tb}, {td}, value=0.5)", elementwise_type([a, b, d], a.dtype),
                    ba + 0.5 * bb * bd)
    return Call(f"torch.addcdiv({ta}, {tb}, {td}.abs() + 0.5, value=0.5)", elementwise_type([a, b, d], a.dtype),
                ba + bb)


@op_rule("clamp", Family.TERNARY)
def clamp(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``x.clamp(lo, hi)`` with scalars, or ``torch.clamp(x, min=t)`` with a broadcastable tensor."""
    x = choose(c, pool, is_numeric)
    if x is None:
        return None
    low = c.pick((-1, -2, 0))
    if x.dtype.is_float:
        return Call(f"{x.name}.clamp({low}.0, {c.pick((1, 2))}.5)", elementwise_type([x], x.dtype), 2.5, x.exact)
    return Call(f"{x.name}.clamp({low}, {c.pick((1, 3))})", elementwise_type([x], x.dtype), 3.0, x.exact)


# -- reductions ----------------------------------------------------------------

def reduce_dims(c: Chooser, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """Dims to reduce (maybe negative, never repeated), or None for all; shape has ndim >= 1."""
    if c.chance(20):
        return None
    ndim = len(shape)
    first = c.index(ndim)
    dims = [first]
    if ndim > 1 and c.chance(30):
        second = c.index(ndim)
        if second != first:
            dims.append(second)
    return tuple(d - ndim if c.chance(30) else d for d in dims)


def reduced_shape(shape: tuple[int, ...], dims: tuple[int, ...] | None, keepdim: bool) -> tuple[int, ...]:
    if dims is None:
        return tuple(1 for _ in shape) if keepdim else ()
    picked = {d % len(shape) for d in dims}
    return tuple(1 if i in picked else s for i, s in enumerate(shape) if keepdim or i not in picked)


def dim_text(dims: tuple[int, ...]) -> str:
    return str(dims[0]) if len(dims) == 1 else str(tuple(dims))


# name -> (accepts, result dtype from the input dtype, needs exact input, single dim only, bound from (b, n))
_REDUCTIONS: dict[str, tuple[Callable[[DType], bool], Callable[[DType], DType], bool, bool,
                             Callable[[float, int], float]]] = {
    "sum": (lambda d: True, lambda d: d if d.is_float else DType.INT64, False, False, lambda b, n: b * n),
    "nansum": (lambda d: d.is_float, lambda d: d, False, False, lambda b, n: b * n),
    "mean": (lambda d: d.is_float, lambda d: d, False, False, lambda b, n: b),
    "nanmean": (lambda d: d.is_float, lambda d: d, False, False, lambda b, n: b),
    "amax": (lambda d: True, lambda d: d, False, False, lambda b, n: b),
    "amin": (lambda d: True, lambda d: d, False, False, lambda b, n: b),
    "prod": (lambda d: True, lambda d: d if d.is_float else DType.INT64, False, True, lambda b, n: b ** n),
    "logsumexp": (lambda d: d.is_float, lambda d: d, False, False, lambda b, n: b + math.log(n) + 1),
    "var": (lambda d: d.is_float, lambda d: d, False, False, lambda b, n: 4 * b * b),
    "std": (lambda d: d.is_float, lambda d: d, False, False, lambda b, n: 2 * b),
    "any": (lambda d: True, lambda d: DType.BOOL, True, False, lambda b, n: 1.0),
    "all": (lambda d: True, lambda d: DType.BOOL, True, False, lambda b, n: 1.0),
    "argmax": (lambda d: d is not DType.BOOL, lambda d: DType.INT64, True, True, lambda b, n: float(n)),
    "argmin": (lambda d: d is not DType.BOOL, lambda d: DType.INT64, True, True, lambda b, n: float(n)),
    "count_nonzero": (lambda d: True, lambda d: DType.INT64, True, False, lambda b, n: float(n)),
    "linalg.vector_norm": (lambda d: d.is_float, lambda d: d, False, False, lambda b, n: b * n),
}
_REDUCE_EXACT = frozenset({"amax", "amin", "any", "all", "argmax", "argmin", "count_nonzero"})


def _reduction(name: str, c: Chooser, pool: Sequence[Value]) -> Call | None:
    accepts, result, exact_only, single, bound_of = _REDUCTIONS[name]

    def usable(v: Value) -> bool:
        if v.type.ndim == 0 or not accepts(v.dtype) or (exact_only and not v.exact):
            return False
        if v.dtype not in dtypes_of(name):
            return False
        return not (v.type.requires_grad and name in ("nansum", "nanmean", "count_nonzero"))

    x = choose(c, pool, usable)
    if x is None:
        return None
    dims = reduce_dims(c, x.shape)
    if single and dims is not None:
        dims = dims[:1]
    if name == "count_nonzero" and dims is not None:
        dims = dims[:1]
    keepdim = c.chance(40) and name != "count_nonzero"
    n = x.type.numel if dims is None else math.prod(x.shape[d % x.type.ndim] for d in dims)
    if name in ("var", "std") and n < 2:
        return None
    operand, bound_in = tame(x, 3.0 if name in ("logsumexp", "var") else LARGE)
    if name == "prod":
        if x.dtype.is_float:
            operand, bound_in = f"torch.tanh({x.name})", 1.0
        else:
            operand, bound_in = tame(x, 2.0)
    args = [] if dims is None else [f"dim={dim_text(dims)}"]
    if name in ("logsumexp",) and dims is None:
        args = [f"dim={tuple(range(x.type.ndim))}"]
    if keepdim and (dims is not None or name == "logsumexp"):
        args.append("keepdim=True")
    elif keepdim:
        keepdim = False
    text = f"torch.{name}({operand}{''.join(', ' + a for a in args)})"
    bound = bound_of(bound_in, n)
    dtype = result(x.dtype)
    exact = x.exact and (name in _REDUCE_EXACT or not dtype.is_float and name in ("sum", "prod"))
    shape = reduced_shape(x.shape, dims, keepdim)
    grad = x.type.requires_grad and dtype.is_float and name not in _REDUCE_EXACT - {"amax", "amin"}
    return Call(text, TensorType(shape, dtype, contiguous=x.type.contiguous, requires_grad=grad),
                min(bound, 1e12), exact)


for _name in _REDUCTIONS:
    RULES.append(OpRule(_name, Family.REDUCTION, functools.partial(_reduction, _name)))


@op_rule("max-dim", Family.REDUCTION)
def max_dim(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``torch.max(x, dim)`` / ``min``: values, or indices (first occurrence) of an exact x."""
    x = choose(c, pool, lambda v: v.type.ndim > 0 and v.dtype is not DType.BOOL)
    if x is None:
        return None
    dim = c.index(x.type.ndim)
    keepdim = c.chance(40)
    fn = c.pick(("max", "min"))
    shape = reduced_shape(x.shape, (dim,), keepdim)
    kd = ", keepdim=True" if keepdim else ""
    if x.exact and c.chance(50):
        return Call(f"torch.{fn}({x.name}, {dim}{kd}).indices", TensorType(shape, DType.INT64),
                    float(x.shape[dim]), True)
    return Call(f"torch.{fn}({x.name}, {dim}{kd}).values",
                TensorType(shape, x.dtype, requires_grad=x.type.requires_grad), x.bound, x.exact)


# -- scans ---------------------------------------------------------------------

@op_rule("cumsum", Family.SCAN)
def cumsum(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``torch.cumsum(x, dim)`` (int and bool give int64) or ``logcumsumexp`` of a float."""
    x = choose(c, pool, lambda v: v.type.ndim > 0)
    if x is None:
        return None
    dim = c.index(x.type.ndim) - (x.type.ndim if c.chance(30) else 0)
    n = x.shape[dim]
    operand, bound = tame(x, LARGE)
    if x.dtype.is_float and c.chance(30):
        operand, bound = tame(x, 3.0)
        return Call(f"torch.logcumsumexp({operand}, dim={dim})", x.type.with_(contiguous=True), bound + math.log(n) + 1)
    dtype = x.dtype if x.dtype.is_float else DType.INT64
    return Call(f"torch.cumsum({operand}, dim={dim})", x.type.with_(dtype=dtype, contiguous=True), bound * n,
                x.exact and not dtype.is_float)


@op_rule("cumprod", Family.SCAN)
def cumprod(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``torch.cumprod(tanh(x), dim)`` of a float (bounded by 1)."""
    x = choose(c, pool, lambda v: v.type.ndim > 0 and v.dtype.is_float)
    if x is None:
        return None
    dim = c.index(x.type.ndim)
    return Call(f"torch.cumprod(torch.tanh({x.name}), dim={dim})", x.type.with_(contiguous=True), 1.0)


@op_rule("cummax", Family.SCAN)
def cummax(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``torch.cummax(x, dim).values`` / ``cummin`` (values only: tie order of indices is unspecified)."""
    x = choose(c, pool, lambda v: v.type.ndim > 0 and v.dtype is not DType.BOOL)
    if x is None:
        return None
    dim = c.index(x.type.ndim)
    fn = c.pick(("cummax", "cummin"))
    return Call(f"torch.{fn}({x.name}, dim={dim}).values", x.type.with_(contiguous=True), x.bound, x.exact)
