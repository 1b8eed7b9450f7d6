"""Operator rules: matmul family, normalisation, activations, convolution, pooling, padding.

Rules as in ``fuzz.generate.tensor_ops`` (registered there, in this module's
order). A second operand of the right shape (a weight, a bias) is taken from
the pool where one fits and otherwise built in place from ``torch.linspace``
(deterministic, bounded by 1), cast to the first operand's dtype, since these
operators do not promote. Output sizes follow the formulas of torch.nn's
documentation (Conv1d, MaxPool1d: ``(L + 2p - d (k - 1) - 1) // s + 1``).
Float operands only; convolution and pooling on float32 and float64.
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
from fuzz.generate.tensor_types import DType, TensorType, Value

__all__: list[str] = []

_CONV_DTYPES = (DType.FLOAT32, DType.FLOAT64)


def _weight(shape: tuple[int, ...], dtype: DType) -> str:
    """A deterministic tensor of ``shape`` with values in [-1, 1]."""
    n = math.prod(shape)
    sizes = ", ".join(map(str, shape))
    return f"torch.linspace(-1.0, 1.0, {n}, dtype={dtype.torch}).reshape({sizes})"


def _operand(c: Chooser, pool: Sequence[Value], shape: tuple[int, ...], dtype: DType) -> tuple[str, float]:
    """A pool value of ``shape`` (cast to ``dtype``) or a linspace weight; its text and bound."""
    fits = [v for v in pool if v.shape == shape and v.dtype.is_float]
    if fits and c.chance(60):
        v = c.pick(fits)
        name, bound = tame(v, 3.0)
        return (name if v.dtype is dtype else f"{name}.to({dtype.torch})"), bound
    return _weight(shape, dtype), 1.0


def _result(x: Value, shape: tuple[int, ...], bound: float, dtype: DType | None = None) -> TensorType:
    return TensorType(shape, dtype or x.dtype, requires_grad=x.type.requires_grad)


# -- matmul family ------------------------------------------------------------------

@op_rule("matmul", Family.MATMUL)
def matmul(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``x @ w``, ``torch.mm``, ``torch.bmm``, ``torch.matmul`` (batched, broadcasting),
    ``torch.addmm``/``baddbmm`` with a bias, ``F.linear``; inner sizes agree."""
    x = choose(c, pool, lambda v: is_float(v) and v.type.ndim >= 1)
    if x is None:
        return None
    k = x.shape[-1]
    n = c.pick((1, 2, 3, 5))
    name, bx = tame(x, 3.0)
    form = c.pick(("matmul", "mm", "linear", "addmm", "bmm"))
    if form == "bmm" and x.type.ndim == 3:
        w, bw = _operand(c, pool, (x.shape[0], k, n), x.dtype)
        if c.chance(50):
            bias = _weight((x.shape[0], x.shape[1], n), x.dtype)
            return Call(f"torch.baddbmm({bias}, {name}, {w}, beta=0.5)", _result(x, x.shape[:2] + (n,), 0),
                        bx * bw * k + 1)
        return Call(f"torch.bmm({name}, {w})", _result(x, x.shape[:2] + (n,), 0), bx * bw * k)
    if form in ("mm", "addmm") and x.type.ndim == 2:
        w, bw = _operand(c, pool, (k, n), x.dtype)
        shape = (x.shape[0], n)
        if form == "addmm":
            bias = _weight((n,), x.dtype)
            return Call(f"torch.addmm({bias}, {name}, {w}, alpha=0.5)", _result(x, shape, 0), bx * bw * k + 1)
        return Call(f"torch.mm({name}, {w})", _result(x, shape, 0), bx * bw * k)
    if form == "linear":
        w, bw = _operand(c, pool, (n, k), x.dtype)
        bias = f", {_weight((n,), x.dtype)}" if c.chance(50) else ""
        return Call(f"torch.nn.functional.linear({name}, {w}{bias})", _result(x, x.shape[:-1] + (n,), 0),
                    bx * bw * k + 1)
    if x.type.ndim == 1:
        vector = c.chance(30)
        w, bw = _operand(c, pool, (k,) if vector else (k, n), x.dtype)
        return Call(f"torch.matmul({name}, {w})", _result(x, () if vector else (n,), 0), bx * bw * k)
    batch = x.shape[:-2] if c.chance(50) else ()
    w, bw = _operand(c, pool, batch + (k, n), x.dtype)
    return Call(f"({name} @ {w})", _result(x, x.shape[:-1] + (n,), 0), bx * bw * k)


@op_rule("einsum", Family.MATMUL)
def einsum(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``torch.einsum`` on 2-D and 3-D floats: a contraction, an outer product, a transpose-sum."""
    x = choose(c, pool, lambda v: is_float(v) and v.type.ndim in (2, 3))
    if x is None:
        return None
    name, bx = tame(x, 3.0)
    if x.type.ndim == 2:
        i, j = x.shape
        form = c.pick(("ij,jk->ik", "ij->ji", "ij,ij->i", "ij->"))
        if form == "ij,jk->ik":
            w, bw = _operand(c, pool, (j, 3), x.dtype)
            return Call(f"torch.einsum('ij,jk->ik', {name}, {w})", _result(x, (i, 3), 0), bx * bw * j)
        if form == "ij->ji":
            return Call(f"torch.einsum('ij->ji', {name})", _result(x, (j, i), 0).with_(contiguous=False), bx)
        if form == "ij,ij->i":
            return Call(f"torch.einsum('ij,ij->i', {name}, {name})", _result(x, (i,), 0), bx * bx * j)
        return Call(f"torch.einsum('ij->', {name})", _result(x, (), 0), bx * i * j)
    b, i, j = x.shape
    w, bw = _operand(c, pool, (b, j, 2), x.dtype)
    return Call(f"torch.einsum('bij,bjk->bik', {name}, {w})", _result(x, (b, i, 2), 0), bx * bw * j)


# -- normalisation ------------------------------------------------------------------

@op_rule("layer_norm", Family.NORM)
def layer_norm(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``F.layer_norm`` over the last 1-2 dims (maybe with weight and bias), ``F.group_norm``
    with C divisible by the groups, ``F.batch_norm`` in eval mode with fixed running stats,
    ``F.instance_norm`` (more than 1 spatial element), ``F.rms_norm`` over the last 1-2 dims
    (maybe with weight), or ``F.normalize``."""
    x = choose(c, pool, lambda v: is_float(v) and v.type.ndim >= 1)
    if x is None:
        return None
    name, _ = tame(x, LARGE)
    form = c.pick(("layer", "group", "batch", "normalize", "instance", "rms"))
    if form == "instance" and x.type.ndim in (3, 4) and math.prod(x.shape[2:]) > 1:
        # (use_input_stats, the default, needs more than 1 spatial element)
        return Call(f"torch.nn.functional.instance_norm({name})", _result(x, x.shape, 0),
                    2 + 2 * math.sqrt(math.prod(x.shape[2:])))
    if form == "rms":
        last = 2 if x.type.ndim >= 2 and c.chance(30) else 1
        normalized = x.shape[-last:]
        weight = f", {_weight(normalized, x.dtype)}" if c.chance(50) else ""
        return Call(f"torch.nn.functional.rms_norm({name}, {tuple(normalized)}{weight})", _result(x, x.shape, 0),
                    1 + math.sqrt(math.prod(normalized)))
    if form == "group" and x.type.ndim >= 2:
        channels = x.shape[1]
        spatial = math.prod(x.shape[2:])
        groups = c.pick([g for g in (1, 2, 3) if channels % g == 0 and channels // g * spatial > 1] or [0])
        if not groups:
            return None
        affine = f", {_weight((channels,), x.dtype)}, {_weight((channels,), x.dtype)}" if c.chance(50) else ""
        return Call(f"torch.nn.functional.group_norm({name}, {groups}{affine})", _result(x, x.shape, 0),
                    2 + 2 * math.sqrt(x.type.numel))
    if form == "batch" and x.type.ndim >= 2:
        channels = x.shape[1]
        mean = f"torch.linspace(-0.5, 0.5, {channels}, dtype={x.dtype.torch})"
        var = f"torch.linspace(0.5, 1.5, {channels}, dtype={x.dtype.torch})"
        return Call(f"torch.nn.functional.batch_norm({name}, {mean}, {var}, training=False)",
                    _result(x, x.shape, 0), (LARGE + 1) * 1.5)
    if form == "normalize":
        d = c.index(x.type.ndim)
        return Call(f"torch.nn.functional.normalize({name}, dim={d})", _result(x, x.shape, 0), 1.0)
    last = 2 if x.type.ndim >= 2 and c.chance(30) else 1
    normalized = x.shape[-last:]
    affine = ""
    if c.chance(50):
        affine = f", {_weight(normalized, x.dtype)}, {_weight(normalized, x.dtype)}"
    return Call(f"torch.nn.functional.layer_norm({name}, {tuple(normalized)}{affine})", _result(x, x.shape, 0),
                2 + 2 * math.sqrt(math.prod(normalized)))


# -- activations ----------------------------------------------------------------

_ACTIVATIONS: tuple[tuple[str, float, float], ...] = (
    # template, bound given the operand's bound b: scale * b + offset
    ("torch.nn.functional.gelu({x})", 1.0, 0.0),
    ("torch.nn.functional.gelu({x}, approximate='tanh')", 1.0, 0.0),
    ("torch.nn.functional.silu({x})", 1.0, 0.0),
    ("torch.nn.functional.softplus({x}, beta=2.0)", 1.0, 1.0),
    ("torch.nn.functional.hardtanh({x}, -0.5, 0.5)", 0.0, 0.5),
    ("torch.nn.functional.leaky_relu({x}, 0.1)", 1.0, 0.0),
    ("torch.nn.functional.elu({x}, alpha=0.5)", 1.0, 0.5),
    ("torch.nn.functional.hardswish({x})", 1.0, 0.0),
    ("torch.nn.functional.mish({x})", 1.0, 0.0),
    ("torch.nn.functional.relu6({x})", 0.0, 6.0),
    ("torch.nn.functional.logsigmoid({x})", 1.0, 1.0),
    ("torch.nn.functional.celu({x}, alpha=2.0)", 1.0, 2.0),
)


@op_rule("activation", Family.ACTIVATION)
def activation(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """An activation of torch.nn.functional with its parameters, on a float."""
    x = choose(c, pool, is_float)
    if x is None:
        return None
    template, scale, offset = c.pick(_ACTIVATIONS)
    name, b = tame(x, LARGE)
    return Call(template.format(x=name), x.type, scale * b + offset)


@op_rule("softmax", Family.ACTIVATION)
def softmax(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``softmax``/``log_softmax`` over a dim (maybe with dtype=float32 from low precision),
    or ``F.glu`` over an even dim."""
    x = choose(c, pool, lambda v: is_float(v) and v.type.ndim >= 1)
    if x is None:
        return None
    d = c.index(x.type.ndim) - (x.type.ndim if c.chance(30) else 0)
    even = [i for i, s in enumerate(x.shape) if s % 2 == 0]
    if even and c.chance(20):
        g = c.pick(even)
        name, b = tame(x, LARGE)
        shape = x.shape[:g] + (x.shape[g] // 2,) + x.shape[g + 1:]
        return Call(f"torch.nn.functional.glu({name}, dim={g})", x.type.with_(shape=shape, contiguous=True), b)
    name, b = tame(x, 8.0)
    fn = c.pick(("softmax", "log_softmax"))
    dtype = x.dtype
    extra = ""
    if x.dtype.is_low_precision and c.chance(50):
        extra, dtype = ", dtype=torch.float32", DType.FLOAT32
    bound = 1.0 if fn == "softmax" else 2 * b + math.log(x.shape[d]) + 1
    return Call(f"torch.{fn}({name}, dim={d}{extra})", x.type.with_(dtype=dtype, contiguous=True), bound)


# -- convolution, pooling, padding, resampling ---------------------------------------

def _out_size(size: int, kernel: int, stride: int, padding: int, dilation: int = 1) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


@op_rule("conv", Family.CONV)
def conv(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``F.conv1d`` on (N, C, L) / ``F.conv2d`` on (N, C, H, W) floats with a linspace weight,
    maybe a bias, stride, padding, dilation and groups (C divisible)."""
    x = choose(c, pool, lambda v: v.dtype in _CONV_DTYPES and v.type.ndim in (3, 4))
    if x is None:
        return None
    spatial = x.shape[2:]
    channels = x.shape[1]
    groups = c.pick([g for g in (1, 2) if channels % g == 0])
    out_channels = groups * c.pick((1, 2, 3))
    kernel = c.pick([k for k in (1, 2, 3) if all(k <= s for s in spatial)] or [1])
    stride, padding, dilation = c.pick((1, 2)), c.pick((0, 1)), 1
    if kernel > 1 and all(2 * (kernel - 1) + 1 <= s + 2 * padding for s in spatial) and c.chance(20):
        dilation = 2
    out = tuple(_out_size(s, kernel, stride, padding, dilation) for s in spatial)
    if any(o < 1 for o in out):
        return None
    weight = _weight((out_channels, channels // groups) + (kernel,) * len(spatial), x.dtype)
    bias = _weight((out_channels,), x.dtype) if c.chance(50) else "None"
    fn = "conv1d" if x.type.ndim == 3 else "conv2d"
    name, b = tame(x, 3.0)
    text = (f"torch.nn.functional.{fn}({name}, {weight}, {bias}, stride={stride}, padding={padding}, "
            f"dilation={dilation}, groups={groups})")
    fan_in = (channels // groups) * kernel ** len(spatial)
    return Call(text, _result(x, (x.shape[0], out_channels) + out, 0), b * fan_in + 1)


def _pool_size(size: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool) -> int:
    """Output size of a pooling window over ``size`` elements, as ATen's
    ``pooling_output_shape`` (aten/src/ATen/native/Pool.h) computes it: with
    ``ceil_mode`` the last window may hang over the end, but must start
    inside the input or its left padding."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


@op_rule("pool", Family.CONV)
def pool(c: Chooser, pool_: Sequence[Value]) -> Call | None:
    """``F.max_pool1d/2d`` (maybe dilated), ``F.avg_pool1d/2d`` (maybe
    ``count_include_pad=False``, 2-D maybe ``divisor_override``), either maybe
    ``ceil_mode`` (the last window hangs over the end), or
    ``F.adaptive_avg_pool1d/2d``, ``F.adaptive_max_pool1d/2d`` to an output
    that need not divide the input, on (N, C, L) / (N, C, H, W) floats.
    Padding is at most half the (dilated) kernel, as ATen requires."""
    x = choose(c, pool_, lambda v: v.dtype in _CONV_DTYPES and v.type.ndim in (3, 4))
    if x is None:
        return None
    spatial = x.shape[2:]
    dims = "1d" if x.type.ndim == 3 else "2d"
    form = c.pick(("max", "avg", "adaptive", "adaptive_max"))
    if form.startswith("adaptive"):
        out = tuple(c.pick(sorted({max(1, s // 2), max(1, s - 1), s + 1})) for s in spatial)
        size = out[0] if len(out) == 1 else out
        fn = "adaptive_avg_pool" if form == "adaptive" else "adaptive_max_pool"
        return Call(f"torch.nn.functional.{fn}{dims}({x.name}, {size})",
                    _result(x, x.shape[:2] + out, 0), x.bound, form == "adaptive_max" and x.exact)
    kernel = c.pick([k for k in (2, 3) if all(k <= s for s in spatial)] or [1])
    stride = c.pick((1, 2, 3)) if kernel > 1 else c.pick((1, 2))
    dilation = 2 if form == "max" and kernel > 1 and c.chance(25) else 1
    padding = c.pick((0, 1)) if (dilation * (kernel - 1) + 1) // 2 >= 1 else 0
    ceil_mode = c.chance(40)
    out = tuple(_pool_size(s, kernel, stride, padding, dilation, ceil_mode) for s in spatial)
    if any(o < 1 for o in out):
        return None
    options = f"stride={stride}, padding={padding}"
    if dilation > 1:
        options += f", dilation={dilation}"
    if ceil_mode:
        options += ", ceil_mode=True"
    if form == "avg" and padding and c.chance(40):
        options += ", count_include_pad=False"
    if form == "avg" and dims == "2d" and c.chance(20):
        options += f", divisor_override={c.pick((1, 3))}"
    text = f"torch.nn.functional.{form}_pool{dims}({x.name}, {kernel}, {options})"
    bound = x.bound * (kernel ** len(spatial) if "divisor_override" in options else 1)
    return Call(text, _result(x, x.shape[:2] + out, 0), bound, form == "max" and x.exact)


@op_rule("pad", Family.CONV)
def pad(c: Chooser, pool_: Sequence[Value]) -> Call | None:
    """``F.pad``: constant (any float, of the last dim, maybe a negative pad
    that crops), or reflect, replicate or circular (float32/float64: the last
    dim of a 2-D or 3-D input, the last two of a 3-D or 4-D one; a pad
    smaller than the dim for reflect, at most the dim for circular)."""
    x = choose(c, pool_, lambda v: is_float(v) and v.type.ndim >= 1)
    if x is None:
        return None
    modes = ["constant"]
    if x.type.ndim in (2, 3, 4) and x.dtype in _CONV_DTYPES:
        modes += ["replicate", "reflect", "circular"]
    mode = c.pick(modes)
    # ATen pads 1 dim of a 2-D or 3-D input and 2 of a 3-D or 4-D one (F.pad's
    # "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported")
    padded = 1 if mode == "constant" or x.type.ndim == 2 else 2 if x.type.ndim == 4 else c.pick((1, 2))
    pads: list[int] = []
    shape = list(x.shape)
    for d in range(x.type.ndim - 1, x.type.ndim - 1 - padded, -1):
        size = x.shape[d]
        left, right = c.pick((0, 1, 2)), c.pick((1, 2))
        if mode == "constant" and size > 1 and c.chance(15):
            left = -1  # crops the first element
        limit = size - 1 if mode == "reflect" else size if mode == "circular" else None
        if limit is not None and max(left, right) > limit:
            if limit < 1:
                return None
            left, right = min(left, limit), min(right, limit)
        pads += [left, right]
        shape[d] = size + left + right
    value = ", value=0.5" if mode == "constant" and c.chance(50) else ""
    return Call(f"torch.nn.functional.pad({x.name}, {tuple(pads)}, mode={mode!r}{value})",
                _result(x, tuple(shape), 0), max(x.bound, 0.5), x.exact)


# Interpolation modes by input rank, and the bound of the result given the
# input's (bicubic's kernel, A = -0.75, sums to at most 1.375 in absolute value per dim).
_INTERPOLATE_MODES = {3: ("nearest", "nearest-exact", "linear", "area"),
                      4: ("nearest", "nearest-exact", "bilinear", "bicubic", "area")}


@op_rule("interpolate", Family.CONV)
def interpolate(c: Chooser, pool_: Sequence[Value]) -> Call | None:
    """``F.interpolate`` of (N, C, L) / (N, C, H, W) floats: nearest,
    nearest-exact, linear/bilinear/bicubic (``align_corners`` either way;
    bilinear/bicubic down-sampling maybe ``antialias``) or area, by
    ``scale_factor=2.0`` or to a ``size`` up or down that need not divide the input."""
    x = choose(c, pool_, lambda v: v.dtype in _CONV_DTYPES and v.type.ndim in (3, 4))
    if x is None:
        return None
    mode = c.pick(_INTERPOLATE_MODES[x.type.ndim])
    spatial = x.shape[2:]
    if c.chance(30):
        out = tuple(2 * s for s in spatial)
        how = "scale_factor=2.0"
    else:
        out = tuple(c.pick(sorted({s + 1, 2 * s + 1, max(1, s - 1), max(1, s // 2)})) for s in spatial)
        how = f"size={out[0] if len(out) == 1 else out}"
    options = ""
    if mode in ("linear", "bilinear", "bicubic"):
        options += f", align_corners={c.chance(40)}"
        if mode != "linear" and any(o < s for o, s in zip(out, spatial)) and c.chance(50):
            options += ", antialias=True"
    bound = x.bound * (1.375 ** len(spatial) if mode == "bicubic" else 1.0)
    exact = mode.startswith("nearest") and x.exact
    return Call(f"torch.nn.functional.interpolate({x.name}, {how}, mode={mode!r}{options})",
                _result(x, x.shape[:2] + out, 0), bound, exact)
