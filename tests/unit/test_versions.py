"""Version-gated constructs: drawn only up to a campaign's newest interpreter,
run only where they parse (fuzz.generate.constructs_newest, fuzz.generate.versions)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fuzz.campaign.config import CampaignConfig
from fuzz.campaign.interpreters import Interpreter
from fuzz.generate import versions
from fuzz.generate.program import generate
from harness.program import Program
from tests.conftest import env_python

GATES = {"template-string": (3, 14), "except-unparenthesised": (3, 14), "deferred-annotations": (3, 14),
         "finally-control-flow": (3, 14), "comprehension-unpacking": (3, 15), "itertools-batched": (3, 12)}
COMPILE_ALL = """
import json, sys, warnings
warnings.simplefilter("ignore")  # PEP 765's SyntaxWarning
out = []
for feature, source in json.load(sys.stdin):
    try:
        compile(source, feature, "exec")
        out.append([feature, "ok"])
    except SyntaxError as e:
        out.append([feature, f"SyntaxError: {e.msg}"])
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def gated_sample() -> list[Program]:
    weights = versions.gated_weights(None, (3, 15))
    weights.update({kind: 10.0 for kind in versions.KIND_MIN_PYTHON})
    return [generate(seed, weights) for seed in range(80)]


def test_each_gated_kind_declares_its_gate():
    assert versions.KIND_MIN_PYTHON == GATES
    assert versions.min_python(["template-string", "print"]) == (3, 14)
    assert versions.min_python(["template-string", "comprehension-unpacking"]) == (3, 15)
    assert versions.min_python(["print", "closure"]) is None


def test_gated_kinds_are_drawn_only_up_to_the_newest_interpreter(gated_sample):
    assert not any(versions.min_python(generate(seed).features) for seed in range(60))  # no weights: none
    upto_311 = versions.gated_weights({kind: 10.0 for kind in GATES}, (3, 11))
    assert not any(versions.min_python(generate(seed, upto_311).features) for seed in range(60))
    upto_313 = versions.gated_weights({kind: 10.0 for kind in GATES}, (3, 13))
    drawn_313 = [versions.min_python(generate(seed, upto_313).features) for seed in range(60)]
    assert (3, 12) in drawn_313 and all(gate in (None, (3, 12)) for gate in drawn_313)
    upto_314 = versions.gated_weights({kind: 10.0 for kind in GATES}, (3, 14))
    drawn = [versions.min_python(generate(seed, upto_314).features) for seed in range(60)]
    assert (3, 14) in drawn and (3, 15) not in drawn
    used = set().union(*(p.features for p in gated_sample))
    assert set(GATES) <= used


def test_a_gated_program_runs_only_where_it_parses():
    assert versions.runs_on(["template-string"], "3.14t") and versions.runs_on(["template-string"], "3.15")
    assert not versions.runs_on(["template-string"], "3.13t")
    assert not versions.runs_on(["comprehension-unpacking"], "3.14")
    assert versions.runs_on(["print"], "3.11") and versions.runs_on(["template-string"], "/some/python")


def test_the_campaign_gives_a_gated_program_only_to_interpreters_that_have_it(tmp_path):
    from fuzz.campaign.loop import Campaign

    interps = [Interpreter(n, tmp_path / n) for n in ("3.12", "3.14", "3.15")]
    config = CampaignConfig(interpreters=interps, backends=["eager"], out_dir=tmp_path / "out",
                            corpus_dir=tmp_path / "corpus", programs=1)
    campaign = Campaign(config)
    gated = Program(source="def f():\n    return 1\n", features=("template-string",))
    plain = Program(source="def f():\n    return 1\n", features=("print",))
    assert [t.interpreter for t in campaign._tasks(0, gated)] == ["3.14", "3.15"]
    assert [t.interpreter for t in campaign._tasks(1, plain)] == ["3.12", "3.14", "3.15"]
    campaign.db.close()


def test_gated_programs_compile_where_their_gate_says_and_not_before(gated_sample):
    """Three programs per gated feature: a SyntaxError on an interpreter older
    than the gate where the grammar is new (the gate is needed), none on one
    that has it."""
    chosen = []
    for feature in GATES:
        # programs whose only gate is this feature's
        chosen += [(feature, p.source) for p in gated_sample
                   if feature in p.features and versions.min_python(p.features) == GATES[feature]][:3]
    assert {feature for feature, _ in chosen} == set(GATES)
    names = [n for n in ("3.11", "3.13", "3.14", "3.15") if env_python(n).exists()]
    if not any(versions.version_of(n) >= (3, 14) for n in names):
        pytest.skip("no 3.14 or 3.15 worker env: run scripts/provision.sh")
    for name in names:
        result = subprocess.run([str(env_python(name)), "-c", COMPILE_ALL], input=json.dumps(chosen),
                                capture_output=True, text=True, check=True, timeout=120)
        for feature, verdict in json.loads(result.stdout):
            if versions.version_of(name) >= GATES[feature]:
                assert verdict == "ok", (name, feature, verdict)
            elif feature not in ("finally-control-flow", "deferred-annotations", "itertools-batched"):
                # these parse everywhere (batched is a library function of 3.12+, not grammar)
                assert verdict.startswith("SyntaxError"), (name, feature, verdict)


NEWER_GRAMMAR = '''import torch

def f(t0, n):
    tm = t"s{t0.shape}/{n}"
    try:
        raise ValueError("u1")
    except ValueError, IndexError:
        pass
    flat = [*g for g in [[t0], [t0 * 2]]]
    return flat[0] + len(tm.strings)

def inputs():
    return (torch.ones(2), 1)
'''


def test_the_host_keys_and_minimises_programs_of_grammar_it_cannot_parse():
    """A 3.11 host cannot parse a 3.14/3.15 program: its skeleton falls back
    to tokens (names and constants abstracted), and minimisation deletes
    statements by lines instead of failing the campaign."""
    import ast
    import sys

    from fuzz.reduce.pipeline import minimize_source, parses_here
    from fuzz.triage.skeleton import skeleton

    if sys.version_info >= (3, 15):
        pytest.skip("this host parses 3.15 grammar")
    with pytest.raises(SyntaxError):
        ast.parse(NEWER_GRAMMAR)
    assert not parses_here(NEWER_GRAMMAR)
    renamed = NEWER_GRAMMAR.replace("tm", "tpl").replace('"u1"', '"other"').replace("flat", "xs")
    assert skeleton(NEWER_GRAMMAR) == skeleton(renamed)
    assert skeleton(NEWER_GRAMMAR) != skeleton(NEWER_GRAMMAR.replace("except ValueError, IndexError", "except KeyError, IndexError"))
    result = minimize_source(NEWER_GRAMMAR, lambda source: "except ValueError, IndexError" in source, budget_s=5)
    # statements deleted by lines (fuzz.reduce.line_passes), the entry and inputs kept
    assert "except ValueError, IndexError" in result.source and result.lines_after < result.lines_before
    assert "import torch" in result.source and "def f(" in result.source and "def inputs(" in result.source
    assert "source/lines" in result.passes


def test_a_case_of_newer_grammar_is_read_on_an_older_host_and_keeps_its_requirement(tmp_path):
    """A 3.14/3.15 case names its oldest Python in requires-python; an older
    host reads it (the interpreters it requires check its syntax) and
    re-renders it unchanged; without the requirement it is not a program."""
    import sys

    from fuzz.corpus import render, store
    from fuzz.triage.signature import Signature
    from harness.program import ProgramError

    if sys.version_info >= (3, 15):
        pytest.skip("this host parses 3.15 grammar")
    sig = Signature("graph-break", "dynamo", "Missing bytecode handler", ("3.15",))
    text = render.render_case(Program(NEWER_GRAMMAR), sig, backend="eager", torch_version="2.15.0")
    assert '# requires-python = ">=3.15"' in text
    path = tmp_path / "graph-break" / f"{sig.id}.py"
    store.write_case(path, text)
    program, table = store.read_case(path)
    assert "except ValueError, IndexError" in program.source and "/// script" not in program.source
    assert "__main__" not in program.source and table["interpreters"] == ["3.15"]
    assert render.rerender(text) == text
    with pytest.raises(ProgramError, match="not a Python program"):
        Program(text.replace('">=3.15"', '">=3.11"')).check()
