"""A corpus case's standing from its replay table (fuzz.corpus.status)."""

from pathlib import Path

from fuzz import cli
from fuzz.corpus.status import Standing, render_table, standing_of

R, N = "reproduces", "does not reproduce"


def standing(replay):
    return standing_of(Path("corpus/divergence/abc.py"), {"kind": "divergence", "replay": replay})


def test_live_on_the_newest_release():
    s = standing({"3.12/2.12.0": R, "3.12/2.15.0+cu132": R, "3.13t/2.12.0": R})
    assert s.standing is Standing.LIVE and s.newest == "2.15.0" and not s.fixed_since


def test_fixed_since_the_oldest_release_from_which_no_replay_reproduces():
    s = standing({"3.12/2.12.0": R, "3.12/2.14.0": N, "3.12/2.15.0": N, "3.11/2.13.0": R, "3.11/2.15.0": N})
    assert s.standing is Standing.FIXED and s.fixed_since == "2.14.0" and s.last_seen == "2.13.0"
    filed = standing_of(Path("c.py"), {"torch": "2.12.0", "replay": {"3.12/2.15.0": N}})
    assert (filed.standing, filed.fixed_since, filed.last_seen) == (Standing.FIXED, "2.15.0", "2.12.0")
    assert standing({"3.12/2.9.0": R, "3.12/2.10.0": N, "3.12/2.15.0": N}).fixed_since == "2.10.0"  # numeric order


def test_only_on_313t_with_its_last_torch():
    s = standing({"3.13t/2.12.0": R, "3.13/2.15.0": N, "3.12/2.15.0": N})
    assert s.standing is Standing.FREE_THREADED_OLD_TORCH


def test_unreplayed_without_a_replay():
    assert standing({}).standing is Standing.UNREPLAYED


def test_the_table_and_the_command(tmp_path, capsys):
    text = render_table([standing({"3.12/2.12.0": R, "3.12/2.15.0": N})])
    assert "fixed by 2.15.0 (reproduces on 2.12.0)" in text and "2.12.0 R, 2.15.0 -" in text
    assert "| kind | case | standing | 3.12 |" in render_table([standing({"3.12/2.15.0": R})], markdown=True)
    (tmp_path / "crash").mkdir()
    (tmp_path / "crash" / "0123456789ab.py").write_text(
        '# /// script\n# [tool.tcfuzz]\n# kind = "crash"\n# [tool.tcfuzz.replay]\n# "3.12/2.15.0" = "reproduces"\n'
        '# ///\nprint(1)\n')
    assert cli.main(["corpus-status", "--corpus", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "0123456789ab" in out and "live on 2.15.0" in out
    assert cli.main(["corpus-status", "--corpus", str(tmp_path / "none")]) == 2
