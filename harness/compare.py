"""Comparison rules for eager vs compiled values.

Tensors compare with ``torch._dynamo.utils.same`` (torch's accuracy rule, as
its minifier and benchmark runner use it): ``allclose`` with ``tol`` as both
relative and absolute tolerance, NaNs equal, and, where the direct comparison
fails and an fp64 reference of the same structure is given, the compiled
result passes if its RMSE against the fp64 reference is within a small
multiple of eager's (so a compiler that is *more* precise than eager is not a
bug). Dtype, shape and ``requires_grad`` must always match; integer and bool
tensors compare exactly. A leaf tensor's ``.grad`` is compared with the same
rule. Containers compare element-wise, Python floats with the same tolerance,
everything else with ``==`` on a normalised snapshot (addresses removed).
"""

from __future__ import annotations

import collections.abc
import math
import re
import types
from typing import Any, NamedTuple

# Relative and absolute tolerance for float32/float64 tensors and Python
# floats: torch._dynamo.utils.same's default.
TOLERANCE = 1e-4
# Tolerance for float16 and bfloat16 tensors: their unit roundoff is 2**-11 and
# 2**-8, so 1e-4 would flag every fused kernel that rounds once instead of twice.
HALF_TOLERANCE = 1e-2
# Longest value repr kept in an Outcome, in characters.
MAX_REPR_CHARS = 400
# Most items drained from a returned generator or iterator.
MAX_DRAINED_ITEMS = 1000

ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+|0x[0-9a-fA-F]{6,}")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:/[\w.+-]+)+\.py\b")
_LINE = re.compile(r"\bline \d+")
_PROGRAM_ID = re.compile(r"tcfuzz_program_[0-9a-f]+|prog_[0-9a-f]+")


def normalise_text(text: str) -> str:
    """Remove memory addresses from a repr or message."""
    return ADDRESS.sub("", text)


def _strip_tensor_reprs(text: str) -> str:
    """``tensor([[1., 2.], ...], grad_fn=...)`` -> ``tensor(...)``, parentheses balanced."""
    out, i = [], 0
    while (j := text.find("tensor(", i)) != -1:
        out.append(text[i:j] + "tensor(...)")
        depth, k = 1, j + len("tensor(")
        while k < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            k += 1
        i = k
    out.append(text[i:])
    return "".join(out)


def normalise_message(text: str) -> str:
    """An exception message with what differs between equal failures removed:
    memory addresses, file paths, line numbers, the harness's module names and
    tensor reprs (whose values and ``grad_fn`` legitimately differ between
    eager and compiled code). Only the first line is kept."""
    text = text.split("\n", 1)[0]
    text = _strip_tensor_reprs(normalise_text(text))
    text = _PATH.sub("<path>", text)
    text = _LINE.sub("line N", text)
    return _PROGRAM_ID.sub("<program>", text).strip()[:300]


class TensorWithGrad(NamedTuple):
    """Snapshot of a leaf tensor whose ``.grad`` is set: the value and the gradient."""

    tensor: Any
    grad: Any


class Drained(NamedTuple):
    """Snapshot of a returned generator or iterator: its type name, the items it
    yielded (at most MAX_DRAINED_ITEMS) and, for a generator, its return value."""

    kind: str
    items: tuple
    returned: Any


def drain(value: Any) -> Any:
    """Exhaust a generator or iterator the entry function returned, so that
    its lazily run code is compared too. Anything else is returned as is.

    Exceptions raised while draining propagate: they are the call's.
    """
    import torch

    if isinstance(value, types.CoroutineType):
        value.close()
        return Drained("coroutine", (), value.__qualname__)
    if isinstance(value, (torch.Tensor, str, bytes)) or not isinstance(value, collections.abc.Iterator):
        return value
    items, returned = [], None
    while len(items) < MAX_DRAINED_ITEMS:
        try:
            items.append(snapshot(next(value)))
        except StopIteration as stop:
            returned = snapshot(stop.value)
            break
    kind = "generator" if isinstance(value, types.GeneratorType) else type(value).__name__
    return Drained(kind, tuple(items), returned)


def snapshot(value: Any, depth: int = 0) -> Any:
    """A detached copy of ``value`` that later mutation cannot change.

    Tensors are detached and cloned (with their gradient, for a leaf that has
    one); lists, tuples, dicts and sets are copied recursively; objects with a
    ``__dict__`` become ``(type name, public attributes)``; anything else
    becomes its normalised repr.
    """
    import torch

    if depth > 8:
        return "<deep>"
    if isinstance(value, torch.Tensor):
        if value.layout != torch.strided:
            return normalise_text(repr(value))
        copy = value.detach().clone()
        if value.requires_grad and copy.is_floating_point():
            copy.requires_grad_()
        if value.is_leaf and value.requires_grad and value.grad is not None:
            return TensorWithGrad(copy, value.grad.detach().clone())
        return copy
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return value
    if isinstance(value, (TensorWithGrad, Drained)):
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


def _like(fp64: Any, ref: Any) -> Any:
    """``fp64`` if it has the structure of ``ref`` (same container type and
    length, or both tensors of one shape), else None: a reference whose
    program took another path at float64 is no reference."""
    import torch

    if fp64 is None:
        return None
    if isinstance(ref, torch.Tensor):
        return fp64 if isinstance(fp64, torch.Tensor) and fp64.shape == ref.shape else None
    if type(fp64) is not type(ref):
        return None
    if isinstance(ref, (list, tuple)) and len(ref) != len(fp64):
        return None
    if isinstance(ref, dict) and list(ref) != list(fp64):
        return None
    return fp64


def _tensors_match(ref: Any, res: Any, fp64_ref: Any) -> bool:
    import torch
    from torch._dynamo.utils import same

    if ref.dtype != res.dtype or ref.shape != res.shape or ref.requires_grad != res.requires_grad:
        return False
    if ref.device != res.device:
        res = res.to(ref.device)
    ref, res = ref.detach(), res.detach()
    if not (ref.dtype.is_floating_point or ref.dtype.is_complex):
        return bool(torch.equal(ref, res))
    tol = HALF_TOLERANCE if ref.dtype in (torch.float16, torch.bfloat16) else TOLERANCE
    fp64 = None
    if isinstance(fp64_ref, torch.Tensor) and fp64_ref.shape == ref.shape and not ref.dtype.is_complex:
        fp64 = fp64_ref.detach().to(device=ref.device, dtype=torch.float64)
    try:
        return bool(same(ref, res, fp64_ref=fp64, tol=tol, equal_nan=True, log_error=lambda *a, **k: None))
    except Exception:  # a tensor kind same() does not handle: compare exactly
        return bool(torch.equal(ref, res))


def values_match(ref: Any, res: Any, fp64_ref: Any = None) -> bool:
    """True if two snapshots are equal under the module's rules.

    ``fp64_ref`` is the same value computed with float64 inputs (or None): it
    decides float tensors that differ beyond the tolerance, as in
    ``torch._dynamo.utils.same``.
    """
    import torch

    fp64_ref = _like(fp64_ref, ref)
    if isinstance(ref, torch.Tensor) or isinstance(res, torch.Tensor):
        if not (isinstance(ref, torch.Tensor) and isinstance(res, torch.Tensor)):
            return False
        return _tensors_match(ref, res, fp64_ref)
    if type(ref) is not type(res):
        return False
    if isinstance(ref, (list, tuple)):
        fp64s = fp64_ref if fp64_ref is not None else [None] * len(ref)
        return len(ref) == len(res) and all(values_match(a, b, c) for a, b, c in zip(ref, res, fp64s))
    if isinstance(ref, dict):
        return list(ref) == list(res) and all(
            values_match(ref[k], res[k], None if fp64_ref is None else fp64_ref[k]) for k in ref)
    if isinstance(ref, float):
        if math.isnan(ref) or math.isnan(res):
            return math.isnan(ref) and math.isnan(res)
        if math.isclose(ref, res, rel_tol=TOLERANCE, abs_tol=TOLERANCE):
            return True
        # as same(): the compiled value passes if it is as close to the fp64 value as eager's
        if isinstance(fp64_ref, float) and math.isfinite(fp64_ref):
            return abs(res - fp64_ref) <= 2 * abs(ref - fp64_ref) + TOLERANCE / 10
        return False
    return bool(ref == res)


def has_float(value: Any) -> bool:
    """True if a snapshot holds a floating-point tensor or a float anywhere
    (the case where an fp64 reference can decide)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.is_floating_point()
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(has_float(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(has_float(v) for v in value)
    return False


def describe(value: Any) -> str:
    """A short, stable repr of a snapshot for reports (at most MAX_REPR_CHARS)."""
    import torch

    if isinstance(value, TensorWithGrad):
        text = f"{describe(value.tensor)} grad={describe(value.grad)}"
    elif isinstance(value, Drained):
        text = f"<{value.kind} yielded {describe(list(value.items))} returned {describe(value.returned)}>"
    elif isinstance(value, torch.Tensor):
        text = f"tensor(shape={list(value.shape)}, dtype={str(value.dtype).removeprefix('torch.')}"
        if value.numel() and (value.dtype.is_floating_point or value.dtype in (torch.int64, torch.int32, torch.bool)):
            flat = value.detach().flatten()[:4].float().tolist() if value.dtype.is_floating_point else \
                value.detach().flatten()[:4].tolist()
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
