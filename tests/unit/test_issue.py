"""`tcfuzz repro CASE --markdown`: the block for a PyTorch issue, from a faked replay."""

from harness.outcome import CallResult, InterpreterInfo, Outcome, Verdict
from harness.program import Program
from fuzz import cli
from fuzz.campaign import interpreters
from fuzz.corpus import render, store
from fuzz.triage.signature import Signature

PROGRAM = "import torch\n\ndef f(x):\n    return x.sin()\n\ndef inputs():\n    return (torch.ones(3),)\n"


def test_repro_markdown_has_case_versions_observed_expected_and_command(capsys, monkeypatch, tmp_path):
    sig = Signature("divergence", "tcfuzz_add_one", "value", ("3.12",))
    path = store.write_case(store.case_path(tmp_path, sig),
                             render.render_case(Program(PROGRAM), sig, backend="tcfuzz_add_one"))
    infos = {"3.12": InterpreterInfo("3.12", "3.12.1", False, True, "2.12.0+cu130"),
             "3.13": InterpreterInfo("3.13", "3.13.0", False, True, "2.12.0+cu130")}
    outcomes = [
        Outcome(program_id="p", interpreter="3.12", backend="tcfuzz_add_one", verdict=Verdict.DIVERGENCE,
                aspect="value", eager=[CallResult(value="tensor([0.8415, 0.8415, 0.8415])")],
                compiled=[CallResult(value="tensor([1.8415, 1.8415, 1.8415])")]),
        Outcome(program_id="p", interpreter="3.13", backend="tcfuzz_add_one", verdict=Verdict.MATCH,
                eager=[CallResult(value="tensor([0.8415, 0.8415, 0.8415])")],
                compiled=[CallResult(value="tensor([0.8415, 0.8415, 0.8415])")]),
    ]

    def fake_matrix(program, interps, backends, *, fullgraph, device, log_dir, infos=None, settings=None):
        infos.update(infos_by_name)
        return outcomes

    infos_by_name = infos
    monkeypatch.setattr(cli, "_run_matrix", fake_matrix)
    from fuzz.triage import ablation

    cells = [ablation.Cell(b, d, g, {"3.12": "reproduces" if b == "eager" else "passes", "3.13": "passes"})
             for b in ablation.BACKENDS for d in ablation.DYNAMIC for g in ablation.FULLGRAPH]
    monkeypatch.setattr(ablation, "run_ablation", lambda text, interps: cells)
    monkeypatch.setattr(ablation, "collect_env", lambda interp: f"PyTorch version: 2.12.0\nPython version: {interp.name}")
    monkeypatch.setattr(ablation, "torch_trace", lambda text, interp, out: ablation.Trace(out / "raw", out / "tlparse"))
    monkeypatch.setattr(interpreters, "parse_list", lambda v: [interpreters.Interpreter(n, tmp_path / "python")
                                                              for n in ("3.12", "3.13")])
    code = cli.main(["repro", str(path), "--markdown", "--python", "3.12,3.13"])
    out = capsys.readouterr().out
    assert code == 1
    assert "```python\n# /// script" in out and "def f(x):" in out  # the whole case, runnable
    assert f"python {path}" in out
    assert "| 3.12 | 3.12.1 | 2.12.0+cu130 | no |" in out
    assert "| 3.12 | tcfuzz_add_one | divergence | tensor([1.8415, 1.8415, 1.8415]) | tensor([0.8415, 0.8415, 0.8415]) |" in out
    assert "| 3.13 | tcfuzz_add_one | match |" in out
    # the pt2-bug-report template's fields
    assert "Suggested label: `topic: fuzzer`" in out and "#### 🐛 Describe the bug" in out
    assert "fp64_ref" in out and "default tolerances" in out and "fallback_random = True" in out
    assert "| backend | dynamic | fullgraph | 3.12 | 3.13 |" in out
    assert "| eager | True | False | reproduces | passes |" in out and "| inductor | True | True | passes | passes |" in out
    assert len([line for line in out.splitlines() if line.startswith(("| eager |", "| aot_eager |", "| inductor |"))]) == 12
    assert "Reproduces on torch 2.12.0+cu130 (the newest release run)." in out
    assert "tlparse output (attach the folder, zipped):" in out and "/tlparse`" in out and "/raw`" in out
    assert "<details><summary>3.12</summary>" in out and "Python version: 3.13" in out
    assert "#### Error logs: observed vs expected" in out


def test_the_ablation_rewrites_the_case_s_runner_settings_and_compile_call():
    from fuzz.triage import ablation

    sig = Signature("divergence", "dynamo", "value", ("3.12",))
    text = render.render_case(Program(PROGRAM), sig, backend="eager")
    case = ablation.variant(text, backend="inductor", dynamic=True, fullgraph=True)
    assert 'BACKEND = "inductor"' in case and "FULLGRAPH = True" in case
    assert "fullgraph=FULLGRAPH, dynamic=True)" in case and 'BACKEND = "eager"' not in case
    assert ablation.variant(PROGRAM, backend="eager", dynamic=False, fullgraph=False) is None
    assert [ablation.verdict_of(c) for c in (0, 1, -9)] == ["passes", "reproduces", "hangs"]


def test_markdown_carries_torch_s_minified_repro_or_says_why_not():
    from fuzz.report import issue

    sig = Signature("compile-error", "inductor", "AssertionError", ("3.12",))
    text = render.render_case(Program(PROGRAM), sig, backend="inductor")
    meta = {"signature": sig.key, "kind": "compile-error"}
    repro = "class Repro(torch.nn.Module):\n    def forward(self, sin):\n        return (torch.ops.aten.relu.default(sin),)\n"
    out = issue.render_markdown("c.py", text, meta, [], {}, issue.IssueExtras(
        minifier_repro=repro, minifier_note="torch's after-AOT minifier on 3.12"))
    assert "#### Minified repro (torch's after-AOT minifier)" in out and "torch.ops.aten.relu.default(sin)" in out
    out = issue.render_markdown("c.py", text, meta, [], {}, issue.IssueExtras(
        minifier_note="the minifier ran past the 600 s budget"))
    assert "(none: the minifier ran past the 600 s budget)" in out
    assert "Minified repro" not in issue.render_markdown("c.py", text, meta, [], {}, issue.IssueExtras())


def test_the_minifier_runs_on_aot_and_inductor_cases_where_they_showed(monkeypatch, tmp_path):
    import argparse

    from fuzz.triage import minifier

    ran = []
    monkeypatch.setattr(minifier, "after_aot_repro",
                        lambda case, interp, kind: ran.append((interp.name, kind)) or minifier.MinifierResult("r", "n", 1.0))
    interps = [interpreters.Interpreter(n, tmp_path / "python") for n in ("3.12", "3.13")]
    shown = [Outcome(program_id="p", interpreter="3.13", backend="inductor", verdict=Verdict.COMPILE_ERROR)]
    for stage, want in (("inductor", [("3.13", "compile-error")]), ("aot", [("3.13", "compile-error")]), ("dynamo", [])):
        ran.clear()
        sig = Signature("compile-error", stage, "AssertionError", ("3.13",))
        path = store.write_case(store.case_path(tmp_path / stage, sig),
                                render.render_case(Program(PROGRAM), sig, backend="inductor"))
        args = argparse.Namespace(case=str(path), no_minifier=False)
        result = cli._minified(args, interps, shown)
        assert ran == want and (result is None) == (not want), stage
    assert cli._minified(argparse.Namespace(case=str(path), no_minifier=True), interps, shown) is None


def test_torch_s_repro_is_made_to_run_outside_its_temporary_folder():
    from fuzz.triage.minifier import portable

    tmp = "/tmp/tcfuzz-minifier-abc"
    repro = ("import os\nos.environ['TORCHINDUCTOR_CACHE_DIR'] = '/root/.cache/tcfuzz/inductor/3.12'\n"
             f"os.environ['TORCH_COMPILE_DEBUG_DIR'] = '{tmp}'\nos.environ['TORCHDYNAMO_REPRO_AFTER'] = 'aot'\n"
             f"run_repro(mod, load_args, accuracy=False, command='run', save_dir='{tmp}/torch_compile_debug/x')\n")
    text = portable(repro, tmp)
    assert tmp not in text and "/tcfuzz/" not in text
    assert "save_dir=None" in text and "os.environ['TORCHDYNAMO_REPRO_AFTER'] = 'aot'" in text
