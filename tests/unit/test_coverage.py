"""Tests of `tcfuzz coverage` (fuzz.report.coverage, harness.coverage_probe).

The opcode census runs here with the host interpreter's compiler (no torch);
the slow test probes a worker env for real."""

from __future__ import annotations

import dis
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fuzz.cli import EXIT_USAGE, main
from fuzz.report.coverage import JSON_KEYS, as_json, render_table
from harness.coverage_probe import code_objects, opnames, real_opcodes

ROOT = Path(__file__).resolve().parents[2]

NESTED = '''
def outer(xs):
    class Box:
        def method(self):
            return [x for x in xs]
    async def co():
        async with ctx() as c:
            await c
    assert xs, "empty"
    import math
    return Box, co
'''


def test_opcodes_come_from_every_nested_code_object() -> None:
    code = compile(NESTED, "<nested>", "exec")
    names = {c.co_name for c in code_objects(code)}
    assert {"outer", "Box", "method", "co"} <= names
    seen = opnames(code)
    assert {"LOAD_BUILD_CLASS", "IMPORT_NAME", "LOAD_ASSERTION_ERROR", "BEFORE_ASYNC_WITH", "GET_AWAITABLE"} <= seen
    assert seen <= set(dis.opname)


def test_real_opcodes_leave_out_pseudo_instructions() -> None:
    real = real_opcodes()
    assert "RESUME" in real and "LOAD_CONST" in real
    assert all(dis.opmap[name] <= 255 for name in real)
    if sys.version_info >= (3, 12):
        assert "SETUP_FINALLY" not in real and "POP_BLOCK" not in real


def test_json_output_has_exactly_the_documented_keys() -> None:
    measured = {"interpreters": {"3.12": {
        "opcodes_seen": ["RESUME"], "dynamo_opcodes": ["RESUME", "NOP"], "dynamo_opcode_coverage": 0.5,
        "dynamo_line_coverage": None, "dynamo_files": None, "programs": 3, "all_opcodes": ["RESUME"],
        "dynamo_opcodes_missed": ["NOP"],
    }}}
    out = as_json(measured)
    assert list(out) == ["interpreters"]
    assert set(out["interpreters"]["3.12"]) == set(JSON_KEYS)
    table = render_table(measured, "ours")
    assert "3.12" in table and "1/2" in table and "NOP" in table


def test_inductor_json_adds_the_operator_and_inductor_keys() -> None:
    from fuzz.report.coverage import INDUCTOR_JSON_KEYS

    entry = {
        "opcodes_seen": ["RESUME"], "dynamo_opcodes": ["RESUME"], "dynamo_opcode_coverage": 1.0,
        "dynamo_line_coverage": 0.2, "programs": 2, "outcomes": {"ok": 2}, "aten_ops": 2, "torch_ops": 1,
        "aten_op_names": ["aten.add", "aten.mm"], "torch_op_names": ["matmul"],
        "inductor_line_coverage": 0.4, "functorch_line_coverage": 0.3, "inductor_statements": 10,
        "inductor_cpu_line_coverage": 0.5, "dynamo_files": None,
    }
    out = as_json({"interpreters": {"3.12": entry}})["interpreters"]["3.12"]
    assert set(out) == set(JSON_KEYS) | set(INDUCTOR_JSON_KEYS)
    assert out["aten_ops"] == 2 and out["inductor_line_coverage"] == 0.4
    table = render_table({"interpreters": {"3.12": entry}}, "ours")
    assert "2 aten ops" in table and "torch/_inductor 0.400 (its CPU-reachable files 0.500)" in table


@pytest.mark.parametrize("path, per_file", [
    ("_dynamo/variables/user_defined.py", True), ("_dynamo/variables/__init__.py", True),
    ("_dynamo/polyfills/itertools.py", True), ("_dynamo/comprehension_graph_break.py", True),
    ("_dynamo/symbolic_convert.py", False), ("_dynamo/polyfills/fx/utils.py", False),
    ("_dynamo/variables/user_defined.pyc", False), ("_inductor/variables/builtin.py", False),
])
def test_per_file_shares_are_kept_for_variables_polyfills_and_comprehension_graph_breaks(path, per_file) -> None:
    from harness.coverage_probe import PER_FILE

    assert bool(PER_FILE.match(path)) is per_file


def test_the_table_and_json_give_each_file_s_share() -> None:
    files = {"_dynamo/comprehension_graph_break.py": {"statements": 200, "executed": 94, "share": 0.47},
             "_dynamo/variables/builtin.py": {"statements": 1000, "executed": 470, "share": 0.47}}
    entry = {"opcodes_seen": ["RESUME"], "dynamo_opcodes": ["RESUME"], "dynamo_opcode_coverage": 1.0,
             "dynamo_line_coverage": 0.44, "dynamo_files": files, "programs": 2}
    measured = {"interpreters": {"3.12": entry}}
    assert as_json(measured)["interpreters"]["3.12"]["dynamo_files"] == files
    lines = render_table(measured, "ours").splitlines()
    assert "3.12: per file" in lines
    rows = [line.split() for line in lines[lines.index("3.12: per file") + 2:]]
    assert rows == [["_dynamo/comprehension_graph_break.py", "0.470", "94/200"],
                    ["_dynamo/variables/builtin.py", "0.470", "470/1000"]]
    entry["dynamo_files"] = None  # --no-lines: no per-file table
    assert "per file" not in render_table(measured, "ours")


@pytest.mark.parametrize("path, accelerator_only", [
    ("_inductor/codegen/triton.py", True), ("_inductor/runtime/triton_heuristics.py", True),
    ("_inductor/codegen/cuda/cuda_kernel.py", True), ("_inductor/cudagraph_trees.py", True),
    ("_inductor/fx_passes/micro_pipeline_tp.py", True), ("_inductor/codegen/pallas.py", True),
    ("_inductor/codegen/cpp.py", False), ("_inductor/scheduler.py", False), ("_inductor/lowering.py", False),
    ("_inductor/codegen/cpp_wrapper_cpu.py", False), ("_inductor/select_algorithm.py", False),
])
def test_the_cpu_figure_leaves_out_only_accelerator_and_distributed_files(path, accelerator_only) -> None:
    from harness.coverage_probe import ACCELERATOR_ONLY

    assert bool(ACCELERATOR_ONLY.search(path)) is accelerator_only


def test_bad_arguments_are_usage_errors(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                        tmp_path: Path) -> None:
    from fuzz.campaign import interpreters

    monkeypatch.setattr(interpreters, "ROOT", tmp_path)  # no worker envs: the usage error comes first
    assert main(["coverage", "--generator", "nnsmith"]) == EXIT_USAGE
    assert "Expected --generator" in capsys.readouterr().err
    assert main(["coverage", "--programs", "0"]) == EXIT_USAGE
    assert main(["run", "--sources", "ours=x", "--programs", "1", "--out", "/nonexistent/tcfuzz"]) == EXIT_USAGE
    assert "--sources" in capsys.readouterr().err


@pytest.mark.slow
def test_coverage_json_on_a_worker_env(tmp_path: Path) -> None:
    """20 programs, opcodes only, on 3.12: the JSON shape and a high opcode coverage."""
    python = ROOT / ".tox" / "py312" / "bin" / "python"
    if not python.exists():
        pytest.skip("no worker env for 3.12: run scripts/provision.sh")
    done = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "tcfuzz"), "coverage", "--programs", "20", "--python", "3.12",
         "--no-lines", "--json"],
        capture_output=True, text=True, timeout=300, cwd=ROOT, check=True,
    )
    entry = json.loads(done.stdout)["interpreters"]["3.12"]
    assert set(entry) == set(JSON_KEYS)
    assert entry["programs"] == 20 and entry["dynamo_line_coverage"] is None
    assert set(entry["opcodes_seen"]) & set(entry["dynamo_opcodes"])
    assert entry["dynamo_opcode_coverage"] >= 0.8


SEGFAULT = "import os, signal\n\ndef f(x):\n    os.kill(os.getpid(), signal.SIGSEGV)\n\ndef inputs():\n    return (1,)\n"
TINY = "import torch\n\ndef f(x):\n    return torch.relu(x) + 1\n\ndef inputs():\n    return (torch.ones(3),)\n"


@pytest.mark.slow
def test_a_program_that_kills_the_line_probe_costs_only_itself(tmp_path: Path) -> None:
    """The probe dies with the second of three programs; the host goes on with
    the third, and the report combines the lines of both probe processes."""
    from fuzz.report import coverage
    from fuzz.campaign import interpreters

    if not (ROOT / ".tox" / "py312" / "bin" / "python").exists():
        pytest.skip("no worker env for 3.12: run scripts/provision.sh")
    interp = interpreters.parse_list("3.12")[0]
    programs = tmp_path / "programs.json"
    programs.write_text(json.dumps([TINY, SEGFAULT, TINY.replace("relu", "tanh")]))
    data_file = tmp_path / "data" / ".coverage"
    data_file.parent.mkdir()
    assert coverage._run_for_lines(interp, programs, 3, data_file) == {"ok": 2, "crashed": 1}
    assert len(list(data_file.parent.glob(".coverage.*"))) == 2
    missed = tmp_path / "missed.tsv"
    report = coverage._probe_json(interp, ["--report", str(data_file), "--missed", str(missed)], timeout_s=300)
    assert 0 < report["dynamo_lines_executed"] < report["dynamo_statements"]
    # the per-file table: every measured file once, most missed first, adding up to the report's figures
    header, *rows = [line.split("\t") for line in missed.read_text().splitlines()]
    assert header == ["statements", "missed", "path", "accelerator_only"]
    assert [int(r[1]) for r in rows] == sorted((int(r[1]) for r in rows), reverse=True)
    assert all(r[2].startswith("_dynamo/") and r[3] in ("0", "1") for r in rows)
    assert sum(int(r[0]) for r in rows) == report["dynamo_statements"]
    assert sum(int(r[0]) - int(r[1]) for r in rows) == report["dynamo_lines_executed"]
    # the per-file shares: the same counts as the table, for the files PER_FILE names
    from harness.coverage_probe import PER_FILE

    files = report["dynamo_files"]
    assert set(files) == {r[2] for r in rows if PER_FILE.match(r[2])}
    assert "_dynamo/variables/builtin.py" in files and "_dynamo/polyfills/__init__.py" in files
    for r in rows:
        if r[2] in files:
            assert files[r[2]]["statements"] == int(r[0]) and files[r[2]]["executed"] == int(r[0]) - int(r[1])
    assert any(0 < entry["share"] < 1 for entry in files.values())


def test_a_data_dir_that_already_has_coverage_data_is_refused_before_any_probe(tmp_path: Path) -> None:
    """Its data would be combined with the new run's: a usage error naming the folder, no probe run."""
    from fuzz.campaign.interpreters import Interpreter
    from fuzz.report import coverage

    (tmp_path / "3.12").mkdir()
    (tmp_path / "3.12" / ".coverage.host.1").write_text("")
    with pytest.raises(ValueError, match="already has coverage data"):
        coverage.measure([Interpreter("3.12", tmp_path / "no-python")], programs=1, data_dir=tmp_path)


def test_torch_envs_install_only_the_missing_probe_requirements(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fuzz.campaign import torch_envs
    from fuzz.campaign.interpreters import Interpreter

    python = tmp_path / "env" / "bin" / "python"
    site = tmp_path / "env" / "lib" / "python3.12" / "site-packages"
    site.mkdir(parents=True)
    ran: list[list[str]] = []
    monkeypatch.setattr(torch_envs, "uv_command", lambda: ["uv"])
    monkeypatch.setattr(torch_envs.subprocess, "run",
                        lambda command, **kw: ran.append(command) or subprocess.CompletedProcess(command, 0, "", ""))
    interp = Interpreter("3.12", python)
    torch_envs.ensure_packages(interp, ("coverage>=7.6",))
    assert ran == [["uv", "pip", "install", "--quiet", "--python", str(python), "coverage>=7.6"]]
    (site / "coverage-7.9.1.dist-info").mkdir()
    torch_envs.ensure_packages(interp, ("coverage>=7.6",))
    assert len(ran) == 1  # there now: nothing to install


def test_coverage_compiles_each_program_with_the_settings_a_campaign_draws() -> None:
    from fuzz.generate.sources import draw_program
    from fuzz.report import coverage
    from harness import settings

    programs = [draw_program(seed) for seed in range(40)]
    drawn = coverage.settings_for(programs, "inductor")
    assert drawn == [settings.draw(p.seed, "inductor", p.features).to_json() for p in programs]
    assert any(drawn) and not all(drawn)  # a share differs from the defaults
    assert coverage.settings_for(programs, "inductor", vary_compile=False) == [{}] * 40


@pytest.mark.slow
def test_the_line_probe_applies_each_program_s_settings(tmp_path: Path) -> None:
    """A setting the probe applies shows in the outcome: an unknown Inductor
    config key makes config.patch raise for that program only."""
    from fuzz.report import coverage
    from fuzz.campaign import interpreters

    if not (ROOT / ".tox" / "py312" / "bin" / "python").exists():
        pytest.skip("no worker env for 3.12: run scripts/provision.sh")
    interp = interpreters.parse_list("3.12")[0]
    programs = tmp_path / "programs.json"
    programs.write_text(json.dumps([TINY, TINY]))
    settings_file = tmp_path / "settings.json"
    settings_file.write_text(json.dumps([{"dynamic": True}, {"inductor": {"no_such_key_tcfuzz": 1}}]))
    data_file = tmp_path / "data" / ".coverage"
    data_file.parent.mkdir()
    outcomes = coverage._run_for_lines(interp, programs, 2, data_file, settings_file=settings_file)
    assert outcomes.get("ok") == 1 and sum(v for k, v in outcomes.items() if k.startswith("raised")) == 1, outcomes
