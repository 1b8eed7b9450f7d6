"""The minimiser's operator-graph passes (fuzz.reduce.graph_passes): each one's
candidates, and the pass run through the minimiser with a fake check (the
program is executed with a stand-in ``torch`` of plain Python, no torch), so
the signature is kept and the program shrinks."""

import ast
import types

import pytest

from fuzz.corpus.render import code_lines
from fuzz.reduce import block_passes, graph_passes
from fuzz.reduce.graph_passes import GRAPH_PASSES, GraphPhase, reduce_graph
from fuzz.reduce.pipeline import _Oracle, minimize_source


def run(source: str, passes: list[str], check) -> str:
    """The best source after the named graph passes alone, under ``check``."""
    oracle = _Oracle(check, source, deadline=float("inf"), progress=None)
    assert check(source)
    chosen = [p for p in GRAPH_PASSES if p.name in passes]
    assert len(chosen) == len(passes), "a pass named here is not registered"
    saved = list(GRAPH_PASSES)
    try:
        GRAPH_PASSES[:] = chosen
        for phase in GraphPhase:
            reduce_graph(oracle, "f", "inputs", phase)
    finally:
        GRAPH_PASSES[:] = saved
    assert check(oracle.best)
    return oracle.best


class FakeTensor:
    """What the checks below need of a tensor: a shape and a dtype."""

    def __init__(self, shape, dtype="float32"):
        self.shape, self.dtype = tuple(shape), dtype

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape
        n = 1
        for d in self.shape:
            n *= d
        m = 1
        for d in shape:
            m *= d
        if n != m:
            raise RuntimeError(f"shape {shape} is invalid for input of size {n}")
        return FakeTensor(shape, self.dtype)

    view = reshape

    def __add__(self, other):  # float64 wins, as torch's type promotion
        wide = "float64" in (self.dtype, getattr(other, "dtype", None))
        return FakeTensor(self.shape, "float64" if wide else self.dtype)

    __mul__ = __sub__ = __add__


def _factory(*shape, dtype="float32", **_):
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape
    return FakeTensor(shape, dtype)


FAKE_TORCH = types.SimpleNamespace(
    randn=_factory, ones=_factory, zeros=_factory, rand=_factory,
    linspace=lambda a, b, n, dtype="float32", **_: FakeTensor((n,), dtype),
    arange=lambda n, dtype="int64", **_: FakeTensor((n,), dtype),
    float64="float64", float32="float32", float16="float16", bfloat16="bfloat16", int64="int64",
    bug=lambda t: t.dtype == "float64" and len(t.shape) >= 1)


def runs(source: str) -> object:
    """``f(*inputs())`` with the fake torch; raises what the program raises."""
    namespace: dict = {"torch": FAKE_TORCH}
    exec(compile(source.replace("import torch\n", ""), "case", "exec"), namespace)
    return namespace["f"](*namespace["inputs"]())


def shows_the_bug(source: str) -> bool:
    """The signature: eager returns, and ``torch.bug`` is called on a float64 tensor."""
    try:
        return runs(source) is True
    except Exception:  # noqa: BLE001 - an eager failure is another behaviour
        return False


def test_passes_are_registered_once_with_a_phase_and_named_graph():
    names = [p.name for p in GRAPH_PASSES]
    assert len(names) == len(set(names)) and all(n.startswith("graph/") for n in names)
    assert {"graph/inline-helper", "graph/dead-code", "graph/unused-definitions", "graph/unused-parameters",
            "graph/other-operand", "graph/constant-tensors", "graph/dtypes", "graph/shapes",
            "graph/handler-tail", "graph/drained-loop", "graph/explicit-break"} <= set(names)
    with pytest.raises(ValueError, match="Expected a new graph pass name"):
        graph_passes.graph_pass("graph/dtypes", GraphPhase.VALUES)(lambda s, e, i: [])


HELPER = """import torch

def f(s, v2, v3):

    def g(s, v, v2, v3):
        t2 = s * 2
        t = s + 1
        return (0, t, t2, 0)
    v1, v2, t2, v3 = g(s, 0, 0, 0)
    t = t2
    return torch.bug(t)

def inputs():
    return (torch.randn(2, dtype=torch.float64), 0, 0)
"""


def test_a_single_use_helper_is_inlined_and_its_tuple_unpacked():
    out = run(HELPER, ["graph/inline-helper"], shows_the_bug)
    assert "def g" not in out and "v1" not in out, out
    assert code_lines(out) < code_lines(HELPER)
    # the helper's local t and the caller's t are two names: the caller's stays the returned one
    tree = ast.parse(out)
    assert shows_the_bug(out) and ast.unparse(tree).count("s * 2") == 1, out


def test_inlining_renames_a_helper_local_the_caller_uses_and_keeps_a_rebound_parameter():
    source = ("def f(x, y):\n    def g(x, z):\n        x = x + z\n        y = 2\n        return (x, y)\n"
              "    a, b = g(x, 1)\n    return (a, b, x, y)\n\ndef inputs():\n    return (1, 5)\n")
    namespace: dict = {}
    exec(source, namespace)
    expected = namespace["f"](1, 5)
    [tidied, raw] = graph_passes.inline_helpers(source, "f", "inputs")
    for candidate in (tidied, raw):
        namespace = {}
        exec(candidate, namespace)
        assert "def g" not in candidate and namespace["f"](1, 5) == expected == (2, 2, 1, 5), candidate


def test_a_helper_called_twice_or_returning_early_stays():
    twice = "def f(x):\n    def g(y):\n        return y\n    return g(x) + g(x)\n"
    early = "def f(x):\n    def g(y):\n        if y:\n            return 1\n        return y\n    return g(x)\n"
    assert graph_passes.inline_helpers(twice, "f", "inputs") == []
    assert graph_passes.inline_helpers(early, "f", "inputs") == []


def test_dead_operator_calls_go_in_helpers_too():
    source = ("import torch\n\ndef f(x):\n    return h(x)\n\ndef h(x):\n    a = x * 2\n    b = a + 1\n"
              "    return torch.bug(x)\n\ndef inputs():\n    return (torch.randn(3, dtype=torch.float64),)\n")
    out = run(source, ["graph/dead-code"], shows_the_bug)
    assert "a = " not in out and "b = " not in out and "torch.bug(x)" in out, out


def test_unused_classes_functions_attributes_and_parameters_go():
    source = ("import torch\n\nclass Unused:\n    pass\n\nclass Net:\n    pass\nobj = Net()\n\nclass M:\n    def __init__(self):\n"
              "        self.lin = torch.randn(3)\n        self.w = torch.randn(2, dtype=torch.float64)\n\n"
              "def helper(t, k, unused):\n    return torch.bug(t)\n\ndef other():\n    return 1\n\n"
              "def f(x):\n    return helper(M().w, 3, x)\n\ndef inputs():\n    return (1,)\n")
    out = run(source, ["graph/unused-definitions", "graph/unused-parameters"], shows_the_bug)
    assert "class Unused" not in out and "def other" not in out and "self.lin" not in out, out
    assert "obj = " not in out and "class Net" not in out, out  # the object first, its class in the next round
    assert "def helper(t):" in out and "helper(M().w)" in out and "self.w" in out, out


def test_a_result_is_replaced_by_another_operand_of_the_same_shape():
    source = ("import torch\n\ndef f(x, w):\n    t = x + w\n    return torch.bug(t)\n\n"
              "def inputs():\n    return (torch.randn(3), torch.randn(3, dtype=torch.float64))\n")
    # the bypass's first operand x is float32: the bug needs w, the second
    assert shows_the_bug(source) and not shows_the_bug(source.replace("t = x + w", "t = x"))
    out = run(source, ["graph/other-operand"], shows_the_bug)
    assert "t = " not in out and "torch.bug(w)" in out, out


def test_constant_tensors_become_ones_of_their_shape_and_randn_in_inputs():
    source = ("import torch\n\ndef f(x):\n    c = torch.linspace(-1.0, 1.0, 6, dtype=torch.float64).reshape(2, 3)\n"
              "    i = torch.arange(6).reshape(3, 2)\n    return torch.bug(c + i)\n\n"
              "def inputs():\n    return (torch.linspace(0.0, 1.0, 4).reshape(2, 2),)\n")
    out = run(source, ["graph/constant-tensors"], shows_the_bug)
    assert "torch.ones(2, 3, dtype=torch.float64)" in out and "torch.ones(3, 2, dtype=torch.int64)" in out, out
    assert "torch.randn(2, 2)" in out and "linspace" not in out and "arange" not in out, out


def test_dtypes_go_towards_float32_where_the_bug_allows():
    source = ("import torch\n\ndef f(x, y):\n    return torch.bug(x) and y.dtype != 'bfloat16'\n\n"
              "def inputs():\n    return (torch.randn(2, dtype=torch.float64), torch.randn(2, dtype=torch.float16))\n")
    out = run(source, ["graph/dtypes"], shows_the_bug)
    # float64 is the bug's: it stays; float16 is not: its dtype keyword goes
    assert "dtype=torch.float64" in out and "torch.float16" not in out and "torch.randn(2))" in out, out


def test_shapes_shrink_to_one_with_fewer_dims_and_counts_that_still_fit_their_reshape():
    source = ("import torch\n\ndef f(x):\n    i = torch.arange(24).reshape(2, 3, 4)\n"
              "    return torch.bug(x) and len(x.shape) == 2 and len(i.shape) == 3\n\n"
              "def inputs():\n    return (torch.randn(5, 6, 7, dtype=torch.float64).reshape(30, 7),)\n")
    out = run(source, ["graph/shapes"], shows_the_bug)
    # every size 1, the dims the check reads kept (a count that no longer fits its reshape is never proposed)
    assert "torch.arange(1).reshape(1, 1, 1)" in out and ".reshape(1, 1)" in out, out
    assert "torch.randn(1, 1, 1, dtype=torch.float64)" in out or "torch.randn(1, 1, dtype=torch.float64)" in out, out
    fewer = graph_passes.smaller_shapes("t = torch.arange(24).reshape(2, 3, 4)\n", "f", "inputs")
    assert "t = torch.arange(12).reshape(3, 4)\n" in fewer and "t = torch.arange(8).reshape(2, 1, 4)\n" in fewer
    assert all("arange(24).reshape(2, 1, 4)" not in c for c in fewer)


HANDLER = """import torch

def f(x):
    try:
        x.{attribute}
    except AttributeError:
        pass
    return torch.bug(x)

def inputs():
    return (torch.randn(2, dtype=torch.float64),)
"""


def test_the_statements_after_a_try_move_into_its_do_nothing_handler_where_the_bug_needs_the_exception():
    caught = HANDLER.format(attribute="missing")  # the try raises: the tail can run in the handler
    out = run(caught, ["graph/handler-tail"], shows_the_bug)
    assert code_lines(out) == code_lines(caught) - 1 and "pass" not in out, out
    assert ast.parse(out).body[1].body[0].handlers[0].body[0].value.func.attr == "bug", out
    # the try does not raise: in the handler the tail would never run, so the check keeps the program
    assert run(HANDLER.format(attribute="shape"), ["graph/handler-tail"], shows_the_bug) == HANDLER.format(
        attribute="shape")
    # a try with a finally keeps its tail: moving it would change what runs after the finally
    with_finally = caught.replace("        pass\n", "        pass\n    finally:\n        x\n")
    assert block_passes.handler_tail(with_finally, "f", "inputs") == []


DRAINED = """import torch

def f(x):
    seen = []

    def gen():
        seen.append(x)
        yield 0
    for i in gen():
        pass
    return torch.bug(seen[0])

def inputs():
    return (torch.randn(2, dtype=torch.float64),)
"""


def test_a_loop_that_only_drains_its_iterable_becomes_list_of_it():
    out = run(DRAINED, ["graph/drained-loop"], shows_the_bug)
    assert code_lines(out) == code_lines(DRAINED) - 1 and "list(gen())" in out and "for " not in out, out
    # a loop with an else, or one whose body does something, stays
    assert block_passes.drained_loop(DRAINED.replace("        pass\n", "        seen.append(i)\n"), "f", "inputs") == []
    assert block_passes.drained_loop(DRAINED.replace("        pass\n", "        pass\n    else:\n        x\n"),
                                     "f", "inputs") == []


BREAK = """import torch

def f(x):

    class Local:
        pass
    return torch.bug(x)

def inputs():
    return (torch.randn(2, dtype=torch.float64),)
"""


def test_a_statement_of_several_lines_becomes_an_explicit_graph_break_where_the_bug_holds():
    def needs_a_break(source: str) -> bool:  # the bug shows where f breaks the graph before torch.bug
        fake = types.SimpleNamespace(**vars(FAKE_TORCH), _dynamo=types.SimpleNamespace(graph_break=lambda: None))
        namespace: dict = {"torch": fake}
        exec(compile(source.replace("import torch\n", ""), "case", "exec"), namespace)
        broke = "graph_break()" in source or "class " in source.split("def inputs")[0]
        return broke and namespace["f"](*namespace["inputs"]()) is True

    out = run(BREAK, ["graph/explicit-break"], needs_a_break)
    assert "torch._dynamo.graph_break()" in out and "class" not in out and code_lines(out) == code_lines(BREAK) - 1, out
    # without torch imported as torch there is no candidate
    assert block_passes.explicit_break(BREAK.replace("import torch\n", "import torch as t\n"), "f", "inputs") == []


def test_the_minimiser_runs_the_graph_passes_and_keeps_the_signature():
    result = minimize_source(HELPER, shows_the_bug, budget_s=60)
    assert shows_the_bug(result.source) and result.lines_after <= 5, result.source  # with the import as filed
    assert result.passes["graph/inline-helper"][1] >= 1, result.passes


def test_a_dropped_import_torch_is_no_line_less_as_the_case_is_filed():
    """The renderer puts ``import torch`` back (the runner needs it), so the
    minimiser may not count its removal as a line won: an unchanged program
    would be rewritten in place as "smaller"."""
    source = "import torch\n\ndef f(x):\n    return x\n\ndef inputs():\n    return (1,)\n"

    def defines_f(text: str) -> bool:
        namespace: dict = {}
        try:
            exec(compile(text.replace("import torch\n", ""), "case", "exec"), namespace)
        except Exception:  # noqa: BLE001 - a candidate that does not run
            return False
        return "f" in namespace and "inputs" in namespace

    result = minimize_source(source, defines_f, budget_s=30)
    assert "import torch" not in result.source, result.source  # the reducer drops it: nothing reads torch
    assert result.lines_after == result.lines_before == code_lines(source), result
