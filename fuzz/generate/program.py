"""Program generation: Hypothesis strategies that write small torch programs.

``programs()`` draws one ``Program``: a module defining ``f(t0, t1, n, *extras)``
and ``inputs()``. ``f`` mixes tensor arithmetic with the Python constructs that
Dynamo has to trace (branches on tensors, loops, closures, ``nonlocal``,
container mutation, ``try``, ``with``, comprehensions, generators, in-place
argument mutation, ``print``, and the constructs of the ``constructs_*``
modules: generators driven by ``send``, ``except*``, ``match``, classes,
``async def``, ...) and calls ``torch._dynamo.graph_break()`` at random
statement boundaries, inside those constructs too. Extra arguments bring
other dtypes (int64, bool, bfloat16), 0-size and 1-element tensors, leaves
that require grad (f runs backward and returns the gradient), Python
scalars, tuples, lists, dicts and objects.

The programs are written for a differential oracle that compares eager and
compiled results with a relative tolerance of 1e-4, so the generator keeps
them numerically tame (see ``fuzz.generate.writer``): every expression
carries an upper bound on its magnitude, assignments squash values back into
[-3, 3], there is no division by anything that can be near zero and no
randomness inside ``f``, Python control flow only depends on ints, shapes or
counts of ``x > c``, and ``print`` shows shapes, ints and strings, never a
float. Exceptions are only raised where an enclosing ``try`` in the same
function catches them.

The statement table is the registry's (``fuzz.generate.registry``):
``STATEMENTS`` collects the constructs of ``_CONSTRUCT_MODULES`` in that
order, and ``STATEMENT_KINDS`` and ``FEATURES`` are derived from it.
``generate(seed)`` is the deterministic entry point used by campaigns.
"""

from __future__ import annotations

import dataclasses
import random

from hypothesis import strategies as st
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.internal.conjecture.providers import HypothesisProvider

from fuzz.generate import (
    constructs_builtins,
    constructs_classes,
    constructs_comprehension,
    constructs_compiler_api,
    constructs_contexts,
    constructs_exceptions,
    constructs_generators,
    constructs_hop,
    constructs_misc,
    constructs_newest,
    constructs_objects,
    constructs_objmodel,
    constructs_protocols,
    constructs_stdlib,
    constructs_subclass,
    constructs_tensor,
    constructs_with,
    statements,
)
from fuzz.generate.prelude import PRELUDE
from fuzz.generate.registry import Construct, StatementWriter, collect
from fuzz.generate.scope import Scope
from fuzz.generate.writer import N_VALUES, TOP_STATEMENTS
from harness.program import Program

__all__ = [
    "FEATURES", "GENERATOR", "PROGRAM_FEATURES", "STATEMENTS", "STATEMENT_KINDS",
    "generate", "program_from_data", "programs",
]

# Name recorded in Program.generator; bump the suffix when the same seed starts
# meaning a different program.
GENERATOR = "tcfuzz.v11"

# The modules whose registered constructs make the statement table, in table
# order (each module's constructs in definition order). The order is part of
# what a seed means: reordering changes every program (bump GENERATOR).
_CONSTRUCT_MODULES = (
    statements,
    constructs_generators,
    constructs_exceptions,
    constructs_with,
    constructs_objects,
    constructs_misc,
    constructs_tensor,
    # Dynamo's model of Python: comprehension graph breaks, the standard
    # library, the object model, tensor subclasses, contexts and builtins
    # (itertools.batched is gated to 3.12+)
    constructs_stdlib,
    constructs_objmodel,
    constructs_subclass,
    constructs_contexts,
    constructs_builtins,
    constructs_classes,
    # higher-order operators over functions written in f; object protocols and container methods;
    # the torch._dynamo decorators and config contexts user code calls
    constructs_hop,
    constructs_protocols,
    constructs_compiler_api,
    # last of the kinds drawn by default: Hypothesis draws the ends of an integer range more
    # often than its middle, so the table's last entry (comprehension-break) is drawn most
    constructs_comprehension,
    # version-gated kinds (3.14+, 3.15+): drawn only where weights enable them
    constructs_newest,
)
# The statement table: every kind the writer draws, with its weight.
STATEMENTS: tuple[Construct, ...] = collect(_CONSTRUCT_MODULES)
# Every statement kind, in table order: the keys of a feedback weight map.
STATEMENT_KINDS: tuple[str, ...] = tuple(entry.kind for entry in STATEMENTS)

# Base shapes of t0; t1 has this shape or one that broadcasts against it.
# Small, so that programs run in microseconds and reductions stay short.
SHAPES: tuple[tuple[int, ...], ...] = ((3, 4), (2, 5), (4,), (2, 3, 4), (1,), (17,), (3, 17), (2, 1, 5))


@dataclasses.dataclass(frozen=True)
class _ExtraArg:
    """An extra argument of f after (t0, t1, n); its kind is a feature name.

    ``value``: the input expression ({dims} is t0's dims, {last} t0's last
    dim, {scalar} a Python number). ``uses``: statements at the top of f that
    use it ({a} is the parameter, {t} a new local tensor; every use keeps
    |{t}| <= 3). ``helper``: a ``PRELUDE`` entry it needs, if any.
    """

    description: str
    value: str
    uses: tuple[str, ...]
    helper: str | None = None


_EXTRA_ARGS: dict[str, _ExtraArg] = {
    "int64": _ExtraArg("an extra int64 tensor argument", "torch.randint(-3, 4, ({dims},), generator=g)",
                       ("{t} = torch.tanh(t0 + {a}.to(t0.dtype) * 0.25)",)),
    "bool-input": _ExtraArg("an extra bool tensor argument", "torch.randn({dims}, generator=g) > 0",
                            ("{t} = torch.where({a} & (t0 > 0), t0, -t0).clamp(-3.0, 3.0)",)),
    "bfloat16": _ExtraArg("an extra bfloat16 tensor argument", "torch.randn({dims}, generator=g).to(torch.bfloat16)",
                          ("{t} = torch.tanh(t0 + ({a} * 2).float())",)),
    "zero-size": _ExtraArg("an extra (0, k) tensor argument", "torch.randn(0, {last}, generator=g)",
                           ("{t} = torch.tanh(t0 + {a}.sum(dim=0) + {a}.shape[0])",)),
    "one-element": _ExtraArg("an extra 1-element tensor argument", "torch.randn(1, generator=g)",
                             ("{t} = torch.tanh(t0 * {a})",)),
    "scalar-arg": _ExtraArg("an extra Python float/int argument", "{scalar}", ("{t} = torch.tanh(t0 * {a})",)),
    "tuple-arg": _ExtraArg("a (tensor, int) argument", "(torch.randn({dims}, generator=g), 2)",
                           ("{t} = torch.tanh({a}[0] * {a}[1] * 0.25)",)),
    "list-arg": _ExtraArg(
        "a list argument, mutated by f",
        "[torch.randn({dims}, generator=g), torch.randn({dims}, generator=g)]",
        ("{a}.append(t0 * 0.5)", "{t} = torch.tanh(sum({a}))"),
    ),
    "dict-arg": _ExtraArg(
        "a dict argument, mutated by f",
        '{{"w": torch.randn({dims}, generator=g), "k": 2}}',
        ('{a}["seen"] = n', '{t} = torch.tanh({a}["w"] * {a}["k"] * 0.25)'),
    ),
    "object-arg": _ExtraArg("a small object argument, mutated by f", "Box(torch.randn({dims}, generator=g), 2)",
                            ("{a}.k += 1", "{t} = torch.tanh({a}.w * {a}.k * 0.25)"), helper="Box"),
    "requires-grad": _ExtraArg("an extra leaf with requires_grad; f runs backward, returns the grad",
                               "torch.randn({dims}, generator=g, requires_grad=True)", ()),
}
# Chance that f gets extra arguments, and the most it gets, in percent / count.
EXTRA_ARGS_PERCENT = 45
MAX_EXTRA_ARGS = 2
# Chance that t1 is a non-contiguous view, in percent. (New shapes on a later
# call come from the harness's call plan: harness.execute's "shape" call grows
# the inputs, so inputs() itself stays a pure function: the harness may call it
# more often in one run than in another.)
NON_CONTIGUOUS_PERCENT = 20
# Chance that f starts with an operator-heavy typed graph (fuzz.generate.constructs_tensor),
# in percent: its calls always run and its results are returned.
OPERATOR_HEAVY_PERCENT = 30

# Features of the program as a whole rather than of one statement kind: the
# layout of t0 and t1, expressions, and the extra arguments of f.
PROGRAM_FEATURES: dict[str, str] = {
    "broadcast": "t1's shape differs from t0's and broadcasts against it",
    "float64": "an input is float64 (mixed-dtype promotion)",
    "non-contiguous": "t1 is a strided view",
    "reduction": "sum, mean, amax, norm, logsumexp in tensor arithmetic",
    **{kind: extra.description for kind, extra in _EXTRA_ARGS.items()},
}
# Every feature name that can appear in Program.features, sorted, with what
# it means: those the statement kinds declare and the program's own.
FEATURE_DESCRIPTIONS: dict[str, str] = dict(sorted({
    **{name: text for entry in STATEMENTS for name, text in (*entry.features.items(), *entry.also.items())},
    **PROGRAM_FEATURES,
}.items()))
FEATURES: tuple[str, ...] = tuple(FEATURE_DESCRIPTIONS)


def _write(w: StatementWriter) -> tuple[str, tuple[str, ...]]:
    """Draw a whole program: its source text and its sorted feature names."""
    w.shape = shape = w.pick(SHAPES)
    other_shapes = [shape, (1,) + shape[1:], shape[1:], shape[:-1] + (1,)]
    other = w.pick([s for s in other_shapes if s] if w.chance(40) else [shape])
    if other != shape:
        w.features.add("broadcast")
    dtypes = ["", ""]
    if w.chance(20):
        dtypes[w.index(2)] = ", dtype=torch.float64"
        w.features.add("float64")
    n = w.pick(N_VALUES)
    rng_seed = w.draw(st.integers(0, 2**31 - 1))
    strided = w.chance(NON_CONTIGUOUS_PERCENT)
    if strided:
        w.features.add("non-contiguous")
    extras: list[str] = []
    if w.chance(EXTRA_ARGS_PERCENT):
        kinds = sorted(_EXTRA_ARGS)
        for _ in range(1 + w.index(MAX_EXTRA_ARGS)):
            kind = w.pick(kinds)
            if kind not in extras:
                extras.append(kind)
    scalar = w.pick(("0.5", "-1.5", "2"))

    params = ["t0", "t1", "n"] + [f"a{i}" for i in range(len(extras))]
    w.lines = ["", "", f"def f({', '.join(params)}):"]
    scope = Scope(
        tensors=("t0", "t1"), writable=(), ints=("n",), printables=("n",), lists={}, dicts={}
    )
    for _ in range(w.count((1, 3))):
        name = f"t{len(scope.tensors)}"
        w.emit(scope, f"{name} = {w.squashed(scope)}")
        scope.tensors += (name,)
        scope.writable += (name,)
    grads: list[str] = []
    for i, kind in enumerate(extras):
        w.features.add(kind)
        if kind == "zero-size":
            w.features.add("reduction")
        if kind == "object-arg":
            w.features.add("mutation-attr")
        for line in _EXTRA_ARGS[kind].uses:
            name = f"t{len(scope.tensors)}"
            w.emit(scope, line.format(a=f"a{i}", t=name))
            if line.startswith("{t} ="):
                scope.tensors += (name,)
                scope.writable += (name,)
    if w.chance(OPERATOR_HEAVY_PERCENT):
        # an operator-heavy program: a typed graph at the top of f, thin Python around it
        constructs_tensor.tensor_graph(w, scope)
    w.body(scope, TOP_STATEMENTS)
    for i, kind in enumerate(extras):
        if kind == "requires-grad":
            # backward through the traced forward; the gradient is returned
            w.features.add("reduction")
            loss = w.fresh("loss")
            w.emit(scope, f"{loss} = (torch.tanh(a{i} * t0) * {w.squashed(scope, 1)}).sum()")
            if w.chance(50):
                w.emit(scope, f"{loss}.backward()")
                grads.append(f"a{i}.grad")
            else:
                w.emit(scope, f"(grad{i},) = torch.autograd.grad({loss}, [a{i}])")
                grads.append(f"grad{i}")
    # every local tensor is returned, so a divergence anywhere shows
    w.emit(scope, f"return {', '.join((w.squashed(scope), *scope.writable, *grads, *w.tensor_outputs))}")
    # tensor graphs' inputs (fuzz.generate.constructs_tensor) are further parameters
    params += [name for name, _ in w.tensor_inputs]
    w.lines[2] = f"def f({', '.join(params)}):"

    def arguments(dims0: tuple[int, ...], dims1: tuple[int, ...]) -> str:
        def randn(dims: tuple[int, ...], dtype: str) -> str:
            return f"torch.randn({', '.join(map(str, dims))}, generator=g{dtype})"

        second = randn(dims1, dtypes[1])
        if strided:
            second = randn(dims1 + (2,), dtypes[1]) + "[..., 0]"
        values = [randn(dims0, dtypes[0]), second, str(n)]
        for kind in extras:
            values.append(_EXTRA_ARGS[kind].value.format(
                dims=", ".join(map(str, dims0)), last=dims0[-1], scalar=scalar))
        values += [source for _, source in w.tensor_inputs]
        return f"({', '.join(values)})"

    inputs = [
        "",
        "",
        "def inputs():",
        f"    g = torch.Generator().manual_seed({rng_seed})",
        f"    return {arguments(shape, other)}",
        "",
    ]

    head = ["import torch"]
    blocks: list[tuple[str, ...]] = [PRELUDE[name] for name in w.prelude]
    if w.prelude_lines:
        blocks.append(tuple(w.prelude_lines))
    blocks += [PRELUDE[_EXTRA_ARGS[kind].helper] for kind in extras if _EXTRA_ARGS[kind].helper]
    imports = [b for b in blocks if all(line.startswith("import ") for line in b)]
    for block in imports:
        head += list(block)
    for block in blocks:
        if block not in imports:
            head += ["", ""] + list(block) if block[0].startswith(("class", "@", "def")) else [""] + list(block)
    source = "\n".join(head + w.lines + inputs)
    return source, tuple(sorted(w.features))


@st.composite
def _programs(draw: st.DrawFn, weights: dict[str, float] | None = None) -> Program:
    source, features = _write(StatementWriter(draw, STATEMENTS, weights))
    return Program(source=source, generator=GENERATOR, features=features)


def programs(weights: dict[str, float] | None = None) -> st.SearchStrategy[Program]:
    """A Hypothesis strategy for generated ``Program``s (``generator=GENERATOR``).

    Each program defines ``f(t0, t1, n, *extras)``, where ``t0`` and ``t1`` are
    float32 or float64 tensors (``t0`` of shape (3, 4), (2, 5), (4,),
    (2, 3, 4), (1,), (17,), (3, 17) or (2, 1, 5); ``t1`` of t0's shape or one
    that broadcasts against it, possibly a non-contiguous view), ``n`` is an
    int in [1, 4], and up to two extra arguments of the kinds in
    ``_EXTRA_ARGS`` (int64, bool, bfloat16, 0-size and 1-element tensors, a
    leaf that requires grad, a Python scalar, tuple, list, dict or object);
    and ``inputs()``, which builds them from a seeded ``torch.Generator``
    (a pure function: the harness grows the shapes for its recompile call).
    ``features`` is the sorted tuple of construct names (from ``FEATURES``)
    the program uses. ``weights`` multiplies the statement table's weights by
    kind (keys from ``STATEMENT_KINDS``). Shrinks towards fewer and simpler
    statements.
    """
    return _programs(weights)


class _SeededProvider(HypothesisProvider):
    """Hypothesis' provider without its constant pools, so a seed fixes every draw.

    HypothesisProvider returns, for about 5% of integer draws, a literal found
    in the local modules currently imported (``_get_local_constants``); which
    modules are imported differs between processes, so the same seed would
    write different programs in a test run and in a campaign.
    """

    def _maybe_draw_constant(self, *args: object, **kwargs: object) -> None:
        return None


def program_from_data(data: ConjectureData, weights: dict[str, float] | None = None) -> Program:
    """Draw one program from ``data`` (a fresh one, or one replaying a choice
    sequence, as a reducer does: ``ConjectureData.for_choices(choices)``)."""
    return data.draw(programs(weights))


def generate(seed: int, weights: dict[str, float] | None = None) -> Program:
    """The program for ``seed``: the same source on every run, process and machine.

    Draws ``programs(weights)`` from a ``ConjectureData`` fed by
    ``random.Random(seed)`` and records ``seed`` in the result. The program is
    a function of (seed, weights): a campaign that steers with feedback
    records the weights it used (see ``fuzz.generate.feedback``). Raises
    ``TypeError`` if ``seed`` is not an int.
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"Expected seed to be an int but got seed={seed!r}")
    data = ConjectureData(random=random.Random(seed), provider=_SeededProvider)
    program = program_from_data(data, weights)
    return dataclasses.replace(program, seed=seed, weights=tuple(sorted((weights or {}).items())))
