"""Operator rules: views and layout, indexing, joining and splitting, sorting, in-place on views.

Rules as in ``fuzz.generate.tensor_ops`` (registered there, in this module's
order). Index tensors are built from ``torch.arange`` and the operand's own
sizes (``x.shape[d]``), never drawn at random, so every index is in range;
index results (sort, argsort) are only taken from exact values with
``stable=True``, whose order eager and compiled code agree on even with ties
(torch documents stable sorting and first-occurrence argmax); ``topk`` gives
its values only, since the order of tied indices is unspecified.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fuzz.generate.tensor_ops import (
    LARGE,
    Call,
    Chooser,
    Family,
    choose,
    is_numeric,
    op_rule,
    tame,
)
from fuzz.generate.tensor_types import DType, TensorType, Value, promote

__all__ = ["broadcasts_to"]


def _view_type(x: Value, shape: tuple[int, ...], contiguous: bool) -> TensorType:
    return x.type.with_(shape=shape, contiguous=contiguous and x.type.contiguous)


def _shape_text(shape: Sequence[int | str]) -> str:
    return ", ".join(str(s) for s in shape)


# -- views and layout ---------------------------------------------------------

@op_rule("reshape", Family.VIEW)
def reshape(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """Merge a run of adjacent dims (``x.reshape(x.shape[0], -1)``; ``view`` when contiguous),
    ``flatten(start, end)``, or ``reshape(-1)``."""
    x = choose(c, pool, lambda v: v.type.ndim >= 1)
    if x is None:
        return None
    ndim = x.type.ndim
    start = c.index(ndim)
    end = start + c.index(ndim - start)
    merged = math.prod(x.shape[start:end + 1])
    shape = x.shape[:start] + (merged,) + x.shape[end + 1:]
    form = c.pick(("reshape", "view", "flatten"))
    if form == "flatten":
        return Call(f"{x.name}.flatten({start}, {end})", _view_type(x, shape, True), x.bound, x.exact)
    if form == "view" and not x.type.contiguous:
        form = "reshape"
    sizes = [f"{x.name}.shape[{i}]" for i in range(start)] + ["-1"]
    sizes += [f"{x.name}.shape[{i}]" for i in range(end + 1, ndim)]
    return Call(f"{x.name}.{form}({_shape_text(sizes)})", _view_type(x, shape, True), x.bound, x.exact)


@op_rule("unflatten", Family.VIEW)
def unflatten(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``x.unflatten(d, (k, -1))`` for a divisor k of x.shape[d], or ``x.view(..)`` splitting it."""
    x = choose(c, pool, lambda v: any(s > 1 and s % 2 == 0 or s % 3 == 0 for s in v.shape))
    if x is None:
        return None
    dims = [d for d, s in enumerate(x.shape) if s > 1 and (s % 2 == 0 or s % 3 == 0)]
    d = c.pick(dims)
    size = x.shape[d]
    k = c.pick([k for k in (2, 3) if size % k == 0])
    shape = x.shape[:d] + (k, size // k) + x.shape[d + 1:]
    return Call(f"{x.name}.unflatten({d}, ({k}, -1))", _view_type(x, shape, True), x.bound, x.exact)


@op_rule("permute", Family.VIEW)
def permute(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``x.permute(...)``, ``x.transpose(a, b)``, ``x.mT`` or ``x.movedim(a, b)`` (non-contiguous results)."""
    x = choose(c, pool, lambda v: v.type.ndim >= 2)
    if x is None:
        return None
    ndim = x.type.ndim
    order = list(range(ndim))
    form = c.pick(("permute", "transpose", "mT", "movedim"))
    if form == "permute":
        for i in range(ndim - 1, 0, -1):
            j = c.index(i + 1)
            order[i], order[j] = order[j], order[i]
        text = f"{x.name}.permute({_shape_text(order)})"
    elif form == "movedim":
        a, b = c.index(ndim), c.index(ndim)
        order.insert(b, order.pop(a))
        text = f"{x.name}.movedim({a}, {b})"
    else:
        a, b = (ndim - 2, ndim - 1) if form == "mT" else (c.index(ndim), c.index(ndim))
        order[a], order[b] = order[b], order[a]
        text = f"{x.name}.mT" if form == "mT" else f"{x.name}.transpose({a}, {b - ndim if c.chance(30) else b})"
    shape = tuple(x.shape[i] for i in order)
    return Call(text, _view_type(x, shape, order == list(range(ndim))), x.bound, x.exact)


@op_rule("expand", Family.VIEW)
def expand(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``x.unsqueeze(d)`` and maybe ``.expand(..)`` of that dim to 2-4, or ``x.squeeze(d)`` of a size-1 dim."""
    x = choose(c, pool, lambda v: v.type.ndim <= 4)
    if x is None:
        return None
    ones = [d for d, s in enumerate(x.shape) if s == 1]
    if ones and c.chance(40):
        d = c.pick(ones)
        shape = x.shape[:d] + x.shape[d + 1:]
        return Call(f"{x.name}.squeeze({d})", _view_type(x, shape, True), x.bound, x.exact)
    d = c.index(x.type.ndim + 1)
    shape = x.shape[:d] + (1,) + x.shape[d:]
    if c.chance(60):
        size = c.pick((2, 3, 4))
        sizes = ["-1"] * len(shape)
        sizes[d] = str(size)
        grown = shape[:d] + (size,) + shape[d + 1:]
        return Call(f"{x.name}.unsqueeze({d}).expand({_shape_text(sizes)})", _view_type(x, grown, False),
                    x.bound, x.exact)
    return Call(f"{x.name}.unsqueeze({d})", _view_type(x, shape, True), x.bound, x.exact)


@op_rule("slice", Family.VIEW)
def slice_(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``x[..., a:b:step]``, ``x.narrow(d, start, length)`` or ``x.select(d, i)`` / ``x[i]``."""
    x = choose(c, pool, lambda v: v.type.ndim >= 1 and max(v.shape) >= 2)
    if x is None:
        return None
    dims = [d for d, s in enumerate(x.shape) if s >= 2]
    d = c.pick(dims)
    size = x.shape[d]
    form = c.pick(("step", "narrow", "select"))
    if form == "select":
        i = c.index(size) - (size if c.chance(30) else 0)
        shape = x.shape[:d] + x.shape[d + 1:]
        text = f"{x.name}[{i}]" if d == 0 and c.chance(50) else f"{x.name}.select({d}, {i})"
        return Call(text, _view_type(x, shape, d == 0), x.bound, x.exact)
    if form == "narrow":
        start = c.index(size - 1)
        length = 1 + c.index(size - start)
        shape = x.shape[:d] + (length,) + x.shape[d + 1:]
        return Call(f"{x.name}.narrow({d}, {start}, {length})", _view_type(x, shape, d == 0), x.bound, x.exact)
    step = c.pick((2, 3, 1))
    start = c.index(min(size - 1, 2))
    length = len(range(start, size, step))
    index = [":"] * d + [f"{start or ''}::{step}" if step > 1 else f"{start}:"]
    shape = x.shape[:d] + (length,) + x.shape[d + 1:]
    return Call(f"{x.name}[{', '.join(index)}]", _view_type(x, shape, step == 1 and d == 0), x.bound, x.exact)


@op_rule("contiguous", Family.VIEW)
def contiguous(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``x.contiguous()`` or ``x.clone()`` of a value (a non-contiguous one where there is one)."""
    strided = [v for v in pool if not v.type.contiguous]
    x = c.pick(strided) if strided and c.chance(70) else choose(c, pool, lambda v: True)
    if x is None:
        return None
    # clone() keeps a dense tensor's strides (preserve_format): ask for row-major ones
    text = f"{x.name}.{c.pick(('contiguous()', 'clone(memory_format=torch.contiguous_format)'))}"
    return Call(text, x.type.with_(contiguous=True), x.bound, x.exact)


# -- indexing -------------------------------------------------------------------

def _index_of(size: int, length: int, c: Chooser) -> str:
    """A 1-D int64 index tensor of ``length`` entries in [0, size), maybe with repeats."""
    form = c.pick(("flip", "mod", "half"))
    if form == "flip" and length <= size:
        return f"torch.arange({length}).flip(0)"
    if form == "half":
        return f"(torch.arange({length}) // 2 % {size})"
    return f"(torch.arange({length}) * {c.pick((2, 3, 5))} % {size})"


@op_rule("index_select", Family.INDEXING)
def index_select(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``x.index_select(d, idx)`` or advanced indexing ``x[:, idx]`` with an arange-built index."""
    x = choose(c, pool, lambda v: v.type.ndim >= 1)
    if x is None:
        return None
    d = c.index(x.type.ndim)
    length = c.pick((1, 2, 3, 4))
    idx = _index_of(x.shape[d], length, c)
    shape = x.shape[:d] + (length,) + x.shape[d + 1:]
    if c.chance(50):
        text = f"{x.name}.index_select({d}, {idx})"
    else:
        text = f"{x.name}[{', '.join([':'] * d + [idx])}]"
    return Call(text, x.type.with_(shape=shape, contiguous=True), x.bound, x.exact)


@op_rule("gather", Family.INDEXING)
def gather(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``torch.gather(x, d, idx)`` with idx of x's shape (values in range, with repeats)."""
    x = choose(c, pool, lambda v: v.type.ndim >= 1)
    if x is None:
        return None
    d = c.index(x.type.ndim)
    n = x.type.numel
    idx = f"(torch.arange({n}).reshape({_shape_text(x.shape)}) * {c.pick((1, 3, 7))} % {x.shape[d]})"
    return Call(f"torch.gather({x.name}, {d}, {idx})", x.type.with_(contiguous=True), x.bound, x.exact)


@op_rule("scatter_add", Family.INDEXING)
def scatter_add(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``x.scatter_add(d, idx, src)``, ``x.index_add(d, idx, src)`` or ``x.scatter(d, idx, src)``
    with repeated indices; src is x scaled (same dtype)."""
    x = choose(c, pool, lambda v: v.type.ndim >= 1 and v.dtype not in (DType.BOOL,))
    if x is None:
        return None
    d = c.index(x.type.ndim)
    src, bound = tame(x, LARGE)
    form = c.pick(("scatter_add", "index_add", "scatter_reduce"))
    size = x.shape[d]
    if form == "index_add":
        text = f"{x.name}.index_add({d}, torch.arange({size}) // 2, {src})"
        return Call(text, x.type.with_(contiguous=True), x.bound + 2 * bound, x.exact and not x.dtype.is_float)
    idx = f"(torch.arange({x.type.numel}).reshape({_shape_text(x.shape)}) % {max(1, size // 2)})"
    if form == "scatter_reduce":
        reduce = c.pick(("amax", "amin", "sum"))
        text = f"{x.name}.scatter_reduce({d}, {idx}, {src}, reduce={reduce!r})"
        exact = x.exact and (reduce != "sum" or not x.dtype.is_float)
        return Call(text, x.type.with_(contiguous=True), x.bound + size * bound, exact)
    text = f"{x.name}.scatter_add({d}, {idx}, {src})"
    return Call(text, x.type.with_(contiguous=True), x.bound + size * bound, x.exact and not x.dtype.is_float)


@op_rule("index_put", Family.INDEXING)
def index_put(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``x.index_put((idx,), x[0] * 0.5, accumulate=True)`` with repeated indices along dim 0."""
    x = choose(c, pool, lambda v: v.type.ndim >= 1 and v.dtype.is_float)
    if x is None:
        return None
    size = x.shape[0]
    length = c.pick((2, 3, 4))
    text = f"{x.name}.index_put(({_index_of(size, length, c)},), {x.name}[0] * 0.5, accumulate=True)"
    return Call(text, x.type.with_(contiguous=True), x.bound * (1 + 0.5 * length))


@op_rule("masked_fill", Family.INDEXING)
def masked_fill(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``x.masked_fill(mask, value)``: mask an exact bool (or ``y > 0``) broadcasting to x's shape."""
    x = choose(c, pool, lambda v: True)
    if x is None:
        return None
    masks = [v for v in pool if v.exact and broadcasts_to(v.shape, x.shape)]
    if not masks:
        return None
    m = c.pick(masks)
    mask = m.name if m.dtype is DType.BOOL else f"({m.name} > 0)"
    value = "True" if x.dtype is DType.BOOL else ("-1.5" if x.dtype.is_float else "-3")
    return Call(f"{x.name}.masked_fill({mask}, {value})", x.type.with_(contiguous=True), max(x.bound, 3.0), x.exact)


def broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``target`` without changing it."""
    if len(shape) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(shape[::-1], target[::-1]))


@op_rule("masked_select", Family.INDEXING)
def masked_select(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """A data-dependent shape, reduced at once: ``x[mask].sum()``, ``torch.nonzero(m).sum(0)``."""
    m = choose(c, pool, lambda v: v.exact and v.type.ndim >= 1)
    if m is None:
        return None
    mask = m.name if m.dtype is DType.BOOL else f"({m.name} > 0)"
    xs = [v for v in pool if v.shape == m.shape and v.dtype.is_float]
    if xs and c.chance(60):
        x = c.pick(xs)
        name, bound = tame(x, LARGE)
        return Call(f"{name}[{mask}].sum()", TensorType((), x.dtype, requires_grad=x.type.requires_grad),
                    bound * m.type.numel)
    return Call(f"torch.nonzero({mask}).sum(dim=0)", TensorType((m.type.ndim,), DType.INT64),
                float(m.type.numel * max(m.shape)), True)


# -- joining and splitting ----------------------------------------------------------

@op_rule("cat", Family.JOIN)
def cat(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``torch.cat`` along a dim of values that agree elsewhere (dtypes promote), or ``torch.stack``
    of values of one shape."""
    x = choose(c, pool, lambda v: v.type.ndim >= 1)
    if x is None:
        return None
    d = c.index(x.type.ndim)
    stack = c.chance(35)
    if stack:
        fits = [v for v in pool if v.shape == x.shape]
    else:
        fits = [v for v in pool if v.type.ndim == x.type.ndim
                and all(a == b for i, (a, b) in enumerate(zip(v.shape, x.shape)) if i != d)]
    parts = [x] + [c.pick(fits) for _ in range(1 + c.index(2))]
    dtype = promote([p.type for p in parts])
    names = ", ".join(p.name for p in parts)
    if stack:
        shape = x.shape[:d] + (len(parts),) + x.shape[d:]
        text = f"torch.stack([{names}], dim={d})"
    else:
        shape = x.shape[:d] + (sum(p.shape[d] for p in parts),) + x.shape[d + 1:]
        text = f"torch.cat([{names}], dim={d - x.type.ndim if c.chance(30) else d})"
    grad = any(p.type.requires_grad for p in parts) and dtype.is_float
    return Call(text, TensorType(shape, dtype, requires_grad=grad), max(p.bound for p in parts),
                all(p.exact for p in parts))


@op_rule("split", Family.JOIN)
def split(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """One piece of ``torch.chunk``, ``torch.split`` or ``torch.unbind`` along a dim of size >= 2."""
    x = choose(c, pool, lambda v: any(s >= 2 for s in v.shape))
    if x is None:
        return None
    d = c.pick([i for i, s in enumerate(x.shape) if s >= 2])
    size = x.shape[d]
    form = c.pick(("chunk", "split", "unbind"))
    if form == "unbind":
        i = c.index(size)
        return Call(f"torch.unbind({x.name}, dim={d})[{i}]", x.type.with_(shape=x.shape[:d] + x.shape[d + 1:],
                    contiguous=d == 0 and x.type.contiguous), x.bound, x.exact)
    k = 2 + c.index(size - 1) if size > 2 else 2
    if form == "chunk":
        piece = -(-size // k)
        count = -(-size // piece)
        sizes = [piece] * (count - 1) + [size - piece * (count - 1)]
        text = f"torch.chunk({x.name}, {k}, dim={d})"
    else:
        piece = max(1, size // k)
        sizes = [piece] * (size // piece) + ([size % piece] if size % piece else [])
        text = f"torch.split({x.name}, {piece}, dim={d})"
    i = c.index(len(sizes))
    shape = x.shape[:d] + (sizes[i],) + x.shape[d + 1:]
    return Call(f"{text}[{i}]", x.type.with_(shape=shape, contiguous=d == 0 and x.type.contiguous), x.bound, x.exact)


@op_rule("flip", Family.JOIN)
def flip(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``x.flip(d)``, ``x.roll(k, d)``, ``x.repeat(..)``, ``torch.tril``/``triu`` (2-D and up)."""
    x = choose(c, pool, lambda v: v.type.ndim >= 1)
    if x is None:
        return None
    d = c.index(x.type.ndim)
    form = c.pick(("flip", "roll", "repeat", "tril"))
    if form == "tril" and x.type.ndim >= 2:
        fn = c.pick(("tril", "triu"))
        return Call(f"torch.{fn}({x.name}, {c.pick((0, 1, -1))})", x.type.with_(contiguous=True), x.bound, x.exact)
    if form == "repeat":
        reps = [1] * x.type.ndim
        reps[d] = c.pick((2, 3))
        shape = tuple(s * r for s, r in zip(x.shape, reps))
        return Call(f"{x.name}.repeat({_shape_text(reps)})", x.type.with_(shape=shape, contiguous=True),
                    x.bound, x.exact)
    if form == "roll":
        return Call(f"{x.name}.roll({c.pick((1, -1, 2))}, {d})", x.type.with_(contiguous=True), x.bound, x.exact)
    return Call(f"{x.name}.flip({d})", x.type.with_(contiguous=True), x.bound, x.exact)


# -- sorting ---------------------------------------------------------------------------

@op_rule("sort", Family.SORT)
def sort(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``torch.sort(x, d).values``, stable ``argsort``/``sort().indices`` of an exact x,
    ``torch.topk(x, k, d).values`` or ``torch.kthvalue(..).values``."""
    x = choose(c, pool, lambda v: v.type.ndim >= 1 and is_numeric(v))
    if x is None:
        return None
    d = c.index(x.type.ndim)
    size = x.shape[d]
    form = c.pick(("sort", "argsort", "topk", "kthvalue"))
    descending = ", descending=True" if c.chance(40) else ""
    if form == "argsort" and x.exact:
        return Call(f"torch.argsort({x.name}, dim={d}, stable=True{descending})",
                    x.type.with_(dtype=DType.INT64, contiguous=True), float(size), True)
    if form == "topk":
        k = 1 + c.index(size)
        shape = x.shape[:d] + (k,) + x.shape[d + 1:]
        largest = "" if c.chance(60) else ", largest=False"
        return Call(f"torch.topk({x.name}, {k}, dim={d}{largest}).values",
                    x.type.with_(shape=shape, contiguous=True), x.bound, x.exact)
    if form == "kthvalue":
        k = 1 + c.index(size)
        shape = x.shape[:d] + x.shape[d + 1:]
        return Call(f"torch.kthvalue({x.name}, {k}, dim={d}).values", x.type.with_(shape=shape, contiguous=True),
                    x.bound, x.exact)
    if x.exact and c.chance(40):
        return Call(f"torch.sort({x.name}, dim={d}, stable=True{descending}).indices",
                    x.type.with_(dtype=DType.INT64, contiguous=True), float(size), True)
    return Call(f"torch.sort({x.name}, dim={d}{descending}).values", x.type.with_(contiguous=True), x.bound, x.exact)


# -- in-place on views and aliases ------------------------------------------------

@op_rule("inplace-view", Family.INPLACE)
def inplace_view(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """A row-major copy of x written through a view: ``y = x.clone(..); y[::2].mul_(2)``,
    ``y.view(-1).add_(1)``, ``y.select(d, 0).zero_()``, ``y.diagonal().fill_(..)``, ``y.t().add_(..)``."""
    x = choose(c, pool, lambda v: v.type.ndim >= 1 and v.dtype is not DType.BOOL)
    if x is None:
        return None
    one = "1.0" if x.dtype.is_float else "1"
    views = ["{out}[::2].mul_(2)", "{out}.view(-1).add_(" + one + ")", "{out}.select(0, -1).zero_()",
             "{out}.narrow(0, 0, 1).sub_(" + one + ")"]
    if x.type.ndim >= 2:
        views += ["{out}.diagonal().fill_(" + one + ")", "{out}.transpose(0, 1)[0].mul_(-1)"]
    if x.dtype.is_float:
        views += ["{out}[..., :1].clamp_(-1.0, 1.0)", "{out}.unsqueeze(0).tanh_()"]
    after = [c.pick(views)]
    # a second write only after a linear one: tanh_ and clamp_ save what it would overwrite for backward
    if c.chance(30) and not any(op in after[0] for op in ("tanh_", "clamp_")):
        after.append("{out}.view(-1)[0] = 0" if x.dtype.is_float else "{out}.view(-1)[-1] += 1")
    name, bound = tame(x, LARGE)
    exact = x.exact and not any("tanh_" in a for a in after)
    return Call(f"{name}.clone(memory_format=torch.contiguous_format)", x.type.with_(contiguous=True),
                2 * bound + 1, exact, tuple(after))
