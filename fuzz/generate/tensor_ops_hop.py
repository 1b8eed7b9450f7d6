"""Operator rules: higher-order operators, whose operands include Python functions.

Rules as in ``fuzz.generate.tensor_ops`` (registered there, in this module's
order): ``torch.cond``, ``torch.vmap``, ``torch.utils.checkpoint.checkpoint``
and ``flex_attention``, each over a lambda written in ``f`` (one that may
close over another value of the pool: a cell Dynamo lifts into the
subgraph). Dynamo traces these into higher-order operators (``cond``,
``_vmap``/functorch transforms, ``tag_activation_checkpoint``,
``flex_attention``), which AOTAutograd and Inductor lower as subgraphs:
``torch/_dynamo/variables/higher_order_ops.py``, Inductor's ``Conditional``
IR and its CPU flex-attention template.

The branch and body functions are elementwise, so a function's result has
its operand's shape, dtype and layout (``torch.cond`` needs both branches to
agree on them). A ``torch.cond`` predicate is a shape comparison or a sum of
an exact value (an int or bool tensor), never a float that rounding could
move across its threshold between eager and compiled code. ``flex_attention``
takes float32 (B, H, L, E) queries with key and value tensors of their own
(torch 2.12.0's CPU template refuses one buffer for two of them); its
``score_mod`` adds a relative-position bias or masks causally.
"""

from __future__ import annotations

from collections.abc import Sequence

from fuzz.generate.tensor_ops import LARGE, Call, Chooser, Family, choose, is_float, literal, op_rule, tame
from fuzz.generate.tensor_types import DType, Value

__all__: list[str] = []

# Elementwise bodies of a lambda over ``{t}``: text and the bound of the
# result from the operand's bound b. They keep shape, dtype and strides.
_BODIES: tuple[tuple[str, str], ...] = (
    ("torch.sin({t})", "1"),
    ("torch.cos({t})", "1"),
    ("torch.tanh({t})", "1"),
    ("torch.sigmoid({t})", "1"),
    ("{t} * 2.0", "2b"),
    ("{t} - 1.0", "b+1"),
    ("torch.relu({t})", "b"),
)
# Name of the module a flex_attention call needs (fuzz.generate.prelude.PRELUDE).
FLEX_NEED = "flex_attention"


def _body(c: Chooser, t: str, bound: float) -> tuple[str, float]:
    text, rule = c.pick(_BODIES)
    return text.format(t=t), {"1": 1.0, "2b": 2 * bound, "b+1": bound + 1.0, "b": bound}[rule]


def _captured(c: Chooser, pool: Sequence[Value], x: Value) -> Value | None:
    """Another float value of x's dtype, without grad, for a lambda to close over (or None)."""
    fits = [v for v in pool if v is not x and v.dtype is x.dtype and not v.type.requires_grad and v.type.numel > 0]
    return c.pick(fits) if fits and c.chance(50) else None


@op_rule("cond", Family.HIGHER_ORDER)
def cond(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``torch.cond(pred, lambda t: ..., lambda t: ..., (x,))`` on a float x without grad;
    pred ``x.shape[0] > k`` or ``e.sum() > k`` of an exact int/bool e; one branch may add
    the mean of a captured value (then the operand is a copy of x, which may be a view of it)."""
    x = choose(c, pool, lambda v: is_float(v) and not v.type.requires_grad)
    if x is None:
        return None
    exact = [v for v in pool if v.exact and v.dtype in (DType.INT32, DType.INT64, DType.BOOL)
             and not v.dtype.is_float and v.type.numel > 0]
    if exact and (x.type.ndim == 0 or c.chance(50)):
        e = c.pick(exact)
        pred = f"{e.name}.sum() > {c.pick((0, 1, 2))}"
    elif x.type.ndim > 0:
        pred = f"{x.name}.shape[0] > {c.pick((1, 2, 3))}"
    else:
        return None
    operand, bound = tame(x, LARGE)
    yes, yes_bound = _body(c, "t", bound)
    no, no_bound = _body(c, "t", bound)
    y = _captured(c, pool, x)
    if y is not None:
        captured, y_bound = tame(y, LARGE)
        yes, yes_bound = f"{yes} + {captured}.mean()", yes_bound + y_bound
        # the operand a copy: x may be a view of y, and a captured tensor that
        # aliases an operand is input-to-input aliasing, which higher-order
        # operators refuse by design (Dynamo's "Encountered aliasing during
        # higher order op tracing"; under no_grad AOTAutograd's "cond_true
        # might be aliasing the input or the output!", pytorch#153832)
        operand = f"{operand}.clone()"
    text = f"torch.cond({pred}, lambda t: {yes}, lambda t: {no}, ({operand},))"
    return Call(text, x.type, max(yes_bound, no_bound))


@op_rule("vmap", Family.HIGHER_ORDER)
def vmap(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``torch.vmap(lambda r: ..., in_dims=d, out_dims=d)(x)`` over dim 0 or 1 of a float x
    (ndim >= 2): an elementwise body times a per-row reduction, or a row softmax."""
    x = choose(c, pool, lambda v: is_float(v) and v.type.ndim >= 2)
    if x is None:
        return None
    dim = c.pick((0, 1))
    operand, bound = tame(x, 3.0)
    form = c.index(3)
    if form == 0:
        body, b = _body(c, "r", bound)
        text, out_bound = f"{body} * torch.tanh(r.mean())", b
    elif form == 1:
        text, out_bound = "r - r.mean()", 2 * bound
    else:
        text, out_bound = "torch.softmax(r, dim=-1)", 1.0
    dims = "" if dim == 0 else ", in_dims=1, out_dims=1"
    return Call(f"torch.vmap(lambda r: {text}{dims})({operand})", x.type.with_(contiguous=dim == 0 and
                                                                                      x.type.contiguous), out_bound)


@op_rule("checkpoint", Family.HIGHER_ORDER)
def checkpoint(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``torch.utils.checkpoint.checkpoint(lambda t: ..., x, use_reentrant=False)`` of a float x
    (its backward recomputes the body), maybe with a captured value."""
    x = choose(c, pool, is_float)
    if x is None:
        return None
    operand, bound = tame(x, 3.0)
    body, b = _body(c, "t", bound)
    text, out_bound = f"{body} * t", b * bound
    y = _captured(c, pool, x)
    if y is not None and y.type.ndim == 0:
        captured, y_bound = tame(y, 3.0)
        text, out_bound = f"{text} + {captured}", out_bound + y_bound
    return Call(f"torch.utils.checkpoint.checkpoint(lambda t: {text}, {operand}, use_reentrant=False)",
                x.type.with_(contiguous=x.type.contiguous), out_bound + 1.0)


@op_rule("flex-attention", Family.HIGHER_ORDER)
def flex_attention(c: Chooser, pool: Sequence[Value]) -> Call | None:
    """``flex_attention(q, k, v, score_mod=...)`` on float32 (B, H, L, E) q without grad, k
    and v linspace tensors of q's shape; score_mod None, a relative-position bias scaled
    by a local float, or a causal mask."""
    x = choose(c, pool, lambda v: v.dtype is DType.FLOAT32 and v.type.ndim == 4 and not v.type.requires_grad)
    if x is None:
        return None
    q, _ = tame(x, 3.0)
    n = x.type.numel
    sizes = ", ".join(map(str, x.shape))
    k = f"torch.linspace(-1.0, 1.0, {n}).reshape({sizes})"
    v = f"torch.linspace(-2.0, 2.0, {n}).reshape({sizes}).flip(-1)"
    form = c.index(3)
    if form == 0:
        mod = ""
    elif form == 1:
        scale = c.pick((0.1, 0.25, 0.5))
        mod = f", score_mod=lambda s, b, h, qi, ki: s + (qi - ki) * {literal(scale)}"
    else:
        mod = ', score_mod=lambda s, b, h, qi, ki: torch.where(qi >= ki, s, -float("inf"))'
    text = f"torch.nn.attention.flex_attention.flex_attention({q}, {k}, {v}{mod})"
    return Call(text, x.type.with_(contiguous=True), 2.0, needs=(FLEX_NEED,))
