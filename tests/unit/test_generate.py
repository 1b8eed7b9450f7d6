"""Tests of the program generator (fuzz.generate, fuzz.strategies).

They run in the host env, without torch: programs are checked by parsing them.
Each feature a program claims is looked for in its syntax tree by a detector
written here, independently of the generator, and must be there; a construct
that is there must be claimed. One test (marked slow) runs programs eagerly in
the 3.11 worker env.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import fuzz.strategies
from fuzz.generate.program import (
    FEATURE_DESCRIPTIONS,
    FEATURES,
    GENERATOR,
    PROGRAM_FEATURES,
    STATEMENT_KINDS,
    STATEMENTS,
    generate,
    program_from_data,
    programs,
)
from fuzz.generate.tensor_ops import Family
from harness.program import Program
from tests.unit.test_generate_dynamo_model import dynamo_model_features

ROOT = Path(__file__).resolve().parents[2]
# Seeds for the sample-based tests: enough for every feature to show up.
SAMPLE_SEEDS = range(200)
# Seeds for the static hygiene checks, which look for rare mistakes (an
# exception raised in a nested def inside a try body would show in ~0.6% of
# programs).
LARGE_SAMPLE_SEEDS = range(1000)

LIST_NAME = re.compile(r"xs\d+$")
DICT_NAME = re.compile(r"d\d+$")
LIST_MUTATORS = {"append", "insert", "extend", "pop", "remove", "clear", "reverse", "sort"}
DICT_MUTATORS = {"update", "setdefault", "pop", "popitem", "clear"}
REDUCTIONS = {"sum", "mean", "amax", "amin", "norm", "logsumexp", "prod", "std", "var"}
TENSOR_NAME = re.compile(r"[tux]\d+$")


@pytest.fixture(scope="module")
def large_sample() -> list[Program]:
    return [generate(seed) for seed in LARGE_SAMPLE_SEEDS]


@pytest.fixture(scope="module")
def sample(large_sample: list[Program]) -> list[Program]:
    return large_sample[: len(SAMPLE_SEEDS)]


# -- detectors -----------------------------------------------------------------


def own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a function body, not descending into nested defs or lambdas."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def reads_tensor_data(test: ast.AST) -> bool:
    """A condition like ``(x > 0).any()``: a method called on a comparison."""
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Compare)
        for node in ast.walk(test)
    )


def named(node: ast.AST, pattern: re.Pattern[str]) -> bool:
    return isinstance(node, ast.Name) and bool(pattern.match(node.id))


def method_call(node: ast.AST) -> tuple[ast.expr, str] | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.value, node.func.attr
    return None


def mutates(node: ast.AST, pattern: re.Pattern[str], methods: set[str]) -> bool:
    call = method_call(node)
    if call is not None and named(call[0], pattern) and call[1] in methods:
        return True
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Delete):
        targets = node.targets
    for target in targets:
        if isinstance(target, ast.Subscript) and named(target.value, pattern):
            return True
        if isinstance(node, ast.AugAssign) and named(target, pattern):
            return True
    return False


def function(tree: ast.Module, name: str) -> ast.FunctionDef:
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)


def first_call_arguments(tree: ast.Module) -> list[ast.expr]:
    """The elements of the tuple inputs() returns on its first call (its last return)."""
    last = function(tree, "inputs").body[-1]
    assert isinstance(last, ast.Return)
    value = last.value
    assert isinstance(value, ast.Tuple)
    return value.elts


def tensor_shape(node: ast.expr) -> tuple[tuple[int, ...], str]:
    """(shape, dtype) of ``torch.randn(dims..., generator=g)``, or of a strided
    ``torch.randn(dims..., 2, generator=g)[..., 0]`` view."""
    strided = isinstance(node, ast.Subscript)
    call = node.value if strided else node
    assert isinstance(call, ast.Call) and ast.unparse(call.func) == "torch.randn", ast.unparse(node)
    dims = tuple(ast.literal_eval(arg) for arg in call.args)
    dtype = next((ast.unparse(k.value) for k in call.keywords if k.arg == "dtype"), "")
    return (dims[:-1] if strided else dims), dtype


def input_shapes(tree: ast.Module) -> list[tuple[tuple[int, ...], str]]:
    """(shape, dtype) of t0 and t1 as inputs() builds them on its first call."""
    return [tensor_shape(node) for node in first_call_arguments(tree)[:2]]


def extra_argument_kind(node: ast.expr) -> str:
    """The feature name of an extra argument of f, from the expression inputs() builds it with."""
    text = ast.unparse(node)
    if isinstance(node, ast.Constant) or (isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant)):
        return "scalar-arg"
    if isinstance(node, ast.Tuple):
        return "tuple-arg"
    if isinstance(node, ast.List):
        return "list-arg"
    if isinstance(node, ast.Dict):
        return "dict-arg"
    if isinstance(node, ast.Compare):
        return "bool-input"
    if text.startswith("Box("):
        return "object-arg"
    if "bfloat16" in text:
        return "bfloat16"
    if text.startswith("torch.randint("):
        return "int64"
    if "requires_grad=True" in text:
        return "requires-grad"
    assert isinstance(node, ast.Call), text
    if ast.literal_eval(node.args[0]) == 0:
        return "zero-size"
    if len(node.args) == 1 and ast.literal_eval(node.args[0]) == 1:
        return "one-element"
    raise AssertionError(f"unknown extra argument {text}")


def input_features(tree: ast.Module) -> set[str]:
    # the extra arguments are f's a0, a1, ...; the tensor graphs' inputs follow them
    extras = sum(1 for a in function(tree, "f").args.args if re.fullmatch(r"a\d+", a.arg))
    found = {extra_argument_kind(node) for node in first_call_arguments(tree)[3:3 + extras]}
    if isinstance(first_call_arguments(tree)[1], ast.Subscript):
        found.add("non-contiguous")
    return found


def out_of_range_index(node: ast.AST, shape: tuple[int, ...]) -> bool:
    """``t0[i]`` / ``t0[:, i]`` with a constant i past the end of its dimension."""
    if not (isinstance(node, ast.Subscript) and named(node.value, re.compile(r"t0$"))):
        return False
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    for dim, part in enumerate(parts):
        if isinstance(part, ast.Constant) and isinstance(part.value, int):
            if dim >= len(shape) or not -shape[dim] <= part.value < shape[dim]:
                return True
    return False


def detect_features(source: str) -> set[str]:
    """The constructs present in a program, by inspecting its syntax tree."""
    tree = ast.parse(source)
    f = function(tree, "f")
    (shape, dtype0), (other, dtype1) = input_shapes(tree)[:2]
    found: set[str] = input_features(tree) | construct_features(tree)
    if other != shape:
        found.add("broadcast")
    if "float64" in dtype0 + dtype1:
        found.add("float64")
    rules: list[tuple[str, Callable[[ast.AST], bool]]] = [
        ("for", lambda n: isinstance(n, ast.For)),
        ("while", lambda n: isinstance(n, ast.While)),
        ("while-tensor-cond", lambda n: isinstance(n, ast.While) and reads_tensor_data(n.test)),
        ("if", lambda n: isinstance(n, ast.If)),
        ("if-tensor-cond", lambda n: isinstance(n, ast.If) and reads_tensor_data(n.test)),
        ("break-continue", lambda n: isinstance(n, (ast.Break, ast.Continue))),
        ("nonlocal", lambda n: isinstance(n, ast.Nonlocal)),
        (
            "comprehension",
            lambda n: isinstance(n, (ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp)),
        ),
        ("list-mutation", lambda n: mutates(n, LIST_NAME, LIST_MUTATORS)),
        ("dict-mutation", lambda n: mutates(n, DICT_NAME, DICT_MUTATORS)),
        ("try-except", lambda n: isinstance(n, ast.Try) and bool(n.handlers)),
        ("try-finally", lambda n: isinstance(n, ast.Try) and bool(n.finalbody)),
        ("raise", lambda n: isinstance(n, ast.Raise)),
        ("tensor-index-error", lambda n: out_of_range_index(n, shape)),
        (
            "no-grad",
            lambda n: isinstance(n, ast.With)
            and any(ast.unparse(item.context_expr) == "torch.no_grad()" for item in n.items),
        ),
        ("print", lambda n: isinstance(n, ast.Call) and named(n.func, re.compile("print$"))),
        ("graph-break", lambda n: (method_call(n) or (None, ""))[1] == "graph_break"),
        ("lambda", lambda n: isinstance(n, ast.Lambda)),
    ]
    for node in ast.walk(f):
        for name, rule in rules:
            if rule(node):
                found.add(name)
        call = method_call(node)
        if call is not None:
            receiver, method = call
            if method.endswith("_") and not method.startswith("_"):
                if named(receiver, re.compile(r"t[01]$")):
                    found.add("inplace-arg")
                elif isinstance(receiver, ast.Name):
                    found.add("inplace-local")
            if method in REDUCTIONS and not isinstance(receiver, ast.Compare):
                found.add("reduction")
        if isinstance(node, ast.FunctionDef) and node is not f:
            has_yield = any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(node))
            found.add("generator" if has_yield else "closure")
    if "lambda" in found:
        found.discard("lambda")
        found.add("closure")
    return found


def calls_named(node: ast.AST, names: set[str]) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names


def handler_catches(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.ExceptHandler) and node.type is not None and name in ast.unparse(node.type)


def module_class(tree: ast.Module, name: str) -> ast.ClassDef | None:
    return next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)


def comprehensions(f: ast.AST) -> Iterator[ast.AST]:
    for node in ast.walk(f):
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            yield node


GRAD_MODES = ("torch.no_grad()", "torch.enable_grad()", "torch.set_grad_enabled(")


def grad_ctx_object(f: ast.FunctionDef) -> bool:
    """A grad-mode object bound to a name, then entered by name."""
    bound = {
        t.id for n in ast.walk(f) if isinstance(n, ast.Assign)
        and ast.unparse(n.value).startswith(GRAD_MODES) for t in n.targets if isinstance(t, ast.Name)
    }
    return any(
        isinstance(n, ast.With) and any(isinstance(i.context_expr, ast.Name) and i.context_expr.id in bound
                                        for i in n.items)
        for n in ast.walk(f)
    )


def construct_features(tree: ast.Module) -> set[str]:
    """The constructs of fuzz.generate.registry present in f, each found by its own rule."""
    f = function(tree, "f")
    nodes = list(ast.walk(f))
    module_names = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
                    if isinstance(t, ast.Name)}
    nested = [n for n in nodes if isinstance(n, ast.FunctionDef) and n is not f]
    rules: dict[str, bool] = {
        "assert": any(isinstance(n, ast.Assert) for n in nodes),
        "async-def": any(isinstance(n, ast.AsyncFunctionDef) and any(isinstance(m, ast.Await) for m in ast.walk(n))
                         for n in nodes),
        "chained-comparison": any(isinstance(n, ast.Compare) and len(n.ops) >= 2 for n in nodes),
        "class-local": any(isinstance(n, ast.ClassDef) for n in nodes),
        "closure-cell-loop": any(isinstance(n, ast.For) and any(isinstance(m, ast.Lambda) for m in ast.walk(n))
                                 for n in nodes),
        "comprehension-shadow": any(isinstance(t, ast.Name) and re.match(r"[tux]\d+$", t.id)
                                    for c in comprehensions(f) for g in c.generators for t in ast.walk(g.target)),
        "contextmanager": any(isinstance(n, ast.With) and any(ast.unparse(i.context_expr).startswith("scaled(")
                                                             for i in n.items) for n in nodes)
        and "@contextlib.contextmanager" in ast.unparse(tree),
        "dataclass": module_class(tree, "Pair") is not None and any(calls_named(n, {"Pair"}) or (
            isinstance(n, ast.MatchClass) and ast.unparse(n.cls) == "Pair") for n in nodes),
        "del": any(isinstance(n, ast.Delete) for n in nodes),
        "dict-merge": any((isinstance(n, ast.Dict) and None in n.keys)
                          or (isinstance(n, ast.Call) and any(k.arg is None for k in n.keywords)) for n in nodes),
        "exception-group": any(type(n).__name__ == "TryStar" for n in nodes),
        "fstring": any(isinstance(n, ast.FormattedValue) and (n.format_spec is not None or n.conversion != -1)
                       for n in nodes),
        "generator-return": any(any(isinstance(m, (ast.Yield, ast.YieldFrom)) for m in own_nodes(d))
                                and any(isinstance(m, ast.Return) and m.value is not None for m in own_nodes(d))
                                for d in nested)
        or any(ast.unparse(n) == "stop.value" for n in nodes),
        "generator-send": any((method_call(n) or (None, ""))[1] == "send" for n in nodes),
        "global-write": any(isinstance(n, ast.Global) for n in nodes),
        "grad-ctx-object": grad_ctx_object(f),
        "grad-mode": any(isinstance(n, ast.With) and any(
            re.search(r"enable_grad|set_grad_enabled|grad_mode", ast.unparse(i.context_expr)) for i in n.items)
            for n in nodes),
        "import": any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in nodes),
        "is-in": any(isinstance(n, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn))
                                                       for op in n.ops) for n in nodes),
        "isinstance": any(calls_named(n, {"isinstance"}) for n in nodes),
        "iter-builtins": any(calls_named(n, {"iter", "next", "reversed", "zip", "enumerate", "map", "filter"})
                             for n in nodes),
        "iterator-exhaustion": any(handler_catches(n, "StopIteration") for n in nodes),
        "match": any(isinstance(n, ast.Match) for n in nodes),
        "mutation-attr": any(
            isinstance(n, (ast.Assign, ast.AugAssign)) and any(
                isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id != "self"
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))
            for n in nodes),
        "mutation-global": any((method_call(n) or (None, ""))[1] == "append"
                               and named(method_call(n)[0], re.compile("|".join(map(re.escape, module_names)) + "$"))
                               for n in nodes) if module_names else False,
        "nested-function": any(isinstance(m, ast.FunctionDef) and m is not d for d in nested for m in ast.walk(d)),
        "nn-module": module_class(tree, "Block") is not None and any(calls_named(n, {"Block"}) for n in nodes),
        "random": "fallback_random = True" in ast.unparse(tree)
        and any((method_call(n) or (None, ""))[1] in ("dropout", "rand_like", "randn") for n in nodes),
        "raise-from": any(isinstance(n, ast.Raise) and n.cause is not None for n in nodes),
        "reraise": any(isinstance(n, ast.Raise) and n.exc is None for n in nodes),
        "set-ops": any(isinstance(n, (ast.Set, ast.SetComp)) for n in nodes),
        "short-circuit": any(isinstance(n, ast.Assign) and any(isinstance(m, ast.BoolOp) for m in ast.walk(n.value))
                             for n in nodes),
        "slice": any(isinstance(n, ast.Slice) and (n.step is not None or not all(
            b is None or isinstance(b, ast.Constant) for b in (n.lower, n.upper))) for n in nodes),
        "star-args": any(d.args.vararg or d.args.kwarg or d.args.kwonlyargs for d in nested),
        "tensor-exception": any(handler_catches(n, "RuntimeError") for n in nodes),
        "unary-ops": any(isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.UAdd, ast.Invert)) for n in nodes),
        "unpacking": any(isinstance(n, ast.Starred) for n in nodes) or any(
            isinstance(n, ast.Assign) and any(isinstance(t, ast.Tuple) and any(isinstance(e, ast.Tuple) for e in t.elts)
                                              for t in n.targets) for n in nodes),
        "user-cm": module_class(tree, "Suppress") is not None
        and any(isinstance(n, ast.With) and any(isinstance(i.context_expr, ast.Name) for i in n.items) for n in nodes),
        "walrus": any(isinstance(m, ast.NamedExpr) for c in comprehensions(f) for m in ast.walk(c)),
        **tensor_features(tree),
        **{name: True for name in dynamo_model_features(tree)},
    }
    return {name for name, present in rules.items() if present}


def tensor_features(tree: ast.Module) -> dict[str, bool]:
    """The features of fuzz.generate.constructs_tensor: graphs are assignments to v<N> over
    parameters p<N> (in f or in a module-level nn.Module's forward)."""
    f = function(tree, "f")
    source = ast.unparse(tree)
    nodes = list(ast.walk(f))
    nets = [n for n in tree.body if isinstance(n, ast.ClassDef) and re.fullmatch(r"Net\d+", n.name)]
    graph_code = [n for n in nodes + [m for c in nets for m in ast.walk(c)]
                  if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and re.fullmatch(r"v\d+", t.id)
                                                       for t in n.targets)]
    unbind = [n for n in nodes if isinstance(n, (ast.For, ast.comprehension)) and "unbind(0)" in ast.unparse(n.iter)]
    graph = bool(graph_code) and bool(re.search(r"def f\(.*\bp\d+", source))
    return {
        "tensor-graph": graph, "tensor-chain": graph,
        **{f"op-{family.value}": graph for family in Family},
        "tensor-module": bool(nets) and any(isinstance(n, ast.Call) and re.fullmatch(r"net\d+", ast.unparse(n.func))
                                            for n in nodes),
        "tensor-comprehension": any(isinstance(n, ast.comprehension) for n in unbind),
        "tensor-generator": any(isinstance(n, ast.For) for n in unbind),
        "tensor-backward": "materialize_grads=True" in ast.unparse(f),
        "tensor-graph-break": graph and "graph_break()" in ast.unparse(f),
        "low-precision": bool(re.search(r"float16|bfloat16", source)),
        "int-tensor": bool(re.search(r"int32|int64|randint", source)),
    }


# Features whose detectors are exact both ways (present <=> claimed): those
# of the ordinary statements (fuzz.generate.statements) and of the program as
# a whole. For the rest, a construct may appear as part of another (an `in`
# test, a `del` of a list item), so only "claimed => present" is checked.
EXACT_FEATURES = frozenset({
    "break-continue", "closure", "comprehension", "dict-mutation", "for", "generator", "graph-break", "if",
    "if-tensor-cond", "inplace-arg", "inplace-local", "list-mutation", "no-grad", "nonlocal", "print", "raise",
    "tensor-index-error", "try-except", "try-finally", "while", "while-tensor-cond",
}) | frozenset(PROGRAM_FEATURES)


# -- determinism -----------------------------------------------------------------


def test_same_seed_gives_the_same_program() -> None:
    for seed in (0, 1, 17, 2**40, -5):
        first, second = generate(seed), generate(seed)
        assert first == second
        assert first.seed == seed


def test_different_seeds_give_different_programs(sample: list[Program]) -> None:
    assert len({p.source for p in sample}) >= 0.95 * len(sample)


def digest_script(seeds: range) -> str:
    return textwrap.dedent(
        f"""
        import hashlib
        from fuzz.generate.program import generate
        h = hashlib.sha256()
        for seed in {seeds!r}:
            h.update(generate(seed).source.encode())
        print(h.hexdigest())
        """
    )


def test_programs_do_not_depend_on_process_state(tmp_path: Path) -> None:
    """Same seed, same source across hash seeds and whatever else is imported.

    Hypothesis' default provider draws integer literals from the local modules
    in sys.modules; a module full of small ints must not change any program.
    """
    seeds = range(200)
    expected = hashlib.sha256()
    for seed in seeds:
        expected.update(generate(seed).source.encode())
    # a few literals in the ranges the generator draws from (Hypothesis keeps
    # only the first few hundred constants of a module)
    noise = tmp_path / "noise_constants.py"
    noise.write_text("VALUES = [123456789, 987654321, 1073741831, 77777, 7, 13, 99]\n")
    runs = [
        ("0", ""),
        ("12345", ""),
        ("1", "import noise_constants\n"),
    ]
    for hash_seed, preamble in runs:
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(tmp_path)])
        result = subprocess.run(
            [sys.executable, "-c", preamble + digest_script(seeds)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        assert result.stdout.strip() == expected.hexdigest(), (hash_seed, preamble, result.stderr)


def test_generate_rejects_a_seed_that_is_not_an_int() -> None:
    for seed in ("1", 1.0, None, True):
        with pytest.raises(TypeError, match="Expected seed to be an int"):
            generate(seed)  # type: ignore[arg-type]


# -- shape of the programs -----------------------------------------------------------


def test_every_program_parses_and_defines_f_and_inputs(sample: list[Program]) -> None:
    for program in sample:
        program.check()
        tree = ast.parse(program.source)
        functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        params = [a.arg for a in functions["f"].args.args]
        assert params[:3] == ["t0", "t1", "n"]
        extras = [p for p in params[3:] if p.startswith("a")]
        assert params[3:3 + len(extras)] == [f"a{i}" for i in range(len(extras))]
        # then the tensor graphs' inputs (fuzz.generate.constructs_tensor): the growth input first
        graph_inputs = params[3 + len(extras):]
        assert all(re.fullmatch(r"p\d+", p) for p in graph_inputs[1:]), graph_inputs
        assert not graph_inputs or re.fullmatch(r"grow\d+", graph_inputs[0]), graph_inputs
        assert len(first_call_arguments(tree)) == len(params)
        assert functions["inputs"].args.args == []
        assert program.generator == GENERATOR
        assert program.entry == "f" and program.inputs == "inputs"
        assert Program.from_json(program.to_json()) == program


def test_inputs_are_seeded_and_random_ops_fall_back_to_eager_rng(sample: list[Program]) -> None:
    """inputs() seeds its own generator; f draws randomness only in "random"
    programs, which set fallback_random (the harness seeds torch per call)."""
    for program in sample:
        inputs_source = program.source[program.source.index("def inputs") :]
        assert re.search(r"torch\.Generator\(\)\.manual_seed\(\d+\)", inputs_source)
        f_source = program.source[program.source.index("def f(") : program.source.index("def inputs")]
        # torch's RNG, not a seeded random.Random (class-calls)
        random_ops = re.search(r"torch\.rand|\bnormal_|\bbernoulli|\bmultinomial|\bdropout", f_source)
        assert bool(random_ops) == ("random" in program.features), program.seed
        if random_ops:
            assert "torch._inductor.config.fallback_random = True" in program.source


def test_programs_are_small(sample: list[Program]) -> None:
    lines = [p.source.count("\n") for p in sample]
    # f, the function Dynamo compiles, stays near 30 lines; the module-level helpers of the
    # Python-model constructs (classes, autograd.Functions, compile regions) come on top
    f_lines = []
    for p in sample:
        f = next(n for n in ast.parse(p.source).body if isinstance(n, ast.FunctionDef) and n.name == "f")
        f_lines.append(f.end_lineno - f.lineno + 1)
    assert 10 <= statistics.median(f_lines) <= 40
    assert 10 <= statistics.median(lines) <= 70
    # module-level helpers (the object model's classes, fuzz.generate.constructs_objmodel) add up to ~120 lines
    assert max(lines) <= 260


# -- features ---------------------------------------------------------------------


def test_features_are_sorted_known_names(sample: list[Program]) -> None:
    for program in sample:
        assert list(program.features) == sorted(set(program.features))
        assert set(program.features) <= set(FEATURES), program.features


def test_each_feature_claimed_is_present_and_each_present_is_claimed(
    sample: list[Program],
) -> None:
    for program in sample:
        detected = detect_features(program.source)
        claimed = set(program.features)
        assert claimed - detected == set(), f"seed {program.seed}: claimed but absent"
        assert (detected - claimed) & EXACT_FEATURES == set(), f"seed {program.seed}: present but unclaimed"


def test_features_across_seeds_cover_the_vocabulary(large_sample: list[Program]) -> None:
    """Every feature but the version-gated ones (never drawn without weights
    that enable them: tests/unit/test_versions.py)."""
    from fuzz.generate.versions import FEATURE_MIN_PYTHON

    covered = set().union(*(p.features for p in large_sample))
    assert covered == set(FEATURES) - set(FEATURE_MIN_PYTHON)
    assert not covered & set(FEATURE_MIN_PYTHON)


# -- the construct registry ------------------------------------------------------------

# The statement table, (kind, weight) in draw order. The weighted draw reads
# it in this order, so a change here changes every program: bump GENERATOR.
PINNED_TABLE = (
    ("assign", 22), ("inplace", 6), ("print", 5), ("graph-break", 9), ("list", 6), ("dict", 5),
    ("comprehension", 5), ("raise", 8), ("break", 4), ("if", 8), ("for", 7), ("while", 4), ("try", 8),
    ("no-grad", 4), ("closure", 6), ("generator", 5), ("global-write", 2), ("cells-in-loop", 2),
    ("generator-send", 2), ("yield-from", 2), ("iter-builtins", 3), ("exhaustion", 2), ("shadow", 2),
    ("walrus", 2), ("raise-from", 2), ("reraise", 2), ("except-star", 2), ("tensor-exception", 2),
    ("grad-mode", 2), ("grad-ctx-object", 1), ("contextmanager", 2), ("user-cm", 2), ("match", 3),
    ("fstring", 2), ("star-args", 2), ("unpacking", 2), ("class-local", 2), ("dataclass", 2),
    ("nn-module", 2), ("mutate-attr", 2), ("isinstance", 2), ("async-def", 2), ("del", 2),
    ("chained-comparison", 2), ("is-in", 2), ("short-circuit", 2), ("assert", 2), ("import", 2),
    ("unary", 2), ("slice", 2), ("set-ops", 2), ("dict-merge", 2), ("random", 1), ("nested-function", 2),
    ("tensor-graph", 8), ("tensor-chain", 5), ("tensor-module", 3), ("tensor-comprehension", 3),
    ("tensor-generator", 2),
    # Dynamo's model of Python (tests/unit/test_generate_dynamo_model.py)
    ("lru-cache", 2), ("functools-partial", 2), ("functools-wraps", 2), ("functools-reduce", 2),
    ("cached-property", 2), ("singledispatch", 2), ("deque", 2), ("ordered-dict", 2), ("defaultdict", 2),
    ("counter", 2), ("chain-map", 2), ("namedtuple", 2), ("heapq-bisect", 2), ("itertools", 3),
    ("itertools-batched", 2), ("operator-getters", 2), ("metaclass", 2), ("init-subclass", 2), ("descriptor", 2),
    ("slots", 2), ("attr-overrides", 2), ("super-forms", 2), ("exception-attrs", 2), ("dataclass-forms", 2),
    ("enum", 2), ("protocol-abc", 2), ("bound-method", 2), ("function-rebind", 2), ("torch-function-subclass", 3),
    ("torch-function-mode", 2), ("autocast-nested", 2), ("inference-mode", 2), ("grad-enabled-call", 2),
    ("exit-stack", 2), ("exit-replaces", 2), ("torch-contexts", 2), ("context-protocol", 2), ("size-arithmetic", 3),
    ("key-functions", 2), ("zip-strict", 2),
    ("range-steps", 2), ("slice-objects", 2), ("attr-builtins", 2), ("type-three-arg", 2), ("globals-vars", 2),
    ("builtins-objects", 2), ("class-calls", 2), ("function-objects", 2),
    # higher-order operators over functions written in f (fuzz.generate.constructs_hop)
    ("hop-cond", 2), ("hop-while-loop", 2), ("hop-map", 2), ("nested-compile-region", 2), ("hop-scan", 2),
    ("hop-switch", 2), ("checkpoint-python", 2), ("functorch-python", 2), ("autograd-function", 2),
    # object protocols and container methods (fuzz.generate.constructs_protocols)
    ("user-container", 2), ("builtin-subclass", 2), ("operator-overloads", 2), ("hashable-keys", 2),
    ("list-methods", 2), ("dict-methods", 2), ("builtins-iter", 2), ("iterator-objects", 2), ("pytree", 2),
    ("function-forms", 2), ("sequence-protocols", 2),
    # the torch._dynamo decorators and config contexts (fuzz.generate.constructs_compiler_api)
    ("compiler-api", 2),
    ("comprehension-break-nested", 2), ("comprehension-break-walrus", 2), ("comprehension-break-shadow", 2),
    ("comprehension-break-closure", 2), ("comprehension-break-try", 2), ("comprehension-break-generator", 2),
    ("comprehension-break", 4),
    # version-gated (fuzz.generate.constructs_newest): drawn only where weights enable them
    ("template-string", 2), ("except-unparenthesised", 2), ("deferred-annotations", 2),
    ("finally-control-flow", 2), ("comprehension-unpacking", 2),
)
# Kinds drawn only where the nesting depth and the statement budget allow.
PINNED_COMPOUND = frozenset({
    "if", "for", "while", "try", "no-grad", "closure", "generator", "grad-mode", "grad-ctx-object",
    "contextmanager", "user-cm", "match", "raise-from", "reraise", "except-star", "tensor-generator",
    "except-unparenthesised", "finally-control-flow", "exception-attrs", "torch-function-mode",
    "comprehension-break-try", "torch-contexts",
})
# sha256 of generate(seed).source for seeds 0..99, joined: what GENERATOR's
# seeds mean. A change to any program needs a new GENERATOR (and this digest).
PINNED_DIGEST = ("tcfuzz.v11", "8528bf11398fed006d03725b8d60ac9c4346b09e15890c516197127d0db99e66")


def test_the_statement_table_is_the_registry_in_its_pinned_order() -> None:
    assert tuple((entry.kind, entry.weight) for entry in STATEMENTS) == PINNED_TABLE
    assert STATEMENT_KINDS == tuple(kind for kind, _ in PINNED_TABLE)
    assert {entry.kind for entry in STATEMENTS if entry.compound} == PINNED_COMPOUND


def test_the_same_seeds_write_the_same_programs_under_the_same_generator_name() -> None:
    digest = hashlib.sha256()
    for seed in range(100):
        digest.update(generate(seed).source.encode())
    assert (GENERATOR, digest.hexdigest()) == PINNED_DIGEST


def test_the_registry_derives_a_consistent_vocabulary() -> None:
    assert len(set(STATEMENT_KINDS)) == len(STATEMENT_KINDS)
    assert list(FEATURES) == sorted(FEATURES) == list(FEATURE_DESCRIPTIONS)
    assert all(FEATURE_DESCRIPTIONS.values())
    declared: list[str] = list(PROGRAM_FEATURES)
    for entry in STATEMENTS:
        assert set(entry.features) | set(entry.also) <= set(FEATURES), entry.kind
        declared += [*entry.features, *entry.also]
    # every feature is declared exactly once: by one kind or by the program
    assert sorted(declared) == list(FEATURES)
    assert EXACT_FEATURES <= set(FEATURES)


# Kinds drawn only inside another (``Construct.allowed``), and the kind to steer with them.
ENCLOSING_KIND = {"raise": "try", "break": "for"}


def test_every_construct_records_its_features_when_steered_towards() -> None:
    """A heavy weight on a kind makes most programs use it: its own features show."""
    for entry in STATEMENTS:
        if not entry.features:
            continue
        weights = {entry.kind: 60.0}
        if entry.kind in ENCLOSING_KIND:
            weights[ENCLOSING_KIND[entry.kind]] = 10.0
        hits = [seed for seed in range(12) if set(entry.features) & set(generate(seed, weights).features)]
        assert len(hits) >= 3, (entry.kind, hits)


def test_emit_block_dedents_a_template_to_the_scope() -> None:
    from fuzz.generate.scope import Scope
    from fuzz.generate.writer import Writer

    writer = Writer(lambda strategy: 0)
    scope = Scope(tensors=("t0",), writable=(), ints=(), printables=(), lists={}, dicts={}, indent=2)
    writer.emit_block(scope, """
        try:
            x = 1
        except ValueError:
            pass
    """, 1)
    assert writer.lines == ["            try:", "                x = 1", "            except ValueError:",
                            "                pass"]


def test_graph_breaks_appear_inside_constructs(sample: list[Program]) -> None:
    """graph_break() is placed in nested bodies too, not only at f's top level."""
    places: set[str] = set()
    for program in sample:
        f = function(ast.parse(program.source), "f")
        for node in ast.walk(f):
            if node is f:
                continue
            for field in ("body", "orelse", "finalbody"):
                statements = getattr(node, field, None)
                if isinstance(statements, list) and any(
                    ast.unparse(s) == "torch._dynamo.graph_break()" for s in statements
                ):
                    places.add(type(node).__name__)
    assert {"If", "For", "While", "Try", "ExceptHandler", "With", "FunctionDef"} <= places


# -- hygiene rules the oracle depends on ----------------------------------------------


def catches(handler: ast.ExceptHandler, exception: str) -> bool:
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(n, ast.Name) and n.id in (exception, "Exception") for n in names)


def raised_exceptions(function: ast.AST, shape: tuple[int, ...]) -> list[tuple[ast.AST, str]]:
    raised = []
    for node in ast.walk(function):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            raised.append((node, ast.unparse(node.exc.func)))
        elif out_of_range_index(node, shape):
            raised.append((node, "IndexError"))
    return raised


def test_every_exception_raised_is_caught_in_the_same_function(
    large_sample: list[Program],
) -> None:
    for program in large_sample:
        tree = ast.parse(program.source)
        shape = input_shapes(tree)[0][0]
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node, exception in raised_exceptions(function(tree, "f"), shape):
            child, parent = node, parents[node]
            while not isinstance(parent, (ast.FunctionDef, ast.Lambda)):
                if isinstance(parent, ast.Try) and child in parent.body:
                    if any(catches(h, exception) for h in parent.handlers):
                        break
                if type(parent).__name__ == "TryStar" and child in parent.body and exception == "ExceptionGroup":
                    # except* ValueError and except* KeyError: the generator raises groups of those only
                    if {"ValueError", "KeyError"} <= {ast.unparse(h.type) for h in parent.handlers}:
                        break
                child, parent = parent, parents[parent]
            else:
                pytest.fail(f"seed {program.seed}: {exception} at line {node.lineno} escapes")


def test_print_shows_no_float_values(large_sample: list[Program]) -> None:
    """print() gets strings, ints, shapes, dtypes, lengths: never a tensor or float."""
    for program in large_sample:
        for node in ast.walk(ast.parse(program.source)):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "print":
                for arg in node.args:
                    text = ast.unparse(arg)
                    assert not TENSOR_NAME.match(text), (program.seed, text)
                    assert not re.search(r"\.item\(\)|float\(", text), (program.seed, text)
                    if isinstance(arg, ast.Call):
                        allowed = ("int", "len", "sorted", "str", "torch.is_grad_enabled")
                        assert ast.unparse(arg.func) in allowed, text


COMPILE_ALL = """
import json, sys
failures = []
for feature, source in json.load(sys.stdin):
    try:
        compile(source, feature, "exec")
    except SyntaxError as e:
        failures.append([feature, f"{e.msg} at line {e.lineno}"])
print(json.dumps(failures))
"""


def programs_per_feature(large_sample: list[Program], count: int) -> list[tuple[str, str]]:
    from fuzz.generate.versions import FEATURE_MIN_PYTHON

    chosen = []
    for feature in FEATURES:
        if feature in FEATURE_MIN_PYTHON:
            continue  # tests/unit/test_versions.py
        claiming = [p for p in large_sample if feature in p.features][:count]
        assert claiming, f"no program uses {feature}"
        chosen += [(feature, p.source) for p in claiming]
    return chosen


def test_each_feature_compiles_on_every_interpreter(
    large_sample: list[Program], available_pythons: list[str]
) -> None:
    """Three programs per feature compile with every worker env's compiler
    (one subprocess per interpreter; no torch import). That they use the
    feature is checked on their syntax trees by the detectors above."""
    from tests.conftest import env_python

    chosen = programs_per_feature(large_sample, 3)
    for name in available_pythons:
        result = subprocess.run(
            [str(env_python(name)), "-c", COMPILE_ALL],
            input=json.dumps(chosen), capture_output=True, text=True, check=True, timeout=120,
        )
        assert json.loads(result.stdout) == [], name


def test_weights_steer_generation_and_keep_it_reproducible() -> None:
    weights = {"match": 5.0, "async-def": 5.0}
    assert set(weights) <= set(STATEMENT_KINDS)
    seeds = range(60)
    steered = [generate(seed, weights) for seed in seeds]
    assert steered == [generate(seed, weights) for seed in seeds]
    plain = [generate(seed) for seed in seeds]
    assert generate(3, {}) == plain[3]  # no steer: the plain program

    def uses(programs: list[Program], feature: str) -> int:
        return sum(feature in p.features for p in programs)

    assert uses(steered, "match") > uses(plain, "match")
    assert uses(steered, "async-def") > uses(plain, "async-def")


def test_a_program_can_be_rebuilt_from_its_choice_sequence() -> None:
    import random

    from hypothesis.internal.conjecture.data import ConjectureData

    from fuzz.generate.program import _SeededProvider

    for seed in (0, 11, 12345):
        data = ConjectureData(random=random.Random(seed), provider=_SeededProvider)
        program = program_from_data(data)
        replayed = program_from_data(ConjectureData.for_choices(data.choices))
        assert replayed.source == program.source == generate(seed).source


# -- the public strategy ------------------------------------------------------------


def test_strategies_module_reexports_programs() -> None:
    assert fuzz.strategies.programs is programs
    assert "programs" in fuzz.strategies.__all__


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fuzz.strategies.programs())
def test_programs_strategy_works_with_given(program: Program) -> None:
    program.check()
    assert program.generator == GENERATOR
    detected, claimed = detect_features(program.source), set(program.features)
    assert claimed <= detected
    assert (detected - claimed) & EXACT_FEATURES == set()


# -- with torch, in a worker env ---------------------------------------------------

RUN_EAGERLY = """
import contextlib, io, json, sys
failures = []
for seed, source in json.load(sys.stdin):
    try:
        code = compile(source, f"<seed {seed}>", "exec")
        for _ in range(2):
            namespace = {}
            exec(code, namespace)
            with contextlib.redirect_stdout(io.StringIO()):
                namespace["f"](*namespace["inputs"]())
    except Exception as e:
        failures.append([seed, f"{type(e).__name__}: {e}"])
print(json.dumps(failures))
"""


@pytest.mark.slow
def test_programs_run_eagerly_without_escaping_exceptions() -> None:
    """At least 90% of programs run eagerly, twice, in the 3.11 worker env."""
    python = ROOT / ".tox" / "py311" / "bin" / "python"
    if not python.exists():
        pytest.skip("no worker env for 3.11: run scripts/provision.sh")
    seeds = range(100)
    payload = json.dumps([[seed, generate(seed).source] for seed in seeds])
    result = subprocess.run(
        [str(python), "-c", RUN_EAGERLY],
        input=payload,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    failures = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(failures) <= 0.1 * len(seeds), failures
