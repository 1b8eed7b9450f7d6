"""Triage without workers: pattern names, the matrix, --json/--markdown, torch axis and bisection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.outcome import GraphBreak, Outcome, Verdict
from fuzz import cli
from fuzz.campaign import torch_envs
from fuzz.triage import matrix
from fuzz.campaign.interpreters import Interpreter
from fuzz.triage.matrix import (NOT_AVAILABLE, backend_pattern, interpreter_pattern, name_pattern, render_markdown,
                         render_text, triage)

ALL = ["3.11", "3.12", "3.13", "3.13t"]
BACKENDS = ["eager", "aot_eager", "inductor"]


@pytest.mark.parametrize("where, name", [
    ([], "none"),
    (ALL, "all versions"),
    (["3.13t"], "free-threaded only"),
    (["3.12", "3.13", "3.13t"], "3.12+ only"),
    (["3.12", "3.13"], "3.12+ only, not free-threaded"),
    (["3.11"], "3.11 only"),
    (["3.13", "3.13t"], "3.13+ only"),
    (["3.11", "3.12", "3.13"], "all but free-threaded"),
    (["3.11", "3.12"], "up to 3.12 only"),
    (["3.11", "3.13t"], "3.11 and free-threaded only"),
    (["3.11", "3.13"], "3.11, 3.13 only"),
])
def test_interpreter_patterns(where, name):
    assert interpreter_pattern(where, ALL) == name


def test_interpreter_pattern_without_free_threaded_build():
    assert interpreter_pattern(["3.12", "3.13"], ["3.11", "3.12", "3.13"]) == "3.12+ only"
    assert interpreter_pattern(["3.12"], ["3.12"]) == "3.12 (the only one run)"


@pytest.mark.parametrize("where, name", [
    ([], "none"), (BACKENDS, "every backend"), (["inductor"], "Inductor only"),
    (["aot_eager", "inductor"], "aot and later"), (["eager"], "eager only"), (["eager", "inductor"], "eager, inductor only"),
])
def test_backend_patterns(where, name):
    assert backend_pattern(where, BACKENDS) == name


def test_combined_pattern_names_both_axes():
    inductor_312_on = {(i, "inductor") for i in ("3.12", "3.13", "3.13t")}
    assert name_pattern(inductor_312_on, ALL, BACKENDS) == "3.12+ only, Inductor only"
    everywhere = {(i, b) for i in ALL for b in BACKENDS}
    assert name_pattern(everywhere, ALL, BACKENDS) == "all versions"
    aot = {(i, b) for i in ALL for b in ("aot_eager", "inductor")}
    assert name_pattern(aot, ALL, BACKENDS) == "all versions, aot and later"
    assert name_pattern(set(), ALL, BACKENDS) == "none"


# ---------------------------------------------------------------- the matrix with a fake runner

def fake_runner(bad: dict[str, set[tuple[str, str]]], torch_of=lambda i: "2.12.0+cpu"):
    """A MatrixRunner whose outcomes diverge in the (interpreter, backend) cells
    ``bad[release]``; the release is read from the interpreter's python path."""
    calls = []

    def run(interps: list[Interpreter], backends: list[str]):
        calls.append([i.name for i in interps])
        outcomes = []
        for i in interps:
            release = i.python.name if i.python.name in bad else ""
            for b in backends:
                diverges = (i.name, b) in bad[release]
                outcomes.append(Outcome(
                    program_id="p", interpreter=i.name, backend=b,
                    verdict=Verdict.DIVERGENCE if diverges else Verdict.MATCH,
                    aspect="exception" if diverges else "", error_type="None->TypeError" if diverges else "",
                    graph_breaks=[GraphBreak("Data-dependent branching", "x")] if i.name == "3.13" else []))
        return outcomes, {i.name: (release or torch_of(i.name)) for i in interps}

    run.calls = calls
    return run


def interps(names=ALL):
    return [Interpreter(n, Path(f"/nowhere/{n}")) for n in names]


def test_matrix_cells_pattern_and_signature_short_form():
    bad = {"": {(i, b) for i in ("3.12", "3.13", "3.13t") for b in BACKENDS}}
    result = triage("case.py", fake_runner(bad), interps(), BACKENDS)
    assert result.pattern() == "3.12+ only"
    cell = next(c for c in result.cells if c.interpreter == "3.12" and c.backend == "inductor")
    assert cell.shows and cell.verdict == "divergence"
    assert cell.short_signature.endswith(" / exception:None->TypeError")
    assert len(cell.short_signature.split(" / ")[0]) == 12
    assert next(c for c in result.cells if c.interpreter == "3.13").graph_breaks == 1
    text = render_text(result)
    assert "pattern: 3.12+ only" in text
    assert text.splitlines()[0].split() == ["python", *BACKENDS]
    assert "1 gb" in text and "match · 0 gb" in text


def test_json_rendering_carries_every_cell_and_the_pattern():
    bad = {"": {("3.13t", "inductor")}}
    data = json.loads(json.dumps(triage("case.py", fake_runner(bad), interps(), BACKENDS).to_json()))
    assert data["pattern"] == "free-threaded only, Inductor only"
    assert len(data["cells"]) == 12
    shown = [c for c in data["cells"] if c["shows"]]
    assert [(c["interpreter"], c["backend"], c["verdict"]) for c in shown] == [("3.13t", "inductor", "divergence")]
    assert shown[0]["short_signature"].endswith("/ exception:None->TypeError")


def test_markdown_rendering_is_a_table_for_an_issue():
    bad = {"": {(i, "inductor") for i in ALL}}
    md = render_markdown(triage("corpus/x|y.py", fake_runner(bad), interps(), BACKENDS))
    lines = md.splitlines()
    assert lines[0] == "**tcfuzz triage** `corpus/x\\|y.py`: **all versions, Inductor only**"
    assert lines[2] == "| python | eager | aot_eager | inductor |"
    assert lines[3] == "|---|---|---|---|"
    assert len([l for l in lines if l.startswith("| 3.1")]) == 4
    assert "divergence *" in lines[4] and "exception:None->TypeError" in lines[4]


def test_corpus_case_target_is_its_signature_cause():
    # a graph-break corpus case "shows" where it breaks, whatever the verdict
    result = triage("case.py", fake_runner({"": set()}), interps(), ["eager"],
                    target=("graph-break", "Data-dependent branching"))
    assert result.pattern() == "3.13 only, not free-threaded"


# ---------------------------------------------------------------- torch axis

def fake_envs(missing: set[tuple[str, str]], made: list):
    def env_for(interp: Interpreter, release: str):
        made.append((interp.name, release))
        if (interp.name, release) in missing:
            return torch_envs.TorchEnv(interp.name, release, None, reason="no cp313t wheel")
        return torch_envs.TorchEnv(interp.name, release, Interpreter(interp.name, Path(f"/envs/{release}")))
    return env_for


def test_torch_axis_shows_missing_wheels_as_not_available():
    bad = {"2.10.0": set(), "2.11.0": {("3.12", "eager")}, "2.12.0": {("3.12", "eager")}}
    made: list = []
    result = triage("case.py", fake_runner(bad), interps(["3.12", "3.13t"]), ["eager"], releases=list(bad),
                    env_for=fake_envs({("3.13t", "2.10.0")}, made))
    assert result.patterns() == {"2.10.0": "none (n/a: 3.13t)", "2.11.0": "3.12 only", "2.12.0": "3.12 only"}
    na = [c for c in result.cells if c.verdict == NOT_AVAILABLE]
    assert [(c.interpreter, c.torch, c.reason) for c in na] == [("3.13t", "2.10.0", "no cp313t wheel")]
    text = render_text(result)
    assert text.splitlines()[0].split() == ["torch", "python", "eager"]
    assert "n/a: 3.13t with torch 2.10.0: no cp313t wheel" in text
    assert result.changes() == ["introduced in 2.11.0 (after 2.10.0)"]
    assert "change: introduced in 2.11.0 (after 2.10.0)" in text
    assert next(c for c in result.cells if c.torch == "2.11.0").torch_version == "2.11.0"


@pytest.mark.parametrize("first_bad, change", [(5, "introduced"), (1, "introduced"), (7, "introduced")])
def test_bisect_finds_the_first_changed_release_with_few_envs(first_bad, change):
    releases = [f"2.{k}.0" for k in range(8)]
    bad = {r: ({("3.12", "eager")} if k >= first_bad else set()) for k, r in enumerate(releases)}
    made: list = []
    result = triage("case.py", fake_runner(bad), interps(["3.12"]), ["eager"], releases=releases, bisect=True,
                    env_for=fake_envs(set(), made))
    b = result.bisection
    assert (b.first_changed, b.change, b.last_before) == (releases[first_bad], change, releases[first_bad - 1])
    assert len(made) <= 2 + 3  # both ends, then log2(8) steps
    assert "introduced in" in result.summary()


def test_bisect_reports_a_fix_and_no_change():
    releases = ["2.9.1", "2.10.0", "2.11.0", "2.12.0"]
    fixed = {r: ({("3.12", "eager")} if r in ("2.9.1", "2.10.0") else set()) for r in releases}
    made: list = []
    b = triage("c", fake_runner(fixed), interps(["3.12"]), ["eager"], releases=releases, bisect=True,
               env_for=fake_envs(set(), made)).bisection
    assert (b.first_changed, b.change) == ("2.11.0", "fixed")
    same = {r: set() for r in releases}
    b = triage("c", fake_runner(same), interps(["3.12"]), ["eager"], releases=releases, bisect=True,
               env_for=fake_envs(set(), [])).bisection
    assert b.first_changed is None and b.evaluated == ["2.9.1", "2.12.0"]


# ---------------------------------------------------------------- torch envs and CLI input

def test_parse_releases_keeps_order_and_rejects_junk():
    assert torch_envs.parse_releases("2.11.0, 2.10.0") == ["2.11.0", "2.10.0"]
    with pytest.raises(Exception, match="Expected torch releases"):
        torch_envs.parse_releases("latest")


def test_env_without_a_wheel_is_cached_as_unavailable(tmp_path, monkeypatch):
    calls = []

    def no_wheel(base, release, path, index_url):
        calls.append(release)
        return "torch==2.12.1 has no wheels with a free-threading compatible ABI tag"

    monkeypatch.setattr(torch_envs, "_make", no_wheel)
    base = Interpreter("3.13t", tmp_path / "py313t" / "bin" / "python")
    for _ in range(2):
        env = torch_envs.ensure_env(base, "2.12.1", root=tmp_path / "envs")
        assert not env.available and "free-threading" in env.reason
    assert calls == ["2.12.1"]  # the second call read the cache


def test_env_reuses_the_interpreters_own_env_with_that_release(tmp_path):
    site = tmp_path / "py312" / "lib" / "python3.12" / "site-packages" / "torch-2.12.0+cu130.dist-info"
    site.mkdir(parents=True)
    base = Interpreter("3.12", tmp_path / "py312" / "bin" / "python")
    env = torch_envs.ensure_env(base, "2.12.0", root=tmp_path / "envs")
    assert env.reused and env.interpreter == base
    assert torch_envs.env_path("3.12", "2.10.0", root=tmp_path) == tmp_path / "3.12-torch2.10.0"
    assert torch_envs.env_path("3.12", "2.10.0", "https://x", root=tmp_path).name.startswith("3.12-torch2.10.0-")


def test_triage_cli_rejects_bisect_without_releases(tmp_path, capsys, monkeypatch):
    from fuzz.campaign import interpreters

    monkeypatch.setattr(interpreters, "ROOT", tmp_path)  # no worker envs: the usage error comes first
    case = tmp_path / "c.py"
    case.write_text("import torch\ndef f(x):\n    return x\ndef inputs():\n    return (torch.ones(1),)\n")
    assert cli.main(["triage", str(case), "--bisect"]) == cli.EXIT_USAGE
    assert "--bisect searches torch releases" in capsys.readouterr().err
    assert cli.main(["triage", str(case), "--torch", "nightly"]) == cli.EXIT_USAGE


def test_no_wheel_reason_is_uvs_cause_in_one_line():
    stderr = ("Using CPython 3.13.5+freethreaded interpreter at: /x/python3.13t\n"
              "error: No solution found when resolving dependencies\n"
              "  cause: Because torch==2.12.1 has no wheels with a free-threading compatible ABI tag and you "
              "require torch==2.12.1, we can conclude that your requirements are unsatisfiable.\n")
    assert torch_envs._no_solution_reason(stderr) == \
        "torch==2.12.1 has no wheels with a free-threading compatible ABI tag"


def test_env_is_made_with_uv_from_the_given_index(tmp_path, monkeypatch):
    commands = []

    class Done:
        returncode, stdout, stderr = 0, "", ""

    def fake_run(command, **kwargs):
        commands.append(command)
        if command[1] == "venv":
            (Path(command[-1]) / "bin").mkdir(parents=True)
        return Done()

    monkeypatch.setattr(torch_envs.subprocess, "run", fake_run)
    base = Interpreter("3.12", tmp_path / "py312" / "bin" / "python")
    env = torch_envs.ensure_env(base, "2.13.0.dev20261201", index_url="https://nightly.example/whl",
                                root=tmp_path / "envs")
    assert env.available and env.interpreter.python.parent.parent.name.startswith("3.12-torch2.13.0.dev20261201-")
    venv, install = commands
    assert venv[1:3] == ["venv", "--quiet"]
    assert install[1:4] == ["pip", "install", "--no-build"]
    assert "torch==2.13.0.dev20261201" in install and "numpy" in install
    assert install[-2:] == ["--index-url", "https://nightly.example/whl"]
    # made once: the second call finds the ready marker
    torch_envs.ensure_env(base, "2.13.0.dev20261201", index_url="https://nightly.example/whl", root=tmp_path / "envs")
    assert len(commands) == 2


def test_what_the_bisector_blames_is_recorded_in_the_case(tmp_path):
    from harness import casefile
    from harness.program import Program
    from fuzz.corpus import render
    from fuzz.triage import compiler_bisect
    from fuzz.triage.signature import Signature

    sig = Signature("divergence", "inductor", "value", ("3.12",))
    case = tmp_path / "case.py"
    case.write_text(render.render_case(Program(CASE_SOURCE), sig, backend="inductor"))
    compiler_bisect.record_bisect(case, {"interpreter": "3.12", "backend": "inductor", "subsystem": "lowerings",
                                         "bisect_number": None, "debug_info": "long text", "runs": 7})
    table = casefile.read_table(case.read_text())
    assert table["bisect"] == {"interpreter": "3.12", "backend": "inductor", "subsystem": "lowerings", "runs": 7}
    assert table["signature"] == sig.key


CASE_SOURCE = "import torch\n\ndef f(x):\n    return x.sin()\n\ndef inputs():\n    return (torch.ones(3),)\n"


def test_a_cell_whose_torch_refuses_torch_compile_is_unsupported_with_torchs_reason(tmp_path):
    """torch 2.3.1 on 3.12 ("Dynamo is not supported on Python 3.12+") runs
    nothing: its cells say unsupported, with torch's message, and the pattern
    is computed over the other cells only."""
    reason = "Dynamo is not supported on Python 3.12+"

    def run(interps, backends):
        outcomes = [Outcome(program_id="p", interpreter=i.name, backend=b, verdict=Verdict.DIVERGENCE,
                            aspect="value") for i in interps if i.name != "3.12" for b in backends]
        return outcomes, {i.name: "2.3.1" for i in interps}, {"3.12": reason}

    interps = [Interpreter("3.11", tmp_path / "a"), Interpreter("3.12", tmp_path / "b")]
    result = matrix.triage("case.py", run, interps, ["eager"])
    cells = {c.interpreter: c for c in result.cells}
    assert cells["3.12"].verdict == matrix.UNSUPPORTED and cells["3.12"].reason == reason
    assert cells["3.11"].verdict == "divergence"
    text = matrix.render_text(result)
    assert f"unsupported: 3.12 with torch 2.3.1: {reason}" in text
    assert "unsupported: 3.12" in result.pattern()
