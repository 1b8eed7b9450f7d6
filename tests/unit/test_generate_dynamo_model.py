"""Tests of the constructs for Dynamo's model of Python (issue 30, item 1).

The constructs of ``fuzz.generate.constructs_{comprehension,stdlib,objmodel,
subclass,contexts,builtins,classes,hop,protocols,compiler_api}``: each is drawn when steered towards, shows in
the programs' syntax as what its features say (the detectors here are
written independently of the generator and are used by test_generate's
feature checks too), and runs eagerly, deterministically, on every worker
env it is drawn for (marked slow: it imports torch in each env).
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fuzz.generate import (
    constructs_builtins,
    constructs_classes,
    constructs_compiler_api,
    constructs_comprehension,
    constructs_contexts,
    constructs_hop,
    constructs_objmodel,
    constructs_protocols,
    constructs_stdlib,
    constructs_subclass,
    versions,
)
from fuzz.generate.program import STATEMENTS, generate
from fuzz.generate.registry import collect
from harness.program import Program

ROOT = Path(__file__).resolve().parents[2]
MODULES = (constructs_comprehension, constructs_stdlib, constructs_objmodel, constructs_subclass,
           constructs_contexts, constructs_builtins, constructs_classes, constructs_hop, constructs_protocols, constructs_compiler_api)
NEW = collect(MODULES)
# Seeds per construct for the syntax checks, and for the eager runs in each env.
SYNTAX_SEEDS = range(12)
EAGER_SEEDS = range(6)


def steered(kind: str, newest: tuple[int, int] = (3, 12)) -> dict[str, float]:
    """Weights that make most programs use ``kind``, gated kinds enabled up to ``newest``
    (by default 3.12: itertools.batched, but no grammar the 3.11 host cannot parse)."""
    weights = versions.gated_weights(None, newest)
    weights[kind] = 60.0
    return weights


# -- detectors ---------------------------------------------------------------------


def _function(tree: ast.Module, name: str) -> ast.FunctionDef:
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)


def _is_graph_break(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "graph_break"


def _breaks(node: ast.AST | None) -> bool:
    return node is not None and any(_is_graph_break(n) for n in ast.walk(node))


COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _elements(c: ast.AST) -> list[ast.AST]:
    return [c.key, c.value] if isinstance(c, ast.DictComp) else [c.elt]


def _places(c: ast.AST) -> set[str]:
    """Where a comprehension's graph breaks are: inside/after its element, its if clauses, a later iterable."""
    found = set()
    for element in _elements(c):
        for n in ast.walk(element):
            if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Tuple) and isinstance(n.slice, ast.Constant):
                parts = n.value.elts
                if n.slice.value == 1 and parts and _is_graph_break(parts[0]):
                    found.add("inside")
                if n.slice.value == 0 and len(parts) == 2 and _is_graph_break(parts[1]):
                    found.add("after")
    if any(_breaks(test) for g in c.generators for test in g.ifs):
        found.add("before")
    if any(_breaks(g.iter) for g in c.generators[1:]):
        found.add("iterable")
    return found


def _calls(nodes: list[ast.AST], name: str) -> Iterator[ast.Call]:
    for n in nodes:
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name:
            yield n


def dynamo_model_features(tree: ast.Module) -> set[str]:
    """The features of the constructs of ``MODULES`` present in a program, each by its own rule."""
    return {name for name, present in feature_rules(tree).items() if present}


def feature_rules(tree: ast.Module) -> dict[str, bool]:
    """Each feature of ``MODULES``' constructs: whether the program ``tree`` has it."""
    f = _function(tree, "f")
    nodes = list(ast.walk(f))
    body = ast.unparse(f)
    module = ast.unparse(tree)
    parents = {child: node for node in nodes for child in ast.iter_child_nodes(node)}

    def ancestors(node: ast.AST) -> Iterator[ast.AST]:
        while node in parents:
            node = parents[node]
            yield node

    def has(pattern: str, text: str = body) -> bool:
        return re.search(pattern, text) is not None

    breaking = [c for c in nodes if isinstance(c, COMPREHENSIONS) and _breaks(c)]
    # names f binds itself: its parameters and its nested functions' (a generator's
    # parameter is one of its scope's tensors), and its stores outside comprehension targets
    targets = {id(n) for c in nodes if isinstance(c, ast.comprehension) for n in ast.walk(c.target)}
    bound_in_f = {a.arg for d in nodes if isinstance(d, ast.FunctionDef) for a in d.args.args} | {
        n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and id(n) not in targets}
    rules: dict[str, bool] = {
        # comprehensions
        "comprehension-break": bool(breaking),
        **{f"comprehension-break-{place}": any(place in _places(c) for c in breaking)
           for place in constructs_comprehension.PLACES},
        "comprehension-break-nested": any(any(isinstance(m, COMPREHENSIONS) for e in _elements(c) for m in ast.walk(e))
                                          for c in breaking),
        "comprehension-break-walrus": any(any(isinstance(m, ast.NamedExpr) for m in ast.walk(c)) for c in breaking),
        "comprehension-break-shadow": any(isinstance(g.target, ast.Name) and g.target.id in bound_in_f
                                          for c in breaking for g in c.generators),
        "comprehension-break-closure": any(isinstance(n, ast.Lambda) for n in nodes) and bool(breaking),
        "comprehension-break-try": any(isinstance(a, (ast.Try, ast.With)) for c in breaking for a in ancestors(c)),
        "comprehension-break-generator": any(
            isinstance(a, ast.FunctionDef) and a is not f and any(isinstance(m, ast.Yield) for m in ast.walk(a))
            for c in breaking for a in ancestors(c)),
        # the standard library
        "lru-cache": has(r"\bcached_(scale|offset)\(") and "functools.lru_cache" in module,
        "functools-partial": has(r"functools\.partial\("),
        "functools-wraps": has(r"\bsoftsign\b") and "@functools.wraps" in module,
        "functools-reduce": has(r"functools\.reduce\((operator\.|lambda)"),
        "cached-property": has(r"\bLazy\(") and "@functools.cached_property" in module,
        "singledispatch": has(r"\bdescribe\(") and "@functools.singledispatch" in module,
        "deque": has(r"collections\.deque\("),
        "ordered-dict": has(r"collections\.OrderedDict\("),
        "mutation-global-container": has(r"\bHISTORY\.append\(|\bSEEN\["),
        "defaultdict": has(r"collections\.defaultdict\("),
        "counter": has(r"collections\.Counter\("),
        "chain-map": has(r"collections\.ChainMap\("),
        "namedtuple": has(r"\bPoint\(") and "collections.namedtuple(" in module,
        "heapq-bisect": has(r"\b(heapq|bisect)\.\w+\("),
        "itertools": has(r"itertools\.(?!batched)\w+"),
        "itertools-batched": has(r"itertools\.batched\("),
        "operator-getters": has(r"\boperator\.\w+"),
        # the object model
        "metaclass": has(r"\bScaler\(") and "metaclass=Registry" in module,
        "init-subclass": has(r"\b(Half|Quarter)\(") and "__init_subclass__" in module,
        "descriptor": has(r"\bHolder\(") and "__set_name__" in module,
        "slots": has(r"\bSlotted\(") and "__slots__" in module,
        "attr-overrides": has(r"\b(Watched|Counted)\(") and "__getattribute__" in module,
        "super-forms": has(r"\b(Diamond|Left|Right)[.(]") and "super(Right, self)" in module,
        "exception-attrs": any(isinstance(n, ast.Raise) and re.match(r"(Fault|Retry)\(", ast.unparse(n.exc))
                               for n in nodes if isinstance(n, ast.Raise) and n.exc is not None),
        "dataclass-forms": has(r"\b(Frozen|Slim)\(") and "slots=True" in module,
        "enum": has(r"\b(Mode|Level|Perm)\b") and "(enum.Enum)" in module,
        "protocol-abc": has(r"\b(Neg|Duck)\(\)") and "typing.Protocol" in module,
        "bound-method": has(r"__func__|types\.MethodType\("),
        "function-rebind": has(r"knob\.__(defaults|kwdefaults|code)__ ="),
        # tensor subclasses and contexts
        "torch-function-subclass": has(r"\.as_subclass\((Tagged|Halving)\)|_make_subclass\(")
        and "__torch_function__" in module,
        "torch-function-mode": has(r"with (SinCounter|CosToSin)\(\)"),
        "autocast-nested": any(isinstance(n, ast.With) and "torch.autocast(" in ast.unparse(n.items[0].context_expr)
                               and any(isinstance(m, ast.With) and m is not n for m in ast.walk(n)) for n in nodes),
        "inference-mode": has(r"with torch\.inference_mode\(\):"),
        "grad-enabled-call": any(isinstance(n, ast.Expr) and ast.unparse(n.value).startswith("torch.set_grad_enabled(")
                                 for n in nodes) or has(r"\bno_grad_scale\("),
        "exit-stack": has(r"contextlib\.(ExitStack|suppress|nullcontext)\("),
        "exit-replaces": has(r"\bReplace\(\)") and "raise KeyError" in module,
        # builtins
        "size-arithmetic": has(r"(?<![.\w])(round|divmod|pow|format)\(|\bmath\.\w+\(|int\(float\("),
        "key-functions": any(any(k.arg == "key" for k in c.keywords)
                             for name in ("sorted", "min", "max") for c in _calls(nodes, name)),
        "zip-strict": any(any(k.arg == "strict" for k in c.keywords) for c in _calls(nodes, "zip")),
        "range-steps": any(len(c.args) == 3 and re.match(r"-|n - n", ast.unparse(c.args[2]))
                           for c in _calls(nodes, "range")),
        "slice-objects": any(True for _ in _calls(nodes, "slice")),
        # higher-order operators over functions written in f (not the tensor graphs' lambdas)
        "hop-cond": has(r"torch\.cond\([^\n]*\btrue_fn\d+, false_fn\d+"),
        "hop-while-loop": has(r"\bwhile_loop\(cond_fn\d+, body_fn\d+") and "import while_loop" in module,
        "hop-map": has(r"\bhop_map\(row_fn\d+"),
        "nested-compile-region": has(r"\bregion(_logged|_pair)?\(") and "@torch.compiler.nested_compile_region" in module,
        "hop-scan": has(r"\b(scan\(combine\d+, |associative_scan\(op\d+, )"),
        "hop-switch": has(r"\bswitch\([^\n]*\[branch\d+, branch\d+"),
        "checkpoint-python": has(r"torch\.utils\.checkpoint\.checkpoint\(ck\d+, "),
        "functorch-python": has(r"torch\.(vmap|func\.grad|func\.vjp|func\.jvp)\(fn\d+"),
        "autograd-function": has(r"\b(ScaledTanh|ClipGrad)\.apply\(") and "(torch.autograd.Function)" in module,
        "torch-contexts": any(isinstance(n, ast.With) and re.match(
            r"torch\.(autograd\.profiler|profiler)\.record_function|warnings\.catch_warnings|torch\._C\.Disable"
            r"|torch\.autograd\.graph\.disable_saved|fwAD\.dual_level|sdpa_kernel|torch\.fx\.traceback\.annotate"
            r"|torch\._dynamo\.error_on_graph_break|torch\.device\(", ast.unparse(n.items[0].context_expr))
            for n in nodes),
        # object protocols and container methods
        "user-container": has(r"\bBag\(") and "__contains__" in module,
        "builtin-subclass": has(r"\b(Defaults|Stack)\(|collections\.UserDict\("),
        "operator-overloads": has(r"\bVec\(") and "__radd__" in module,
        "hashable-keys": has(r"\bKey\(") and "__hash__" in module,
        "list-methods": has(r"\bns\d+ = \[n, 2, 3, n \+ 1\]"),
        "dict-methods": has(r"dict\.fromkeys\("),
        "builtins-iter": has(r"\bk\d+ = (sum\(|all\(|len\(list\(iter|operator\.length_hint|len\(frozenset|len\(sorted\(locals)"),
        "iterator-objects": has(r"\b(it\d+)_0 = next\(\1\)"),
        "function-forms": has(r"\bfn\d+\.scale = |\bdef fn\d+\(v, \*args, k=0\.5|\breturn scaled\b|\bdef fn\d+\(v, i\)"
                              r"|\{torch\.sin: 2, torch\.tanh: 1, len: 3\}|\.throw\(ValueError\)"),
        "sequence-protocols": has(r"\bk\d+ = (len\(r\d+\[1::2\]\)|len\(\{t0\.shape: 1|\(\[1, n\] < |max\(n, t0\.shape"
                                  r"|dq\d+\.index\(7\)|b\d+\.count\(b'b'\)|sum\(ns\d+\) \+ len)"),
        "compiler-api": has(r"torch\._dynamo\.(disable\(|dont_skip_tracing|patch_dynamo_config\()"
                            r"|\b(nonstrict_scale|constant_scale|in_graph_sin)\("),
        "pytree": has(r"\bpytree\.tree_\w+\(") and "import torch.utils._pytree as pytree" in module,
        "attr-builtins": any(True for name in ("setattr", "delattr", "hasattr") for _ in _calls(nodes, name)),
        "type-three-arg": any(len(c.args) == 3 for c in _calls(nodes, "type")),
        "builtins-objects": has(r"\bk\d+ \+= (\w+\d+\.tag \+|operator\.length_hint\(Hinted|fk\d+\['a'\]"
                                r"|len\(list\(map\(operator\.add|isinstance\(n, \(str|len\(fs\d+ \||int\.__neg__\(-n\))"),
        "class-calls": has(r"\brandom\.Random\(n \+ 3\)|types\.MappingProxyType\(|torch\.Size\(\[n, 2\]\)"
                           r"|Shape\.__subclasses__\(\)|list\.append\(stack\d+|copy\.copy\(dd\d+\)"
                           r"|types\.SimpleNamespace\(a=n|\bdd\d+_ror = |\bCoord\(x=n|torch\.return_types\.max\(\("),
        "function-objects": has(r"\.throw\(ValueError\('x', 'y'\)\)|\bdelegating_gen\(log\d+\)|Gauge\.dial\.__set__\("
                                r"|torch\._dynamo\.nonstrict_trace\(tuned\)|functools\.partial\(tuned, 1"),
        "context-protocol": has(r"\bcm\d+\.__enter__\(\)|= torch\.(no_grad|enable_grad)\(\)\(inner\d+\)"
                                r"|@torch\.(no_grad|enable_grad)\(\)\n\s*def inner\d+"),
        "globals-vars": has(r"\bglobals\(\)") or any(
            isinstance(n, ast.Delete) and any(isinstance(t, ast.Name) and t.id.startswith("FLAG") for t in n.targets)
            for n in nodes),
    }
    return rules


def test_every_new_feature_has_a_detector() -> None:
    declared = {feature for c in NEW for feature in (*c.features, *c.also)}
    assert set(feature_rules(ast.parse("def f():\n    pass\n"))) == declared


# -- drawn and present -----------------------------------------------------------------


@pytest.fixture(scope="module")
def steered_samples() -> dict[str, list[Program]]:
    return {c.kind: [generate(seed, steered(c.kind)) for seed in SYNTAX_SEEDS] for c in NEW}


def test_the_new_constructs_are_in_the_statement_table() -> None:
    kinds = [c.kind for c in STATEMENTS]
    assert all(c.kind in kinds for c in NEW)
    # only itertools.batched needs a newer interpreter than 3.11
    assert {c.kind: c.min_python for c in NEW if c.min_python} == {"itertools-batched": (3, 12)}


def test_each_new_construct_is_drawn_when_steered_and_shows_its_own_features(
    steered_samples: dict[str, list[Program]],
) -> None:
    for entry in NEW:
        hits = 0
        for program in steered_samples[entry.kind]:
            claimed = set(program.features)
            detected = dynamo_model_features(ast.parse(program.source))
            ours = {f for c in NEW for f in (*c.features, *c.also)}
            assert (claimed & ours) - detected == set(), (entry.kind, program.seed)
            hits += bool(set(entry.features) & claimed)
        assert hits >= len(SYNTAX_SEEDS) // 3, (entry.kind, hits)


def test_every_comprehension_place_and_kind_is_drawn(steered_samples: dict[str, list[Program]]) -> None:
    programs = steered_samples["comprehension-break"]
    programs += [generate(seed, steered("comprehension-break")) for seed in range(12, 60)]
    kinds: set[str] = set()
    places: set[str] = set()
    for program in programs:
        f = _function(ast.parse(program.source), "f")
        for c in ast.walk(f):
            if isinstance(c, COMPREHENSIONS) and _breaks(c):
                kinds.add(type(c).__name__)
                places |= _places(c)
    assert kinds == {"ListComp", "SetComp", "DictComp", "GeneratorExp"}
    assert places == set(constructs_comprehension.PLACES)


def test_the_detectors_find_nothing_in_programs_without_the_new_constructs() -> None:
    """Programs of the other kinds (the plain generator, by seed) show none of the new features."""
    ours = {f for c in NEW for f in (*c.features, *c.also)}
    plain = [p for p in (generate(seed) for seed in range(500)) if not set(p.features) & ours]
    assert len(plain) >= 20
    for program in plain:
        assert dynamo_model_features(ast.parse(program.source)) == set(), program.seed


# -- eagerly valid on every interpreter ----------------------------------------------------

RUN_EAGERLY = r"""
import contextlib, io, json, sys, types, traceback, warnings
warnings.simplefilter("ignore")
import torch
from harness import compare
out = []
for kind, seed, source in json.load(sys.stdin):
    try:
        code = compile(source, f"<{kind} {seed}>", "exec")
        runs = []
        for _ in range(2):
            # a name of its own, as harness.execute.load_module gives: torch 2.12's Dynamo imports
            # it, and a guard of 3.14's on a global may read an earlier program's module of the name
            name = f"prog_{kind}_{seed}".replace("-", "_")
            module = types.ModuleType(name)
            sys.modules[name] = module
            exec(code, module.__dict__)
            values = []
            for _ in range(2):
                torch.manual_seed(0)
                with contextlib.redirect_stdout(io.StringIO()) as printed:
                    values.append(compare.snapshot(compare.drain(module.f(*module.inputs()))))
                values.append(printed.getvalue())
            runs.append(values)
        if not compare.values_match(runs[0], runs[1]):
            out.append([kind, seed, "nondeterministic"])
    except Exception as e:
        line = traceback.extract_tb(e.__traceback__)[-1]
        out.append([kind, seed, f"{type(e).__name__}: {str(e)[:100]} @ {line.lineno}: {line.line}"])
print(json.dumps(out))
"""


def eager_failures(python: Path, programs: list[tuple[str, int, str]]) -> list[list[object]]:
    """The programs that raise or differ between two eager runs, in the env of ``python``."""
    done = subprocess.run([str(python), "-c", RUN_EAGERLY], input=json.dumps(programs), capture_output=True,
                          text=True, cwd=ROOT, timeout=900, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["3.11", "3.12", "3.13", "3.13t", "3.14", "3.15"])
def test_each_new_construct_runs_eagerly_and_deterministically(name: str) -> None:
    """Every steered program of every new construct drawn for ``name`` runs eagerly twice, the same both times."""
    from tests.conftest import env_python, require_env

    require_env(name)
    version = versions.version_of(name)
    programs = [(c.kind, seed, generate(seed, steered(c.kind, version)).source) for c in NEW
                if c.min_python is None or version >= c.min_python for seed in EAGER_SEEDS]
    assert eager_failures(env_python(name), programs) == []


@pytest.mark.slow
def test_the_eager_check_reports_a_failing_construct() -> None:
    """The eager check itself can fail: a program that raises is reported with its kind and line."""
    from tests.conftest import env_python, require_env

    require_env("3.12")
    bad = "import torch\ndef f(t0):\n    return sorted([t0, t0 * 2])\ndef inputs():\n    return (torch.ones(3),)\n"
    failures = eager_failures(env_python("3.12"), [("bad", 0, bad)])
    assert [row[:2] for row in failures] == [["bad", 0]] and "RuntimeError" in failures[0][2]

