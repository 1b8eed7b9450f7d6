import re

import pytest

from fuzz.corpus.render import code_lines
from fuzz.errors import CouldNotMinimize
from fuzz.reduce.pipeline import minimize_source, tidy

SOURCE = """import torch

def f(t0, t1, n):
    t2 = t0 * 2
    for i in range(n):
        t2 = t2 + i
    lst = [t0, t1]
    lst.append(t2)
    if n > 1:
        t2 = t2.sin()
        marker = 12345
    return t2 + lst[0]

def inputs():
    return (torch.ones(3), torch.ones(3), 3)
"""


def keeps_marker(source: str) -> bool:
    return "12345" in source and "def inputs" in source


def test_reduces_while_the_check_holds_and_never_grows():
    result = minimize_source(SOURCE, keeps_marker, budget_s=60)
    assert keeps_marker(result.source)
    assert result.lines_after < result.lines_before == code_lines(SOURCE)
    assert result.lines_after <= 6, result.source
    assert result.checks > 1 and result.complete


def test_refuses_a_case_that_does_not_show_its_signature():
    with pytest.raises(CouldNotMinimize):
        minimize_source(SOURCE, lambda s: False, budget_s=10)


def test_budget_stops_with_the_best_so_far():
    now_s = [0.0]  # a fake clock: each check takes 0.05 s of it, nothing else does

    def slow_check(source: str) -> bool:
        now_s[0] += 0.05
        return keeps_marker(source)

    result = minimize_source(SOURCE, slow_check, budget_s=0.3, clock=lambda: now_s[0])
    assert not result.complete and keeps_marker(result.source)
    assert result.lines_after <= result.lines_before
    assert result.checks == 6, result.checks  # 0.3 s of budget at 0.05 s a check
    assert result.elapsed_s == pytest.approx(0.3)


def test_tidy_drops_placeholder_constants_but_keeps_blocks_valid():
    assert tidy("def f():\n    0\n    return 1\n") == "def f():\n    return 1\n"
    assert tidy("def f():\n    0\n") == "def f():\n    pass\n"
    assert tidy("try:\n    x()\nexcept E:\n    0\nfinally:\n    0\n") == "try:\n    x()\nexcept E:\n    pass\nfinally:\n    pass\n"


def test_each_stage_keeps_the_check_and_names_its_passes():
    seen = []

    def check(source: str) -> bool:
        seen.append(source)
        return keeps_marker(source)

    result = minimize_source(SOURCE, check, budget_s=60)
    assert all(keeps_marker(s) for s in [result.source])
    assert "source/statements" in result.passes and "source/pysource-minimize" in result.passes
    assert len(seen) == len(set(seen)), "a candidate was checked twice (the cache should answer)"
    assert result.checks == len(seen)


def test_statement_pass_alone_checks_candidates_in_batches():
    batches = []

    class Batched:
        def __call__(self, source):
            return keeps_marker(source)

        def check_many(self, sources):
            batches.append(len(sources))
            return [keeps_marker(s) for s in sources]

    result = minimize_source(SOURCE, Batched(), budget_s=60, jobs=4, stages=("source",))
    assert keeps_marker(result.source) and result.lines_after < result.lines_before
    assert max(batches) > 1


def test_tidy_renames_placeholders_drops_unused_arguments_and_shrinks_shapes():
    from fuzz.reduce.pipeline import drop_unused_arguments, rename_placeholders, smaller_shapes

    assert rename_placeholders("x = unique_name_3 + unique_name_0 + unique_name_3 + v1\n") == "x = v2 + v3 + v2 + v1\n"
    source = ("import torch\ndef f(t0, t1, n):\n    return t0.sin()\n"
              "def inputs():\n    return (torch.randn(3, 4), torch.ones(5), 3)\n")
    dropped = drop_unused_arguments(source)
    assert "def f(t0):" in dropped[0] and "return (torch.randn(3, 4),)" in dropped[0]
    grown = ("import torch\ndef f(grow, t0, n, m):\n    return t0.sin()\n"
             "def inputs():\n    return (torch.randn(7), torch.randn(3, 4), 3, 4)\n")
    # all unused; all but the growth input (which the shape call grows); one each
    assert [re.search(r"def f\(.*\):", c).group(0) for c in drop_unused_arguments(grown)] == [
        "def f(t0):", "def f(grow, t0):", "def f(t0, n, m):", "def f(grow, t0, m):", "def f(grow, t0, n):"]
    shapes = smaller_shapes(source)
    assert "torch.randn(1, 1), torch.ones(1)" in shapes[0]
    result = minimize_source(source, lambda s: "t0.sin()" in s and "randn" in s, budget_s=30, stages=("tidy",))
    assert "def f(t0):" in result.source and "torch.randn(1, 1)" in result.source


def test_generator_stage_shrinks_a_generated_program_to_a_valid_smaller_one():
    import ast

    from fuzz.generate.program import generate

    program = max((generate(s) for s in range(40)), key=lambda p: code_lines(p.source))
    assert "def inputs" in program.source

    def check(source: str) -> bool:
        ast.parse(source)  # every candidate is a valid program
        return "def f" in source and ".shape" in source or "torch.tanh" in source

    assert check(program.source)
    result = minimize_source(program.source, check, budget_s=60, program=program, stages=("generator",))
    assert result.passes.get("generator/shrink", [0, 0])[1] > 0
    assert result.lines_after < result.lines_before and check(result.source)


def test_a_failure_inside_pysource_minimize_keeps_the_best_so_far():
    """pysource-minimize 0.10.1 raises AssertionError("missing case <ast.MatchStar>")
    when a star pattern has to stay; the pipeline goes on with what it has."""
    source = ("def f(x):\n    match x:\n        case [a, *rest] if len(rest) == 2:\n            return a\n"
              "        case _:\n            return None\n\n\ndef inputs():\n    return ([1, 2, 3],)\n")
    result = minimize_source(source, lambda s: "*" in s and "def inputs" in s, budget_s=60,
                             stages=("source", "tidy"))
    assert "*" in result.source and code_lines(result.source) <= code_lines(source)
    assert "source/pysource-minimize" in result.passes


class _ScriptedPool:
    """A pool whose outcome for a candidate is what ``script(source)`` says:
    (eager CallResults, compiled CallResults, error_type)."""

    def __init__(self, script):
        self.script = script

    def run_all(self, tasks):
        from harness.outcome import Outcome, Verdict

        outs = []
        for t in tasks:
            eager, compiled, error_type = self.script(t.program.source)
            outs.append(Outcome(program_id="p", interpreter=t.interpreter, backend=t.backend,
                                verdict=Verdict.DIVERGENCE, aspect="exception" if error_type else "value",
                                error_type=error_type, eager=eager, compiled=compiled))
        return outs


def test_the_check_keeps_the_compiled_exception_and_eager_s_kind_of_behaviour():
    from harness.outcome import CallResult
    from harness.program import Program
    from fuzz.reduce.check import SignatureCheck
    from fuzz.triage.signature import Signature

    send = "'tuple_iterator' object has no attribute 'send'"
    script = {
        "case": ([CallResult("fresh", "None")], [CallResult("fresh", exc_type="AttributeError", exc_message=send)],
                 "None->AttributeError"),
        # the same coarse signature, another bug: another message
        "drifted": ([CallResult("fresh", "None")],
                    [CallResult("fresh", exc_type="AttributeError", exc_message="'list' object has no attribute 'x'")],
                    "None->AttributeError"),
        # the same compiled exception, but now eager returns a tensor instead of None
        "eager changed": ([CallResult("fresh", "tensor([1.])")],
                          [CallResult("fresh", exc_type="AttributeError", exc_message=send)], "None->AttributeError"),
        "smaller": ([CallResult("fresh", "None")], [CallResult("fresh", exc_type="AttributeError", exc_message=send)],
                    "None->AttributeError"),
    }
    sig = Signature("divergence", "dynamo", "exception:None->AttributeError", ("3.12",))
    check = SignatureCheck(_ScriptedPool(lambda s: script[s]), Program(source="case"), sig, "eager", ["3.12"])
    assert check("case")
    assert not check("drifted") and not check("eager changed") and check("smaller")
    assert check.shown and check.shown[0].compiled[0].exc_message == send


def test_tidy_drops_unused_imports_and_gives_numbered_names_readable_ones():
    from fuzz.reduce.names import drop_unused_imports, readable_names

    source = ("import torch\nimport math\nimport typing\n\ndef f(t0, n):\n    def gen1(v):\n        yield v\n"
              "    it2 = gen1(t0)\n    ctx3 = torch.no_grad()\n    it4 = reversed([n])\n    try:\n"
              "        next(it2)\n    except StopIteration as e5:\n        pass\n    return math.pi, it4, ctx3\n\n"
              "def inputs():\n    return (torch.randn(1), 2)\n")
    tidied = readable_names(drop_unused_imports(source))
    assert "import typing" not in tidied and "import math" in tidied and "import torch" in tidied
    assert "def f(x, n):" in tidied and "def gen_fn(v):" in tidied and "gen = gen_fn(x)" in tidied
    assert "ctx = torch.no_grad()" in tidied and "it = reversed([n])" in tidied and "as e:" in tidied
    compile(tidied, "tidied", "exec")
    assert readable_names("def f(x):\n    total = x\n    return total\n") == "def f(x):\n    total = x\n    return total\n"


# An operator chain around the bug, as the typed tensor generator writes them:
# every assignment is read later, so removing any one alone makes eager raise.
CHAIN = "import torch\n\ndef f(x):\n" + "".join(
    f"    t{i} = t{i - 1} + {i}\n" if i else "    t0 = x * 2\n" for i in range(30)) + (
    "    try:\n        q = int('bug')\n    except ValueError:\n        q = 0\n"
    "    return (" + ", ".join(f"t{i}" for i in range(30)) + ", q)\n\n"
    "def inputs():\n    return (1,)\n")


def runs_with_the_bug(source: str) -> bool:
    """Eager keeps returning (a NameError is another behaviour) and the bug's line stays."""
    namespace: dict = {}
    try:
        exec(compile(source.replace("import torch", ""), "case", "exec"), namespace)
        namespace["f"](*namespace["inputs"]())
    except Exception:  # noqa: BLE001 - any eager failure is a changed behaviour
        return False
    return "int('bug')" in source


def test_the_dataflow_pass_removes_an_operator_chain_in_few_checks():
    result = minimize_source(CHAIN, runs_with_the_bug, budget_s=60, stages=("source",))
    assert runs_with_the_bug(result.source)
    assert "t1 " not in result.source and result.lines_after <= 9, result.source
    # without the pass, statement deletion and pysource-minimize take 158 checks to get there
    assert result.passes.get("source/dataflow", [0, 0])[1] >= 1 and result.checks <= 60, result.passes


def test_dead_assignments_go_at_any_depth_but_read_or_global_names_stay():
    from fuzz.reduce.dataflow import without_dead_assignments

    source = ("G = 0\n\ndef f(x):\n    global G\n    a = x + 1\n    with ctx():\n        b = a * 2\n        c, d = b, b\n"
              "        G = 5\n    try:\n        e = x - 1\n    except ValueError:\n        pass\n    return a\n")
    out = without_dead_assignments(source)
    assert "b = " not in out and "c, d" not in out and "e = " not in out, out  # b only fed the dead c, d
    assert "a = x + 1" in out and "G = 5" in out and "try:\n        pass" in out, out
    assert without_dead_assignments(out) is None


def test_copies_are_propagated_where_both_names_are_bound_once():
    from fuzz.reduce.dataflow import without_copies

    out = without_copies("def f(x):\n    def g(v):\n        total = v\n        yield total\n    t = next(g(x))\n"
                         "    t2 = t\n    return t2\n")
    assert out == "def f(x):\n\n    def g(v):\n        yield v\n    t = next(g(x))\n    return t\n", out
    assert without_copies("def f(x):\n    y = x\n    x = 2\n    return y\n") is None  # x rebound after the copy
    assert without_copies("def f(x):\n    y = x\n    def g():\n        return y\n    return g\n") is None


# A chain whose every result is read: no assignment is dead, deleting one leaves a NameError.
READ_CHAIN = ("import torch\n\ndef f(x, w):\n    with torch.enable_grad():\n        t0 = x * w\n"
              + "".join(f"        t{i + 1} = t{i} * w + {i}\n" for i in range(12))
              + "        t13 = t12 - 12345\n"
              + "".join(f"        t{i + 1} = min(t{i}, t{i} + 1) * w\n" for i in range(13, 25))
              + "    return t25\n\ndef inputs():\n    return (1.0, 1.0)\n")


class _Grad:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def runs_with_the_marker(source: str) -> bool:
    """Eager keeps returning a number that shows the marker operation (as a
    divergence shows in the returned value)."""
    namespace: dict = {"_Grad": _Grad}
    try:
        exec(compile(source.replace("import torch", "").replace("torch.enable_grad()", "_Grad()"), "case", "exec"),
             namespace)
        value = namespace["f"](*namespace["inputs"]())
    except Exception:  # noqa: BLE001 - any eager failure is a changed behaviour
        return False
    return isinstance(value, float) and value < -10000 and "12345" in source


def test_the_bypass_pass_shortens_a_chain_whose_every_result_is_read():
    from fuzz.reduce.dataflow import bypass_sites, without_dead_assignments

    assert without_dead_assignments(READ_CHAIN) is None and bypass_sites(READ_CHAIN) == 26
    result = minimize_source(READ_CHAIN, runs_with_the_marker, budget_s=60, stages=("source",))
    assert runs_with_the_marker(result.source)
    assert result.lines_after <= 6, result.source
    assert result.passes["source/bypass"][1] >= 1, result.passes


def test_a_bypass_puts_the_first_operand_in_place_and_the_copy_goes():
    from fuzz.reduce.dataflow import bypassed, without_copies

    source = "def f(x, w):\n    y = g(x) * w\n    x = h(x)\n    z = y + w\n    return z\n"
    # x is rebound after the copy y = x, so the copy stays
    assert bypassed(source, {0}) == "def f(x, w):\n    y = x\n    x = h(x)\n    z = y + w\n    return z\n"
    assert bypassed(source.replace("    x = h(x)\n", ""), {0}) == "def f(x, w):\n    z = x + w\n    return z\n"
    assert bypassed(source, {1}) == "def f(x, w):\n    y = g(x) * w\n    z = y + w\n    return z\n"  # x = h(x) goes
    assert bypassed(source, {7}) is None
    # copies go inside with/try blocks too, never in an if branch or a loop
    assert without_copies("def f(x):\n    with c:\n        y = x\n        z = y + 1\n    return z\n") == \
        "def f(x):\n    with c:\n        z = x + 1\n    return z\n"
    assert without_copies("def f(x):\n    if x:\n        y = x\n    return y\n") is None


def test_a_program_drawn_with_weights_replays_for_the_generator_stage():
    """A campaign draws every program with weights (feedback, version gates):
    the program keeps them, through JSON too, and its seed replays only with them."""
    import dataclasses

    from fuzz.generate import versions
    from fuzz.generate.program import generate
    from fuzz.reduce import shrink
    from harness.program import Program

    weights = versions.gated_weights({"tensor-graph": 3.0}, (3, 15))
    program = generate(2078800003, weights=weights)
    assert dict(program.weights) == weights
    assert shrink.replayable(program) and shrink.replayable(Program.from_json(program.to_json()))
    assert not shrink.replayable(dataclasses.replace(program, weights=()))


def test_an_input_returned_in_place_of_the_value_takes_its_whole_computation():
    """The finding is not in the returned value (here: the marker statement):
    returning an input lets the gradient chain that fed the value go at once."""
    from fuzz.reduce.dataflow import returned_input_candidates

    source = ("import torch\n\ndef f(x, u):\n    with torch.enable_grad():\n        t = u.sin()\n        t2 = (t.tanh() * 0.5).sum()\n"
              "        gr1, gr2 = torch.autograd.grad(t2, [u, x])\n    print(12345)\n    return (gr2,)\n\n"
              "def inputs():\n    return (1.0, 2.0)\n")
    first = next(returned_input_candidates(source))
    assert "autograd" not in first and "t2" not in first and "return x" in first and "print(12345)" in first, first
    assert next(returned_input_candidates(first), None) is None  # already returns a parameter
    result = minimize_source(source, lambda s: "12345" in s, budget_s=30, stages=("source",))
    assert "autograd" not in result.source and result.passes["source/dataflow"][1] >= 1, result.source


NEWEST_GRAMMAR = """import torch

def f(t0, t1, n):
    t2 = torch.tanh(t0)
    groups2 = [[t0, t0], [t0 * n], []]
    flat4 = [*g3 for g3 in groups2]
    t2 = flat4[0] + flat4[-1] * len(flat4)
    for x5 in [t0, t1]:
        try:
            xs6 = [torch.tanh(t0), torch.tanh(t0)]
            raise ValueError("u0")
        except ValueError, IndexError:
            t2 = torch.tanh(t0)
        torch._dynamo.graph_break()
    t2 = torch.tanh(sum((torch.tanh(t0) for x7 in [t0, t1]), t2))
    return t2

def inputs():
    return (torch.ones(3), torch.ones(3), 3)
"""


def _parses(source: str) -> bool:
    import ast
    try:
        ast.parse(source)
    except SyntaxError:
        return False
    return True


def _runs_on_the_workers(source: str) -> bool:
    """A stand-in for the workers' interpreters (3.15): the program parses
    once its 3.15 grammar is written the 3.11 way, and reads no unbound name."""
    older = source.replace("[*g3 for g3 in groups2]", "[g3 for g3 in groups2]").replace(
        "except ValueError, IndexError:", "except (ValueError, IndexError):")
    if not _parses(older):
        return False
    bound = {"groups2": "groups2 =", "flat4": "flat4 =", "t2": "t2 ="}
    return all(f"{assigned}" in older for name, assigned in bound.items()
               if name in older.replace(assigned, ""))


def test_a_program_the_host_cannot_parse_is_reduced_by_lines_then_by_syntax_trees():
    """The fresh-clone graph-break case c07bc0d0ca6a's shape: 3.15 grammar
    (PEP 798, PEP 758) on a host that cannot parse it, and a break (the
    generator expression) that needs none of it: the lines that need 3.15
    go, then the syntax-tree passes finish."""
    import sys

    from fuzz.reduce.line_passes import statements, without

    def check(source: str) -> bool:
        return _runs_on_the_workers(source) and "for x7 in" in source and "return (torch.ones(3)" in source

    if sys.version_info >= (3, 15):
        pytest.skip("the host parses 3.15 grammar")
    assert not _parses(NEWEST_GRAMMAR) and check(NEWEST_GRAMMAR)
    result = minimize_source(NEWEST_GRAMMAR, check, budget_s=60)
    assert check(result.source) and _parses(result.source)
    assert result.lines_after <= 5, result.source
    assert result.passes["source/lines"][1] >= 1 and "source/pysource-minimize" in result.passes, result.passes
    # a compound statement deletes with its clauses; an emptied block gets pass
    lines = NEWEST_GRAMMAR.splitlines()
    spans = statements(lines)
    handled = next(s for s in spans if lines[s[0]].strip() == "try:")
    assert lines[handled[1] - 1].strip() == "t2 = torch.tanh(t0)"
    handler = next(s for s in spans if lines[s[0]].strip() == "t2 = torch.tanh(t0)" and s[0] > handled[0])
    assert without(lines, *handler)[handler[0]].strip() == "pass"


def test_the_line_pass_hoists_blocks_and_returns_an_input():
    from fuzz.reduce.line_passes import hoisted, returned_inputs

    lines = ["def f(x, n: int = 2):", "    for i in range(n):", "        y = x * i", "        z = y + 1",
             "    return [*y for y in z]"]
    assert hoisted(lines, 1, 4) == ["def f(x, n: int = 2):", "    y = x * i", "    z = y + 1",
                                    "    return [*y for y in z]"]
    assert hoisted(lines, 0, 5) is None  # a function stays
    assert [c[-1] for c in returned_inputs(lines, 4, 5, "f")] == ["    return x", "    return n"]
    assert returned_inputs(lines, 2, 3, "f") == []


def test_a_candidate_that_still_reads_a_submodule_keeps_its_import() -> None:
    """The harness's worker has imported torch.nn.attention.flex_attention
    already, so a check accepts a program without its import; the case alone
    would raise AttributeError (the flex_attention case lost it so)."""
    from fuzz.reduce.pipeline import _Oracle

    body = "def f(q):\n    return torch.nn.attention.flex_attention.flex_attention(q, q, q)\n"
    best = "import torch\nimport torch.nn.attention.flex_attention\n\n" + body
    oracle = _Oracle(lambda source: True, best, deadline=float("inf"), progress=None)
    assert oracle("import torch\n\n" + body) is False
    assert oracle.checks == 0  # refused without a check
    assert oracle("import torch\n\ndef f(q):\n    return q\n") is True  # nothing reads it: it may go


def test_pysource_minimize_checked_in_batches_ends_where_one_at_a_time_does():
    """A forked lookahead predicts pysource-minimize's next candidates from the answers of
    batched checks, so the result is the sequential one; its checks come in
    batches of ``jobs`` (a check that holds only while the marker and a
    computation on it stay, so the search takes several steps)."""
    from fuzz.reduce.pipeline import _Oracle, reduce_with_pysource_minimize

    def holds(source: str) -> bool:
        return keeps_marker(source) and "sin" in source

    def run(jobs: int) -> tuple[str, list[int], dict]:
        batches: list[int] = []

        class Batched:
            def __call__(self, source):
                batches.append(1)
                return holds(source)

            def check_many(self, sources):
                batches.append(len(sources))
                return [holds(s) for s in sources]

        oracle = _Oracle(Batched(), SOURCE, float("inf"), None)
        reduce_with_pysource_minimize(oracle, jobs)
        return oracle.best, batches, oracle.passes

    one_best, one_batches, _ = run(1)
    many_best, many_batches, passes = run(3)
    assert holds(many_best) and code_lines(many_best) < code_lines(SOURCE)
    assert many_best == one_best
    assert set(one_batches) == {1} and max(many_batches) == 3, many_batches
    assert len(many_batches) < 0.6 * len(one_batches), (len(many_batches), len(one_batches))
    wasted = passes.get("source/pysource-minimize-ahead", [0, 0])[0]
    # every candidate of the sequential search, and the abandoned ones (of which the search may meet some later)
    assert sum(one_batches) <= sum(many_batches) <= sum(one_batches) + wasted, (sum(many_batches), sum(one_batches),
                                                                                 wasted)
