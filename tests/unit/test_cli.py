import pytest

from fuzz import cli
from fuzz.campaign import interpreters
from fuzz.errors import UsageError
from fuzz.campaign.workers import crash_frame


def test_durations_and_shards():
    assert cli.parse_duration_s("10m") == 600 and cli.parse_duration_s("90s") == 90 and cli.parse_duration_s("2") == 2
    assert cli.parse_shard("2/4") == (1, 4)
    for bad in ("0/4", "5/4", "x"):
        with pytest.raises(UsageError, match="Expected a shard"):
            cli.parse_shard(bad)
    with pytest.raises(UsageError, match="Expected a duration"):
        cli.parse_duration_s("ten minutes")


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert cli.main(["repro", str(tmp_path / "nope.py")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tcfuzz: error: no such case file") and "\n" not in err
    notprog = tmp_path / "x.py"
    notprog.write_text("print('hi')\n")
    assert cli.main(["repro", str(notprog)]) == 2
    assert "defines no top-level 'f'" in capsys.readouterr().err
    assert cli.main(["run", "--python", "2.7", "--programs", "1"]) == 2


def test_missing_interpreter_env_is_a_harness_failure(capsys, monkeypatch, tmp_path):
    from fuzz.campaign import interpreters

    case = tmp_path / "case.py"
    case.write_text("import torch\ndef f(x):\n    return x\ndef inputs():\n    return (torch.ones(1),)\n")
    monkeypatch.setattr(interpreters, "ROOT", tmp_path)  # no .tox here
    assert cli.main(["repro", str(case), "--python", "3.12"]) == 3
    err = capsys.readouterr().err.strip()
    assert "no worker env for Python 3.12" in err and "scripts/provision.sh" in err and "\n" not in err


def test_cuda_refused_where_no_interpreter_sees_a_gpu(capsys, monkeypatch, tmp_path):
    from fuzz.campaign import interpreters

    monkeypatch.setattr(interpreters, "cuda_problem", lambda i: f"Python {i.name} (/x/python) sees no GPU")
    monkeypatch.setattr(interpreters, "select", lambda v: ([interpreters.Interpreter("3.12", tmp_path / "python")], {}))
    assert cli.main(["run", "--device", "cuda", "--programs", "1", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tcfuzz: error: --device cuda: Python 3.12 (/x/python) sees no GPU") and "\n" not in err
    assert "--device cpu" in err and "--python" in err  # the fixes
    assert not (tmp_path / "out").exists()
    assert cli.main(["run", "--device", "tpu", "--programs", "1"]) == 2
    assert "Expected --device cpu or cuda but got --device tpu" in capsys.readouterr().err


def test_crash_frame_prefers_torch_frames():
    dump = """Fatal Python error: Segmentation fault

Current thread 0x00007f (most recent call first):
  File "/usr/lib/python3.11/ctypes/__init__.py", line 519 in string_at
  File "/env/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py", line 9 in _fn
  File "/tmp/prog.py", line 3 in f
"""
    assert crash_frame(dump) == "torch/_dynamo/eval_frame.py:_fn"
    assert crash_frame(dump.replace("torch/_dynamo", "x")) == "ctypes/__init__.py:string_at"
    assert crash_frame("") == ""


def test_daily_seed_is_stable_within_a_day_and_changes_between_days():
    import datetime

    day = datetime.date(2026, 12, 1)
    assert cli.daily_seed(day) == cli.daily_seed(day)
    assert cli.daily_seed(day + datetime.timedelta(days=1)) - cli.daily_seed(day) == 100_000


# ---------------------------------------------------------------- usage errors before any env check

CASE = "import torch\ndef f(x):\n    return x\ndef inputs():\n    return (torch.ones(1),)\n"


@pytest.mark.parametrize("argv, says", [
    (["run", "--backend", "eager,nosuch"], "but got --backend nosuch"),
    (["run", "--python", "3.12,2.7"], "but got --python 2.7"),
    (["run", "--sources", "ours=0.5,nosuch=0.5"], "--sources: Expected sources"),
    (["run", "--budget", "ten minutes"], "Expected a duration"),
    (["run", "--shard", "5/4"], "Expected a shard"),
    (["run", "--share", "inductor=2"], "Expected --share"),
    (["run", "--threads", "1"], "Expected --threads of at least 2"),
    (["run", "--device", "tpu"], "Expected --device cpu or cuda"),
    (["run", "--resume", "{tmp}/nowhere", "--budget", "soon"], "Expected a duration"),
    (["repro", "{case}", "--backend", "nosuch"], "but got --backend nosuch"),
    (["repro", "{case}", "--python", "3.12,nosuch"], "but got --python nosuch"),
    (["repro", "{case}", "--device", "tpu"], "Expected --device cpu or cuda"),
    (["triage", "{case}", "--torch", "nightly"], "Expected torch releases"),
    (["triage", "{case}", "--backend", "nosuch"], "but got --backend nosuch"),
    (["minimize", "{case}", "--budget", "ten"], "Expected a duration"),
    (["minimize", "{case}", "--backend", "nosuch"], "but got --backend nosuch"),
    (["minimize", "{case}", "--torch", "nightly"], "Expected torch releases"),
    (["coverage", "--python", "2.7"], "but got --python 2.7"),
])
def test_usage_errors_come_before_any_env_check(argv, says, tmp_path, monkeypatch, capsys):
    """On a tree without worker envs (a missing env is exit 3) every bad flag
    is still exit 2 with one line: it is checked before any env or worker."""
    from fuzz.campaign import interpreters, workers

    monkeypatch.setattr(interpreters, "ROOT", tmp_path)  # no .tox here
    monkeypatch.setattr(workers.WorkerPool, "start", lambda self: pytest.fail("a worker started"))
    case = tmp_path / "case.py"
    case.write_text(CASE)
    argv = [a.format(tmp=tmp_path, case=case) for a in argv]
    if argv[0] == "run":
        argv += ["--programs", "1", "--out", str(tmp_path / "out")]
    assert cli.main(argv) == cli.EXIT_USAGE
    err = capsys.readouterr().err.strip()
    assert err.startswith("tcfuzz: error: ") and "\n" not in err and says in err
    assert not (tmp_path / "out").exists()


def test_unknown_backend_names_the_known_ones_and_how_to_list_torchs(monkeypatch):
    monkeypatch.setattr(interpreters, "registered_backends", lambda: frozenset({"cudagraphs"}))
    with pytest.raises(UsageError) as e:
        cli.parse_backends("nosuch")
    message = str(e.value)
    for name in ("eager", "aot_eager", "inductor", "tcfuzz_add_one", "tcfuzz_force_eager", "_TESTING_ONLY"):
        assert name in message
    assert "list_backends" in message and "\n" not in message


def test_backends_known_without_torch_are_accepted(monkeypatch):
    monkeypatch.setattr(interpreters, "registered_backends", lambda: pytest.fail("torch was asked"))
    names = ["eager", "aot_eager_decomp_partition", "inductor", "tcfuzz_identity", "tcfuzz_force_eager",
             "relu_compile_error_TESTING_ONLY"]
    assert cli.parse_backends(",".join(names)) == names
    assert cli.parse_backends(None) == cli.parse_backends("all") == ["eager", "aot_eager", "inductor"]


def test_other_backends_are_those_torch_registers_in_the_worker_envs(monkeypatch):
    monkeypatch.setattr(interpreters, "registered_backends", lambda: frozenset({"cudagraphs", "my_vendor_backend"}))
    assert cli.parse_backends("eager,my_vendor_backend,cudagraphs") == ["eager", "my_vendor_backend", "cudagraphs"]
    with pytest.raises(UsageError, match="--backend nosuch"):
        cli.parse_backends("eager,nosuch")
    monkeypatch.setattr(interpreters, "registered_backends", lambda: None)  # no env yet: only the known ones
    with pytest.raises(UsageError, match="--backend my_vendor_backend"):
        cli.parse_backends("my_vendor_backend")


# ---------------------------------------------------------------- minimize and repro --save without workers

def divergent(task):
    from harness.outcome import CallResult, Outcome, Verdict

    return Outcome(program_id="p", interpreter=task.interpreter, backend=task.backend, verdict=Verdict.DIVERGENCE,
                   aspect="value", eager=[CallResult(value="1")], compiled=[CallResult(value="2")],
                   fullgraph=task.fullgraph)


def test_minimize_keeps_a_fullgraph_cases_fullgraph(tmp_path, monkeypatch, capsys):
    """A case filed with fullgraph=True is run, checked while minimised and
    rendered with fullgraph (its table's ``fullgraph``), with no --fullgraph flag;
    the case pins the torch its workers ran, not casefile.DEFAULT_TORCH."""
    from harness import casefile
    from harness.outcome import InterpreterInfo
    from harness.program import Program
    from fuzz.campaign import interpreters, workers
    from fuzz.corpus import render
    from fuzz.reduce import pipeline
    from fuzz.triage.signature import Signature

    tasks = []

    class FakePool:
        def __init__(self, *args, **kwargs):
            # the worker's torch, which the minimised case pins
            self.info = {"3.12": InterpreterInfo("3.12", "3.12.1", False, True, "2.15.0+cu132")}

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

        def start(self):
            return self.info

        def run_all(self, batch):
            batch = list(batch)
            tasks.extend(batch)
            return [divergent(t) for t in batch]

    def fake_minimize(source, check, *, budget_s, program, jobs, progress):
        smaller = source.replace("    y = x\n", "")
        assert smaller != source and check(smaller)  # the check runs (fullgraph) on the workers
        return pipeline.MinimizeResult(source=smaller, lines_before=5, lines_after=4)

    monkeypatch.setattr(workers, "WorkerPool", FakePool)
    monkeypatch.setattr(pipeline, "minimize_source", fake_minimize)
    monkeypatch.setattr(interpreters, "parse_list", lambda v: [interpreters.Interpreter("3.12", tmp_path / "python")])
    source = "import torch\n\ndef f(x):\n    y = x\n    return x.sin()\n\ndef inputs():\n    return (torch.ones(3),)\n"
    sig = Signature("divergence", "dynamo", "value", ("3.12",))
    case = tmp_path / "case.py"
    case.write_text(render.render_case(Program(source), sig, backend="eager", fullgraph=True))
    out = tmp_path / "min.py"
    assert cli.main(["minimize", str(case), "--backend", "eager", "-o", str(out)]) == cli.EXIT_OK
    assert tasks and all(t.fullgraph for t in tasks)
    text = out.read_text()
    assert "FULLGRAPH = True" in text and casefile.read_table(text)["fullgraph"] is True
    assert "y = x" not in text
    assert '"torch==2.15.0"' in text and casefile.read_table(text)["torch"] == "2.15.0+cu132"


def test_minimize_with_torch_runs_on_that_release_on_every_interpreter(tmp_path, monkeypatch):
    """``minimize --torch 2.12.0``: the workers are the interpreters of
    fuzz.campaign.cells.choose's pinned envs, not the provisioned ones (a case
    live only on an older torch is checked there)."""
    from fuzz.campaign import cells, workers

    pinned = [interpreters.Interpreter("3.13t", tmp_path / "torch-2.12.0" / "python")]
    asked, started = [], []
    monkeypatch.setattr(cells, "choose", lambda python, matrix, release: asked.append((python, release))
                        or cells.Cells(pinned, {"3.11": "no wheel"}))
    monkeypatch.setattr(interpreters, "parse_list", lambda v: pytest.fail("the provisioned envs were used"))

    class StopPool:
        def __init__(self, interps, **kwargs):
            started.append(list(interps))
            raise RuntimeError("stop here")

    monkeypatch.setattr(workers, "WorkerPool", StopPool)
    case = tmp_path / "case.py"
    case.write_text(CASE)
    with pytest.raises(RuntimeError, match="stop here"):
        cli.main(["minimize", str(case), "--backend", "eager", "--python", "3.11,3.13t", "--torch", "2.12.0"])
    assert asked == [("3.11,3.13t", "2.12.0")] and started == [pinned]


def test_repro_save_files_the_case_with_its_replay(tmp_path, monkeypatch, capsys):
    """``repro --save`` files through fuzz.corpus.filing: confirmed standalone
    and with the exit codes recorded in the case's replay table, as a campaign does."""
    from harness import casefile
    from harness.outcome import InterpreterInfo
    from fuzz.campaign import interpreters, workers
    from fuzz.corpus import store

    def fake_matrix(program, interps, backends, *, fullgraph, device, log_dir, infos=None, settings=None):
        infos.update({i.name: InterpreterInfo(i.name, "3.12.1", False, True, "2.12.0+cpu") for i in interps})
        return [divergent(workers.Task(program, i.name, b, device, fullgraph)) for i in interps for b in backends]

    ran = []
    monkeypatch.setattr(cli, "_run_matrix", fake_matrix)
    monkeypatch.setattr(store, "run_standalone", lambda text, interps: ran.append(text) or {i.name: 1 for i in interps})
    monkeypatch.setattr(interpreters, "parse_list", lambda v: [interpreters.Interpreter(n, tmp_path / "python")
                                                              for n in ("3.12", "3.13")])
    case = tmp_path / "case.py"
    case.write_text(CASE)
    corpus = tmp_path / "corpus"
    assert cli.main(["repro", str(case), "--backend", "eager", "--save", str(corpus)]) == cli.EXIT_FOUND
    out = capsys.readouterr().out
    saved = list(store.list_cases(corpus))
    assert len(saved) == 1 and f"saved {saved[0]}" in out
    table = casefile.read_table(saved[0].read_text())
    assert table["replay"] == {"3.12/2.12.0": casefile.REPRODUCES, "3.13/2.12.0": casefile.REPRODUCES}
    assert len(ran) == 1

    monkeypatch.setattr(store, "run_standalone", lambda text, interps: {i.name: 0 for i in interps})
    other = tmp_path / "corpus2"
    assert cli.main(["repro", str(case), "--backend", "eager", "--save", str(other)]) == cli.EXIT_FOUND
    err = capsys.readouterr().err.strip()
    assert err.startswith("not saved: python CASE does not reproduce") and not other.exists()


def test_minimize_in_place_rewrites_the_case_keeping_its_table_only_when_it_still_shows_its_bucket(tmp_path, monkeypatch):
    """``tcfuzz minimize CASE --in-place`` (fuzz.corpus.rewrite): the smaller program replaces the
    case's when its bucket is the case's and ``python CASE`` reproduces it;
    the table (first-seen, count, replays) stays; otherwise the case is left."""
    from harness import casefile
    from harness.program import Program
    from fuzz.corpus import render, store
    from fuzz.corpus.rewrite import rewrite_case
    from fuzz.triage.signature import Signature

    big = "import torch\n\ndef f(x):\n    y = x * 2\n    torch._dynamo.graph_break()\n    return x\n\ndef inputs():\n    return (torch.ones(3),)\n"
    small = "import torch\n\ndef f(x):\n    torch._dynamo.graph_break()\n    return x\n\ndef inputs():\n    return (torch.ones(3),)\n"
    sig = Signature("graph-break", "dynamo", "Call to `torch._dynamo.graph_break()`", ("3.15",))
    path = tmp_path / f"{sig.id}.py"
    text = render.render_case(Program(big), sig, backend="eager", meta={"count": 4, "first-seen": "2026-01-01"})
    path.write_text(store.with_replay(text, {"3.15": 1}, "2.15.0"))
    meta = store.read_case(path)[1]
    interps = [interpreters.Interpreter("3.15", tmp_path / "python")]
    texts = render.render_case_runners(Program(small), sig, backend="eager")
    codes = {"3.15": 0}
    monkeypatch.setattr(store, "run_standalone", lambda text, shown: {i.name: codes[i.name] for i in shown})
    before = path.read_text()
    assert rewrite_case(path, meta, texts, sig, interps, smaller=True)[1].endswith("(exit codes {'3.15': 0})")
    assert path.read_text() == before
    other = Signature("graph-break", "dynamo", "Data-dependent branching", ("3.15",))
    rewritten, why = rewrite_case(path, meta, texts, other, interps, smaller=True)
    assert not rewritten and path.read_text() == before and f"bucket is {other.id}" in why
    assert not rewrite_case(path, meta, texts, sig, interps, smaller=False)[0]
    codes["3.15"] = 1
    assert rewrite_case(path, meta, texts, sig, interps, smaller=True)[0]
    after = path.read_text()
    assert render.program_body(after).strip() == small.strip()
    assert casefile.read_table(after) == casefile.read_table(before)  # count 4, first-seen, replay: as they were


def test_minimize_in_place_re_keys_a_divergence_whose_smaller_program_has_another_root_cause(tmp_path, monkeypatch):
    """The same observation and interpreters with another skeleton: the case
    moves to its new id, and known-issues.toml renames its upstream entry and
    merges the old id into the new one, so replays and campaigns still know it;
    the ids merged into the old one before are merged into the new one."""
    from fuzz.corpus import render, store
    from fuzz.corpus.rewrite import rewrite_case
    from fuzz.triage import known
    from fuzz.triage.signature import Signature
    from harness.program import Program

    corpus = tmp_path / "corpus"
    big = "import torch\n\ndef f(x):\n    y = x * 2\n    return x\n\ndef inputs():\n    return (torch.ones(3),)\n"
    small = "import torch\n\ndef f(x):\n    return x\n\ndef inputs():\n    return (torch.ones(3),)\n"
    old = Signature("divergence", "dynamo", "value {wrong-result: def f(v1):; .E #11111111}", ("3.12",))
    new = Signature("divergence", "dynamo", "value {wrong-result: def f(v1): #22222222}", ("3.12",))
    path = corpus / "divergence" / f"{old.id}.py"
    path.parent.mkdir(parents=True)
    path.write_text(render.render_case(Program(big), old, backend="eager", meta={"count": 3}))
    (corpus / "known-issues.toml").write_text(
        f'# header\n\n[cases."{old.id}"]\nissue = "https://example.org/1"\nstate = "open"\n\n[merged]\n'
        '"aaaaaaaaaaaa" = { into = "bbbbbbbbbbbb", reason = "x" }\n'
        f'"cccccccccccc" = {{ into = "{old.id}", reason = "y" }}\n')
    monkeypatch.setattr(store, "run_standalone", lambda text, shown: {i.name: 1 for i in shown})
    texts = render.render_case_runners(Program(small), new, backend="eager")
    rewritten, why = rewrite_case(path, store.read_case(path)[1], texts, new,
                                  [interpreters.Interpreter("3.12", tmp_path / "python")], smaller=True)
    assert rewritten and new.id in why and not path.exists()
    moved = corpus / "divergence" / f"{new.id}.py"
    table = store.read_case(moved)[1]
    assert table["signature"] == new.key and table["count"] == 3
    issues = known.load(corpus)
    assert issues.resolve(old.id) == new.id and issues.issue_of(new.id).issue == "https://example.org/1"
    assert issues.resolve("aaaaaaaaaaaa") == "bbbbbbbbbbbb" and "# header" in (corpus / "known-issues.toml").read_text()
    assert issues.merged["cccccccccccc"] == (new.id, "y")  # not a chain through the old id
    # another observation is another bug: not re-keyed
    other = Signature("divergence", "dynamo", "stdout {wrong-result: def f(v1): #33333333}", ("3.12",))
    assert not rewrite_case(moved, table, texts, other, [interpreters.Interpreter("3.12", tmp_path / "python")],
                            smaller=True)[0]


PEP758 = ("import torch\n\ndef f(x):\n    try:\n        raise ValueError\n    except ValueError, TypeError:\n"
          "        return x + 1\n\ndef inputs():\n    return (torch.ones(2),)\n")


def test_a_bare_program_of_newer_grammar_is_read_as_requiring_the_oldest_python_that_parses_it(
        tmp_path, monkeypatch, caplog):
    path = tmp_path / "prog.py"
    path.write_text(PEP758)
    monkeypatch.setattr(interpreters, "first_parsing", lambda p, **kw: "3.14" if p == path else None)
    program, meta = cli.load_case(str(path))
    assert "except ValueError, TypeError:" in program.source and meta == {}
    assert "parses on Python 3.14" in caplog.text


def test_a_program_no_interpreter_parses_is_a_one_line_error_naming_the_fix(tmp_path, monkeypatch):
    path = tmp_path / "prog.py"
    path.write_text(PEP758)
    monkeypatch.setattr(interpreters, "first_parsing", lambda p, **kw: None)
    with pytest.raises(UsageError) as raised:
        cli.load_case(str(path))
    message = str(raised.value)
    assert "not a Python program" in message and "requires-python" in message and "\n" not in message


def test_first_parsing_asks_only_interpreters_newer_than_the_host(monkeypatch, tmp_path):
    asked = []
    monkeypatch.setattr(interpreters, "resolve", lambda name: asked.append(name) or (_ for _ in ()).throw(
        interpreters.HarnessError("not provisioned")))
    assert interpreters.first_parsing(tmp_path / "x.py", names=("3.11", "3.99")) is None
    assert asked == ["3.99"]


def test_a_new_bucket_of_a_documented_limitation_is_listed_as_one_not_as_unfiled(tmp_path, capsys):
    from types import SimpleNamespace

    bucket = {"new": True, "kind": "compile-error", "stage": "dynamo", "interpreters": ["3.15"], "case": None}
    summary = {"programs": 1, "runs": 2, "elapsed_s": 1.0, "programs_per_s": 1.0, "verdicts": {},
               "buckets": [{**bucket, "detail": "UncapturedHigherOrderOpError[Encountered aliasing]",
                            "standing": "limitation"},
                           {**bucket, "detail": "AssertionError@torch/x.py:f", "standing": "new"}]}
    cli._print_run(SimpleNamespace(summary=summary, new_buckets=0), "c", tmp_path)
    out = capsys.readouterr().out.splitlines()
    limitation = next(line for line in out if "Encountered aliasing" in line)
    assert limitation.split()[0] == "LIM" and limitation.endswith("(documented limitation)")
    bug = next(line for line in out if "torch/x.py" in line)
    assert bug.split()[0] == "NEW" and bug.endswith("(not filed)")
