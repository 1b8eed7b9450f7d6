"""The typed values of the tensor-expression generator: dtype, shape, layout, bounds.

Every tensor the generator writes carries a ``TensorType`` (shape, dtype,
contiguity, device, ``requires_grad``), so an operator rule
(``fuzz.generate.tensor_ops``) can tell whether a call is valid eagerly and
what it returns. A ``Value`` adds the name it is bound to and two facts the
oracle needs: an upper bound on its magnitude (so float32 rounding stays far
inside the oracle's tolerance) and whether its elements are *exact* (computed
without rounding, so an index result over them, ``argmax`` or a stable
``sort``, is the same in eager and compiled code).

``promote`` is torch's type-promotion rule (``torch.result_type``): categories
bool < integer < floating; a zero-dim tensor only decides the result where its
category is higher than every dimensioned operand's; float16 with bfloat16
gives float32 (docs: "Type Promotion" in torch's tensor attributes page).

Needs only the standard library: the worker env's property test
(tests/harness/test_tensor_ops.py) imports it next to torch.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Sequence

__all__ = ["Category", "DType", "TensorType", "Value", "broadcast", "promote"]


class Category(enum.IntEnum):
    """A dtype's promotion category (a higher one wins)."""

    BOOL = 0
    INTEGER = 1
    FLOATING = 2


class DType(enum.Enum):
    """The dtypes the generator writes; the value is torch's name for it."""

    BOOL = "bool"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT16 = "float16"
    BFLOAT16 = "bfloat16"
    FLOAT32 = "float32"
    FLOAT64 = "float64"

    @property
    def torch(self) -> str:
        """The expression for it in generated code: ``torch.float32``."""
        return f"torch.{self.value}"

    @property
    def category(self) -> Category:
        if self is DType.BOOL:
            return Category.BOOL
        if self in (DType.INT32, DType.INT64):
            return Category.INTEGER
        return Category.FLOATING

    @property
    def is_float(self) -> bool:
        return self.category is Category.FLOATING

    @property
    def is_low_precision(self) -> bool:
        """float16 or bfloat16 (the oracle's wider tolerances apply)."""
        return self in (DType.FLOAT16, DType.BFLOAT16)

    @property
    def bits(self) -> int:
        """Size of one element in bits."""
        return {"bool": 8, "int32": 32, "int64": 64, "float16": 16, "bfloat16": 16,
                "float32": 32, "float64": 64}[self.value]

    def describe(self) -> str:
        return f"a {self.value} tensor"


# Dtypes by name, for the OpInfo cache's dtype lists.
DTYPES_BY_NAME: dict[str, DType] = {d.value: d for d in DType}
FLOAT_DTYPES: tuple[DType, ...] = (DType.FLOAT32, DType.FLOAT64, DType.FLOAT16, DType.BFLOAT16)
INT_DTYPES: tuple[DType, ...] = (DType.INT64, DType.INT32)


def _join(a: DType, b: DType) -> DType:
    """The promotion of two dtypes of operands that both take part."""
    if a.category != b.category:
        return a if a.category > b.category else b
    if {a, b} == {DType.FLOAT16, DType.BFLOAT16}:
        return DType.FLOAT32
    return a if a.bits >= b.bits else b


@dataclasses.dataclass(frozen=True)
class TensorType:
    """What the generator knows about one tensor.

    ``shape``: sizes, outermost first (``()`` for a zero-dim tensor).
    ``dtype``: a ``DType``. ``contiguous``: whether its strides are the
    row-major ones (a strided view is not). ``device``: ``"cpu"`` or
    ``"cuda"`` as written in the program. ``requires_grad``: whether autograd
    records ops on it (only floating tensors may).
    """

    shape: tuple[int, ...]
    dtype: DType
    contiguous: bool = True
    device: str = "cpu"
    requires_grad: bool = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def with_(self, **changes: object) -> TensorType:
        """A copy with ``changes`` (``requires_grad`` is dropped for non-float dtypes)."""
        out = dataclasses.replace(self, **changes)
        if out.requires_grad and not out.dtype.is_float:
            out = dataclasses.replace(out, requires_grad=False)
        return out


@dataclasses.dataclass(frozen=True)
class Value:
    """A tensor bound to a name in the generated code.

    ``bound``: an upper bound on |element| (for bool 1.0); ``exact``: its
    elements were computed without rounding (inputs, views, copies, integer
    arithmetic), so comparisons and index results over it cannot differ
    between eager and compiled code except through ties, which the
    first-occurrence rules of argmax and stable sort settle.
    """

    name: str
    type: TensorType
    bound: float
    exact: bool = False

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    @property
    def dtype(self) -> DType:
        return self.type.dtype


def broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    """The broadcast of ``shapes`` (numpy's rule, as torch's), or None if they do not broadcast."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        sizes = {s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0} - {1}
        if len(sizes) > 1:
            return None
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def promote(types: Sequence[TensorType]) -> DType:
    """The dtype ``torch.result_type`` gives for tensor operands of ``types``.

    Raises ValueError for no operands.
    """
    if not types:
        raise ValueError("Expected at least one operand but got types=()")
    dimensioned = [t.dtype for t in types if t.ndim > 0]
    zero_dim = [t.dtype for t in types if t.ndim == 0]
    if not dimensioned:
        dimensioned, zero_dim = zero_dim, []
    result = dimensioned[0]
    for dtype in dimensioned[1:]:
        result = _join(result, dtype)
    higher = [d for d in zero_dim if d.category > result.category]
    if higher:
        top = max(d.category for d in higher)
        chosen = [d for d in higher if d.category == top]
        result = chosen[0]
        for dtype in chosen[1:]:
            result = _join(result, dtype)
    return result


def promote_scalar(dtype: DType, scalar: type) -> DType:
    """The dtype of ``tensor <op> python_scalar`` for a tensor of ``dtype``
    and a Python ``bool``, ``int`` or ``float`` (torch's default dtypes:
    float32 and int64)."""
    if scalar is float and not dtype.is_float:
        return DType.FLOAT32
    if scalar is int and dtype is DType.BOOL:
        return DType.INT64
    return dtype
