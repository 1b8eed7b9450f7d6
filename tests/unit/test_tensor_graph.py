"""The typed operator-graph generator: its rules, reproducibility and its place in programs."""

from __future__ import annotations

import ast
import json
import math
import re

from fuzz.generate import tensor_graph
from fuzz.generate.program import STATEMENTS, generate
from fuzz.generate.tensor_ops import OPINFO_PATH, RULES, Family, RandomChooser, opinfo
from fuzz.generate.tensor_types import DType

TENSOR_KINDS = ("tensor-graph", "tensor-chain", "tensor-module", "tensor-comprehension", "tensor-generator")


def draw_graph(seed: int) -> tensor_graph.Graph:
    c = RandomChooser(seed)
    counter = iter(range(1, 10_000))

    def fresh(prefix: str) -> str:
        return f"{prefix}{next(counter)}"

    inputs = tensor_graph.draw_inputs(c, fresh, 3)
    return tensor_graph.build(c, [i.value for i in inputs], 30, fresh)


def test_rules_cover_every_family_with_unique_names() -> None:
    assert len({rule.name for rule in RULES}) == len(RULES)
    assert {rule.family for rule in RULES} == set(Family)
    assert len(RULES) >= 150


def test_elementwise_rules_come_from_the_opinfo_cache() -> None:
    data = json.loads(OPINFO_PATH.read_text())
    assert data["torch"] and len(data["ops"]) > 500
    for rule in RULES:
        if rule.family is Family.UNARY and rule.name != "cast":
            entry = opinfo()[(rule.name, "")]
            assert entry.kind == "UnaryUfuncInfo" and entry.dtypes, rule.name
    # dtypes are read from OpInfo, not kept here: sin takes ints, gcd only ints
    assert DType.INT64 in opinfo()[("sin", "")].dtypes
    assert not any(d.is_float for d in opinfo()[("gcd", "")].dtypes)


def test_the_same_seed_builds_the_same_graph_and_another_seed_another() -> None:
    first, again, other = draw_graph(7), draw_graph(7), draw_graph(8)
    assert first.lines == again.lines and first.outputs == again.outputs
    assert first.lines != other.lines
    assert 10 <= len(first.rules) <= 30


def test_graph_calls_are_bound_once_and_read_only_earlier_names() -> None:
    for seed in range(20):
        graph = draw_graph(seed)
        bound: set[str] = set()
        for line in graph.lines:
            target, _, text = line.partition(" = ")
            names = set(re.findall(r"\bv\d+\b", text))
            assert names <= bound, (seed, line)
            if re.fullmatch(r"v\d+", target):
                assert target not in bound
                bound.add(target)
        assert {v.name for v in graph.outputs} - set(graph.grads) <= bound


def test_generated_programs_carry_tensor_graphs_reproducibly() -> None:
    kinds = {entry.kind for entry in STATEMENTS}
    assert set(TENSOR_KINDS) <= kinds
    programs = [generate(seed) for seed in range(60)]
    assert [p.source for p in programs[:5]] == [generate(seed).source for seed in range(5)]
    with_graph = [p for p in programs if "tensor-graph" in p.features]
    assert len(with_graph) >= 0.15 * len(programs)
    for program in with_graph:
        tree = ast.parse(program.source)
        f = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")
        params = [a.arg for a in f.args.args]
        returned = ast.unparse(next(n for n in f.body if isinstance(n, ast.Return)))
        # the graph's inputs are parameters of f, built in inputs(); its outputs reach f's result
        assert any(re.fullmatch(r"p\d+", p) for p in params)
        inputs = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "inputs")
        assert len(inputs.body[-1].value.elts) == len(params)
        assert re.search(r"\bv\d+\b", returned) or "tanh(" in ast.unparse(f)


def test_each_tensor_kind_declares_features_that_feedback_can_credit() -> None:
    for entry in STATEMENTS:
        if entry.kind in TENSOR_KINDS:
            assert entry.features, entry.kind
    graph = next(e for e in STATEMENTS if e.kind == "tensor-graph")
    assert {f"op-{family.value}" for family in Family} <= set(graph.also)


def test_wide_base_shapes_cross_the_vector_widths_and_stay_small() -> None:
    """Graphs drawn wide get a dim of WIDE_SIZES (past Inductor's 8, 16 and 32
    lanes); wide_percent=0 draws exactly what it drew before (our generator's
    programs, pinned by test_generate, do not change)."""
    def shapes(seed: int, wide_percent: int) -> list[tuple[int, ...]]:
        counter = iter(range(1, 10_000))
        inputs = tensor_graph.draw_inputs(RandomChooser(seed), lambda p: f"{p}{next(counter)}", 3, wide_percent)
        return [i.value.shape for i in inputs]

    widened = 0
    for seed in range(200):
        base = shapes(seed, 100)[0]
        assert any(s in tensor_graph.WIDE_SIZES for s in base), base
        assert math.prod(base) <= tensor_graph.MAX_NUMEL // 2, base
        widened += sum(s > tensor_graph.MAX_SIZE for s in base) == 2
        assert all(max(s, default=0) <= tensor_graph.MAX_SIZE for s in shapes(seed, 0))
    assert widened > 20  # some bases with two wide dims: full 16 x 16 tiles

