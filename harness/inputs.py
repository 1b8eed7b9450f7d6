"""Variants of a program's inputs that the harness derives on its own: the
float64 reference and the grown shapes of the ``shape`` call.

Tensors are ``torch.Tensor`` of any dtype and shape; containers are tuples,
lists and dicts of them, copied with the same structure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Reduced-precision float dtypes that the float64 reference lifts (float32 too).
_LIFTED = ("float16", "bfloat16", "float32")


def _map_tensors(value: Any, fn: Callable[[Any], Any], depth: int = 0) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return fn(value)
    if depth > 6:
        return value
    if type(value) in (tuple, list):
        return type(value)(_map_tensors(v, fn, depth + 1) for v in value)
    if type(value) is dict:
        return {k: _map_tensors(v, fn, depth + 1) for k, v in value.items()}
    return value


def _rebuild_leaf(original: Any, data: Any) -> Any:
    """``data`` as a leaf that requires grad where ``original`` was one."""
    if original.requires_grad and data.is_floating_point():
        return data.detach().requires_grad_()
    return data.detach()


def to_fp64(args: tuple) -> tuple:
    """``args`` with every float16/bfloat16/float32 tensor lifted to float64
    (``requires_grad`` kept): the reference run of torch's accuracy rule
    (``torch._dynamo.utils.same(..., fp64_ref=...)``)."""
    def lift(t: Any) -> Any:
        if str(t.dtype).removeprefix("torch.") in _LIFTED:
            import torch

            return _rebuild_leaf(t, t.detach().to(torch.float64))
        return t

    return _map_tensors(args, lift)


def _tensors(value: Any, depth: int = 0) -> list[Any]:
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if depth > 6:
        return []
    if type(value) in (tuple, list):
        return [t for v in value for t in _tensors(v, depth + 1)]
    if type(value) is dict:
        return [t for v in value.values() for t in _tensors(v, depth + 1)]
    return []


def grow_shapes(args: tuple) -> tuple | None:
    """``args`` with every dimension equal to the largest size S >= 2 among
    all tensor arguments grown to S + 1, or None when no tensor has such a
    dimension.

    Growing the same size everywhere keeps tensors that broadcast or multiply
    together compatible. The new slice repeats the last one, so values stay in
    the distribution ``inputs()`` chose and no random numbers are drawn.
    """
    import torch

    sizes = [s for t in _tensors(args) for s in t.shape if s >= 2]
    if not sizes:
        return None
    largest = max(sizes)

    def grow(t: Any) -> Any:
        data = t.detach()
        for dim, size in enumerate(t.shape):
            if size == largest:
                data = torch.cat([data, data.narrow(dim, size - 1, 1)], dim=dim)
        return _rebuild_leaf(t, data) if data is not t else t

    return _map_tensors(args, grow)
