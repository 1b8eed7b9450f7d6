import pytest

from fuzz import cli
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
    monkeypatch.setattr(interpreters, "parse_list", lambda v: [interpreters.Interpreter("3.12", tmp_path / "python")])
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
