"""Property test of the tensor generator's operator rules, under torch (a worker env).

Each rule of ``fuzz.generate.tensor_ops.RULES``, over random pools of typed
inputs (``tensor_graph.draw_inputs``: shapes, broadcasting partners, float16
to float64, int32/int64, bool, strided, requires_grad), must write a call
that runs eagerly and whose result has the shape, dtype and requires_grad
the rule says (contiguous where it says so), within its magnitude bound; and
whole graphs of 10-40 calls, with their gradients, must run. The pools come
from ``RandomChooser`` seeds, so a failure names a reproducible seed.

Run: ``PYTHONPATH=. .tox/py312/bin/python -m pytest tests/harness/test_tensor_ops.py -q``.
"""

from __future__ import annotations

import warnings
import zlib

import pytest

torch = pytest.importorskip("torch")

from fuzz.generate import tensor_graph
from fuzz.generate.tensor_ops import RULES, Call, RandomChooser

# Pools tried per rule (each with its own seed).
SEEDS_PER_RULE = 25
# Graphs run whole, and the share that must run without an exception.
GRAPHS = 60
GRAPH_VALID_SHARE = 0.95
# Shares (percent) of pools drawn with wide dims and of inputs stored in a
# permuted dim order, as the graphs source draws them.
WIDE_PERCENT = 30
PERMUTED_PERCENT = 30


def materialize(inputs: list[tensor_graph.GraphInput], seed: int) -> dict[str, object]:
    """The graph inputs as ``inputs()`` would build them: each source under one seeded generator."""
    g = torch.Generator().manual_seed(seed)
    return {i.value.name: eval(i.source, {"torch": torch, "g": g}) for i in inputs}


def fresh_names():
    counter = [0]

    def fresh(prefix: str) -> str:
        counter[0] += 1
        return f"{prefix}{counter[0]}"

    return fresh


def check_call(call: Call, namespace: dict[str, object]) -> list[str]:
    """Run ``call`` in ``namespace``; what differs from what the rule says."""
    out = eval(call.text, namespace)
    namespace["out0"] = out
    for line in call.after:
        exec(line.format(out="out0"), namespace)  # noqa: S102  (generated code is what is tested)
    problems = []
    if tuple(out.shape) != call.type.shape:
        problems.append(f"shape {tuple(out.shape)} != {call.type.shape}")
    if str(out.dtype) != call.type.dtype.torch:
        problems.append(f"dtype {out.dtype} != {call.type.dtype.torch}")
    if out.requires_grad != call.type.requires_grad:
        problems.append(f"requires_grad {out.requires_grad} != {call.type.requires_grad}")
    if call.type.contiguous and not out.is_contiguous():
        problems.append("not contiguous")
    if out.requires_grad:
        # differentiable where the rule says so: backward reaches the leaves without an error
        leaves = [v for v in namespace.values() if isinstance(v, torch.Tensor) and v.requires_grad and v.is_leaf]
        torch.autograd.grad(out.float().sum(), leaves, allow_unused=True)
    if out.numel() and out.dtype != torch.bool:
        magnitude = out.detach().double().abs()
        magnitude = magnitude[torch.isfinite(magnitude)]
        if magnitude.numel() and magnitude.max() > call.bound * 1.001 + 1e-6:
            problems.append(f"|value| {float(magnitude.max()):.3g} > bound {call.bound:.3g}")
    return problems


def checked_call(rule, key: str, seed: int) -> Call | None:
    """``rule``'s call over a random pool (from ``key``; a share with wide dims
    and permuted inputs, as the graphs source draws them), run eagerly and
    checked against what the rule says; None where it found no operand.
    Fails the test, naming the seed and the call, on any difference."""
    c = RandomChooser(zlib.crc32(key.encode()))
    inputs = tensor_graph.draw_inputs(c, fresh_names(), 1 + c.index(4), wide_percent=WIDE_PERCENT,
                                      permuted_percent=PERMUTED_PERCENT)
    call = rule.write(c, [i.value for i in inputs])
    if call is None:
        return None
    call, _ = tensor_graph.follow_layout(rule.name, call, {i.value.name for i in inputs if i.order})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            problems = check_call(call, {"torch": torch, **materialize(inputs, seed)})
        except Exception as e:  # noqa: BLE001  (any error breaks the rule's promise: name the call)
            problems = [f"{type(e).__name__}: {str(e).splitlines()[0]}"]
    assert not problems, f"seed {seed}: {call.text}: {'; '.join(problems)}"
    return call


@pytest.mark.parametrize("rule", RULES, ids=[rule.name for rule in RULES])
def test_each_rule_writes_an_eagerly_valid_call_of_the_type_it_says(rule) -> None:
    applied = sum(checked_call(rule, f"{rule.name}/{seed}", seed) is not None for seed in range(SEEDS_PER_RULE))
    assert applied, f"{rule.name} found no operand in {SEEDS_PER_RULE} pools"


# Variants of the rules whose shape formulas have edge cases (ATen's
# pooling_output_shape with ceil_mode, F.pad's dims per mode, interpolate's
# sizes, the scatters' view shapes): each must be drawn, and valid, over
# VARIANT_SEEDS pools per rule.
VARIANT_SEEDS = 200
VARIANTS = {
    "pool": ("ceil_mode=True", "dilation=2", "count_include_pad=False", "divisor_override", "adaptive_max_pool2d",
             "adaptive_avg_pool1d"),
    "pad": ("'circular'", "'reflect'", "'replicate'", "(-1, "),
    "interpolate": ("'bicubic'", "antialias=True", "'area'", "'nearest-exact'", "align_corners=True", "size="),
    "layer_norm": ("instance_norm", "rms_norm", "group_norm", "batch_norm"),
    "view-scatter": ("slice_scatter", "select_scatter", "diagonal_scatter", "masked_scatter", "step=3", "dim=-"),
    "grid_sample": ("'bicubic'", "'bilinear'", "'zeros'", "'border'", "'reflection'", "align_corners=True"),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_rules_draw_every_variant_and_each_is_eagerly_valid(name) -> None:
    rule = next(r for r in RULES if r.name == name)
    calls = [checked_call(rule, f"{name}/variants/{seed}", seed) for seed in range(VARIANT_SEEDS)]
    seen = {variant for call in calls if call is not None for variant in VARIANTS[name] if variant in call.text}
    assert seen == set(VARIANTS[name]), set(VARIANTS[name]) - seen


def test_graphs_of_10_to_40_calls_run_eagerly_with_their_gradients() -> None:
    ran, families = 0, set()
    failures = []
    for seed in range(GRAPHS):
        c = RandomChooser(seed)
        fresh = fresh_names()
        inputs = tensor_graph.draw_inputs(c, fresh, 2 + c.index(3), wide_percent=WIDE_PERCENT,
                                          permuted_percent=PERMUTED_PERCENT)
        graph = tensor_graph.build(c, [i.value for i in inputs], 10 + c.index(31), fresh, break_percent=5,
                                   permuted=frozenset(i.value.name for i in inputs if i.order))
        assert 5 <= len(graph.rules) <= 40
        families |= graph.families
        namespace = {"torch": torch, **materialize(inputs, seed)}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                graph_code = "\n".join(line for line in graph.lines if "graph_break" not in line)
                exec(graph_code, namespace)  # noqa: S102  (generated code is what is tested)
            for value in graph.outputs:
                assert tuple(namespace[value.name].shape) == value.shape, (seed, value)
            ran += 1
        except Exception as e:  # noqa: BLE001  (counted: the share that must run is checked below)
            failures.append(f"seed {seed}: {type(e).__name__}: {str(e).splitlines()[0]}")
    assert ran >= GRAPH_VALID_SHARE * GRAPHS, failures
    assert len(families) >= 12


def test_a_graph_program_s_growth_input_is_larger_than_every_graph_dim() -> None:
    """The harness's shape call grows the largest input dim: the growth
    input's (one more than the widest graph dim), never a graph input's."""
    from fuzz.generate.graph_programs import graph_program

    wide = 0
    for seed in range(40):
        program = graph_program(seed)
        namespace: dict = {}
        exec(program.source, namespace)  # noqa: S102  (generated code is what is tested)
        grow, *rest = namespace["inputs"]()
        dims = [s for t in rest if isinstance(t, torch.Tensor) for s in t.shape]
        assert grow.dim() == 1 and grow.numel() > max(dims), (seed, grow.shape, dims)
        wide += "tensor-wide" in program.features
    assert wide > 5


def test_inputs_stored_in_a_permuted_order_have_their_declared_shape_and_stay_leaves() -> None:
    permuted = 0
    for seed in range(200):
        c = RandomChooser(seed)
        inputs = tensor_graph.draw_inputs(c, fresh_names(), 3, wide_percent=WIDE_PERCENT, permuted_percent=100)
        values = materialize(inputs, seed)
        for i in inputs:
            t = values[i.value.name]
            assert tuple(t.shape) == i.value.shape, (seed, i.source)
            assert t.requires_grad == i.value.type.requires_grad and t.is_leaf, (seed, i.source)
            if ".permute(" in i.source:
                permuted += 1
                assert not i.value.type.contiguous
                assert t.is_contiguous() or sorted(t.stride(), reverse=True) != list(t.stride()) or 1 in t.shape
    assert permuted > 100
