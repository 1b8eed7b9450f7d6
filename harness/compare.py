"""Comparison rules for eager vs compiled values.

Tensors compare with ``torch._dynamo.utils.same`` (torch's accuracy rule, as its
minifier uses: relative tolerance 1e-4, NaNs equal), plus exact dtype, shape
and ``requires_grad``; integer and bool tensors therefore compare exactly.
Containers compare element-wise, floats with the same tolerance, everything
else with ``==`` on a normalised snapshot (addresses removed).
"""

from __future__ import annotations

import math
import re
from typing import Any

# Relative tolerance for floating-point tensors and floats, as torch._dynamo.utils.same's default.
TOLERANCE = 1e-4
# Longest value repr kept in an Outcome, in characters.
MAX_REPR_CHARS = 400

ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+|0x[0-9a-fA-F]{6,}")


def normalise_text(text: str) -> str:
    """Remove memory addresses from a repr or message."""
    return ADDRESS.sub("", text)


def snapshot(value: Any, depth: int = 0) -> Any:
    """A detached copy of ``value`` that later mutation cannot change.

    Tensors are detached and cloned; lists, tuples, dicts and sets are copied
    recursively; objects with a ``__dict__`` become ``(type name, public
    attributes)``; anything else becomes its normalised repr.
    """
    import torch

    if depth > 8:
        return "<deep>"
    if isinstance(value, torch.Tensor):
        if value.layout != torch.strided:
            return normalise_text(repr(value))
        copy = value.detach().clone()
        return copy.requires_grad_() if value.requires_grad and copy.is_floating_point() else copy
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(snapshot(v, depth + 1) for v in value) if type(value) in (list, tuple) else (
            type(value).__name__, tuple(snapshot(v, depth + 1) for v in value))
    if isinstance(value, dict):
        return {k: snapshot(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return ("set", sorted(normalise_text(repr(v)) for v in value))
    if isinstance(value, (torch.dtype, torch.device, torch.Size)):
        return repr(value)
    if callable(value) and hasattr(value, "__name__"):
        return f"<callable {value.__name__}>"
    attrs = getattr(value, "__dict__", None)
    if isinstance(attrs, dict) and not isinstance(value, type):
        public = {k: snapshot(v, depth + 1) for k, v in attrs.items() if not k.startswith("_")}
        return (type(value).__name__, public)
    return normalise_text(repr(value))


def values_match(ref: Any, res: Any) -> bool:
    """True if two snapshots are equal under the module's rules."""
    import torch
    from torch._dynamo.utils import same

    if isinstance(ref, torch.Tensor) or isinstance(res, torch.Tensor):
        if not (isinstance(ref, torch.Tensor) and isinstance(res, torch.Tensor)):
            return False
        if ref.dtype != res.dtype or ref.shape != res.shape or ref.requires_grad != res.requires_grad:
            return False
        if ref.device != res.device:
            res = res.to(ref.device)
        ref, res = ref.detach(), res.detach()
        if ref.dtype.is_floating_point or ref.dtype.is_complex:
            try:
                return bool(same(ref, res, tol=TOLERANCE, equal_nan=True, log_error=lambda *a, **k: None))
            except Exception:  # a tensor kind same() does not handle: compare exactly
                return bool(torch.equal(ref, res))
        return bool(torch.equal(ref, res))
    if type(ref) is not type(res):
        return False
    if isinstance(ref, (list, tuple)):
        return len(ref) == len(res) and all(values_match(a, b) for a, b in zip(ref, res))
    if isinstance(ref, dict):
        return list(ref) == list(res) and all(values_match(ref[k], res[k]) for k in ref)
    if isinstance(ref, float):
        return (math.isnan(ref) and math.isnan(res)) or math.isclose(ref, res, rel_tol=TOLERANCE, abs_tol=1e-6)
    return bool(ref == res)


def describe(value: Any) -> str:
    """A short, stable repr of a snapshot for reports (at most MAX_REPR_CHARS)."""
    import torch

    if isinstance(value, torch.Tensor):
        text = f"tensor(shape={list(value.shape)}, dtype={str(value.dtype).removeprefix('torch.')}"
        if value.numel() and (value.dtype.is_floating_point or value.dtype in (torch.int64, torch.int32, torch.bool)):
            flat = value.detach().flatten()[:4].tolist()
            text += f", values={[round(v, 4) if isinstance(v, float) else v for v in flat]}"
        text += ")"
    elif isinstance(value, (list, tuple)):
        inner = ", ".join(describe(v) for v in value)
        text = f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    elif isinstance(value, dict):
        text = "{" + ", ".join(f"{k!r}: {describe(v)}" for k, v in value.items()) + "}"
    else:
        text = repr(value)
    return text[:MAX_REPR_CHARS]
