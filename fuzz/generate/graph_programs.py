"""Operator-heavy programs: thin Python around one to three typed operator graphs.

The ``graphs`` source of ``fuzz.generate.sources`` (torchfuzz's territory,
under tcfuzz's oracle and minimiser): ``graph_program(seed)`` writes ``f`` as
``GRAPHS`` graphs of ``fuzz.generate.tensor_graph`` with 10 to 40 operator
calls in all, each over new inputs of ``f``, and returns their outputs (the
DAG's sinks and gradients). Each graph sits in one of a few thin Python
shapes (``PLACES``): at the top of ``f``, in a function nested in ``f`` and
called once, or under ``torch.no_grad()`` (a graph that does not
differentiate), maybe split by graph breaks. Some graphs are followed by an
epilogue over their outputs: a scalar read-back (``.item()``, ``.tolist()``),
random operators after ``torch.manual_seed``, an ``out=`` call. The first
input is a growth tensor larger than every graph dim, so the harness's shape
call grows it and not the graphs' inputs (as ``fuzz.generate.constructs_tensor``
does).

Deterministic in the seed: every choice is a ``RandomChooser`` draw over a
``random.Random`` keyed by the seed, independent of our Hypothesis generator
(whose programs do not change).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from fuzz.generate.prelude import PRELUDE
from fuzz.generate.tensor_graph import MAX_SIZE, Graph, GraphInput, build, draw_inputs
from fuzz.generate.tensor_ops import RandomChooser
from fuzz.generate.tensor_types import DType
from harness.program import Program

__all__ = ["GENERATOR", "GRAPHS", "PLACES", "graph_program"]

# Program.generator of these programs; bump the suffix when a seed starts
# meaning another program.
GENERATOR = "tcfuzz.graphs.v5"
# Graphs per program, with weights (one graph is the common case).
GRAPHS: tuple[tuple[int, int], ...] = ((1, 5), (2, 3), (3, 2))
# Operator calls of a program, all graphs together (split evenly among them).
TOTAL_OPS = (10, 40)
# Inputs per graph.
INPUTS_PER_GRAPH = (2, 4)
# Share of graphs, in percent, whose base shape has one or two wide dims
# (tensor_graph.WIDE_SIZES: Inductor's full-vector loops, their tails and
# full 2-D tiles, which dims of at most MAX_SIZE never reach).
WIDE_PERCENT = 25
# Share of float inputs, in percent, stored in a permuted dim order
# (tensor_graph.draw_inputs: channels-last and transposed layouts).
PERMUTED_PERCENT = 20
# Size of the growth input, in elements: one more than any graph dim (as
# fuzz.generate.constructs_tensor's, which needs Hypothesis: this module runs
# in worker envs too, which have none).
GROWTH_SIZE = MAX_SIZE + 1
# Chance of a graph break after each call, in percent, in the share of graphs
# (percent) drawn to have breaks at all (constructs_tensor's values).
BREAK_PER_CALL_PERCENT = 8
GRAPH_BREAK_PERCENT = 25
# Where a graph's statements go: f's body, a nested function called once, or
# a ``with torch.no_grad():`` block (only for graphs without gradients).
PLACES = ("top", "nested", "no-grad")
# Shares of graphs, in percent, followed by a scalar read-back (``.item()`` of
# a float output, ``.tolist()`` of an int one: Dynamo graph-breaks on them
# unless ``capture_scalar_outputs``, which harness.settings draws for such
# programs) and by random operators after ``torch.manual_seed`` (the harness
# runs Inductor with ``fallback_random``, so compiled code draws eager's numbers).
SCALAR_PERCENT = 25
RANDOM_PERCENT = 15
# Share of graphs, in percent, followed by an ``out=`` call into a fresh
# buffer (of the result's shape, or empty and resized by the call).
OUT_PERCENT = 15
# The ``out=`` calls written, ``{x}`` a float output, ``{o}`` the buffer.
OUT_CALLS = (
    "torch.tanh({x}, out={o})",
    "torch.mul({x}, 0.5, out={o})",
    "torch.clamp({x}, -1.0, 1.0, out={o})",
    "torch.cumsum({x}.flatten(), 0, out={o})",
)
# The random operators written, ``{x}`` a float output.
RANDOM_CALLS = (
    "torch.rand_like({x})",
    "torch.randn_like({x}).clamp(-4.0, 4.0)",
    "torch.nn.functional.dropout({x}, p=0.5, training=True)",
    "torch.bernoulli(torch.full_like({x}, 0.5))",
)


def _weighted(c: RandomChooser, table: tuple[tuple[int, int], ...]) -> int:
    point = c.index(sum(w for _, w in table))
    for value, weight in table:
        if point < weight:
            return value
        point -= weight
    raise AssertionError("unreachable: point is below the total weight")


def _features(graph: Graph, inputs: list[GraphInput]) -> set[str]:
    """The feature names a graph shows (as fuzz.generate.constructs_tensor records them)."""
    features = {"tensor-graph"} | {f"op-{family.value}" for family in graph.families}
    if graph.grads:
        features |= {"tensor-backward", "grad-mode"}
    if any("lambda " in line for line in graph.lines):  # a higher-order operator's function
        features.add("closure")
    if "torch._dynamo.graph_break()" in graph.lines:
        features |= {"graph-break", "tensor-graph-break"}
    dtypes = {i.value.dtype for i in inputs}
    text = " ".join(graph.lines)
    if dtypes & {DType.FLOAT16, DType.BFLOAT16} or "float16" in text:
        features.add("low-precision")
    if dtypes & {DType.INT32, DType.INT64} or "torch.int" in text:
        features.add("int-tensor")
    if any(i.value.type.requires_grad for i in inputs):
        features.add("requires-grad")
    return features


def _indented(lines: list[str], depth: int) -> list[str]:
    return [("    " * depth + line) if line else "" for line in lines]


def _place(c: RandomChooser, graph: Graph, inputs: list[GraphInput], helper: str) -> tuple[list[str], str]:
    """(lines of f, place) for one graph: they bind the graph's outputs'
    names (in a nested function, to what it returns)."""
    names = [v.name for v in graph.outputs]
    place = c.pick(PLACES if not graph.grads else PLACES[:2])
    body = graph.lines
    if graph.grads:
        body = ["with torch.enable_grad():"] + _indented(graph.lines, 1)
    if place == "no-grad":
        return ["with torch.no_grad():"] + _indented(body, 1), place
    if place == "top" or not names:
        return body, "top"
    params = ", ".join(i.value.name for i in inputs)
    results = ", ".join(names) + ("," if len(names) == 1 else "")
    lines = [f"def {helper}({params}):"] + _indented(body, 1) + [f"    return {results}"]
    return lines + [f"{results} = {helper}({params})"], place


def _epilogue(rng: random.Random, graph: Graph, fresh: Callable[[str], str]) -> tuple[list[str], list[str], set[str]]:
    """(lines, outputs, features) of what may follow a graph: a scalar read-back
    (SCALAR_PERCENT), random operators (RANDOM_PERCENT) and an ``out=`` call
    (OUT_PERCENT) over its outputs."""
    lines: list[str] = []
    outputs: list[str] = []
    features: set[str] = set()
    values = [v for v in graph.outputs if v.name.startswith("v") and v.type.numel > 0]
    floats = [v for v in values if v.dtype.is_float]
    ints = [v for v in values if v.dtype in (DType.INT32, DType.INT64)]
    if (floats or ints) and rng.randrange(100) < SCALAR_PERCENT:
        features.add("tensor-item")
        if floats and (not ints or rng.randrange(2)):
            v, s, out = rng.choice(floats), fresh("s"), fresh("v")
            lines += [f"{s} = {v.name}.float().mean().clamp(-4.0, 4.0).item()",
                      f"{out} = torch.tanh({v.name}.detach().float() * {s})"]
        else:
            v, out = rng.choice(ints), fresh("l")
            lines.append(f"{out} = {v.name}.flatten()[:4].tolist()")
        outputs.append(out)
    if floats and rng.randrange(100) < RANDOM_PERCENT:
        features.add("tensor-random")
        v, out = rng.choice(floats), fresh("r")
        call = rng.choice(RANDOM_CALLS).format(x=f"{v.name}.detach().float()")
        lines += [f"torch.manual_seed({rng.randrange(2**16)})", f"{out} = {call}"]
        outputs.append(out)
    if floats and rng.randrange(100) < OUT_PERCENT:
        features.add("tensor-out")
        v, out = rng.choice(floats), fresh("o")
        x = f"{v.name}.detach().float()"
        call = rng.choice(OUT_CALLS)
        empty = "cumsum" in call or rng.randrange(2)
        lines += [f"{out} = torch.empty(0)" if empty else f"{out} = torch.empty_like({x})",
                  call.format(x=x, o=out)]
        outputs.append(out)
    return lines, outputs, features


def graph_program(seed: int) -> Program:
    """The operator-heavy program for ``seed`` (see the module docstring):
    ``f(grow, p0, p1, ...)`` with ``grow`` float32 of GROWTH_SIZE elements
    (or one more than the widest graph dim) and graph inputs of rank 1-4,
    sizes up to ``tensor_graph.MAX_SIZE`` (WIDE_PERCENT of graphs: one or two
    dims of ``tensor_graph.WIDE_SIZES``; PERMUTED_PERCENT of float inputs
    stored in a permuted dim order), dtypes
    float16 to float64, int32/int64 and bool; ``inputs()`` builds them from a
    seeded ``torch.Generator``. Same seed, same program. Raises TypeError
    for a seed that is not an int."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"Expected seed to be an int but got seed={seed!r}")
    c = RandomChooser(seed)
    c.rng = random.Random(f"graphs-{seed}")  # apart from other RandomChooser users of the same seed
    counter = [0]

    def fresh(prefix: str) -> str:
        counter[0] += 1
        return f"{prefix}{counter[0]}"

    count = _weighted(c, GRAPHS)
    total = TOTAL_OPS[0] + c.index(TOTAL_OPS[1] - TOTAL_OPS[0] + 1)
    sources = [""]  # the growth input's, once the widest graph dim is known
    widest = 0
    params = ["grow"]
    body: list[str] = []
    outputs = ["torch.tanh(grow)"]
    features: set[str] = set()
    needs: set[str] = set()
    extra = random.Random(f"graphs-extra-{seed}")  # the epilogues' draws leave the graphs as they are
    for _ in range(count):
        inputs = draw_inputs(c, fresh, INPUTS_PER_GRAPH[0] + c.index(INPUTS_PER_GRAPH[1] - INPUTS_PER_GRAPH[0] + 1),
                             wide_percent=WIDE_PERCENT, permuted_percent=PERMUTED_PERCENT)
        widest = max([widest] + [s for i in inputs for s in i.value.shape])
        breaks = BREAK_PER_CALL_PERCENT if c.chance(GRAPH_BREAK_PERCENT) else 0
        graph = build(c, [i.value for i in inputs], max(1, total // count), fresh, break_percent=breaks,
                      permuted=frozenset(i.value.name for i in inputs if i.order))
        lines, place = _place(c, graph, inputs, fresh("graph"))
        features |= _features(graph, inputs)
        needs |= graph.needs
        features |= {"nested-function"} if place == "nested" else ({"no-grad", "grad-mode"} if place == "no-grad"
                                                                     else set())
        params += [i.value.name for i in inputs]
        sources += [i.source for i in inputs]
        body += lines
        outputs += [v.name for v in graph.outputs]
        more, extra_outputs, extra_features = _epilogue(extra, graph, fresh)
        body += more
        outputs += extra_outputs
        features |= extra_features
    if widest > MAX_SIZE:
        features.add("tensor-wide")
    sources[0] = f"torch.randn({max(GROWTH_SIZE, widest + 1)}, generator=g)"  # the shape call grows it alone
    rng_seed = c.index(2**31)
    text = "\n".join([
        "import torch",
        *(line for name in sorted(needs) for line in PRELUDE[name]),
        "",
        "",
        f"def f({', '.join(params)}):",
        *_indented(body, 1),
        f"    return {', '.join(outputs)}",
        "",
        "",
        "def inputs():",
        f"    g = torch.Generator().manual_seed({rng_seed})",
        f"    return ({', '.join(sources)},)",
        "",
    ])
    return Program(source=text, generator=GENERATOR, seed=seed, features=tuple(sorted(features)))
