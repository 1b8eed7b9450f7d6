"""Operator rules: losses, attention, linear algebra products, lookups and bucketing, more layout.

Rules as in ``fuzz.generate.tensor_ops`` (registered there, in this module's
order): operators that Inductor keeps as their own kernels or lowerings
(``searchsorted``, ``bucketize``, ``embedding``, ``median``, attention,
transposed convolution, ``unfold``) and the losses, whose backward graphs
bring their own aten operators. Class targets and lookup indices are built
from ``torch.arange`` modulo a size, so they are always in range; bucketing
boundaries are sorted constants, and values bucketed are exact, so a value
never sits on a boundary differently in eager and compiled code.
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
    is_float,
    op_rule,
    tame,
)
from fuzz.generate.tensor_ops_layout import broadcasts_to
from fuzz.generate.tensor_types import DType, TensorType, Value

__all__: list[str] = []

_CONV_DTYPES = (DType.FLOAT32, DType.FLOAT64)


def _linspace(shape: tuple[int, ...], dtype: DType, low: float = -1.0, high: float = 1.0) -> str:
    sizes = ", ".join(map(str, shape))
    return f"torch.linspace({low}, {high}, {math.prod(shape)}, dtype={dtype.torch}).reshape({sizes})"


def _float_type(x: Value, shape: tuple[int, ...]) -> TensorType:
    return TensorType(shape, x.dtype, requires_grad=x.type.requires_grad)


# -- losses ------------------------------------------------------------------------

@op_rule("loss", Family.LOSS)
def loss(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """A loss of torch.nn.functional between x and a target of x's shape (a pool value or a
    linspace): mse, l1, smooth_l1, huber, BCE with logits (target in [0, 1]), kl_div, soft margin;
    ``reduction`` none, mean or sum."""
    x = choose(c, pool, lambda v: is_float(v) and v.type.ndim >= 1)
    if x is None:
        return None
    fits = [v for v in pool if v.shape == x.shape and v.dtype is x.dtype and v is not x]
    partner = c.pick(fits) if fits and c.chance(50) else None
    target, bt = tame(partner, 3.0) if partner is not None else (_linspace(x.shape, x.dtype), 1.0)
    if partner is not None and partner.type.requires_grad:
        # some losses are not differentiable in the target (soft_margin_loss)
        target, partner = f"{target}.detach()", None
    name, bx = tame(x, 3.0)
    form = c.pick(("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy_with_logits",
                   "kl_div", "soft_margin_loss"))
    reduction = c.pick(("none", "mean", "sum"))
    if form == "binary_cross_entropy_with_logits":
        target, bt = f"torch.sigmoid({target})", 1.0
    if form == "kl_div":
        name, target = f"torch.log_softmax({name}, dim=-1)", f"torch.softmax({target}, dim=-1)"
        if reduction == "mean":
            reduction = "batchmean"  # "mean" warns that it is not KL divergence's definition
    bound = {"mse_loss": (bx + bt) ** 2, "kl_div": 2 * (2 * bx + math.log(x.shape[-1]) + 2)}.get(form, bx + bt + 1)
    if reduction == "sum":
        bound *= x.type.numel
    shape = x.shape if reduction == "none" else ()
    if reduction == "batchmean":
        bound *= x.type.numel
    grad = x.type.requires_grad or (partner is not None and partner.type.requires_grad)
    text = f"torch.nn.functional.{form}({name}, {target}, reduction={reduction!r})"
    typ = TensorType(shape, x.dtype, requires_grad=grad)
    return Call(text, typ, bound)


@op_rule("cross_entropy", Family.LOSS)
def cross_entropy(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``F.cross_entropy`` / ``F.nll_loss`` of (N, C) logits with arange-built class targets
    (maybe label smoothing or class weights)."""
    x = choose(c, pool, lambda v: is_float(v) and v.type.ndim == 2)
    if x is None:
        return None
    n, classes = x.shape
    target = f"(torch.arange({n}) * {c.pick((1, 3, 5))} % {classes})"
    name, b = tame(x, 8.0)
    reduction = c.pick(("mean", "sum", "none"))
    form = c.pick(("cross_entropy", "nll_loss", "smoothing", "weighted"))
    if form == "nll_loss":
        text = f"torch.nn.functional.nll_loss(torch.log_softmax({name}, dim=1), {target}, reduction={reduction!r})"
    elif form == "smoothing":
        text = f"torch.nn.functional.cross_entropy({name}, {target}, label_smoothing=0.1, reduction={reduction!r})"
    elif form == "weighted":
        weight = _linspace((classes,), x.dtype, 0.5, 1.5)
        text = f"torch.nn.functional.cross_entropy({name}, {target}, weight={weight}, reduction={reduction!r})"
    else:
        text = f"torch.nn.functional.cross_entropy({name}, {target}, reduction={reduction!r})"
    bound = (2 * b + math.log(classes) + 1) * (n if reduction == "sum" else 1) * 1.5
    return Call(text, _float_type(x, (n,) if reduction == "none" else ()), bound)


# -- attention and products --------------------------------------------------------------

@op_rule("attention", Family.MATMUL)
def attention(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``F.scaled_dot_product_attention(q, k, v)`` on (B, L, E) or (B, H, L, E) floats (k, v
    linspace of the same shape or q itself; maybe causal), or the explicit
    ``softmax(q @ k.mT * scale) @ v`` that Inductor's attention patterns match."""
    x = choose(c, pool, lambda v: is_float(v) and v.dtype is not DType.FLOAT16 and v.type.ndim in (3, 4))
    if x is None:
        return None
    name, _ = tame(x, 3.0)
    key = name if c.chance(40) else _linspace(x.shape, x.dtype)
    value = _linspace(x.shape, x.dtype, -2.0, 2.0) if c.chance(60) else name
    if c.chance(40):
        scale = 1.0 / math.sqrt(x.shape[-1])
        text = f"(torch.softmax(({name} @ {key}.transpose(-2, -1)) * {scale!r}, dim=-1) @ {value})"
    else:
        causal = ", is_causal=True" if c.chance(30) else ""
        text = f"torch.nn.functional.scaled_dot_product_attention({name}, {key}, {value}{causal})"
    return Call(text, _float_type(x, x.shape), 3.0)


@op_rule("products", Family.MATMUL)
def products(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``torch.outer``, ``torch.dot``, ``torch.mv``/``addmv``, ``torch.addr``, ``torch.kron``,
    ``torch.tensordot`` and ``torch.linalg.cross`` (last dim 3) of floats with linspace partners."""
    x = choose(c, pool, lambda v: is_float(v) and v.type.ndim in (1, 2))
    if x is None:
        return None
    name, b = tame(x, 3.0)
    if x.type.ndim == 1:
        (k,) = x.shape
        form = c.pick(("outer", "dot", "kron", "cross"))
        other = _linspace((k,), x.dtype)
        if form == "outer":
            return Call(f"torch.outer({name}, {other})", _float_type(x, (k, k)), b)
        if form == "dot":
            return Call(f"torch.dot({name}, {other})", _float_type(x, ()), b * k)
        if form == "cross" and k == 3:
            return Call(f"torch.linalg.cross({name}, {other})", _float_type(x, (3,)), 2 * b)
        return Call(f"torch.kron({name}, {_linspace((2,), x.dtype)})", _float_type(x, (2 * k,)), b)
    rows, cols = x.shape
    form = c.pick(("mv", "addmv", "addr", "tensordot"))
    if form == "addr":
        return Call(f"torch.addr({name}, {_linspace((rows,), x.dtype)}, {_linspace((cols,), x.dtype)}, beta=0.5)",
                    _float_type(x, x.shape), b + 1)
    if form == "tensordot":
        other = _linspace((cols, 2), x.dtype)
        return Call(f"torch.tensordot({name}, {other}, dims=1)", _float_type(x, (rows, 2)), b * cols)
    vec = _linspace((cols,), x.dtype)
    if form == "addmv":
        return Call(f"torch.addmv({_linspace((rows,), x.dtype)}, {name}, {vec}, alpha=0.5)",
                    _float_type(x, (rows,)), b * cols + 1)
    return Call(f"torch.mv({name}, {vec})", _float_type(x, (rows,)), b * cols)


# -- lookups and bucketing ----------------------------------------------------------------

@op_rule("embedding", Family.INDEXING)
def embedding(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``F.embedding(idx, weight)`` with weight a 2-D float of the pool and idx arange-built
    (repeats), or ``F.one_hot`` of an exact int value taken modulo its class count."""
    weights = [v for v in pool if is_float(v) and v.type.ndim == 2]
    ints = [v for v in pool if v.exact and v.dtype is DType.INT64 and v.type.ndim <= 2 and v.type.numel <= 64]
    if ints and (not weights or c.chance(30)):
        x = c.pick(ints)
        classes = c.pick((3, 4, 5))
        return Call(f"torch.nn.functional.one_hot({x.name}.abs() % {classes}, {classes})",
                    TensorType(x.shape + (classes,), DType.INT64), 1.0, True)
    if not weights:
        return None
    w = c.pick(weights)
    length = c.pick((2, 3, 5))
    idx_shape = (length,) if c.chance(60) else (2, length)
    idx = f"(torch.arange({math.prod(idx_shape)}).reshape({', '.join(map(str, idx_shape))}) * 3 % {w.shape[0]})"
    return Call(f"torch.nn.functional.embedding({idx}, {w.name})",
                TensorType(idx_shape + (w.shape[1],), w.dtype, requires_grad=w.type.requires_grad), w.bound, w.exact)


@op_rule("bucketize", Family.INDEXING)
def bucketize(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``torch.bucketize(x, boundaries)`` / ``torch.searchsorted(boundaries, x)`` of an exact
    value with sorted constant boundaries (int64 result), or ``torch.histc`` of an exact float."""
    x = choose(c, pool, lambda v: v.exact and v.dtype in (DType.FLOAT32, DType.FLOAT64, DType.INT64))
    if x is None:
        return None
    boundaries = f"torch.tensor([-1.3, -0.1, 0.6, 1.9], dtype={x.dtype.torch})"
    form = c.pick(("bucketize", "searchsorted", "histc"))
    right = ", right=True" if c.chance(50) else ""
    if form == "histc" and x.dtype.is_float:
        return Call(f"torch.histc({x.name}, bins=4, min=-2.05, max=2.05)", TensorType((4,), x.dtype),
                    float(x.type.numel), True)
    if form == "searchsorted":
        return Call(f"torch.searchsorted({boundaries}, {x.name}{right})", TensorType(x.shape, DType.INT64), 4.0, True)
    return Call(f"torch.bucketize({x.name}, {boundaries}{right})", TensorType(x.shape, DType.INT64), 4.0, True)


@op_rule("take_along_dim", Family.INDEXING)
def take_along_dim(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``torch.take_along_dim``, ``x.index_fill``, ``x.index_copy`` or ``torch.take`` with
    arange-built indices in range."""
    x = choose(c, pool, lambda v: v.type.ndim >= 1 and v.dtype is not DType.BOOL)
    if x is None:
        return None
    d = c.index(x.type.ndim)
    size = x.shape[d]
    form = c.pick(("take_along_dim", "index_fill", "index_copy", "take"))
    if form == "index_fill":
        fill = "-1.0" if x.dtype.is_float else "-1"
        return Call(f"{x.name}.index_fill({d}, torch.arange({size}) % 2 * {size - 1}, {fill})",
                    x.type.with_(contiguous=True), max(x.bound, 1.0), x.exact)
    if form == "index_copy":
        return Call(f"{x.name}.index_copy({d}, torch.arange({size}).flip(0), {x.name} * 2)",
                    x.type.with_(contiguous=True), 2 * x.bound, x.exact and not x.dtype.is_float)
    if form == "take":
        return Call(f"torch.take({x.name}, torch.arange(4) * 5 % {x.type.numel})",
                    x.type.with_(shape=(4,), contiguous=True), x.bound, x.exact)
    shape = ", ".join(map(str, x.shape))
    idx = f"(torch.arange({x.type.numel}).reshape({shape}) * 7 % {size})"
    return Call(f"torch.take_along_dim({x.name}, {idx}, dim={d})", x.type.with_(contiguous=True), x.bound, x.exact)


@op_rule("median", Family.SORT)
def median(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``torch.median(x, d).values``, ``nanmedian``, ``torch.mode(x, d).values`` (of exact values:
    the values are unambiguous, the indices are not) or ``torch.quantile`` of a float."""
    x = choose(c, pool, lambda v: v.type.ndim >= 1 and v.dtype is not DType.BOOL and v.exact)
    if x is None:
        return None
    d = c.index(x.type.ndim)
    shape = x.shape[:d] + x.shape[d + 1:]
    form = c.pick(("median", "nanmedian", "mode", "quantile"))
    if form == "quantile" and x.dtype in (DType.FLOAT32, DType.FLOAT64):
        return Call(f"torch.quantile({x.name}, 0.25, dim={d})", x.type.with_(shape=shape, contiguous=True), x.bound)
    if form == "nanmedian" and not x.dtype.is_float:
        form = "median"
    return Call(f"torch.{form if form != 'quantile' else 'median'}({x.name}, dim={d}).values",
                x.type.with_(shape=shape, contiguous=True), x.bound, True)


# -- more layout ------------------------------------------------------------------------

@op_rule("diagonal", Family.VIEW)
def diagonal(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``x.diagonal()``, ``torch.diag_embed``, ``torch.trace``, ``torch.rot90``, ``torch.diff``
    or ``x.unfold(d, size, step)`` (sliding windows)."""
    x = choose(c, pool, lambda v: v.type.ndim >= 1)
    if x is None:
        return None
    form = c.pick(("diagonal", "diag_embed", "trace", "rot90", "diff", "unfold"))
    if form == "diagonal" and x.type.ndim >= 2:
        shape = x.shape[:-2] + (min(x.shape[-2:]),)
        return Call(f"{x.name}.diagonal(dim1=-2, dim2=-1)", x.type.with_(shape=shape, contiguous=False),
                    x.bound, x.exact)
    if form == "trace" and x.type.ndim == 2 and x.dtype is not DType.BOOL:
        dtype = x.dtype if x.dtype.is_float else DType.INT64
        name, b = tame(x, LARGE)
        return Call(f"torch.trace({name})", x.type.with_(shape=(), dtype=dtype), b * min(x.shape),
                    x.exact and not x.dtype.is_float)
    if form == "rot90" and x.type.ndim >= 2:
        shape = x.shape[:-2] + (x.shape[-1], x.shape[-2])
        return Call(f"torch.rot90({x.name}, 1, dims=(-2, -1))", x.type.with_(shape=shape, contiguous=False),
                    x.bound, x.exact)
    if form == "diff" and x.shape[-1] >= 2 and x.dtype is not DType.BOOL:
        name, b = tame(x, LARGE)
        return Call(f"torch.diff({name}, dim=-1)", x.type.with_(shape=x.shape[:-1] + (x.shape[-1] - 1,),
                    contiguous=True), 2 * b, x.exact and not x.dtype.is_float)
    if form == "unfold" and x.shape[-1] >= 2:
        size = c.pick([s for s in (2, 3) if s <= x.shape[-1]])
        step = c.pick((1, 2))
        windows = (x.shape[-1] - size) // step + 1
        return Call(f"{x.name}.unfold(-1, {size}, {step})", x.type.with_(shape=x.shape[:-1] + (windows, size),
                    contiguous=False), x.bound, x.exact)
    if x.type.ndim <= 3:
        k = x.shape[-1]
        return Call(f"torch.diag_embed({x.name})", x.type.with_(shape=x.shape + (k,), contiguous=True),
                    max(x.bound, 0.0), x.exact)
    return None


@op_rule("conv_transpose", Family.CONV)
def conv_transpose(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``F.conv_transpose1d/2d`` on (N, C, L) / (N, C, H, W) floats with a linspace weight
    (out = (L - 1) s - 2p + k), ``F.pixel_shuffle`` (C divisible by 4, 2-D), or ``F.unfold`` (im2col)."""
    x = choose(c, pool, lambda v: v.dtype in _CONV_DTYPES and v.type.ndim in (3, 4))
    if x is None:
        return None
    channels = x.shape[1]
    spatial = x.shape[2:]
    name, b = tame(x, 3.0)
    form = c.pick(("transpose", "pixel_shuffle", "im2col"))
    if form == "pixel_shuffle" and x.type.ndim == 4 and channels % 4 == 0:
        return Call(f"torch.nn.functional.pixel_shuffle({x.name}, 2)",
                    _float_type(x, (x.shape[0], channels // 4, 2 * spatial[0], 2 * spatial[1])), x.bound, x.exact)
    if form == "im2col" and x.type.ndim == 4 and min(spatial) >= 2:
        blocks = (spatial[0] - 1) * (spatial[1] - 1)
        return Call(f"torch.nn.functional.unfold({x.name}, kernel_size=2)",
                    _float_type(x, (x.shape[0], channels * 4, blocks)), x.bound, x.exact)
    out_channels = c.pick((1, 2, 3))
    kernel, stride = c.pick((1, 2, 3)), c.pick((1, 2))
    padding = c.pick([p for p in (0, 1) if p < kernel])
    out = tuple((s - 1) * stride - 2 * padding + kernel for s in spatial)
    if any(o < 1 for o in out):
        return None
    weight = _linspace((channels, out_channels) + (kernel,) * len(spatial), x.dtype)
    fn = "conv_transpose1d" if x.type.ndim == 3 else "conv_transpose2d"
    text = f"torch.nn.functional.{fn}({name}, {weight}, stride={stride}, padding={padding})"
    return Call(text, _float_type(x, (x.shape[0], out_channels) + out), b * channels * kernel ** len(spatial) + 1)


# -- scatters into views, and sampling ---------------------------------------------

def _slice_text(ndim: int, dim: int, part: str) -> str:
    """An indexing subscript that takes ``part`` (``"1:5:2"``) of dim ``dim`` of ``ndim``."""
    return "[" + ", ".join([":"] * dim + [part]) + "]"


@op_rule("view-scatter", Family.INDEXING)
def view_scatter(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """What an in-place write through a view functionalises to, called
    directly: ``torch.slice_scatter`` (a stepped slice of a dim, maybe a
    negative dim), ``torch.select_scatter``, ``torch.diagonal_scatter``
    (maybe off the main diagonal) or ``x.masked_scatter(mask, src)``. The
    source is a view of x of exactly the written shape, halved (negated for
    integers: both exact); the mask is an exact value's sign broadcasting to x.
    Result: x's shape, dtype and strides."""
    x = choose(c, pool, lambda v: v.type.ndim >= 1 and v.dtype is not DType.BOOL)
    if x is None:
        return None

    def src(view: str) -> str:
        return f"({x.name}{view} * 0.5)" if x.dtype.is_float else f"(-{x.name}{view})"

    out = x.type  # (these clone x, keeping its strides)
    form = c.pick(("slice", "select", "diagonal", "masked"))
    if form == "diagonal" and x.type.ndim >= 2:
        d1, d2 = c.pick([(i, j) for i in range(x.type.ndim) for j in range(x.type.ndim) if i != j])
        offsets = [o for o in (-1, 0, 1) if min(x.shape[d1] + min(o, 0), x.shape[d2] - max(o, 0)) >= 1]
        offset = c.pick(offsets)
        view = f".diagonal({offset}, {d1}, {d2})"
        return Call(f"torch.diagonal_scatter({x.name}, {src(view)}, {offset}, {d1}, {d2})", out, x.bound, x.exact)
    if form == "masked":
        masks = [v for v in pool if v.exact and broadcasts_to(v.shape, x.shape)]
        if not masks:
            return None
        m = c.pick(masks)
        mask = m.name if m.dtype is DType.BOOL else f"({m.name} > 0)"
        return Call(f"{x.name}.masked_scatter({mask}, {src('.flip(0)')})", out, x.bound, x.exact)
    d = c.index(x.type.ndim)
    size = x.shape[d]
    dim = d - x.type.ndim if c.chance(30) else d
    if form == "select":
        index, other = c.index(size), c.index(size)
        index = index - size if c.chance(30) else index
        return Call(f"torch.select_scatter({x.name}, {src(f'.select({d}, {other})')}, {dim}, {index})",
                    out, x.bound, x.exact)
    start = c.pick([s for s in (0, 1) if s < size])
    end = c.pick(sorted({size, max(start + 1, size - 1)}))
    step = c.pick((1, 2, 3))
    view = _slice_text(x.type.ndim, d, f"{start}:{end}:{step}")
    return Call(f"torch.slice_scatter({x.name}, {src(view)}, dim={dim}, start={start}, end={end}, step={step})",
                out, x.bound, x.exact)


@op_rule("grid_sample", Family.CONV)
def grid_sample(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``F.grid_sample`` of (N, C, H, W) floats at an (N, Ho, Wo, 2) grid of
    points in [-1.25, 1.25] (some outside: padding_mode zeros, border or
    reflection), bilinear or bicubic, ``align_corners`` either way. The grid
    is a linspace or a pool value of its shape, clamped and detached: never
    ``nearest`` (its rounding at half-way points may differ between kernels)
    and no gradient to the grid (bilinear's is discontinuous at pixel
    centres). Bound: bicubic's kernel (A = -0.75) sums to at most 1.375 in
    absolute value per dim."""
    x = choose(c, pool, lambda v: v.dtype in _CONV_DTYPES and v.type.ndim == 4)
    if x is None:
        return None
    n = x.shape[0]
    shape = (n, c.pick((1, 2, 3, 5)), c.pick((1, 2, 4, 6)), 2)
    grids = [v for v in pool if v.shape == shape and v.dtype.is_float]
    if grids and c.chance(50):
        grid = f"{c.pick(grids).name}.detach().clamp(-1.25, 1.25).to({x.dtype.torch})"
    else:
        grid = _linspace(shape, x.dtype, -1.25, 1.25)
    mode = c.pick(("bilinear", "bicubic"))
    padding = c.pick(("zeros", "border", "reflection"))
    text = (f"torch.nn.functional.grid_sample({x.name}, {grid}, mode={mode!r}, padding_mode={padding!r}, "
            f"align_corners={c.chance(50)})")
    bound = x.bound * (1.375 ** 2 if mode == "bicubic" else 1.0)
    return Call(text, _float_type(x, (n, x.shape[1], shape[1], shape[2])), bound)
