"""The typed values of the tensor generator: torch's promotion and broadcasting rules."""

from __future__ import annotations

import pytest

from fuzz.generate.tensor_types import (
    DType,
    TensorType,
    broadcast,
    promote,
    promote_scalar,
)


def t(dtype: DType, *shape: int) -> TensorType:
    return TensorType(tuple(shape), dtype)


def test_promotion_follows_categories_then_size() -> None:
    assert promote([t(DType.INT32, 3), t(DType.INT64, 3)]) is DType.INT64
    assert promote([t(DType.BOOL, 3), t(DType.INT32, 3)]) is DType.INT32
    assert promote([t(DType.INT64, 3), t(DType.FLOAT16, 3)]) is DType.FLOAT16
    assert promote([t(DType.FLOAT32, 3), t(DType.FLOAT64, 3)]) is DType.FLOAT64
    # float16 with bfloat16: neither holds the other
    assert promote([t(DType.FLOAT16, 3), t(DType.BFLOAT16, 3)]) is DType.FLOAT32


def test_a_zero_dim_operand_decides_only_from_a_higher_category() -> None:
    assert promote([t(DType.FLOAT32, 3), t(DType.FLOAT64)]) is DType.FLOAT32
    assert promote([t(DType.INT32, 3), t(DType.INT64)]) is DType.INT32
    assert promote([t(DType.INT32, 3), t(DType.FLOAT64)]) is DType.FLOAT64
    assert promote([t(DType.FLOAT16), t(DType.FLOAT64)]) is DType.FLOAT64
    with pytest.raises(ValueError, match="at least one operand"):
        promote([])


def test_python_scalars_promote_with_the_default_dtypes() -> None:
    assert promote_scalar(DType.INT32, float) is DType.FLOAT32
    assert promote_scalar(DType.BOOL, int) is DType.INT64
    assert promote_scalar(DType.FLOAT16, float) is DType.FLOAT16
    assert promote_scalar(DType.INT32, int) is DType.INT32


def test_broadcasting_aligns_trailing_dims() -> None:
    assert broadcast((3, 1), (4,)) == (3, 4)
    assert broadcast((2, 1, 5), (3, 1)) == (2, 3, 5)
    assert broadcast((), (2, 3)) == (2, 3)
    assert broadcast((3,), (4,)) is None


def test_requires_grad_is_dropped_for_non_float_dtypes() -> None:
    typ = TensorType((2,), DType.FLOAT32, requires_grad=True)
    assert typ.with_(dtype=DType.INT64).requires_grad is False
    assert typ.with_(shape=(3,)).requires_grad is True
    assert typ.with_(shape=(3, 4)).numel == 12
