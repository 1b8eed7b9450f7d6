"""What the corpus backlog gives back to a campaign: a bucket whose
minimisation ran out of time over the size limit waits reduced and is
minimised on from there (never filed at that size), and a campaign with a
case's time left files the waiting buckets it did not see."""

from __future__ import annotations

from pathlib import Path

from harness.program import Program
from harness.outcome import Outcome, Verdict
from fuzz.campaign import filing_queue as queue_mod, loop
from fuzz.corpus import backlog, filing
from fuzz.corpus.filing import FiledCase
from fuzz.reduce.pipeline import MinimizeResult
from fuzz.report.summary import backlog_summary
from fuzz.triage.signature import Finding, Signature
from tests.unit.test_filing_time import _Clock, _campaign, _finding, _program, _SlowPool

LONG = Program(_program("long").source.replace("    return x", "    y = x\n" * 30 + "    return x"), seed=7)
REDUCED = _program("reduced, 20 lines")


def _filing(clock: _Clock, calls: list, *, shelve: bool, took_s: float = 140.0):
    """file_finding that records (key, program source, max_lines) and, with
    ``shelve``, runs out of time over the limit (FiledCase.reduced) while a
    limit is set; else files."""
    def file_finding(pool, finding, program, **kw):
        calls.append((finding.signature.key, program.source, kw.get("max_lines")))
        clock.now_s += took_s
        stats = {"lines_before": 40, "lines_after": 20, "checks": 9, "elapsed_s": took_s - 30.0, "complete": False}
        if shelve and kw.get("max_lines") is not None:
            return FiledCase(finding.signature, stats=stats, reduced=program.with_source(REDUCED.source),
                             reason="its minimisation ran out of time at 20 program lines, over 15")
        path = kw["corpus_dir"] / finding.signature.kind.value / f"{finding.signature.id}.py"
        return FiledCase(finding.signature, path=path, standalone={"3.12": 1, "3.13": 1}, stats=stats)
    return file_finding


def test_a_case_whose_minimisation_runs_out_of_time_over_the_limit_waits_reduced_and_goes_on_from_there(
        tmp_path, monkeypatch):
    clock, calls = _Clock(), []
    crash = _finding("crash", "SIGSEGV@torch/x.py:f")
    monkeypatch.setattr(loop, "file_finding", _filing(clock, calls, shelve=True))
    first = _campaign(tmp_path, "first", clock)
    first.pool = _SlowPool(clock, 1.0)
    clock.now_s = 300.0
    first.new = {crash.signature.key: (crash, LONG)}
    first._file_new_buckets()
    assert calls == [(crash.signature.key, LONG.source, queue_mod.CASE_MAX_LINES)]
    waiting = backlog.load(tmp_path / "corpus")
    assert list(waiting) == [crash.signature.key]
    assert waiting[crash.signature.key].reduced and waiting[crash.signature.key].program.source == REDUCED.source
    summary = backlog_summary(str(tmp_path / "corpus"), first.minimised)
    assert summary["buckets"][0]["reduced"] is True
    assert first.minimised[0]["case"] is None and "over 15" in first.minimised[0]["reason"]

    # the next campaign meets the crash in a new (long) program: it goes on from the reduced one
    calls.clear()
    second = _campaign(tmp_path, "second", clock)
    second.pool = _SlowPool(clock, 1.0)
    clock.now_s = second.started + 300.0
    second.new = {crash.signature.key: (crash, LONG.with_source(LONG.source + "# again\n"))}
    second._file_new_buckets()
    assert calls == [(crash.signature.key, REDUCED.source, queue_mod.CASE_MAX_LINES)]
    assert backlog.load(tmp_path / "corpus")[crash.signature.key].campaigns == 2


def test_a_bucket_left_reduced_by_enough_campaigns_is_filed_at_any_size(tmp_path, monkeypatch):
    clock, calls = _Clock(), []
    crash = _finding("crash", "SIGSEGV@torch/x.py:f")
    for n in range(queue_mod.SHELVED_CAMPAIGNS_MAX):
        backlog.update(tmp_path / "corpus", unfiled=[], done=[], now=f"2026-12-0{n + 1}T00:00:00+00:00",
                       reduced=[(crash, REDUCED)])
    monkeypatch.setattr(loop, "file_finding", _filing(clock, calls, shelve=True))
    campaign = _campaign(tmp_path, "third", clock)
    campaign.pool = _SlowPool(clock, 1.0)
    clock.now_s = 300.0
    campaign.new = {crash.signature.key: (crash, LONG)}
    campaign._file_new_buckets()
    assert calls == [(crash.signature.key, REDUCED.source, None)]
    assert backlog.load(tmp_path / "corpus") == {}
    assert campaign.minimised[0]["case"] and campaign.minimised[0]["from_backlog"]


def test_file_finding_files_nothing_from_an_unfinished_minimisation_over_the_limit(tmp_path, monkeypatch):
    written = []

    class _Check:
        def __init__(self, *args, **kwargs):
            self.calls, self.shown = 7, []

    def minimised(complete: bool, lines: int):
        def minimize_source(source, check, **kw):
            return MinimizeResult(source=REDUCED.source, lines_before=40, lines_after=lines, checks=7,
                                  elapsed_s=60.0, complete=complete)
        return minimize_source

    def file_case(texts, sig, interpreters, **kw):
        written.append(sig.id)
        return FiledCase(sig, path=tmp_path / f"{sig.id}.py", standalone={"3.12": 1}, stats=kw["stats"])

    monkeypatch.setattr(filing, "SignatureCheck", _Check)
    monkeypatch.setattr(filing, "file_case", file_case)
    crash = Finding(Signature("crash", "dynamo", "SIGSEGV@torch/x.py:f", ("3.12",)), "eager")
    kw = dict(names=["3.12"], interpreters=[], corpus_dir=tmp_path, device="cpu", fullgraph=False, jobs=1,
              budget_s=60.0, torch_version="2.15.0", max_lines=15)
    for complete, lines, files in [(False, 16, False), (False, 15, True), (True, 16, True)]:
        monkeypatch.setattr(filing, "minimize_source", minimised(complete, lines))
        case = filing.file_finding(None, crash, LONG, **kw)
        assert case.filed is files, (complete, lines)
        assert (case.reduced is None) is files
        if not files:
            assert case.reduced.source == REDUCED.source and case.reduced.seed == LONG.seed
            assert "16 program lines, over 15" in case.reason
    assert len(written) == 2
    monkeypatch.setattr(filing, "minimize_source", minimised(False, 40))
    assert filing.file_finding(None, crash, LONG, **{**kw, "max_lines": None}).filed


def test_the_waiting_buckets_a_campaign_did_not_see_are_filed_after_its_own_where_its_cells_run_them(
        tmp_path, monkeypatch):
    clock, calls = _Clock(), []
    corpus = tmp_path / "corpus"
    seen_crash = _finding("crash", "SIGSEGV@torch/x.py:f")
    unseen_break = _finding("graph-break", "Unsupported context manager")
    elsewhere = _finding("crash", "SIGABRT@torch/y.py:g", ("3.12", "3.15"))  # 3.15: not in this campaign
    other_backend = Finding(Signature("crash", "dynamo", "SIGBUS@torch/z.py:h", ("3.12",)), "inductor")
    backlog.update(corpus, unfiled=[(f, _program(f.signature.detail)) for f in (unseen_break, elsewhere,
                                                                                 other_backend)],
                   done=[], now="2026-12-01T00:00:00+00:00")
    monkeypatch.setattr(loop, "file_finding", _filing(clock, calls, shelve=False))
    campaign = _campaign(tmp_path, "c", clock)
    campaign.pool = _SlowPool(clock, 1.0)
    clock.now_s = 200.0
    campaign.new = {seen_crash.signature.key: (seen_crash, _program("crash"))}
    campaign._file_new_buckets(waiting_too=True)
    assert [c[0] for c in calls] == [seen_crash.signature.key, unseen_break.signature.key]
    assert calls[1][1] == _program(unseen_break.signature.detail).source  # the backlog's program
    assert set(backlog.load(corpus)) == {elsewhere.signature.key, other_backend.signature.key}
    summary = backlog_summary(str(corpus), campaign.minimised)
    assert [f["id"] for f in summary["filed"]] == [unseen_break.signature.id]
    # filed from the backlog, not found by this campaign: no bucket of its own
    assert [b["signature"] for b in campaign.db.buckets()] == []


def test_a_campaign_with_a_case_s_time_left_after_its_rounds_files_the_backlog_then_fuzzes_the_rest(
        tmp_path, monkeypatch):
    """Filing ends with 220 s of 600 left: too little for another round
    (2 x MIN_CASE_BUDGET_S) but a case's time, which goes to a waiting
    bucket this campaign did not see; the last 80 s are fuzzed."""
    clock, calls = _Clock(), []
    waiting_break = _finding("graph-break", "Unsupported context manager")
    backlog.update(tmp_path / "corpus", unfiled=[(waiting_break, _program("waiting"))], done=[],
                   now="2026-12-01T00:00:00+00:00")
    monkeypatch.setattr(loop, "file_finding", _filing(clock, calls, shelve=False))
    campaign = _campaign(tmp_path, "c", clock)
    pool = campaign.pool = _SlowPool(clock, task_s=1.0)
    pool.start = lambda: {}
    rounds: list[float] = []
    real_fuzz = campaign._fuzz

    def fuzz(deadline_s, latest_s=None):
        rounds.append(clock.now_s)
        if len(rounds) > 1:
            return real_fuzz(deadline_s, latest_s)
        clock.now_s = 380.0  # the first round, its filing included
        campaign.progress.programs += 1

    campaign._fuzz = fuzz
    campaign._next_program = lambda seed: Program(f"import torch\n\ndef f(x):\n    return x + {seed}\n\n"
                                                  "def inputs():\n    return (torch.ones(1),)\n", seed=seed)
    campaign._run_rounds()
    assert [c[0] for c in calls] == [waiting_break.signature.key]
    assert len(rounds) == 2 and rounds[1] == 520.0, rounds
    assert 590.0 <= clock.now_s <= 600.0
    assert backlog.load(tmp_path / "corpus") == {}


def test_the_filing_order_is_bugs_then_further_divergences_then_regressions_then_breaks_backlog_first_then_unseen():
    """A further program of a divergence signature (a wrong result whose
    coarse signature is known, or a new one's second program) is filed after
    the new bugs and before the graph breaks: only its minimised root cause
    says whether it is a new bug."""
    crash, div = _finding("crash", "SIGSEGV@a"), _finding("divergence", "value")
    regression = _finding("graph-break-regression", "r [absent on 3.13]", ("3.12",))
    low = _finding("graph-break-regression", "raises [absent on 3.13]", ("3.12",))
    brk, old_brk = _finding("graph-break", "b"), _finding("graph-break", "b2")
    unseen = _finding("graph-break", "u")
    entry = backlog.BacklogEntry(old_brk, _program("old"), "t", "t")
    unseen_entry = backlog.BacklogEntry(unseen, _program("unseen"), "t", "t")
    new = [(f, _program(f.signature.detail)) for f in (low, brk, regression, old_brk, crash)]
    todo = queue_mod.filing_queue(new, waiting={old_brk.signature.key: entry}, unseen=[(unseen, unseen_entry)],
                                  further=[(div, _program("again"))], interpreter_count=2,
                                  low_priority=[low.signature.key])
    assert [q.finding for q in todo] == [crash, div, regression, old_brk, brk, low, unseen]
    assert [q.new_bucket for q in todo] == [True, False, True, True, True, True, False]
    assert [q.from_backlog for q in todo] == [False, False, False, True, False, False, True]
    assert todo[1].program == _program("again")
    assert todo[3].program == _program("b2")  # waiting as found: the new program serves as well


def test_a_new_bucket_whose_minimised_root_cause_is_a_corpus_case_is_not_new(tmp_path, monkeypatch):
    """A divergence new before minimisation whose root cause keys it to a
    case the corpus has (the default campaign of 2026-12-06 listed the known
    0f98a32ff03f as NEW): counted to that case, not a new bucket."""
    clock = _Clock()
    seen = Finding(Signature("divergence", "aot", "stdout", ("3.12", "3.13")), "aot_eager")
    refined = Signature("divergence", "aot", "stdout {wrong-result: def f(): ...}", ("3.12", "3.13"))
    other = Finding(Signature("divergence", "aot", "value", ("3.12", "3.13")), "aot_eager")
    other_refined = Signature("divergence", "aot", "value {wrong-result: def f(): other}", ("3.12", "3.13"))

    def file_finding(pool, finding, program, **kw):
        clock.now_s += 140.0
        sig = refined if finding == seen else other_refined
        path = kw["corpus_dir"] / "divergence" / f"{sig.id}.py"
        return FiledCase(sig, path=path, standalone={"3.12": 1, "3.13": 1},
                         stats={"lines_before": 20, "lines_after": 5, "checks": 9, "elapsed_s": 100.0})

    monkeypatch.setattr(loop, "file_finding", file_finding)
    campaign = _campaign(tmp_path, "c", clock)
    campaign.pool = _SlowPool(clock, 1.0)
    campaign.known_ids.add(refined.id)  # the corpus's case
    for f, n in ((seen, "a"), (other, "b")):
        program = _program(n)
        campaign.db.add_program(len(campaign.new), program)
        campaign.db.count_finding(f, program.program_id, new=True)
        campaign.new[f.signature.key] = (f, program)
    campaign.progress.new_buckets = 2
    campaign._file_new_buckets()
    new = {b["id"]: bool(b["new"]) for b in campaign.db.buckets()}
    assert new == {refined.id: False, other_refined.id: True}
    assert campaign.progress.new_buckets == 1


def test_a_minimised_program_whose_bucket_the_corpus_knows_is_not_written_again(tmp_path: Path, monkeypatch) -> None:
    """A program that minimises to a bucket the corpus holds, or one
    known-issues.toml merges into a case (the fresh-clone default campaign of
    2026-12-07 wrote 92a2366d02f3 again), is that case's bug: nothing is
    written, and FiledCase.known says why; an unknown one is filed."""
    sig = Signature("compile-error", "dynamo", "AssertionError@torch/_dynamo/x.py:f", ("3.12",))
    finding = Finding(sig, "eager")
    program = _program("known")

    class _Check:
        shown = ()
        calls = 3

        def __init__(self, *args, **kwargs):
            pass

    written: list[Signature] = []
    monkeypatch.setattr(filing, "SignatureCheck", _Check)
    monkeypatch.setattr(filing, "minimize_source", lambda source, check, **kw: MinimizeResult(source, 9, 5, checks=3))
    monkeypatch.setattr(filing, "file_case", lambda texts, signature, interpreters, **kw:
                        written.append(signature) or FiledCase(signature, path=tmp_path / "case.py"))

    def file(known_ids: set[str]) -> FiledCase:
        return filing.file_finding(None, finding, program, names=["3.12"], interpreters=[], corpus_dir=tmp_path,
                                   device="cpu", fullgraph=False, jobs=1, budget_s=60.0, torch_version="2.15.0",
                                   known_ids=known_ids)

    case = file({sig.id})
    assert case.known and not case.filed and written == [] and sig.id in case.reason
    case = file({"000000000000"})
    assert case.filed and not case.known and written == [sig]
