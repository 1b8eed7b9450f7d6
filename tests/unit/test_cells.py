"""The (interpreter, torch) cells of a campaign: named matrices, pins, and
environments that cannot compile (fuzz.campaign.cells, toolchain, torch_releases)."""

from __future__ import annotations

import pytest

from fuzz import cli
from fuzz.campaign import cells, interpreters, torch_envs
from fuzz.campaign.interpreters import Interpreter
from fuzz.campaign.toolchain import cpp_compiler_problem
from fuzz.campaign.torch_releases import MATRIX_PYTHONS, MATRIX_TORCH, Matrix
from fuzz.errors import HarnessError, UsageError


def test_the_mission_matrix_is_four_interpreters_on_one_torch():
    assert MATRIX_PYTHONS[Matrix.MISSION] == ("3.11", "3.12", "3.13", "3.13t")
    assert MATRIX_TORCH[Matrix.MISSION] == "2.12.0"
    assert MATRIX_PYTHONS[Matrix.NEWEST] == interpreters.DEFAULT_PYTHONS
    assert set(interpreters.REQUIRED_PYTHONS) < set(interpreters.DEFAULT_PYTHONS)
    assert {"3.14", "3.14t", "3.15", "3.15t"} <= set(interpreters.DEFAULT_PYTHONS)


def test_an_unknown_matrix_is_one_line_naming_the_known_ones():
    with pytest.raises(UsageError, match="newest, mission"):
        cells.parse_matrix("nightly")
    assert cells.parse_matrix(None) is Matrix.NEWEST and cells.parse_matrix("Mission") is Matrix.MISSION


def fake_tox(monkeypatch, tmp_path, present):
    """Worker envs for the names in ``present`` only."""
    def resolve(spec):
        if spec not in present:
            raise HarnessError(f"no worker env for Python {spec}")
        return Interpreter(spec, tmp_path / spec / "bin" / "python")
    monkeypatch.setattr(interpreters, "resolve", resolve)


def test_default_cells_skip_optional_interpreters_that_are_not_provisioned(monkeypatch, tmp_path):
    fake_tox(monkeypatch, tmp_path, {"3.11", "3.12", "3.13", "3.13t", "3.14", "3.15"})
    chosen = cells.choose(None)
    assert [i.name for i in chosen.interpreters] == ["3.11", "3.12", "3.13", "3.13t", "3.14", "3.15"]
    assert set(chosen.unavailable) == {"3.14t", "3.15t"}
    # named explicitly, a missing one is an error, as is a missing required one
    with pytest.raises(HarnessError):
        cells.choose("3.12,3.14t")
    fake_tox(monkeypatch, tmp_path, {"3.11", "3.12", "3.13"})
    with pytest.raises(HarnessError, match="3.13t"):
        cells.choose(None)


def test_mission_cells_run_torch_2_12_0_in_their_own_envs(monkeypatch, tmp_path):
    fake_tox(monkeypatch, tmp_path, set(interpreters.DEFAULT_PYTHONS))
    asked = []

    def ensure_env(base, release):
        asked.append((base.name, release))
        return torch_envs.TorchEnv(base.name, release, Interpreter(base.name, tmp_path / f"{base.name}-{release}"))
    monkeypatch.setattr(torch_envs, "ensure_env", ensure_env)
    chosen = cells.choose(None, Matrix.MISSION)
    assert asked == [(n, "2.12.0") for n in ("3.11", "3.12", "3.13", "3.13t")]
    assert all(i.python.name.endswith("-2.12.0") for i in chosen.interpreters)
    with pytest.raises(UsageError, match="not 3.14"):
        cells.choose("3.12,3.14", Matrix.MISSION)


def test_a_pinned_release_without_a_wheel_is_an_unavailable_cell_not_an_error(monkeypatch, tmp_path):
    fake_tox(monkeypatch, tmp_path, {"3.12", "3.13t"})

    def ensure_env(base, release):
        if base.name == "3.13t":
            return torch_envs.TorchEnv(base.name, release, None, reason="no wheels with a free-threading ABI tag")
        return torch_envs.TorchEnv(base.name, release, Interpreter(base.name, tmp_path / "env"))
    monkeypatch.setattr(torch_envs, "ensure_env", ensure_env)
    chosen = cells.choose("3.12,3.13t", torch="2.15.0")
    assert [i.name for i in chosen.interpreters] == ["3.12"]
    assert "torch 2.15.0 has no wheel for Python 3.13t" in chosen.unavailable["3.13t"]
    with pytest.raises(UsageError, match="runs on none of 3.13t"):
        cells.choose("3.13t", torch="2.15.0")


def test_a_cxx_that_does_not_exist_refuses_inductor_in_one_line_and_keeps_the_rest(monkeypatch, capsys):
    monkeypatch.setenv("CXX", "/nonexistent/g++-99")
    problem = cpp_compiler_problem()
    assert "/nonexistent/g++-99" in problem and "CXX" in problem and "apt-get install g++" in problem
    assert "\n" not in problem
    assert cli.check_cpp_compiler(["eager", "aot_eager", "inductor"], "cpu") == ["eager", "aot_eager"]
    assert "without inductor" in capsys.readouterr().err
    assert cli.check_cpp_compiler(["inductor"], "cuda") == ["inductor"]  # Triton, not C++
    with pytest.raises(UsageError, match="g\\+\\+-99"):
        cli.check_cpp_compiler(["inductor"], "cpu")


def test_the_default_compiler_is_found_here(monkeypatch):
    monkeypatch.delenv("CXX", raising=False)
    assert cpp_compiler_problem() == ""


def test_workers_inherit_cxx(monkeypatch, tmp_path):
    monkeypatch.setenv("CXX", "clang++")
    monkeypatch.setenv("TCFUZZ_CACHE", str(tmp_path))
    assert Interpreter("3.12", tmp_path / "python").environ()["CXX"] == "clang++"


def test_workers_without_cxx_link_kernels_with_gold_where_it_links(monkeypatch, tmp_path):
    """The linker is the toolchain's: a ``g++-gold`` script (one executable,
    named as gcc: torch 2.12.0 needs both) when gold links a shared object
    here (this project's machines have binutils' ld.gold), and plain ``g++``
    when the flag fails."""
    from fuzz.campaign import toolchain

    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setenv("TCFUZZ_CACHE", str(tmp_path))
    toolchain._gold_cxx.cache_clear()
    try:
        script = tmp_path / "bin" / "g++-gold"
        assert toolchain.inductor_cxx() == str(script) and "-fuse-ld=gold" in script.read_text()
        assert Interpreter("3.12", tmp_path / "python").environ()["CXX"] == str(script)
        toolchain._gold_cxx.cache_clear()
        monkeypatch.setattr(toolchain, "FAST_LINKER_FLAG", "-fuse-ld=no-such-linker")
        assert toolchain.inductor_cxx() == "g++"
        monkeypatch.setenv("CXX", "clang++")  # $CXX wins, and is not remembered past its unsetting
        assert toolchain.inductor_cxx() == "clang++"
        monkeypatch.delenv("CXX")
        assert toolchain.inductor_cxx() == "g++"
    finally:
        toolchain._gold_cxx.cache_clear()


def test_workers_compile_without_inductor_s_graph_caches_unless_told(monkeypatch, tmp_path):
    """A warm FX graph cache made a minimiser's check read be620e810b38's
    compile error as a match: an outcome must not depend on earlier programs."""
    monkeypatch.setenv("TCFUZZ_CACHE", str(tmp_path))
    for name in ("TORCHINDUCTOR_FX_GRAPH_CACHE", "TORCHINDUCTOR_AUTOGRAD_CACHE"):
        monkeypatch.delenv(name, raising=False)
    env = Interpreter("3.12", tmp_path / "python").environ()
    assert env["TORCHINDUCTOR_FX_GRAPH_CACHE"] == env["TORCHINDUCTOR_AUTOGRAD_CACHE"] == "0"
    monkeypatch.setenv("TORCHINDUCTOR_FX_GRAPH_CACHE", "1")  # a user who wants it says so
    assert Interpreter("3.12", tmp_path / "python").environ()["TORCHINDUCTOR_FX_GRAPH_CACHE"] == "1"


def test_a_gpu_run_where_triton_cannot_be_imported_says_so_per_interpreter(tmp_path, monkeypatch, capsys):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho \"missing ModuleNotFoundError: No module named 'triton'\"\n")
    fake.chmod(0o755)
    monkeypatch.setenv("TCFUZZ_CACHE", str(tmp_path))
    broken = Interpreter("3.14", fake)
    problem = interpreters.triton_problem(broken)
    assert problem.startswith("Python 3.14") and "No module named 'triton'" in problem and "\n" not in problem
    monkeypatch.setattr(interpreters, "cuda_problem", lambda i: "")
    assert cli.check_device("cuda", [broken])  # the run goes on: only Inductor fails there
    assert "warning: Python 3.14" in capsys.readouterr().err
