"""Typed operator graphs: inputs of chosen types, then 10 to 40 operator calls over them.

``draw_inputs`` chooses the graph's input tensors (shapes that broadcast
against a base shape, dtypes float16 to float64, int32/int64 and bool, some
strided, some stored in a permuted dim order, some leaves that require grad,
some tie-free permutations) and the
expressions that build them in ``inputs()``; ``build`` then writes one
operator call per step, drawing a family (``FAMILY_WEIGHTS``) and a rule of
``fuzz.generate.tensor_ops.RULES`` that fits the values so far. Each call is
bound to a fresh name and joins the pool, so later calls reuse earlier
results: a DAG, as torchfuzz writes, but typed by our rules; its outputs are
its sinks, so every call is live. Where an input
requires grad, the graph ends with ``torch.autograd.grad`` of a sum over its
outputs (``materialize_grads=True``: unreached inputs get zeros;
``retain_graph=True``: outputs folded into tensors the program later
differentiates again keep their graph) and the gradients are outputs too.

Every choice is a ``Chooser`` draw, so a graph is a function of the draws:
the generator's Hypothesis choices, or ``RandomChooser(seed)`` in tests.
Sizes stay at most ``MAX_SIZE`` per dim (but for the wide dims some graphs
get, ``WIDE_SIZES``) and ``MAX_NUMEL`` per tensor, so a graph runs in
microseconds eagerly; the program adds a larger input
elsewhere so that the harness's shape call grows that one and not the
graph's (see ``fuzz.generate.constructs_tensor``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from fuzz.generate import (  # noqa: F401  (registers the rules)
    tensor_ops,
    tensor_ops_extra,
    tensor_ops_hop,
    tensor_ops_layout,
    tensor_ops_nn,
)
from fuzz.generate.tensor_ops import RULES, Call, Chooser, Family, OpRule
from fuzz.generate.tensor_types import DType, TensorType, Value

__all__ = ["FAMILY_WEIGHTS", "Graph", "GraphInput", "build", "draw_inputs"]

# Largest size of one dim of a graph input (the program's growth input is larger).
MAX_SIZE = 6
# Largest element count of any value in a graph (a call making more is skipped).
MAX_NUMEL = 768
# Sizes of a *wide* dim (``draw_inputs(wide_percent=...)``): a few elements
# past the vector widths of Inductor's C++ kernels (8 and 16 float32 lanes on
# AVX2 and AVX-512, 32 lanes for 16-bit floats), so that a kernel over it runs
# its full-vector loop and then a masked tail, a 2-D tile (16 x 16) fills, and
# a reduction over it is a loop, not unrolled (more than 8 elements). A dim of
# at most MAX_SIZE only ever runs the tail: the blind spot of
# pytorch/pytorch#196681 (a 2-D tiled reduction's tail store overruns its
# buffer), which needs a dim of 17 or more.
WIDE_SIZES = (9, 17, 19, 24, 33, 40)
# Sizes of the second wide dim of a base shape with two (small enough that
# the two together stay under half of MAX_NUMEL).
SECOND_WIDE_SIZES = (9, 17, 19)
# Chance (percent) that a widened base shape gets a second wide dim.
SECOND_WIDE_PERCENT = 30
# Most dims of any value.
MAX_NDIM = 5
# Tries per step when a drawn rule finds no operand that fits.
ATTEMPTS = 4
# Relative weight of each family when drawing the next call.
FAMILY_WEIGHTS: dict[Family, int] = {
    Family.UNARY: 6, Family.BINARY: 7, Family.TERNARY: 2, Family.REDUCTION: 5, Family.SCAN: 1,
    Family.VIEW: 6, Family.INDEXING: 3, Family.JOIN: 3, Family.SORT: 1, Family.INPLACE: 2,
    Family.MATMUL: 3, Family.NORM: 2, Family.ACTIVATION: 3, Family.CONV: 2, Family.LOSS: 1,
    Family.HIGHER_ORDER: 1,
}
# Input dtypes and their weights.
_INPUT_DTYPES: tuple[tuple[DType, int], ...] = (
    (DType.FLOAT32, 10), (DType.FLOAT64, 2), (DType.FLOAT16, 2), (DType.BFLOAT16, 2),
    (DType.INT64, 2), (DType.INT32, 1), (DType.BOOL, 1),
)
_NAME = re.compile(r"\b(v\d+|p\d+)\b")


@dataclasses.dataclass(frozen=True)
class GraphInput:
    """An input of the graph: its value and the expression that builds it in ``inputs()`` (uses ``g``)."""

    value: Value
    source: str
    # the dim order its storage is laid out in (tensor_graph._permutation), () for row-major
    order: tuple[int, ...] = ()


@dataclasses.dataclass
class Graph:
    """A written graph: statements (unindented, in order), its outputs, and what it used.

    ``outputs``: every call result no later call reads (the DAG's sinks, so
    that no call is dead code a compiler may drop), then the gradients;
    ``last``: the last call's result (None for no call); ``rules``: the rule
    name of each call; ``families``: the families used; ``grads``: names of
    the gradients it computes (also in ``outputs``); ``needs``: the
    module-level lines its calls use (``Call.needs``).
    """

    lines: list[str]
    outputs: list[Value]
    rules: list[str]
    families: set[Family]
    grads: list[str]
    last: Value | None = None
    needs: set[str] = dataclasses.field(default_factory=set)


def _weighted(c: Chooser, table: Sequence[tuple[object, int]]) -> object:
    point = c.index(sum(w for _, w in table))
    for value, weight in table:
        if point < weight:
            return value
        point -= weight
    raise AssertionError("unreachable: point is below the total weight")


def _input_source(shape: tuple[int, ...], dtype: DType, requires_grad: bool, strided: bool,
                  distinct: bool, order: tuple[int, ...] = ()) -> str:
    """The expression for one input; ``order``: a permutation of its dims in
    which its storage is laid out (a tensor of the permuted shape, permuted
    back: channels-last for ``(0, 2, 3, 1)``), () for row-major."""
    if order:
        inverse = tuple(order.index(d) for d in range(len(order)))
        stored = _input_source(tuple(shape[d] for d in order), dtype, False, False, distinct)
        text = f"{stored}.permute({', '.join(map(str, inverse))})"
        return f"{text}.requires_grad_()" if requires_grad else text
    sizes = ", ".join(map(str, shape)) or ""
    numel = 1
    for s in shape:
        numel *= s
    if dtype is DType.BOOL:
        return f"torch.randn({sizes or '()'}, generator=g) > 0"
    if not dtype.is_float:
        return f"torch.randint(-8, 9, ({sizes}{',' if len(shape) == 1 else ''}), generator=g, dtype={dtype.torch})"
    if distinct:
        # a tie-free permutation: index results over it are unambiguous
        base = f"((torch.randperm({numel}, generator=g).reshape({sizes or '()'}) - {numel // 2}) * 0.25)"
        text = f"{base}.to({dtype.torch})"
    elif strided and shape:
        wide = ", ".join(map(str, shape[:-1] + (2 * shape[-1],)))
        text = f"torch.randn({wide}, generator=g, dtype={dtype.torch})[..., ::2]"
    else:
        text = f"torch.randn({sizes or '()'}, generator=g, dtype={dtype.torch})"
    if requires_grad:
        text = f"{text}.requires_grad_()" if distinct or strided else text[:-1] + ", requires_grad=True)"
    return text


def _widen(c: Chooser, base: tuple[int, ...]) -> tuple[int, ...]:
    """``base`` with one dim drawn from WIDE_SIZES (and for rank 2 or more, a
    second from SECOND_WIDE_SIZES at SECOND_WIDE_PERCENT), its other dims set
    to 1, last first, until it holds at most half of MAX_NUMEL elements."""
    sizes = list(base)
    wide = [c.index(len(sizes))]
    sizes[wide[0]] = c.pick(WIDE_SIZES)
    if len(sizes) > 1 and c.chance(SECOND_WIDE_PERCENT):
        other = c.pick([d for d in range(len(sizes)) if d != wide[0]])
        sizes[wide[0]] = min(sizes[wide[0]], max(SECOND_WIDE_SIZES))
        sizes[other] = c.pick(SECOND_WIDE_SIZES)
        wide.append(other)
    for d in reversed(range(len(sizes))):
        numel = 1
        for s in sizes:
            numel *= s
        if numel <= MAX_NUMEL // 2:
            break
        if d not in wide:
            sizes[d] = 1
    return tuple(sizes)


def _permutation(c: Chooser, ndim: int) -> tuple[int, ...]:
    """A permutation of ``ndim`` dims other than the identity (a shuffle, or a
    rotation: channels-last for 4 dims)."""
    dims = list(range(ndim))
    if c.chance(50):
        k = 1 + c.index(ndim - 1)
        return tuple(dims[k:] + dims[:k])
    order = []
    while dims:
        order.append(dims.pop(c.index(len(dims))))
    return tuple(order) if order != sorted(order) else tuple(reversed(order))


def draw_inputs(c: Chooser, fresh: Callable[[str], str], count: int, wide_percent: int = 0,
                permuted_percent: int = 0) -> list[GraphInput]:
    """``count`` graph inputs around one base shape (rank 1-4, sizes 1..MAX_SIZE): the others
    have it, a suffix of it or it with some dims 1, so that binary operators find partners.
    With ``wide_percent``, that share (percent) of base shapes get one or two
    dims from WIDE_SIZES (``_widen``); with ``permuted_percent``, that share of
    the float inputs of 2 dims or more (neither strided nor tie-free) are
    stored in a permuted dim order (``_permutation``: Inductor's 2-D tiled
    transposes and layout choices, which row-major inputs rarely reach). 0
    draws nothing for either, so the draws, and our generator's programs,
    stay as they were."""
    rank = 1 + c.index(4)
    base = tuple(c.pick((2, 3, 4, 5, 6, 1)) for _ in range(rank))
    if wide_percent and c.chance(wide_percent):
        base = _widen(c, base)
    inputs: list[GraphInput] = []
    for i in range(count):
        shape = base
        if i > 0 and c.chance(40):
            form = c.index(3)
            if form == 0 and rank > 1:
                shape = base[c.index(rank):]
            elif form == 1:
                d = c.index(rank)
                shape = base[:d] + (1,) + base[d + 1:]
            else:
                shape = tuple(c.pick((2, 3, 4, 5)) for _ in range(1 + c.index(3)))
        dtype = _weighted(c, _INPUT_DTYPES) if i > 0 or c.chance(30) else DType.FLOAT32
        assert isinstance(dtype, DType)
        requires_grad = dtype in (DType.FLOAT32, DType.FLOAT64) and c.chance(20)
        distinct = dtype.is_float and c.chance(30)
        strided = not distinct and dtype.is_float and bool(shape) and c.chance(20)
        order = _permutation(c, len(shape)) if (
            permuted_percent and dtype.is_float and not strided and not distinct and len(shape) > 1
            and c.chance(permuted_percent)) else ()
        typ = TensorType(shape, dtype, contiguous=not (strided or order), requires_grad=requires_grad)
        bound = 5.0 if dtype.is_float and not distinct else (8.0 if dtype is not DType.BOOL else 1.0)
        if distinct:
            bound = 0.25 * max(1, typ.numel)
        name = fresh("p")
        inputs.append(GraphInput(Value(name, typ, bound, exact=True),
                                 _input_source(shape, dtype, requires_grad, strided, distinct, order), order))
    return inputs


def _rules_by_family() -> dict[Family, list[OpRule]]:
    table: dict[Family, list[OpRule]] = {}
    for rule in RULES:
        table.setdefault(rule.family, []).append(rule)
    return table


# Rules whose result is row-major whatever the layout of what they read.
ROW_MAJOR_RULES = frozenset({"contiguous"})


def follow_layout(rule: str, call: Call, permuted: set[str] | frozenset[str]) -> tuple[Call, bool]:
    """(``call``, whether its result may be stored in a permuted order): a
    call that reads a value stored in a permuted dim order (``permuted``, by
    name) may return one laid out alike (eager's elementwise results, sort,
    index_put and most others follow their input's strides), so it is
    declared not contiguous (no rule then writes ``.view`` of it), unless
    ``rule`` is one of ROW_MAJOR_RULES."""
    if not permuted or rule in ROW_MAJOR_RULES or not permuted & set(_NAME.findall(call.text)):
        return call, False
    return dataclasses.replace(call, type=call.type.with_(contiguous=False)), True


def build(c: Chooser, pool: Sequence[Value], ops: int, fresh: Callable[[str], str],
          break_percent: int = 0, family_weights: dict[Family, int] | None = None,
          backward: bool = True, permuted: frozenset[str] = frozenset()) -> Graph:
    """Write ``ops`` operator calls over ``pool`` (the inputs, and values in reach).

    Each step draws a family by ``family_weights`` (default ``FAMILY_WEIGHTS``)
    and a rule of it; a rule that finds no fitting operand, or a result over
    ``MAX_NUMEL`` elements or ``MAX_NDIM`` dims, is redrawn up to ``ATTEMPTS``
    times, then the step is skipped. With ``break_percent``, a
    ``torch._dynamo.graph_break()`` follows a call with that chance. With
    ``backward`` (and an output that requires grad), ends in ``torch.autograd.grad``.
    ``permuted``: names of pool values stored in a permuted dim order (what
    reads them may be too: ``follow_layout``).
    """
    weights = family_weights or FAMILY_WEIGHTS
    in_permuted_order = set(permuted)
    by_family = _rules_by_family()
    table = [(family, weight) for family, weight in weights.items() if by_family.get(family)]
    values = list(pool)
    grad_roots: dict[str, frozenset[str]] = {
        v.name: frozenset({v.name}) for v in pool if v.type.requires_grad}
    graph = Graph(lines=[], outputs=[], rules=[], families=set(), grads=[])
    written: list[Value] = []
    for _ in range(ops):
        for _ in range(ATTEMPTS):
            family = _weighted(c, table)
            assert isinstance(family, Family)
            rule = c.pick(by_family[family])
            call = rule.write(c, values)
            if call is None or call.type.numel > MAX_NUMEL or call.type.ndim > MAX_NDIM:
                continue
            call, follows = follow_layout(rule.name, call, in_permuted_order)
            name = fresh("v")
            if follows:
                in_permuted_order.add(name)
            graph.lines.append(f"{name} = {call.text}")
            graph.lines += [line.format(out=name) for line in call.after]
            value = Value(name, call.type, call.bound, call.exact)
            values.append(value)
            written.append(value)
            graph.rules.append(rule.name)
            graph.families.add(family)
            graph.needs.update(call.needs)
            if call.type.requires_grad:
                roots = frozenset().union(*(grad_roots.get(n, frozenset()) for n in _NAME.findall(call.text)))
                grad_roots[name] = roots
            if break_percent and c.chance(break_percent):
                graph.lines.append("torch._dynamo.graph_break()")
            break
    if not written:
        return graph
    # names the calls read (an in-place statement after a call writes its own result: not a read)
    read = set()
    for line in graph.lines:
        target, sep, text = line.partition(" = ")
        if sep and re.fullmatch(r"v\d+", target):
            read.update(_NAME.findall(text))
    graph.outputs = [v for v in written if v.name not in read]
    graph.last = written[-1]
    leaves = sorted({root for v in graph.outputs for root in grad_roots.get(v.name, ())})
    differentiable = [v for v in graph.outputs if v.type.requires_grad]
    if backward and leaves and differentiable:
        loss = fresh("loss")
        terms = " + ".join(f"({v.name}.tanh() * 0.5).sum()" for v in differentiable)
        graph.lines.append(f"{loss} = {terms}")
        grads = [fresh("gr") for _ in leaves]
        graph.lines.append(f"{', '.join(grads)}, = torch.autograd.grad({loss}, [{', '.join(leaves)}], "
                           f"allow_unused=True, materialize_grads=True, retain_graph=True)")
        graph.grads = grads
        by_name = {v.name: v for v in pool}
        for grad, leaf in zip(grads, leaves):
            typ = by_name[leaf].type if leaf in by_name else TensorType((), DType.FLOAT32)
            graph.outputs.append(Value(grad, typ.with_(requires_grad=False, contiguous=True), 1e6))
    return graph
