"""The float64 reference variant of a program's inputs, which the harness
derives on its own (the grown inputs of the ``shape`` call are harness.plan's).

Tensors are ``torch.Tensor`` of any dtype and shape; containers are tuples,
lists and dicts of them, copied with the same structure.
"""

from __future__ import annotations

from typing import Any

from harness.plan import map_tensors, rebuild_leaf

# Reduced-precision float dtypes that the float64 reference lifts (float32 too).
_LIFTED = ("float16", "bfloat16", "float32")


def to_fp64(args: tuple) -> tuple:
    """``args`` with every float16/bfloat16/float32 tensor lifted to float64
    (``requires_grad`` kept): the reference run of torch's accuracy rule
    (``torch._dynamo.utils.same(..., fp64_ref=...)``)."""
    def lift(t: Any) -> Any:
        if str(t.dtype).removeprefix("torch.") in _LIFTED:
            import torch

            return rebuild_leaf(t, t.detach().to(torch.float64))
        return t

    return map_tensors(args, lift)
