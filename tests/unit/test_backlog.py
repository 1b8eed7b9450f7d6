"""The corpus backlog (fuzz.corpus.backlog): shown to the user (summary.json,
summary.md, the end of ``tcfuzz run``), and safe under campaigns that update
it at the same time (a locked read-merge-write)."""

from __future__ import annotations

import datetime
import json
import multiprocessing
import threading
import time
from pathlib import Path
from types import SimpleNamespace

from harness import casefile
from harness.program import Program
from fuzz import cli
from fuzz.campaign import loop
from fuzz.campaign.config import CampaignConfig
from fuzz.campaign.interpreters import Interpreter
from fuzz.corpus import backlog
from fuzz.corpus.filing import FiledCase
from fuzz.report import pages
from fuzz.report.summary import build_summary
from fuzz.triage.signature import Finding, Signature

NOW = datetime.datetime(2026, 12, 1, tzinfo=datetime.timezone.utc)


class _Clock:
    def __init__(self) -> None:
        self.now_s = 0.0

    def __call__(self) -> float:
        return self.now_s


def _finding(kind: str, detail: str, interpreters=("3.12", "3.13")) -> Finding:
    return Finding(Signature(kind, "dynamo", detail, tuple(interpreters)), "eager")


def _program(tag: str) -> Program:
    return Program(f"import torch\n\ndef f(x):\n    return x  # {tag}\n\ndef inputs():\n    return (torch.ones(1),)\n")


def _campaign(tmp_path: Path, name: str, clock: _Clock) -> loop.Campaign:
    config = CampaignConfig(interpreters=[Interpreter("3.12", Path("/nonexistent/python3.12")),
                                          Interpreter("3.13", Path("/nonexistent/python3.13"))],
                            backends=["eager"], out_dir=tmp_path / name, corpus_dir=tmp_path / "corpus",
                            budget_s=600.0, feedback=False)
    config.corpus_dir.mkdir(exist_ok=True)
    campaign = loop.Campaign(config)
    campaign.db.set_meta("config", config.to_meta())  # as Campaign.run does
    campaign.clock = clock
    campaign.started = clock()
    campaign.pool = SimpleNamespace(info={})
    return campaign


def _fake_filing(clock: _Clock, took_s: float = 140.0):
    def file_finding(pool, finding, program, **kw):
        clock.now_s += took_s
        path = kw["corpus_dir"] / finding.signature.kind.value / f"{finding.signature.id}.py"
        return FiledCase(finding.signature, path=path, standalone={"3.12": 1, "3.13": 1},
                         stats={"lines_before": 20, "lines_after": 5, "checks": 9, "elapsed_s": took_s - 30.0})
    return file_finding


def _summary(campaign: loop.Campaign) -> dict:
    return build_summary(campaign.db, name="c", started=NOW, finished=NOW, elapsed_s=600.0,
                         minimised=campaign.minimised)


def test_the_backlog_is_in_summary_json_summary_md_and_the_run_cli_lines(tmp_path, monkeypatch, capsys):
    clock = _Clock()
    monkeypatch.setattr(loop, "file_finding", _fake_filing(clock))
    crash = _finding("crash", "SIGSEGV@torch/x.py:f")
    plain_break = _finding("graph-break", "Unsupported context manager")
    other_break = _finding("graph-break", "Unsupported builtin")

    # the first campaign has time for one case: two graph breaks wait
    first = _campaign(tmp_path, "first", clock)
    clock.now_s = 600.0 - 160.0
    first.new = {f.signature.key: (f, _program(f.signature.detail)) for f in (plain_break, crash, other_break)}
    first._file_new_buckets()
    summary = _summary(first)
    waiting = summary["backlog"]
    assert waiting["waiting"] == 2 and waiting["filed"] == []
    assert waiting["path"] == str(tmp_path / "corpus" / "backlog.json")
    assert {(b["id"], b["kind"]) for b in waiting["buckets"]} == {
        (plain_break.signature.id, "graph-break"), (other_break.signature.id, "graph-break")}
    assert all(b["campaigns"] == 1 and b["first_seen"] for b in waiting["buckets"])
    md = pages.render_markdown(summary)
    assert "### Backlog" in md and "0 buckets filed from the backlog in this campaign; 2 wait in" in md
    assert f"| {plain_break.signature.id} | graph-break | eager |" in md
    json.dumps(summary)  # summary.json

    # the next campaign sees one of them again and has time for it: filed from the backlog
    second = _campaign(tmp_path, "second", clock)
    clock.now_s = second.started + 600.0 - 160.0
    second.new = {plain_break.signature.key: (plain_break, _program("again"))}
    second._file_new_buckets()
    summary = _summary(second)
    assert summary["backlog"]["filed"] == [
        {"id": plain_break.signature.id, "kind": "graph-break",
         "case": str(tmp_path / "corpus" / "graph-break" / f"{plain_break.signature.id}.py")}]
    assert [b["id"] for b in summary["backlog"]["buckets"]] == [other_break.signature.id]
    md = pages.render_markdown(summary)
    assert "1 buckets filed from the backlog in this campaign; 1 wait in" in md
    assert f"| {plain_break.signature.id} | graph-break | {tmp_path}/corpus/graph-break/" in md

    # tcfuzz run's last lines
    summary.update(programs=1, runs=2, elapsed_s=600.0, programs_per_s=0.0, verdicts={}, buckets=[])
    cli._print_run(SimpleNamespace(summary=summary, new_buckets=0), "second", tmp_path / "second")
    out = capsys.readouterr().out
    assert "backlog: 1 buckets filed from it in this run" in out
    assert f"FILED graph-break" in out and plain_break.signature.id in out
    assert f"backlog: 1 buckets wait in {tmp_path / 'corpus' / 'backlog.json'}" in out
    assert f"WAITS graph-break" in out and other_break.signature.id in out
    assert out.index("backlog:") < out.index("report:")


def test_an_empty_backlog_adds_no_section_and_no_line(tmp_path, capsys):
    summary = {"backlog": {"path": str(tmp_path / "backlog.json"), "waiting": 0, "buckets": [], "filed": []}}
    assert "Backlog" not in pages.render_markdown(summary)
    assert cli._backlog_lines(summary["backlog"]) == []
    tried = {**summary["backlog"], "filed": [{"id": "0123456789ab", "kind": "crash", "case": None}]}
    assert cli._backlog_lines(tried)[1].split() == ["TRIED", "crash", "0123456789ab", "(tried,", "not", "filed:",
                                                    "see", "the", "log)"]
    assert "| 0123456789ab | crash | (not filed) |" in pages.render_markdown({"backlog": tried})


def _update_many(corpus: str, tag: str, n: int) -> None:
    """One campaign's updates: n buckets of its own added one by one, each
    after a bucket of its own filed (removed) but for the last two."""
    for i in range(n):
        mine = _finding("crash", f"SIG{tag}{i}@torch/x.py:f")
        done = [_finding("crash", f"SIG{tag}{i - 2}@torch/x.py:f").signature.key] if i >= 2 else []
        backlog.update(Path(corpus), unfiled=[(mine, _program(f"{tag}{i}"))], done=done,
                       now=f"2026-12-01T10:00:{i:02d}+00:00")


def test_two_processes_updating_the_backlog_lose_no_entry(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    n = 150
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_update_many, args=(str(corpus), tag, n)) for tag in ("A", "B")]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
        assert w.exitcode == 0
    details = {e.finding.signature.detail for e in backlog.load(corpus).values()}
    # each process removed only what it filed: its own last two stay, and all of the other's
    assert details == {f"SIG{tag}{i}@torch/x.py:f" for tag in ("A", "B") for i in (n - 2, n - 1)}
    assert not list(corpus.glob(".backlog.*.tmp"))


def test_an_update_waits_for_one_in_progress_and_merges_with_what_it_wrote(tmp_path):
    """Interleaved: a campaign's update starts while another holds the lock
    between its read and its write; the first merges with the second's result."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    old, theirs, mine = (_finding("crash", f"SIG{t}@torch/x.py:f") for t in ("old", "theirs", "mine"))
    backlog.update(corpus, unfiled=[(old, _program("old"))], done=[], now="2026-12-01T09:00:00+00:00")
    entered = threading.Event()
    with casefile.locked(backlog.backlog_path(corpus)):  # the other campaign, mid-update
        stale = backlog.load(corpus)
        thread = threading.Thread(target=lambda: (entered.set(), backlog.update(
            corpus, unfiled=[(mine, _program("mine"))], done=[old.signature.key], now="2026-12-01T10:00:00+00:00")))
        thread.start()
        entered.wait()
        time.sleep(0.3)
        assert thread.is_alive()  # blocked on the lock
        stale[theirs.signature.key] = backlog.BacklogEntry(theirs, _program("theirs"), "t", "t")
        backlog.save(corpus, stale)
    thread.join(10)
    assert set(backlog.load(corpus)) == {theirs.signature.key, mine.signature.key}


def test_a_bucket_is_merged_by_its_id_and_counts_campaigns(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    found = _finding("graph-break", "Unsupported builtin")
    backlog.update(corpus, unfiled=[(found, _program("a"))], done=[], now="2026-12-01T10:00:00+00:00")
    backlog.update(corpus, unfiled=[(found, _program("b"))], done=["crash|dynamo|SIGX|3.12"], now="2026-12-02")
    entries = backlog.load(corpus)
    assert list(entries) == [found.signature.key]
    assert entries[found.signature.key].campaigns == 2 and entries[found.signature.key].program == _program("a")


def _shard_with_backlog(path: Path, entries: list[tuple[Finding, str, str]], *, known_text: str = "") -> Path:
    """A shard folder (campaign.sqlite with no programs) whose own corpus
    backlog holds ``entries`` (finding, program tag, time)."""
    from fuzz.campaign.database import CampaignDB

    corpus = path / "corpus"
    corpus.mkdir(parents=True)
    for finding, tag, now in entries:
        backlog.update(corpus, unfiled=[(finding, _program(tag))], done=[], now=now)
    if known_text:
        (corpus / "known-issues.toml").write_text(known_text)
    db = CampaignDB(path / "campaign.sqlite")
    db.set_meta("config", {"backends": ["eager"], "interpreters": ["3.12", "3.13"], "seed": 1, "shard": [0, 2],
                           "device": "cpu", "feedback": False, "corpus_dir": str(corpus)})
    db.close()
    return path


def test_merged_shards_carry_every_shard_s_backlog(tmp_path):
    from fuzz.campaign.merge import merge

    both = _finding("graph-break", "Unsupported builtin")
    only_second = _finding("crash", "SIGSEGV@torch/x.py:f")
    first = _shard_with_backlog(tmp_path / "s1", [(both, "late", "2026-12-01T12:00:00+00:00")],
                                known_text="[merged]\n")
    second = _shard_with_backlog(tmp_path / "s2", [(both, "early", "2026-12-01T09:00:00+00:00"),
                                                    (only_second, "c", "2026-12-01T10:00:00+00:00")])
    summary = merge([first, second], tmp_path / "merged")

    waiting = backlog.load(tmp_path / "merged" / "corpus")
    assert {e.finding.signature.id for e in waiting.values()} == {both.signature.id, only_second.signature.id}
    kept = next(e for e in waiting.values() if e.finding.signature.id == both.signature.id)
    assert kept.program == _program("early") and kept.last_seen == "2026-12-01T12:00:00+00:00"
    assert summary["backlog"]["waiting"] == 2
    assert summary["backlog"]["path"] == str(tmp_path / "merged" / "corpus" / "backlog.json")
    assert (tmp_path / "merged" / "corpus" / "known-issues.toml").read_text() == "[merged]\n"
    # the shards' backlogs are read, not changed
    assert len(backlog.load(first / "corpus")) == 1 and len(backlog.load(second / "corpus")) == 2


def test_shards_that_shared_one_corpus_keep_its_backlog(tmp_path):
    from fuzz.campaign.merge import merge

    shared = _shard_with_backlog(tmp_path / "s1", [(_finding("crash", "SIGABRT@x"), "a", "2026-12-01")])
    other = tmp_path / "s2"
    other.mkdir()
    from fuzz.campaign.database import CampaignDB
    db = CampaignDB(other / "campaign.sqlite")
    db.set_meta("config", {"backends": ["eager"], "interpreters": ["3.12"], "seed": 1, "shard": [1, 2],
                           "device": "cpu", "feedback": False, "corpus_dir": str(shared / "corpus")})
    db.close()
    summary = merge([shared, other], tmp_path / "merged")
    assert summary["backlog"]["path"] == str((shared / "corpus" / "backlog.json").resolve())
    assert summary["backlog"]["waiting"] == 1 and not (tmp_path / "merged" / "corpus" / "backlog.json").exists()
