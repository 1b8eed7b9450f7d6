"""Constructs that put typed operator graphs inside the Python constructs.

Registered constructs (see ``fuzz.generate.registry``), each writing tensor
code of ``fuzz.generate.tensor_graph`` over new inputs of ``f``:

- ``tensor-graph``: an operator-heavy graph of 10 to 40 calls (torchfuzz's
  territory), maybe split by graph breaks, maybe ending in
  ``torch.autograd.grad``; since it is drawn like any statement it also lands
  in loops, closures, generators, ``try`` and ``with`` bodies;
- ``tensor-chain``: a short chain of 2 to 6 calls (the same, lighter);
- ``tensor-module``: an ``nn.Module`` (a module-level instance) whose
  ``forward`` is a graph over its argument, a parameter and a buffer;
- ``tensor-comprehension``: a chain inlined into a list comprehension or a
  generator expression over the rows of an input (``x.unbind(0)``), stacked
  or summed;
- ``tensor-generator``: a nested generator that yields a chain's result per
  row, consumed by ``list``.

Graph inputs become parameters of ``f`` (``StatementWriter.tensor_inputs``;
``fuzz.generate.program`` adds them to ``f``'s signature and ``inputs()``),
with one more input of ``GROWTH_SIZE`` elements, larger than every graph
dim, so that the harness's shape call (which grows the largest dim of the
inputs) grows that one and the graphs' sizes stay the ones their rules
were checked for. Graph outputs (the DAG's sinks) at the top level of ``f`` are returned
(``StatementWriter.tensor_outputs``; not in ``scope.writable``, whose
tensors broadcast to t0's shape); elsewhere they are folded into a writable
tensor. Features: ``tensor-graph``, ``tensor-chain``, ``tensor-module``,
``tensor-comprehension``, ``tensor-generator``, and per graph the operator
families used (``op-<family>``), ``tensor-backward``,
``tensor-graph-break``, ``low-precision`` and ``int-tensor``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fuzz.generate.registry import StatementWriter, construct
from fuzz.generate.scope import Scope
from fuzz.generate.tensor_graph import MAX_SIZE, Graph, GraphInput, build, draw_inputs
from fuzz.generate.tensor_ops import Family
from fuzz.generate.tensor_types import DType, Value

# Size of the growth input, in elements (one more than any graph dim).
GROWTH_SIZE = MAX_SIZE + 1
# Calls in an operator-heavy graph, and in a short chain.
GRAPH_OPS = (10, 40)
CHAIN_OPS = (2, 6)
# Chance of a graph break after each call of a graph, in percent (when the
# graph is drawn to have breaks at all, in GRAPH_BREAK_PERCENT of graphs).
BREAK_PER_CALL_PERCENT = 8
GRAPH_BREAK_PERCENT = 25
# Operator-heavy graphs per program; later draws of the kind write a chain,
# which keeps a program's Hypothesis choices well inside its buffer.
MAX_GRAPHS = 1
# Families whose calls can be inlined as one expression (no statements after).
_INLINE_FAMILIES = {f: 1 for f in Family if f is not Family.INPLACE}

_FAMILY_FEATURES = {f"op-{family.value}": f"calls of the {family.value} operator family" for family in Family}


def _add_inputs(w: StatementWriter, count: int) -> list[GraphInput]:
    """``count`` new graph inputs, registered as parameters of f (with the growth input first)."""
    if not w.tensor_inputs:
        w.tensor_inputs.append((w.fresh("grow"), f"torch.randn({GROWTH_SIZE}, generator=g)"))
    inputs = draw_inputs(w, w.fresh, count)
    w.tensor_inputs += [(i.value.name, i.source) for i in inputs]
    return inputs


# A reduction method call, as the feature "reduction" means (fuzz.generate.program).
_REDUCTION_CALL = re.compile(r"\.(sum|mean|amax|amin|norm|logsumexp|prod|std|var)\(")


def _claim_reductions(w: StatementWriter, lines: Iterable[str]) -> None:
    """Record "reduction" where ``lines`` (of f) call a reduction method."""
    if any(_REDUCTION_CALL.search(line) for line in lines):
        w.features.add("reduction")


def _record(w: StatementWriter, graph: Graph, inputs: list[GraphInput], in_f: bool = True,
            emitted: list[str] | None = None) -> None:
    """Record the features of ``graph`` (written into ``f`` unless ``in_f`` is
    False; ``emitted``: the code actually written, where it is not the graph's
    lines, such as an inlined expression)."""
    w.features.update(f"op-{family.value}" for family in graph.families)
    for name in sorted(graph.needs):
        w.need(name)
    if in_f and any("lambda " in line for line in (graph.lines if emitted is None else emitted)):
        # a higher-order operator's function
        w.features.add("closure")
    if in_f:
        _claim_reductions(w, graph.lines if emitted is None else emitted)
    if graph.grads:
        w.features.add("tensor-backward")
    if any(line == "torch._dynamo.graph_break()" for line in graph.lines):
        w.features.add("graph-break")
        w.features.add("tensor-graph-break")
    # the dtypes written: of the inputs, and of casts and factory calls in the calls
    dtypes = {i.value.dtype for i in inputs}
    text = " ".join(graph.lines)
    if dtypes & {DType.FLOAT16, DType.BFLOAT16} or re.search(r"torch\.b?float16", text):
        w.features.add("low-precision")
    if dtypes & {DType.INT32, DType.INT64} or re.search(r"torch\.int(32|64)", text):
        w.features.add("int-tensor")


def _emit_graph(w: StatementWriter, scope: Scope, graph: Graph, inputs: list[GraphInput]) -> None:
    """The graph's lines (under ``torch.enable_grad()`` where it differentiates), then its outputs."""
    _record(w, graph, inputs)
    if graph.grads:
        w.features.add("grad-mode")
        w.emit(scope, "with torch.enable_grad():")
        for line in graph.lines:
            w.emit(scope, line, 1)
    else:
        for line in graph.lines:
            w.emit(scope, line)
    _keep(w, scope, graph.outputs)


def _keep(w: StatementWriter, scope: Scope, outputs: list[Value]) -> None:
    """Return ``outputs`` from f (top level) or fold them into a writable tensor (elsewhere)."""
    if not outputs:
        return
    if scope.depth == 0 and scope.indent == 1 and not scope.enclosing:
        w.tensor_outputs += [v.name for v in outputs]
        return
    target = w.pick(scope.writable)
    w.features.add("reduction")
    terms = " + ".join(f"{v.name}.float().clamp(-32.0, 32.0).mean()" for v in outputs)
    w.emit(scope, f"{target} = torch.tanh({target} + 0.1 * ({terms}))")


@construct(
    "tensor-graph", weight=8,
    features={"tensor-graph": "a typed operator graph of 10-40 calls over new inputs of f"},
    also={
        **_FAMILY_FEATURES,
        "tensor-backward": "torch.autograd.grad through an operator graph (leaves require grad)",
        "tensor-graph-break": "graph breaks between the calls of an operator graph",
        "low-precision": "float16 or bfloat16 tensors in an operator graph",
        "int-tensor": "int32 or int64 tensors in an operator graph",
    },
)
def tensor_graph(w: StatementWriter, scope: Scope) -> None:
    """An operator-heavy graph (or a chain, once a program has ``MAX_GRAPHS``)."""
    if w.tensor_graphs >= MAX_GRAPHS:
        tensor_chain(w, scope)
        return
    w.tensor_graphs += 1
    w.features.add("tensor-graph")
    inputs = _add_inputs(w, w.count((2, 4)))
    breaks = BREAK_PER_CALL_PERCENT if w.chance(GRAPH_BREAK_PERCENT) else 0
    graph = build(w, [i.value for i in inputs], w.count(GRAPH_OPS), w.fresh, break_percent=breaks)
    _emit_graph(w, scope, graph, inputs)


@construct("tensor-chain", weight=5, features={"tensor-chain": "a chain of 2-6 typed operator calls"})
def tensor_chain(w: StatementWriter, scope: Scope) -> None:
    """A short typed chain over one or two new inputs."""
    w.features.add("tensor-chain")
    inputs = _add_inputs(w, w.count((1, 2)))
    graph = build(w, [i.value for i in inputs], w.count(CHAIN_OPS), w.fresh)
    _emit_graph(w, scope, graph, inputs)


@construct("tensor-module", weight=3, features={
    "tensor-module": "an nn.Module whose forward is an operator graph over a parameter and a buffer",
})
def tensor_module(w: StatementWriter, scope: Scope) -> None:
    """A module-level ``nn.Module`` instance whose ``forward(x)`` is a graph; called on a new input."""
    w.features.add("tensor-module")
    (x,) = _add_inputs(w, 1)
    cls, instance = w.fresh("Net"), w.fresh("net")
    weight, buffer = w.fresh("p"), w.fresh("p")
    shape = x.value.shape
    sizes = ", ".join(map(str, shape)) or ""
    numel = x.value.type.numel
    dtype = x.value.dtype if x.value.dtype.is_float else DType.FLOAT32
    arg = Value("x", x.value.type, x.value.bound, exact=True)
    pool = [arg,
            Value(weight, x.value.type.with_(dtype=dtype, requires_grad=True), 1.0),
            Value(buffer, x.value.type.with_(dtype=dtype, requires_grad=False), 1.5)]
    graph = build(w, pool, w.count((4, 16)), w.fresh, backward=False)
    _record(w, graph, [x], in_f=False)
    sinks = graph.outputs or [arg]
    out = f"({', '.join(v.name for v in sinks)},)"
    lines = [
        f"class {cls}(torch.nn.Module):",
        "    def __init__(self):",
        "        super().__init__()",
        (f"        self.weight = torch.nn.Parameter(torch.linspace(-1.0, 1.0, {numel}, dtype={dtype.torch})"
         f".reshape({sizes}))"),
        (f"        self.register_buffer('shift', torch.linspace(-1.5, 1.5, {numel}, dtype={dtype.torch})"
         f".reshape({sizes}))"),
        "",
        "    def forward(self, x):",
        f"        {weight} = self.weight",
        f"        {buffer} = self.shift",
        *(f"        {line}" for line in graph.lines),
        f"        return {out}",
        "",
        "",
        f"{instance} = {cls}()",
    ]
    w.prelude_lines += lines
    result = w.fresh("v")
    w.emit(scope, f"{result} = {instance}({x.value.name})")
    _keep(w, scope, [Value(f"{result}[{i}]", v.type, v.bound) for i, v in enumerate(sinks)])


def _inline(graph: Graph) -> str | None:
    """The graph's calls as one expression (each name replaced by its definition), or None."""
    definitions: dict[str, str] = {}
    for line in graph.lines:
        name, _, text = line.partition(" = ")
        if not re.fullmatch(r"v\d+", name):
            return None
        definitions[name] = re.sub(r"\bv\d+\b", lambda m: f"({definitions[m.group(0)]})", text)
    if graph.last is None:
        return None
    return definitions.get(graph.last.name)


@construct("tensor-comprehension", weight=3, features={
    "tensor-comprehension": "a typed operator chain in a list comprehension or generator expression over rows",
})
def tensor_comprehension(w: StatementWriter, scope: Scope) -> None:
    """``torch.stack([<chain of x> for x in p.unbind(0)])`` or ``sum(<chain> for x in ...)``."""
    (source,) = _add_inputs(w, 1)
    if source.value.type.ndim < 1:
        return
    var = w.fresh("x")
    row = Value(var, source.value.type.with_(shape=source.value.shape[1:]), source.value.bound, exact=True)
    graph = build(w, [row], w.count((2, 4)), w.fresh, family_weights=_INLINE_FAMILIES, backward=False)
    body = _inline(graph)
    if body is None:
        return
    w.features.add("tensor-comprehension")
    w.features.add("comprehension")
    _record(w, graph, [source], emitted=[body])
    out = graph.last
    assert out is not None, "_inline gave an expression"
    result = w.fresh("v")
    if w.chance(50) and out.dtype is not DType.BOOL:
        w.emit(scope, f"{result} = sum(({body} for {var} in {source.value.name}.unbind(0)), "
                      f"torch.zeros((), dtype={out.dtype.torch}))")
        shape = out.shape
    else:
        w.emit(scope, f"{result} = torch.stack([{body} for {var} in {source.value.name}.unbind(0)])")
        shape = (source.value.shape[0],) + out.shape
    bound = out.bound * source.value.shape[0]
    _keep(w, scope, [Value(result, out.type.with_(shape=shape), bound)])


@construct("tensor-generator", weight=2, compound=True, features={
    "tensor-generator": "a nested generator yielding a typed operator chain's result per row",
})
def tensor_generator(w: StatementWriter, scope: Scope) -> None:
    """``def gen(t): for x in t.unbind(0): <chain>; yield v`` consumed by ``list`` and stacked."""
    (source,) = _add_inputs(w, 1)
    if source.value.type.ndim < 1:
        return
    w.features.update({"tensor-generator", "generator", "for"})
    name, param, var = w.fresh("gen"), w.fresh("t"), w.fresh("x")
    row = Value(var, source.value.type.with_(shape=source.value.shape[1:]), source.value.bound, exact=True)
    graph = build(w, [row], w.count((2, 5)), w.fresh, backward=False)
    _record(w, graph, [source])
    w.emit(scope, f"def {name}({param}):")
    w.emit(scope, f"for {var} in {param}.unbind(0):", 1)
    for line in graph.lines:
        w.emit(scope, line, 2)
    out = graph.last or row
    w.emit(scope, f"yield {out.name}", 2)
    result = w.fresh("v")
    w.emit(scope, f"{result} = torch.stack(list({name}({source.value.name})))")
    _keep(w, scope, [Value(result, out.type.with_(shape=(source.value.shape[0],) + out.shape), out.bound)])
