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
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import fuzz.strategies
from fuzz.generate import FEATURES, GENERATOR, generate, programs
from harness.program import Program

ROOT = Path(__file__).resolve().parents[2]
# Seeds for the sample-based tests: enough for every feature to show up.
SAMPLE_SEEDS = range(200)
# Seeds for the static hygiene checks, which look for rare mistakes (an
# exception raised in a nested def inside a try body would show in ~0.6% of
# programs).
LARGE_SAMPLE_SEEDS = range(1000)
# Generation time budget per program, in milliseconds (the target is well
# under 10 ms; the margin absorbs loaded CI machines).
MAX_GENERATE_MS = 25.0

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


def input_shapes(tree: ast.Module) -> list[tuple[tuple[int, ...], str]]:
    """(shape, dtype) of each torch.randn(...) in inputs()."""
    inputs = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "inputs")
    shapes = []
    for node in ast.walk(inputs):
        call = method_call(node)
        if call is not None and call[1] == "randn":
            assert isinstance(node, ast.Call)
            dims = tuple(ast.literal_eval(arg) for arg in node.args)
            dtype = next((ast.unparse(k.value) for k in node.keywords if k.arg == "dtype"), "")
            shapes.append((dims, dtype))
    return shapes


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
    f = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")
    (shape, dtype0), (other, dtype1) = input_shapes(tree)[:2]
    found: set[str] = set()
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
        from fuzz.generate import generate
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
        assert [a.arg for a in functions["f"].args.args] == ["t0", "t1", "n"]
        assert functions["inputs"].args.args == []
        assert program.generator == GENERATOR
        assert program.entry == "f" and program.inputs == "inputs"
        assert Program.from_json(program.to_json()) == program


def test_inputs_are_seeded_and_f_draws_no_randomness(sample: list[Program]) -> None:
    for program in sample:
        inputs_source = program.source[program.source.index("def inputs") :]
        assert re.search(r"torch\.Generator\(\)\.manual_seed\(\d+\)", inputs_source)
        f_source = program.source[: program.source.index("def inputs")]
        assert not re.search(r"\brand|\bnormal_|\bbernoulli|\bmultinomial|\bdropout", f_source)


def test_programs_are_small(sample: list[Program]) -> None:
    lines = [p.source.count("\n") for p in sample]
    assert 10 <= statistics.median(lines) <= 40
    assert max(lines) <= 90


def test_generation_is_fast() -> None:
    generate(0)
    seeds = range(1000, 1050)
    start = time.perf_counter()
    for seed in seeds:
        generate(seed)
    elapsed_ms = (time.perf_counter() - start) * 1000 / len(seeds)
    assert elapsed_ms < MAX_GENERATE_MS


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
        assert detected - claimed == set(), f"seed {program.seed}: present but unclaimed"


def test_features_across_seeds_cover_the_vocabulary(sample: list[Program]) -> None:
    covered = set().union(*(p.features for p in sample))
    assert covered == set(FEATURES)


def test_graph_breaks_appear_inside_constructs(sample: list[Program]) -> None:
    """graph_break() is placed in nested bodies too, not only at f's top level."""
    places: set[str] = set()
    for program in sample:
        f = ast.parse(program.source).body[1]
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
        for node, exception in raised_exceptions(tree.body[1], shape):
            child, parent = node, parents[node]
            while not isinstance(parent, (ast.FunctionDef, ast.Lambda)):
                if isinstance(parent, ast.Try) and child in parent.body:
                    if any(catches(h, exception) for h in parent.handlers):
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
                        assert ast.unparse(arg.func) in ("int", "len", "sorted"), text


# -- the public strategy ------------------------------------------------------------


def test_strategies_module_reexports_programs() -> None:
    assert fuzz.strategies.programs is programs
    assert "programs" in fuzz.strategies.__all__


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fuzz.strategies.programs())
def test_programs_strategy_works_with_given(program: Program) -> None:
    program.check()
    assert program.generator == GENERATOR
    assert set(program.features) == detect_features(program.source)


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
