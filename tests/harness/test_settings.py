"""Compile settings applied under torch (a worker env): by harness.execute, by a
rendered case's runner; and the operator-heavy source's programs run eagerly.

Run: ``PYTHONPATH=. .tox/py312/bin/python -m pytest tests/harness/test_settings.py -q``.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")

from harness import execute  # noqa: E402
from harness.outcome import Verdict  # noqa: E402
from harness.program import Program  # noqa: E402
from harness.settings import MAX_AUTOTUNE, CompileSettings  # noqa: E402
from fuzz.corpus import render  # noqa: E402
from fuzz.generate.graph_programs import graph_program  # noqa: E402
from fuzz.triage.signature import Signature  # noqa: E402

# The harness's shape call grows x's dim 0 (5 -> 6): a recompile unless that dim is dynamic.
GROWN = Program('''import torch


def f(x):
    return x * 2


def inputs():
    return (torch.ones(5, 3),)
''')
# What the program returns shows the config compiled code was traced under:
# torch.compile(dynamic=True) traces with assume_static_by_default off, and
# the Inductor key is read while the compiled calls run.
READS_CONFIG = Program('''import torch


def f(x):
    return x * 2 + int(not torch._dynamo.config.assume_static_by_default) + 10 * int(torch._inductor.config.aggressive_fusion)


def inputs():
    return (torch.ones(5, 3),)
''')
FUSION = CompileSettings(inductor=(("aggressive_fusion", True),))
SIG = Signature.parse("divergence|dynamo|value@fresh|3.12")
# Seeds of the graphs source run eagerly, and the share that must run.
GRAPH_SEEDS = 50
GRAPH_VALID_SHARE = 0.9


def run(program: Program, settings: CompileSettings, tmp_path, backend: str = "eager"):
    return execute.run_program(program, backend, interpreter="test", workdir=str(tmp_path), settings=settings)


@pytest.mark.parametrize("settings, recompiles", [
    (CompileSettings(), 1),
    (CompileSettings(dynamic=True), 0),
    (CompileSettings(mark_dynamic=((0, 0),)), 0),
    (CompileSettings(mark_dynamic=((0, 1), (3, 0))), 1),  # another dim, and an input that is not there
])
def test_the_harness_compiles_with_dynamic_and_marked_dims_and_records_them(settings, recompiles, tmp_path):
    outcome = run(GROWN, settings, tmp_path)
    assert outcome.verdict is Verdict.MATCH
    assert [c.label for c in outcome.compiled] == ["fresh", "cached", "shape", "carried"]
    assert outcome.recompiles == recompiles
    assert outcome.compile_settings == settings


def test_the_harness_patches_config_keys_around_the_compiled_calls_only(tmp_path):
    assert run(READS_CONFIG, CompileSettings(), tmp_path).verdict is Verdict.MATCH
    outcome = run(READS_CONFIG, FUSION, tmp_path)
    assert (outcome.verdict, outcome.call) == (Verdict.DIVERGENCE, "fresh")
    assert "12." in outcome.compiled[0].value and "2." in outcome.eager[0].value
    import torch._inductor.config as inductor_config

    assert inductor_config.aggressive_fusion is False  # put back after the run


@pytest.mark.parametrize("settings, code", [
    (CompileSettings(), 0),
    (CompileSettings(dynamic=True), 1),
    (CompileSettings(mark_dynamic=((0, 1),), inductor=(("aggressive_fusion", True),)), 1),
])
def test_a_case_s_runner_compiles_with_the_settings_its_table_records(settings, code, tmp_path):
    case = tmp_path / "case.py"
    case.write_text(render.render_case(READS_CONFIG, SIG, backend="eager", settings=settings))
    proc = subprocess.run([sys.executable, str(case)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == code, proc.stdout[-2000:] + proc.stderr[-2000:]
    expected = "12." if settings.inductor else ("3." if settings.dynamic else "2.")
    assert expected in proc.stdout.split("compiled:")[1]


def test_the_graphs_source_gives_programs_that_load_and_run_eagerly(tmp_path):
    failures = []
    for seed in range(GRAPH_SEEDS):
        program = graph_program(seed)
        try:
            module = execute.load_module(program, str(tmp_path / f"g{seed}.py"))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module.f(*module.inputs())
        except Exception as e:  # ProgramError too: a finding of this test, whatever it is
            failures.append(f"seed {seed}: {type(e).__name__}: {str(e)[:120]}")
    assert len(failures) <= GRAPH_SEEDS * (1 - GRAPH_VALID_SHARE), failures


def test_scalar_read_backs_and_seeded_random_operators_match_under_aot_eager(tmp_path):
    seed = next(s for s in range(200) if {"tensor-item", "tensor-random"} <= set(graph_program(s).features))
    breaks = {}
    for settings in (CompileSettings(), CompileSettings(dynamo=(("capture_scalar_outputs", True),))):
        outcome = run(graph_program(seed), settings, tmp_path, backend="aot_eager")
        assert outcome.verdict is Verdict.MATCH, (settings, outcome.aspect, outcome.call)
        breaks[settings.dynamo] = len(outcome.graph_breaks)
    assert breaks[(("capture_scalar_outputs", True),)] <= breaks[()]


@pytest.mark.slow
def test_an_operator_graph_compiles_on_inductor_with_max_autotune_and_the_cpp_wrapper(tmp_path):
    settings = CompileSettings(dynamic=False, mode=MAX_AUTOTUNE, inductor=(("cpp_wrapper", True),))
    outcome = run(graph_program(3), settings, tmp_path, backend="inductor")
    assert outcome.verdict is Verdict.MATCH, (outcome.verdict, outcome.error_type, outcome.error_message)
    assert outcome.compile_settings == settings


def test_every_drawn_inductor_key_patches_this_torch_s_config():
    """A key this torch lacks would make every program drawn with it a harness
    error; the table is checked against the config of each worker env."""
    import torch._inductor.config as inductor_config

    from harness.settings import INDUCTOR_KEYS

    for key, value, _ in INDUCTOR_KEYS:
        for chosen in value if isinstance(value, tuple) else (value,):
            with inductor_config.patch({key: chosen}):
                owner = inductor_config
                *path, last = key.split(".")
                for part in path:
                    owner = getattr(owner, part)
                assert getattr(owner, last) == chosen, key


# A module-level nn.Module (what freezing is for): the program shows the grad
# mode it is called in, so eager and compiled must agree on it.
INFERENCE = Program('''import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 4)

    def forward(self, x):
        return torch.relu(self.lin(x))


torch.manual_seed(0)
net = Net()


def f(x):
    return net(x) * 2, torch.is_grad_enabled()


def inputs():
    torch.manual_seed(0)
    return (torch.randn(5, 3),)
''')
FREEZING = CompileSettings(inductor=(("freezing", True),))


@pytest.mark.slow
def test_a_program_drawn_freezing_is_called_under_no_grad_so_inductor_freezes_its_graph(tmp_path, monkeypatch):
    import torch._inductor.freezing as freezing

    frozen = []
    original = freezing.freeze
    monkeypatch.setattr(freezing, "freeze", lambda *a, **k: frozen.append(1) or original(*a, **k))
    outcome = run(INFERENCE, FREEZING, tmp_path, backend="inductor")
    assert outcome.verdict is Verdict.MATCH, (outcome.verdict, outcome.aspect, outcome.error_message)
    assert "False" in outcome.eager[0].value and "False" in outcome.compiled[0].value
    assert frozen, "Inductor never froze the graph"
    assert torch.is_grad_enabled()  # put back after the run


def test_a_case_drawn_freezing_runs_eager_and_compiled_under_no_grad(tmp_path):
    case = tmp_path / "case.py"
    case.write_text(render.render_case(INFERENCE, SIG, backend="eager", settings=FREEZING))
    proc = subprocess.run([sys.executable, str(case)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    eager, compiled = proc.stdout.split("compiled:")
    assert "False" in eager and "False" in compiled
