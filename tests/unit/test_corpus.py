import ast
import inspect
import os
import sys
import textwrap
from pathlib import Path
import tomllib

import pytest

from harness import casefile
from harness.program import Program, read_pep723
from fuzz.corpus import render, store
from fuzz.errors import CorpusError
from fuzz.triage.signature import Signature
from tests.conftest import ROOT

PROGRAM = """import torch

def f(x):
    return x.sin()

def inputs():
    return (torch.ones(3),)
"""


def test_case_has_pep723_metadata_and_loads_as_program(tmp_path):
    sig = Signature("divergence", "tcfuzz_add_one", "value", ("3.11", "3.13t"))
    text = render.render_case(Program(PROGRAM), sig, backend="tcfuzz_add_one")
    ast.parse(text)
    meta = tomllib.loads(read_pep723(text)["content"])
    assert meta["dependencies"] == ["torch==2.12.0"]
    table = meta["tool"]["tcfuzz"]
    assert table["signature"] == sig.key and table["kind"] == "divergence"
    assert table["interpreters"] == ["3.11", "3.13t"] and table["backend"] == "tcfuzz_add_one"
    path = store.write_case(store.case_path(tmp_path, sig), text)
    assert path.name == f"{sig.id}.py" and path.parent.name == "divergence"
    program, read_meta = store.read_case(path)
    assert read_meta == table
    assert "def tcfuzz_add_one" in text and "BACKEND = tcfuzz_add_one" in text


@pytest.mark.parametrize("sig", [
    Signature("graph-break", "dynamo", 'Data-dependent "branching"', ("3.12",)),
    Signature("divergence", "dynamo", "value@shape", ("3.12",)),
    Signature("compile-error", "dynamo", "AssertionError", ("3.12",)),
    Signature("timeout", "dynamo", "timeout", ("3.12",)),
], ids=lambda s: s.kind)
def test_program_body_strips_what_render_adds(sig):
    text = render.render_case(Program(PROGRAM), sig, backend="eager")
    assert render.program_body(text).strip() == PROGRAM.strip()
    # rendering a rendered case gives the same case (no runner setting is taken for program code)
    assert render.render_case(Program(text), sig, backend="eager") == text
    assert tomllib.loads(read_pep723(text)["content"])["tool"]["tcfuzz"]["signature"] == sig.key


def test_a_timeout_case_ends_itself_as_hanging():
    """`python CASE` on a hang must terminate: a timer thread exits 1 after HANG_S."""
    text = render.render_case(Program(PROGRAM), Signature("timeout", "dynamo", "timeout", ("3.12",)), backend="eager")
    assert f"HANG_S = {render.HANG_S:g}" in text
    main = text[text.index('if __name__ == "__main__"'):]
    assert main.index("threading.Timer(HANG_S, hung)") < main.index("torch.compile(") < main.index("timer.cancel()")


def test_write_keeps_the_smaller_case(tmp_path):
    path = tmp_path / "divergence" / "abc.py"
    store.write_case(path, "a = 1\nb = 2\n")
    store.write_case(path, "a = 1\nb = 2\nc = 3\n")
    assert path.read_text() == "a = 1\nb = 2\n"
    store.write_case(path, "a = 1\n")
    assert path.read_text() == "a = 1\n"
    assert [n for n in os.listdir(path.parent) if not n.endswith(".lock")] == ["abc.py"]  # no temp files left


def test_read_case_one_line_errors(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("# /// script\n# [tool.tcfuzz\n# ///\ndef f(): pass\ndef inputs(): return ()\n")
    with pytest.raises(CorpusError, match="malformed PEP 723"):
        store.read_case(bad)
    with pytest.raises(CorpusError, match="cannot read program"):
        store.read_case(tmp_path / "missing.py")


def test_code_lines_ignores_comments_and_blanks():
    assert render.code_lines("# c\n\nx = 1\n  # d\ny = 2\n") == 2


def _case(program_text, sig, **meta):
    return render.render_case(Program(program_text), sig, backend="eager", meta=meta)


def test_a_finding_seen_again_updates_counts_and_dates_and_keeps_the_smaller_program(tmp_path):
    sig = Signature("divergence", "dynamo", "value", ("3.12",))
    path = store.case_path(tmp_path, sig)
    small = _case(PROGRAM, sig, **{"first-seen": "2026-11-01", "last-seen": "2026-11-01"})
    bigger = PROGRAM.replace("return x.sin()", "y = x + 1\n    return x.sin()")
    store.write_case(path, small)
    store.write_case(path, _case(bigger, sig, **{"first-seen": "2026-11-20", "last-seen": "2026-11-20"}))
    program, meta = store.read_case(path)
    assert "y = x + 1" not in program.source  # the stored, smaller case stays
    assert meta["count"] == 2 and meta["first-seen"] == "2026-11-01" and meta["last-seen"] == "2026-11-20"
    smaller = PROGRAM.replace("return x.sin()", "return x")
    store.write_case(path, _case(smaller, sig, **{"first-seen": "2026-11-21", "last-seen": "2026-11-21"}))
    program, meta = store.read_case(path)
    assert "return x\n" in program.source and meta["count"] == 3 and meta["first-seen"] == "2026-11-01"
    assert store.list_cases(tmp_path) == [path]


def test_status_and_replay_survive_a_merge_and_the_replay_table_is_valid_toml(tmp_path):
    from harness import casefile

    sig = Signature("divergence", "dynamo", "value", ("3.12",))
    path = store.write_case(store.case_path(tmp_path, sig), _case(PROGRAM, sig, status="fixed"))
    casefile.record_replay(path, "3.12", "2.12.0+cpu", casefile.REPRODUCES)
    casefile.record_replay(path, "3.13t", "2.12.0", casefile.DOES_NOT_REPRODUCE)
    store.write_case(path, _case(PROGRAM.replace("return x.sin()", "return x"), sig))
    _, meta = store.read_case(path)
    assert meta["status"] == "fixed" and meta["count"] == 2
    assert meta["replay"] == {"3.12/2.12.0": "reproduces", "3.13t/2.12.0": "does not reproduce"}

def test_a_bug_filed_again_through_another_channel_is_known_by_it_before_minimisation(tmp_path):
    """The default campaign of 2026-12-06 minimised a "stdout" program for
    224 s into 0f98a32ff03f, filed through "value": the merge records
    "stdout" in ``observed``, so the next campaign knows that channel's bucket."""
    from fuzz.corpus import filing

    everywhere = ("3.11", "3.12", "3.13", "3.13t", "3.14", "3.15")
    root = " {wrong-result: def f():; .with torch.GRAD_MODE():; ..... #81a0e749}"
    by_value = Signature("divergence", "aot", "value" + root, everywhere)
    by_stdout = Signature("divergence", "aot", "stdout" + root, everywhere)
    assert by_value.id == by_stdout.id  # one bucket: the root cause stands for the channel
    seen_as = Signature("divergence", "aot", "stdout", everywhere)  # what the campaign saw before minimising
    path = store.write_case(store.case_path(tmp_path, by_value), _case(PROGRAM, by_value))
    assert seen_as.id not in filing.known_signature_ids(tmp_path)
    store.write_case(path, _case(PROGRAM + "\n\nunused = 1\n", by_stdout))  # the larger one: "value" is kept
    _, meta = store.read_case(path)
    assert meta["signature"] == by_value.key and meta["observed"] == ["stdout"] and meta["count"] == 2
    assert seen_as.id in filing.known_signature_ids(tmp_path)
    # the smaller program of a third channel is kept, and the stored channels stay known
    by_guard = Signature("divergence", "aot", "value@guard" + root, everywhere)
    store.write_case(path, _case(PROGRAM.replace("return x.sin()", "return x"), by_guard))
    _, meta = store.read_case(path)
    assert meta["signature"] == by_guard.key and meta["observed"] == ["stdout", "value"]
    # a graph break has one channel: nothing is added
    gb = Signature("graph-break", "dynamo", "Dynamic shape operator", ("3.12",))
    gb_path = store.write_case(store.case_path(tmp_path, gb), _case(PROGRAM, gb))
    store.write_case(gb_path, _case(PROGRAM, gb))
    assert "observed" not in store.read_case(gb_path)[1]



def test_generator_provenance_round_trips(tmp_path):
    sig = Signature("divergence", "dynamo", "value", ("3.12",))
    program = Program(PROGRAM, generator="tcfuzz.v1", seed=42)
    path = store.write_case(store.case_path(tmp_path, sig), render.render_case(program, sig, backend="eager"))
    read, meta = store.read_case(path)
    assert (read.generator, read.seed) == ("tcfuzz.v1", 42) and meta["seed"] == 42


def test_with_replay_records_python_case_exit_codes():
    sig = Signature("divergence", "dynamo", "value", ("3.12",))
    text = store.with_replay(_case(PROGRAM, sig), {"3.12": 1, "3.13": 0}, "2.12.0+cu130")
    assert tomllib.loads(read_pep723(text)["content"])["tool"]["tcfuzz"]["replay"] == {
        "3.12/2.12.0": "reproduces", "3.13/2.12.0": "does not reproduce"}


def test_a_case_an_interpreter_cannot_parse_does_not_reproduce_there(tmp_path):
    """Exit 1 is also Python's status for a SyntaxError: a 3.15-grammar case
    run on 3.11 was recorded as reproducing there (fresh-clone graph-break
    case c07bc0d0ca6a, replay "3.11/2.15.0" = "reproduces")."""
    from fuzz.campaign.interpreters import Interpreter

    here = Interpreter("host", Path(sys.executable))
    newer = "import sys\nxs = [[1], [2]]\nprint([*x for x in xs])\nsys.exit(1)\n"  # PEP 798, 3.15
    raising = "import sys\ncompile('1 +', 'x', 'exec')\n"  # a SyntaxError while the case runs
    codes = {name: store.run_standalone(text, [here])["host"]
             for name, text in (("newer", newer), ("raising", raising), ("exits", "import sys\nsys.exit(1)\n"))}
    if sys.version_info < (3, 15):
        assert codes["newer"] == store.DOES_NOT_PARSE
    assert codes["raising"] == 1 and codes["exits"] == 1
    sig = Signature("graph-break", "dynamo", "Attempt to trace generator", ("3.15",))
    text = store.with_replay(_case(PROGRAM, sig), {"3.15": 1, "3.12": store.DOES_NOT_PARSE}, "2.15.0")
    assert tomllib.loads(read_pep723(text)["content"])["tool"]["tcfuzz"]["replay"] == {
        "3.15/2.15.0": "reproduces", "3.12/2.15.0": "does not reproduce"}


# ---------------------------------------------------------------- the divergence runner and the call plan

def _rel(path):
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", store.list_cases(ROOT / "corpus"), ids=_rel)
def test_every_corpus_case_is_what_a_fresh_render_gives(path):
    """A case's runner is generated (the divergence runner embeds
    harness/plan.py): after a change to either, re-render the corpus with
    ``render.rerender``; the table, program and settings stay."""
    text = path.read_text()
    assert render.rerender(text) == text, f"stale runner: rewrite {_rel(path)} with fuzz.corpus.render.rerender"


@pytest.mark.parametrize("detail, last", [
    ("value", "cached"), ("exception:None->TypeError", "cached"), ("value@guard", "guard"),
    ("global-state@shape", "shape"), ("globals", None),
])
def test_a_divergence_case_makes_the_plan_s_calls_up_to_the_one_its_signature_names(detail, last):
    sig = Signature("divergence", "dynamo", f"{detail} {{Mult}}", ("3.12",))
    assert render.divergence_last_call(sig) == last
    text = render.render_case(Program(PROGRAM), sig, backend="eager")
    assert f"LAST_CALL = {'None' if last is None else repr(last).replace(chr(39), chr(34))}  #" in text


def _embedded_without_docstrings(function, main):
    source = inspect.getsource(function)
    assert function.__doc__ is None or function.__doc__ not in main
    docstrings = [n.body[0] for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.FunctionDef, ast.ClassDef))
                  and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)]
    skip = {line for n in docstrings for line in range(n.lineno, n.end_lineno + 1)}
    lines = [line for number, line in enumerate(source.splitlines(), 1) if line.strip() and number not in skip]
    missing = [line for line in lines if textwrap.indent(line, "    ") not in main]
    assert missing == [], (function.__name__, missing)


def test_the_divergence_runner_embeds_the_plan_module_and_the_case_stays_standalone():
    """The whole plan: CallPlan and what it uses of harness/plan.py, from their source without docstrings."""
    from harness import plan

    sig = Signature("divergence", "dynamo", "value@shape", ("3.12",))
    text = render.render_case(Program(PROGRAM), sig, backend="eager")
    main = text[text.index('if __name__ == "__main__":'):]
    for function in (plan.CallPlan, plan.decide, plan.guard_targets, plan.mutate_for_guard, plan.grow_shapes):
        _embedded_without_docstrings(function, main)
    assert plan.__doc__.strip().splitlines()[0] not in main
    tree = ast.parse(text)
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "harness" not in imported and "fuzz" not in imported and "__future__" not in imported
    assert imported <= set(sys.stdlib_module_names) | {"torch"}
    # the program alone is what a re-render starts from: no runner code leaks into it
    assert render.program_body(text).strip() == PROGRAM.strip()


METACLASS_PROGRAM = """\
import torch

class Counted(type):
    def __call__(cls, *args):
        obj = super().__call__(*args)
        obj.calls = 1
        return obj

class Box(metaclass=Counted):
    def __init__(self, x):
        self.x = x

def f(x):
    return Box(x).x + 1

def inputs():
    return torch.ones(2)
"""


def test_a_program_the_plan_s_looks_may_run_gets_the_compact_runner_first_and_the_whole_plan_after():
    sig = Signature("divergence", "dynamo", "value", ("3.12",))
    compact, whole = render.render_case_runners(Program(METACLASS_PROGRAM), sig, backend="eager")
    assert "def fresh_and_cached(" in compact and "class CallPlan" not in compact
    assert "class CallPlan" in whole and whole == render.render_case(Program(METACLASS_PROGRAM), sig, backend="eager")
    assert len(compact.splitlines()) < len(whole.splitlines()) - 150
    assert render.rerender(compact) == compact and render.rerender(whole) == whole  # a re-render keeps the choice
    # a case its words do not concern, or one past the cached call, has one text
    assert render.render_case_runners(Program(PROGRAM), sig, backend="eager") == [
        render.render_case(Program(PROGRAM), sig, backend="eager")]
    assert len(render.render_case_runners(Program(METACLASS_PROGRAM), Signature(
        "divergence", "dynamo", "value@guard", ("3.12",)), backend="eager")) == 1


def test_a_compile_error_or_crash_gets_eager_against_compiled_first_and_the_whole_plan_after():
    """A compile error of the guard, shape or carried call shows only under the
    whole plan (tests/slow/test_corpus_store.py runs one); a re-render keeps
    the runner filing chose."""
    for kind, detail in (("compile-error", "InductorError(AssertionError)@torch/_inductor/x.py:f"),
                         ("crash", "SIGSEGV@torch/x.py:f")):
        sig = Signature(kind, "inductor", detail, ("3.12",))
        first, whole = render.render_case_runners(Program(PROGRAM), sig, backend="inductor")
        assert first == render.render_case(Program(PROGRAM), sig, backend="inductor") and "LAST_CALL" not in first
        assert "LAST_CALL = None" in whole and "class CallPlan" in whole
        assert render.rerender(first) == first and render.rerender(whole) == whole


def test_a_fresh_cached_case_embeds_only_what_its_calls_use_of_the_plan_module():
    """A divergence up to the cached call: harness/plan.py's is_program_class, reset_global_state and
    seed_rngs, from their source (without docstrings), and the imports they need; no guard or shape code."""
    from harness import plan

    sig = Signature("divergence", "dynamo", "value", ("3.12",))
    text = render.render_case(Program(PROGRAM), sig, backend="eager")
    main = text[text.index('if __name__ == "__main__":'):]
    for function in (plan.is_program_class, plan.reset_global_state, plan.seed_rngs):
        source = inspect.getsource(function)
        assert function.__doc__ and function.__doc__ not in main
        assert textwrap.indent(source.split(chr(10))[0], "    ") in main
        body = [line for line in source.splitlines()[1:] if line.strip() and '"""' not in line]
        assert all(textwrap.indent(line, "    ") in main for line in body)
    for name in ("class CallPlan", "def decide", "def mutate_for_guard", "def grow_shapes", "def has_guard_targets",
                 "MAX_DEPTH"):
        assert name not in main
    assert "    import random, types\n    from typing import Any\n" in main
    assert len(text.splitlines()) <= 95  # a 4-line program: header, program and runner
    tree = ast.parse(text)
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    assert imported <= set(sys.stdlib_module_names) | {"torch"} and "harness" not in imported
    assert render.program_body(text).strip() == PROGRAM.strip()
    assert render.render_case(Program(text), sig, backend="eager") == text


def test_the_plan_definitions_are_a_transitive_closure_in_module_order():
    from harness import plan

    code = render._plan_definitions(("grow_shapes",))
    names = [node.name for node in ast.parse(code).body if isinstance(node, ast.FunctionDef)]
    assert names == ["map_tensors", "tensors_in", "rebuild_leaf", "grow_shapes"]  # harness/plan.py's order
    assert "MAX_DEPTH = 6" in code and "from typing import Any" in code and "Callable" in code
    assert "def decide" not in code and "import copy" not in code and "import enum" not in code
    namespace: dict = {}
    exec(code, namespace)  # what it uses is all there: the definitions run
    assert namespace["MAX_DEPTH"] == plan.MAX_DEPTH and callable(namespace["grow_shapes"])
    with pytest.raises(KeyError):
        render._plan_definitions(("no_such_function",))


@pytest.mark.parametrize("detail, whole", [("value", False), ("value@guard", True), ("value@shape", True),
                                           ("globals", True)])
def test_only_a_case_up_to_the_cached_call_gets_the_compact_runner(detail, whole):
    sig = Signature("divergence", "dynamo", detail, ("3.12",))
    for program_text, looked_at_runs_code in ((PROGRAM, False), (PROGRAM + "\nclass A:\n    def __getattr__(self, n): return 1\n", True)):
        text = render.render_case(Program(program_text), sig, backend="eager")
        assert ("class CallPlan" in text) is (whole or looked_at_runs_code), (detail, program_text)
        assert ("def fresh_and_cached" in text) is not (whole or looked_at_runs_code)


def test_the_plan_module_imports_only_the_standard_library_and_has_no_multi_line_string_but_docstrings():
    """What lets render embed harness/plan.py's source, indented, into a case."""
    path = ROOT / "harness" / "plan.py"
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert all(alias.name.split(".")[0] in sys.stdlib_module_names | {"torch"} for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0 and node.module.split(".")[0] in sys.stdlib_module_names - {"__future__"}
    docstrings = {id(body[0].value) for body in [tree.body] + [n.body for n in ast.walk(tree) if isinstance(
        n, (ast.FunctionDef, ast.ClassDef))] if body and isinstance(body[0], ast.Expr)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Constant, ast.JoinedStr)) and node.lineno != node.end_lineno:
            assert id(node) in docstrings, f"harness/plan.py:{node.lineno}: a multi-line string changes when indented"


def test_rerender_keeps_the_table_and_replaces_an_old_runner():
    sig = Signature("divergence", "dynamo", "value@guard", ("3.12",))
    text = _case(PROGRAM, sig, **{"first-seen": "2026-01-02", "count": 7, "replay": {"3.12/2.12.0": "reproduces"}})
    old = text.replace('LAST_CALL = "guard"', 'CALLS = ["fresh", "cached", "guard"]').replace(
        "plan, out = CallPlan(", "plan, out = OldPlan(")
    assert render.rerender(old) == text
    with pytest.raises(casefile.CaseFileError):
        render.rerender(PROGRAM)


@pytest.mark.parametrize("backend", ["eager", "tcfuzz_add_one"])
def test_a_read_case_is_the_program_alone_with_its_lines_in_place(tmp_path, backend):
    """The harness runs what read_case returns: the runner's settings must not
    be globals of it (a FULLGRAPH = False would be a guard target that
    ``python CASE`` does not have) and each line keeps its number in the file."""
    sig = Signature("divergence", backend, "value@shape", ("3.12",))
    text = render.render_case(Program(PROGRAM), sig, backend=backend)
    path = store.write_case(store.case_path(tmp_path, sig), text)
    program, _ = store.read_case(path)
    names = {t.id for node in ast.parse(program.source).body if isinstance(node, ast.Assign)
             for t in node.targets if isinstance(t, ast.Name)}
    assert not names & set(render.RUNNER_SETTINGS), names
    assert "__main__" not in program.source and "def tcfuzz_add_one" not in program.source
    file_lines, program_lines = text.splitlines(), program.source.splitlines()
    for number, line in enumerate(program_lines):
        assert line in ("", file_lines[number]), (number, line)
    assert file_lines.index("def f(x):") == program_lines.index("def f(x):")


def test_every_corpus_case_reads_as_a_program_without_runner_settings():
    for path in store.list_cases(ROOT / "corpus"):
        program, _ = store.read_case(path)
        assert not any(line.startswith(setting + " =") for line in program.source.splitlines()
                       for setting in render.RUNNER_SETTINGS), path
