"""A campaign: generate programs, run each on every interpreter x backend,
bucket the findings, minimise each new bucket into the corpus, write reports.

Time is split in two: programs are generated and run for ``FUZZ_SHARE`` of the
budget (no program is started that the running mean of recent programs' wall
times says would end after that share: ``ProgramPace``), then new buckets are
minimised (each at most ``minimise_budget_s``) and confirmed standalone
(``python CASE`` in a fresh process per interpreter) before they are filed. A
case that ``python CASE`` does not reproduce is never written. A case is filed
only with at least ``MIN_CASE_BUDGET_S`` for it: the buckets beyond what the
time left allows, in filing order, go to the corpus backlog
(fuzz.corpus.backlog), and a later campaign that sees one of them files it
first; a campaign with a case's time left after its last round files the
waiting buckets it did not see. A minimisation that runs out of time above
CASE_MAX_LINES program lines is not filed: its reduced program waits in the
backlog and the next campaign minimises on from it (fuzz.campaign.filing_queue).
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import logging
import os
import queue
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.backends import ladder_rank, stage_of
from harness.outcome import Outcome, Verdict
from harness.program import Program
from fuzz.campaign import interpreters as interpreter_specs
from fuzz.campaign.config import CampaignConfig
from fuzz.campaign.database import CampaignDB
from fuzz.campaign.guidance import META_KEY as GUIDANCE_META_KEY, Guidance
from fuzz.campaign.pace import ProgramPace
from fuzz.campaign.schedule import Cell, CellScheduler, Role
from fuzz.campaign.sigterm import stop_on_sigterm
from fuzz.campaign.workers import RUN_TIMEOUT_S, Task, WorkerPool
from fuzz.campaign.filing_queue import QueuedCase, eager_raises_everywhere, filing_queue
from fuzz.corpus import backlog
from fuzz.corpus.filing import file_finding, known_signature_ids, narrowed_signature_ids, torch_version_of
from fuzz.errors import UsageError
from fuzz.generate.feedback import FeatureScheduler
from fuzz.generate.mutate import load_donors
from fuzz.campaign.attribution import Attributor, attribute_all
from fuzz.generate import versions
from fuzz.generate.sources import draw_program
from fuzz.report.summary import build_summary, write_reports
from fuzz.triage import known
from fuzz.triage.signature import Finding, Kind, Signature, findings

log = logging.getLogger(__name__)

# Share of the time budget spent generating and running programs; the rest
# goes to minimising and confirming the new buckets.
FUZZ_SHARE = 0.5
# Least time worth giving one case, in seconds, minimisation and the standalone
# `python CASE` confirmation together: with 44 s a 96-line case got 3 checks
# and lost one line (a 6-interpreter campaign), and `python CASE` on every
# interpreter alone takes 10-70 s. Buckets beyond this go to the backlog.
MIN_CASE_BUDGET_S = 150.0
# Seconds `python CASE` on every interpreter is assumed to take until one
# filing of this campaign has measured it.
CONFIRM_ESTIMATE_S = 40.0
# Programs minimised per divergence signature in a campaign: one wrong-result
# signature before minimisation can hold several bugs that their minimised
# programs' language features tell apart (fuzz.triage.language).
MAX_DIVERGENCE_CANDIDATES = 3
# A run that timed out runs once more with this many times the time limit
# (fuzz.campaign.workers.RUN_TIMEOUT_S) before its timeout counts.
TIMEOUT_RETRY_FACTOR = 3.0
# Programs between saves of the feedback state to the database.
FEEDBACK_SAVE_EVERY = 20
# Programs kept in flight per worker, so no worker idles while the host
# classifies results.
INFLIGHT_PER_WORKER = 2
# Filing time of a campaign without a time budget (`--programs N` alone):
# at most this multiple of the time its programs took to run, and at least
# FILING_FLOOR_S seconds (two cases' worth), so `--programs 12` cannot spend
# an hour minimising graph breaks.
FILING_SHARE_UNBUDGETED = 1.0
FILING_FLOOR_S = 2 * MIN_CASE_BUDGET_S
# Least time left after a round's filing, in seconds, that a last round
# fuzzes (its new buckets wait in the backlog): the default campaign of
# 2026-12-06 ended 75 s before its 12 minutes with the workers idle.
LAST_ROUND_MIN_S = 60.0


@dataclasses.dataclass
class Progress:
    """What a progress display shows; times in seconds."""

    programs: int = 0
    runs: int = 0
    buckets: int = 0
    new_buckets: int = 0
    elapsed_s: float = 0.0
    phase: str = "starting workers"


@dataclasses.dataclass
class CampaignResult:
    """A finished campaign: its summary (``summary.json``), where its reports
    are, and how many new signatures it found."""

    summary: dict[str, Any]
    out_dir: Path
    new_buckets: int


class Campaign:
    """One campaign over a worker pool; see the module docstring."""

    # seconds, monotonic; tests give an instance a fake clock
    clock: Callable[[], float] = staticmethod(time.monotonic)

    def __init__(self, config: CampaignConfig, on_progress: Callable[[Progress], None] | None = None):
        if not config.interpreters or not config.backends:
            raise UsageError("Expected at least one interpreter and one backend")
        self.config = config
        self.on_progress = on_progress or (lambda p: None)
        self.progress = Progress()
        self.db = CampaignDB(config.out_dir / "campaign.sqlite")
        self.pool = WorkerPool(interpreter_specs.for_device(config.interpreters, config.device), jobs=config.jobs,
                               log_dir=config.out_dir / "logs",
                               rss_limit_mib=config.worker_rss_mib,
                               rss_growth_limit_mib=config.worker_rss_growth_mib,
                               max_running=config.running or None)
        self.known_ids = known_signature_ids(config.corpus_dir)
        # known ids as programs runnable on fewer interpreters see them, by those interpreters
        self.known_narrowed: dict[tuple[str, ...], set[str]] = {}
        self.new: dict[str, tuple[Finding, Program]] = {}
        # More programs per divergence signature, minimised after the new buckets
        # (see _classify); filed only where their features make a new bucket.
        self.candidates: dict[str, list[tuple[Finding, Program]]] = {}
        self.started = self.clock()
        self.pace = ProgramPace()
        self.confirm_s = CONFIRM_ESTIMATE_S  # the longest `python CASE` confirmation seen (seconds)
        self.confirm_measured = False
        self.elapsed_by_backend: dict[str, float] = {b: 0.0 for b in config.backends}
        self.runs_by_backend: dict[str, int] = {}
        self.minimised: list[dict[str, Any]] = []
        self.seeds = config.seeds()
        self.next_seq = 0
        # programs started but unfinished when a resumed campaign was killed
        self.resume_queue: list[tuple[int, Program]] = []
        # which cells each program runs on (fuzz.campaign.schedule), by seq
        self.cells = CellScheduler(config.policy(), config.backends, [i.name for i in config.interpreters],
                                   seed=config.seed, adaptive=config.feedback, share=config.share,
                                   picks=config.picks)
        self.planned: dict[int, list[Cell]] = {}
        try:
            self.known_issues = known.load(config.corpus_dir)
        except ValueError as e:  # a malformed known-issues.toml: no limitations known, said once
            log.warning("%s", e)
            self.known_issues = known.KnownIssues()
        # new regressions whose program raised in eager on every interpreter: filed last
        self.eager_raises: set[str] = set()
        # new buckets of documented limitations (known-issues.toml): counted, never minimised
        self.limitations: set[str] = set()
        self.started_at = datetime.datetime.now(datetime.timezone.utc)
        if self.db.meta().get("config"):
            if not config.resume:
                self.db.close()
                raise UsageError(f"{config.out_dir} already holds a campaign: continue it with "
                                 f"tcfuzz run --resume {config.out_dir}, or pass a new --out")
            self._load_progress()
        self.scheduler = FeatureScheduler()
        self.cells.restore(self.db.meta().get("schedule"))
        # coverage: the map, its curve and the pool of programs that reached new compiler lines
        self.guidance = Guidance(feedback=config.feedback and config.guided, coverage=config.coverage)
        self.guidance.restore(self.db.meta().get(GUIDANCE_META_KEY))
        self.attributor = Attributor(config.out_dir / "logs", device=config.device, fullgraph=config.fullgraph,
                                     settings_of=config.compile_settings)
        self.donors = load_donors(config.corpus_dir)

    def _tick(self, phase: str | None = None) -> None:
        if phase:
            self.progress.phase = phase
        self.progress.elapsed_s = self.clock() - self.started
        self.on_progress(self.progress)

    def _load_progress(self) -> None:
        """Continue the campaign already in ``out_dir`` (``tcfuzz run --resume``):
        finished programs keep their results; programs that were in flight run
        again first; then the next seeds; time already spent counts against
        the budget; new buckets not yet filed are filed."""
        meta = self.db.meta()
        self.next_seq = self.db.next_seq()
        self.resume_queue = self.db.unfinished_programs()
        stored = self.db.scheduled_cells()
        for seq, _ in self.resume_queue:
            if seq in stored:
                self.planned[seq] = [Cell.parse(k) for k in stored[seq]]
        self.progress.programs = self.db.programs_done()
        self.started -= float(meta.get("elapsed_s", 0.0))
        if meta.get("started"):
            self.started_at = datetime.datetime.fromisoformat(meta["started"])
        if self.config.minimise:
            for finding, program in self.db.unfiled_new_buckets():
                self.new[finding.signature.key] = (finding, program)
        log.info("resuming %s: %d programs done, %d to rerun, next seq %d", self.config.out_dir,
                 self.progress.programs, len(self.resume_queue), self.next_seq)

    def run(self) -> CampaignResult:
        config = self.config
        started_at = self.started_at
        self.db.set_meta("config", config.to_meta())
        self.db.set_meta("started", started_at.isoformat())
        self._tick("starting workers (import torch)")
        interrupted = False
        try:
            with stop_on_sigterm():
                self._run_rounds()
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the report of what ran, then out
            interrupted = True
            raise
        finally:
            # a harness failure still leaves the report of what ran before it
            if interrupted:
                self.pool.terminate()
            self.pool.close()
            self.attributor.close()
            self._save_state()
            self.db.set_meta("elapsed_s", round(self.clock() - self.started, 3))  # filing's time too, for --resume
            finished_at = datetime.datetime.now(datetime.timezone.utc)
            summary = build_summary(self.db, name=config.name, started=started_at, finished=finished_at,
                                    elapsed_s=self.clock() - self.started,
                                    elapsed_by_backend=self.elapsed_by_backend, minimised=self.minimised)
            if interrupted:
                summary["interrupted"] = True
            write_reports(self.db, config.out_dir, summary)
            self.db.close()
        return CampaignResult(summary, config.out_dir, summary["new_signatures"])

    def _run_rounds(self) -> None:
        """Start the workers, then fuzz and file in rounds until the budget or the programs run out."""
        config = self.config
        infos = self.pool.start()
        self._drop_unsupported(infos)
        self.db.set_meta("interpreters", {k: dataclasses.asdict(v) for k, v in infos.items()
                                          if k not in config.unavailable})
        # cases filed on another matrix are known by what they show on this one
        torch_of = {i.name: getattr(infos.get(i.name), "torch", "") for i in config.interpreters}
        # graph breaks torch's registry calls fundamental are limitations (fuzz.triage.gb_registry)
        self.known_issues = self.known_issues.with_registry(getattr(info, "executable", "") for info in infos.values())
        if all(torch_of.values()):
            self.known_ids |= known_signature_ids(config.corpus_dir, torch_of)
        # Rounds: fuzz for a share of the time left, file what it found,
        # and fuzz again with whatever time filing did not need.
        while True:
            deadline_s = None
            if config.budget_s is not None:
                left_s = config.budget_s - (self.clock() - self.started)
                deadline_s = config.budget_s - left_s * (1 - FUZZ_SHARE if config.minimise else 0.0)
            programs_before = self.progress.programs
            self._fuzz(deadline_s, latest_s=config.budget_s if config.minimise else None)
            self._attribute_new()
            if config.minimise:
                self._file_new_buckets()
                self.new.clear()
            if config.budget_s is None or self._out_of_programs() or self.progress.programs == programs_before:
                break
            # another round only where its filing share still holds a case
            left_s = config.budget_s - (self.clock() - self.started)
            if left_s < 2 * MIN_CASE_BUDGET_S:
                if config.minimise and left_s >= MIN_CASE_BUDGET_S:  # a bucket found earlier is a sure case
                    self._file_new_buckets(waiting_too=True)
                    left_s = config.budget_s - (self.clock() - self.started)
                if config.minimise and left_s >= LAST_ROUND_MIN_S:
                    self._last_round()
                break

    def _last_round(self) -> None:
        """Fuzz the time left after filing, too short for a round with a
        case's filing in it, until the budget's end less the slowest
        backend's mean run (a run started before the end may finish after
        it); what it finds waits in the corpus backlog, filed first by the
        next campaign."""
        config = self.config
        assert config.budget_s is not None
        margin_s = max((self._mean_run_s(b) for b in config.backends), default=0.0)
        self._fuzz(config.budget_s - margin_s)
        self._attribute_new()
        self._file_new_buckets()  # no case's time is left: into the backlog
        self.new.clear()

    def _drop_unsupported(self, infos: dict[str, Any]) -> None:
        """Take out of the campaign each interpreter whose torch refuses
        ``torch.compile`` (harness.support): an unsupported cell, recorded
        with torch's reason in ``config.unavailable``, never a bucket. Raises
        UsageError when that leaves none."""
        config = self.config
        for name, info in infos.items():
            if info.compile_refused:
                config.unavailable[name] = f"unsupported: torch {info.torch} refuses torch.compile: {info.compile_refused}"
                log.warning("Python %s: %s", name, config.unavailable[name])
        config.interpreters = [i for i in config.interpreters if i.name not in config.unavailable]
        self.cells.interpreters = [i.name for i in config.interpreters]
        self.db.set_meta("config", config.to_meta())
        if not config.interpreters:
            raise UsageError("no interpreter can compile: " + "; ".join(config.unavailable.values()))

    def _out_of_programs(self) -> bool:
        limit = self.config.shard_programs()
        return not self.resume_queue and limit is not None and self.next_seq >= limit

    def _tasks(self, seq: int, program: Program) -> list[Task]:
        """The runs of one program: the cells the scheduler gives it
        (fuzz.campaign.schedule: the lowest backend on every interpreter it
        parses on, the slower ones where the policy picks them), recorded in
        ``planned`` (a resumed program keeps the cells it was given); then,
        on free-threaded interpreters with ``threads``, the concurrency runs
        of its cells there."""
        config = self.config
        # a program using 3.14+ (3.15+) grammar runs only where it parses
        interps = [i.name for i in config.interpreters if versions.runs_on(program.features, i.name)]
        cells = self.planned.get(seq)
        if cells is None:
            cells = self.planned[seq] = self.cells.plan(config.seed_of(seq), interps)
        return self._cell_tasks(program, cells, with_threads=True)

    def _cell_tasks(self, program: Program, cells: list[Cell], *, with_threads: bool = False) -> list[Task]:
        """One task per cell, compiled as the program's settings for that
        backend say (the same on every interpreter)."""
        config = self.config
        settings = {b: config.compile_settings(program, b) for b in {c.backend for c in cells}}
        tasks = [self.guidance.task(Task(program, c.interpreter, c.backend, config.device, config.fullgraph,
                                         settings=settings[c.backend]))
                 for c in cells]
        if with_threads and config.threads >= 2:
            free_threaded = {i.name for i in config.interpreters if i.free_threaded}
            tasks += [Task(program, c.interpreter, c.backend, config.device, config.fullgraph, threads=config.threads)
                      for c in cells if c.interpreter in free_threaded]
        return tasks

    def _confirmations(self, seq: int, program: Program, outcomes: list[Outcome]) -> list[Task]:
        """The runs that confirm a bug or graph break a sampled cell showed
        (CellScheduler.confirmations: the backends that can hold its finding,
        on every interpreter), so its signature's interpreters and stage are
        those of full replication."""
        interps = [i.name for i in self.config.interpreters if versions.runs_on(program.features, i.name)]
        cells = self.cells.confirmations(self.planned.get(seq, []), outcomes, interps)
        if cells:
            log.info("program %s: a bug on a sampled cell, confirmed on %d more cells", program.program_id, len(cells))
        return self._cell_tasks(program, cells)

    def _role(self, seq: int, task: Task) -> Role:
        """Why ``task`` of program ``seq`` ran (schedule.Role)."""
        if task.backend not in self.config.backends:
            return Role.STAGE_CHECK
        if Cell(task.interpreter, task.backend) in self.planned.get(seq, ()):
            return Role.SCHEDULED
        return Role.CONFIRM

    def _stage_checks(self, program: Program, outcomes: list[Outcome]) -> list[Task]:
        """Eager runs that place a bug on the ladder when the campaign's lowest
        backend is above the eager rung (``--backend aot_eager,inductor``): a
        bug verdict on that lowest backend may be Dynamo's, which only the
        eager backend tells (without it, Dynamo bugs were keyed at stage
        "aot" and known Dynamo bugs filed again under new ids). One eager run
        per interpreter that showed it, compiled with the program's settings
        for eager; none where the campaign runs eager or the lowest backend
        is off the ladder (a planted or third-party compiler, its own stage)."""
        config = self.config
        lowest = min(config.backends, key=ladder_rank)
        if stage_of(lowest) not in ("aot", "inductor") or "eager" in config.backends:
            return []
        shown = sorted({o.interpreter for o in outcomes
                        if o.backend == lowest and o.verdict.is_bug and not o.threads})
        if not shown:
            return []
        settings = config.compile_settings(program, "eager")
        return [Task(program, name, "eager", config.device, config.fullgraph, settings=settings) for name in shown]

    def _fuzz(self, deadline_s: float | None, latest_s: float | None = None) -> None:
        """Generate and run programs until ``deadline_s`` seconds after the
        campaign's start (None: until ``programs`` ran), then drain. With
        ``latest_s`` (the budget's end) the phase goes on past ``deadline_s``
        while what it has found needs less filing time than the rest
        (``_filing_reserve_s``): time kept for filing and not needed is fuzzed."""
        config = self.config
        limit = INFLIGHT_PER_WORKER * len(self.pool.workers) * len(config.backends)
        inflight: dict[int, tuple[Program, dict[tuple[str, str, int], Outcome], int]] = {}
        seq_of_task: dict[int, int] = {}
        backend_of_task: dict[int, str] = {}  # the runs in flight, for the drain estimate
        self._tick("fuzzing")

        submitted_s: dict[int, float] = {}
        stage_checked: set[int] = set()  # programs whose stage checks were decided (_stage_checks)
        confirmed: set[int] = set()  # programs whose confirmations were decided (_confirmations)
        retried: set[int] = set()  # programs whose timed-out runs were run again (_timeout_retries)

        withdrawn: set[int] = set()  # programs taken back unfinished (withdraw_unstarted)

        def phase_end_s() -> float | None:
            """Seconds after the start by which the phase is to have ended."""
            if deadline_s is not None and latest_s is not None:
                return max(deadline_s, latest_s - self._filing_reserve_s())
            return deadline_s

        def out_of_budget() -> bool:
            if self._out_of_programs():
                return True
            # stop when the next program is expected to end past the deadline
            until_s = phase_end_s()
            if until_s is None:
                return False
            # the next program's runs queue behind those in flight
            queued = self.pool.pending + len(config.interpreters)
            work_s = sum(self._mean_run_s(b) for b in backend_of_task.values())
            parallel = min(len(self.pool.workers), os.cpu_count() or 1)
            return not self.pace.fits(self.clock() - self.started, until_s, queued, work_s, parallel)

        def submit(task: Task, seq: int) -> None:
            task_id = self.pool.submit(task)
            seq_of_task[task_id] = seq
            backend_of_task[task_id] = task.backend

        def withdraw_unstarted() -> None:
            """At the phase's end, take back the programs with a planned run
            no worker has started (a worker's queue can hold several Inductor
            runs: the drain of 2026-12-05's side-by-side campaign ran 94 s
            past its end and left 86 s, too little to file any of its 14 new
            buckets). Such a program runs again first in the next round or
            ``--resume``; one whose finished runs show a bug, or that waits
            on its confirmations, stage checks or retries, is kept."""
            def keep(task_id: int) -> bool:
                seq = seq_of_task[task_id]
                if seq in confirmed or seq in stage_checked or seq in retried:
                    return True
                return any(o.verdict.is_bug for o in inflight[seq][1].values())
            taken = self.pool.withdraw(keep)
            for task_id, _ in taken:
                withdrawn.add(seq_of_task.pop(task_id))
                backend_of_task.pop(task_id, None)
            seqs = sorted(seq for seq in withdrawn if seq in inflight)
            for seq in seqs:
                submitted_s.pop(seq, None)
                self.resume_queue.append((seq, inflight.pop(seq)[0]))
            self.resume_queue.sort(key=lambda sp: sp[0])
            if seqs:
                log.info("the fuzz phase ended with %d planned runs not started: %d programs taken back, "
                         "to run first in the next round or --resume", len(taken), len(seqs))

        while True:
            while not out_of_budget() and self.pool.pending < limit:
                if self.resume_queue:  # in flight when the campaign was killed
                    seq, program = self.resume_queue.pop(0)
                else:
                    seq = self.next_seq
                    seed = config.seed_of(seq)
                    # a mutant of a program that reached new compiler code, or the seed's own draw
                    program = self.guidance.next_program(seed, seq) or self._next_program(seed)
                    self.next_seq += 1
                tasks = self._tasks(seq, program)
                self.db.add_program(seq, program, [c.key for c in self.planned[seq]])
                inflight[seq] = (program, {}, len(tasks))
                submitted_s[seq] = self.clock()
                for task in tasks:
                    submit(task, seq)
            if not self.pool.pending:
                break
            # wake at the phase's end to take back what no worker has started
            end_s = phase_end_s()
            wait_s = None if end_s is None else end_s - (self.clock() - self.started)
            if wait_s is not None and wait_s <= 0:
                withdraw_unstarted()
                wait_s = None
                if not self.pool.pending:
                    break
            try:
                task_id, task, outcome = self.pool.next_result(wait_s)
            except queue.Empty:
                continue
            self.pace.record_result(self.clock() - self.started)
            backend_of_task.pop(task_id, None)
            self.runs_by_backend[task.backend] = self.runs_by_backend.get(task.backend, 0) + 1
            seq = seq_of_task.pop(task_id)
            self.elapsed_by_backend[task.backend] = self.elapsed_by_backend.get(task.backend, 0.0) + outcome.elapsed_s
            if not task.threads:
                self.cells.record_run(Cell(task.interpreter, task.backend), outcome.cpu_s or outcome.elapsed_s,
                                      self._role(seq, task))
            self.progress.runs += 1
            if seq in withdrawn:  # its program runs again whole
                continue
            program, outcomes, expected = inflight[seq]
            outcomes[(task.interpreter, task.backend, task.threads)] = outcome
            if len(outcomes) == expected and seq not in retried:
                retried.add(seq)
                for task_again in self._timeout_retries(program, outcomes):  # their outcomes replace the timeouts'
                    del outcomes[(task_again.interpreter, task_again.backend, task_again.threads)]
                    submit(task_again, seq)
                if len(outcomes) < expected:
                    continue
            if len(outcomes) == expected and seq not in confirmed:
                confirmed.add(seq)
                more = self._confirmations(seq, program, list(outcomes.values()))
                if more:  # the program is classified once they are back
                    inflight[seq] = (program, outcomes, expected + len(more))
                    for task_more in more:
                        submit(task_more, seq)
                    continue
            if len(outcomes) == expected and seq not in stage_checked:
                stage_checked.add(seq)
                checks = self._stage_checks(program, list(outcomes.values()))
                if checks:  # the program is classified once they are back
                    inflight[seq] = (program, outcomes, expected + len(checks))
                    for check in checks:
                        submit(check, seq)
                    continue
            if len(outcomes) == expected:
                stage_checked.discard(seq)
                confirmed.discard(seq)
                retried.discard(seq)
                del inflight[seq]
                self.pace.record(self.clock() - submitted_s.pop(seq))
                self._classify(seq, program, list(outcomes.values()))
                self.db.set_meta("elapsed_s", round(self.clock() - self.started, 3))
            self._tick()

    def _timeout_retries(self, program: Program, outcomes: dict[tuple[str, str, int], Outcome]) -> list[Task]:
        """A program's runs that timed out, to run once more with
        ``TIMEOUT_RETRY_FACTOR`` times the time limit: on a loaded machine an
        Inductor compile can pass the limit with nothing wrong (3 of the 9
        bug buckets of a 30-CPU-minute campaign on 2 busy cores were such),
        and a hang is a hang at any limit. The retry's outcome is the run's."""
        config = self.config
        tasks = []
        for (interpreter, backend, threads), outcome in outcomes.items():
            if outcome.verdict is not Verdict.TIMEOUT or outcome.error_type != "timeout":
                continue  # a CPU-time limit is the program's own work, not the machine's load
            settings = {} if threads else {"settings": config.compile_settings(program, backend)}
            tasks.append(self.guidance.task(Task(program, interpreter, backend, config.device, config.fullgraph,
                                                 threads=threads, timeout_s=TIMEOUT_RETRY_FACTOR * RUN_TIMEOUT_S,
                                                 **settings)))
        if tasks:
            log.info("program %s: %d runs timed out, run again with %.0f s", tasks[0].program.program_id, len(tasks),
                     TIMEOUT_RETRY_FACTOR * RUN_TIMEOUT_S)
        return tasks

    def _mean_run_s(self, backend: str) -> float:
        """Mean wall seconds of a run on ``backend`` so far; for a backend with
        no result yet, the slowest backend's mean (0.0 before any result)."""
        if self.runs_by_backend.get(backend):
            return self.elapsed_by_backend.get(backend, 0.0) / self.runs_by_backend[backend]
        means = [self.elapsed_by_backend.get(b, 0.0) / n for b, n in self.runs_by_backend.items() if n]
        return max(means, default=0.0)

    def _filing_reserve_s(self) -> float:
        """Seconds the new buckets found so far need for filing: a bug gets
        the minimise budget and its confirmation; the graph-break regressions
        and graph breaks together get the least a case is given, once (the
        first of them in filing order is filed, the rest with whatever time
        is left, else they wait in the backlog); limitations and kinds not
        filed need none. Fuzzing time is not traded for graph breaks: the
        fresh-clone default campaign of 2026-12-05 found 2 bug buckets, 6
        regressions and 10 graph breaks by 331 s, and the 2,400 s its
        graph-break buckets reserved ended the fuzz phase at half the budget
        (37 programs)."""
        config = self.config
        reserve_s, other = 0.0, False
        for finding, _ in self.new.values():
            sig = finding.signature
            if sig.key in self.limitations or (config.minimise_kinds is not None and sig.kind not in config.minimise_kinds):
                continue
            if sig.kind in (Kind.GRAPH_BREAK, Kind.GRAPH_BREAK_REGRESSION):
                other = True
            else:
                reserve_s += config.minimise_budget_s + self.confirm_s
        return reserve_s + (MIN_CASE_BUDGET_S if other else 0.0)

    def _next_program(self, seed: int) -> Program:
        """The program for ``seed`` from the configured source mix, steered by feedback."""
        weights = self.scheduler.choose() if self.config.feedback else None
        # version-gated constructs up to the newest interpreter this campaign runs
        weights = versions.gated_weights(weights, versions.newest(i.name for i in self.config.interpreters))
        return draw_program(seed, self.config.sources.pick(seed), weights=weights, donors=self.donors)

    def _classify(self, seq: int, program: Program, outcomes: list[Outcome]) -> None:
        self.db.finish_program(seq, outcomes)
        self.progress.programs += 1
        new_lines = self.guidance.record(seq, program, outcomes)
        if any(o.verdict is Verdict.FLAKY for o in outcomes):
            return  # eager disagrees with itself: never a bug
        program_findings = findings(outcomes)
        planned = self.planned.pop(seq, [])
        first_seen = 0
        for finding in program_findings:
            sig = finding.signature
            is_new = self._is_unknown(sig, program)
            if self.db.count_finding(finding, program.program_id, new=is_new):
                first_seen += 1
                self.progress.buckets += 1
                limitation = self._is_limitation(finding, outcomes)
                self.cells.credit(self._finders(finding, planned, outcomes), sig.kind, new=is_new,
                                  limitation=limitation)
                if is_new and limitation:
                    self.limitations.add(sig.key)
                if is_new:
                    self.progress.new_buckets += 1
                    self.new[sig.key] = (finding, program)
                    if sig.kind == Kind.GRAPH_BREAK_REGRESSION and eager_raises_everywhere(outcomes):
                        self.eager_raises.add(sig.key)
                    log.info("new bucket %s: %s", sig.id, sig.describe())
            if sig.kind == Kind.DIVERGENCE and self.new.get(sig.key, (None, None))[1] is not program:
                # a wrong result's bucket is only known after minimisation (its
                # language features): keep a few more programs that show it
                extra = self.candidates.setdefault(sig.key, [])
                if len(extra) < (MAX_DIVERGENCE_CANDIDATES - 1 if is_new else 1):
                    extra.append((finding, program))
        # feedback: credit the program's features; a bucket seeds mutation
        self.scheduler.record(program.features, new=first_seen > 0, buckets=len(program_findings),
                              new_lines=new_lines)
        if first_seen and self.config.feedback:  # donors too steer later seeds
            self.donors.append(program)
        if self.progress.programs % FEEDBACK_SAVE_EVERY == 0:
            self._save_state()

    def _save_state(self) -> None:
        """The learned state in the database's meta, for --resume: feature
        weights, the cell schedule, and the coverage map with its pool."""
        self.db.set_meta("feedback", self.scheduler.snapshot())
        self.db.set_meta("schedule", self.cells.snapshot())
        if self.config.coverage:
            self.db.set_meta(GUIDANCE_META_KEY, self.guidance.snapshot())

    def _is_unknown(self, sig: Signature, program: Program) -> bool:
        """Whether ``sig`` is no bucket of the corpus: not by its id, nor, for
        a program that runs only on some of the campaign's interpreters (its
        grammar is 3.14+ or 3.15+), by a known bucket's interpreters cut to
        those (filing.narrowed_signature_ids)."""
        if sig.id in self.known_ids:
            return False
        runs_on = tuple(i.name for i in self.config.interpreters if versions.runs_on(program.features, i.name))
        if len(runs_on) == len(self.config.interpreters):
            return True
        if runs_on not in self.known_narrowed:
            self.known_narrowed[runs_on] = narrowed_signature_ids(self.config.corpus_dir, runs_on)
        return sig.id not in self.known_narrowed[runs_on]

    @staticmethod
    def _finders(finding: Finding, planned: list[Cell], outcomes: list[Outcome]) -> list[Cell]:
        """The scheduled cells credited with a bucket: those of its backend
        and interpreters; where the product's confirmation placed it on
        another backend, the scheduled cells whose runs showed a bug."""
        sig = finding.signature
        cells = [c for c in planned if c.backend == finding.backend and c.interpreter in sig.interpreters]
        if cells:
            return cells
        shown = {Cell(o.interpreter, o.backend) for o in outcomes if o.verdict.is_bug and not o.threads}
        return [c for c in planned if c in shown]

    def _is_limitation(self, finding: Finding, outcomes: list[Outcome]) -> bool:
        """Whether a finding is a documented limitation (known-issues.toml's
        [limitations]): counted, never minimised, no reward."""
        sig = finding.signature
        message = next((o.error_message for o in outcomes if o.verdict.value == sig.kind.value and o.error_message), "")
        bucket = {"id": sig.id, "kind": sig.kind.value, "detail": sig.detail, "message": message, "new": True}
        return known.standing(bucket, self.known_issues) is known.Standing.LIMITATION

    def _file_new_buckets(self, *, waiting_too: bool = False) -> None:
        """Minimise and file the new buckets in the order of
        fuzz.campaign.filing_queue (backlog buckets first within a priority),
        then, with ``waiting_too``, the backlog's buckets this campaign did
        not see, then the further programs of divergence signatures; each
        with at least MIN_CASE_BUDGET_S. The new buckets the time left cannot
        cover go to the corpus backlog (fuzz.corpus.backlog), and so does the
        reduced program of a bucket whose minimisation ran out of time over
        CASE_MAX_LINES; the backlog loses the buckets filed or tried here,
        and those now known."""
        config = self.config
        names = [i.name for i in config.interpreters]
        waiting = backlog.load(config.corpus_dir)
        # without a time budget, filing gets a bounded share of the time the programs took
        deadline_s = config.budget_s
        if deadline_s is None:
            fuzz_s = self.clock() - self.started
            floor_s = FILING_FLOOR_S if config.filing_floor_s is None else config.filing_floor_s
            deadline_s = fuzz_s + max(floor_s, FILING_SHARE_UNBUDGETED * fuzz_s)

        def minimised_kind(finding: Finding) -> bool:
            return config.minimise_kinds is None or finding.signature.kind in config.minimise_kinds

        new = [(f, p) for f, p in self.new.values()
               if minimised_kind(f) and f.signature.key not in self.limitations]  # limitations: counted only
        further = [fp for extra in self.candidates.values() for fp in extra] \
            if config.minimise_kinds is None or Kind.DIVERGENCE in config.minimise_kinds else []
        self.candidates.clear()
        unseen = [(f, e) for f, e in backlog.unseen(waiting, seen={f.signature.id for f, _ in self.new.values()},
                                                     interpreters=names, backends=config.backends,
                                                     known_ids=self.known_ids) if minimised_kind(f)] \
            if waiting_too else []
        todo = filing_queue(new, waiting=waiting, unseen=unseen, further=further, interpreter_count=len(names),
                            low_priority=self.eager_raises)
        done = [k for k in waiting if Signature.parse(k).id in self.known_ids]  # filed elsewhere since
        left: list[tuple[Finding, Program]] = []
        shelved: list[tuple[Finding, Program]] = []
        filed: set[str] = set()
        try:
            for n, queued in enumerate(todo):
                finding = queued.finding
                remaining_s = deadline_s - (self.clock() - self.started)
                # the time is shared among the new buckets first; the others get what they leave
                cases_left = sum(1 for q in todo[n:] if not queued.new_bucket or q.new_bucket)
                cases_left = min(cases_left, int(remaining_s // MIN_CASE_BUDGET_S))
                if cases_left < 1:  # the rest, in filing order, wait for a campaign with the time
                    left = [(q.finding, q.program) for q in todo[n:] if q.new_bucket]
                    log.warning("out of time: %d new buckets left unfiled, in the backlog %s",
                                len(left), backlog.backlog_path(config.corpus_dir))
                    break
                per_case_s = min(config.minimise_budget_s, self._minimise_share_s(remaining_s / cases_left))
                self._tick(f"minimising {n + 1}/{len(todo)}")
                started_s = self.clock()
                case = file_finding(self.pool, finding, queued.program, names=names, interpreters=config.interpreters,
                                    corpus_dir=config.corpus_dir, device=config.device, fullgraph=config.fullgraph,
                                    settings=config.compile_settings(queued.program, finding.backend),
                                    jobs=config.jobs, budget_s=per_case_s, torch_version=self._torch_version(),
                                    torch_of={n: i.torch for n, i in self.pool.info.items()},
                                    max_lines=queued.max_lines, known_ids=self.known_ids)
                if case.standalone is not None and "elapsed_s" in case.stats:
                    self.confirm_s = max(self.confirm_s if self.confirm_measured else 0.0,
                                         self.clock() - started_s - float(case.stats["elapsed_s"]))
                    self.confirm_measured = True
                if case.reduced is None:
                    done.append(finding.signature.key)
                elif queued.new_bucket or queued.from_backlog:  # on from there next time
                    shelved.append((finding, case.reduced))
                self._record_filing(queued, case, filed)
        finally:
            backlog.update(config.corpus_dir, unfiled=left, done=done, reduced=shelved,
                           now=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))

    def _minimise_share_s(self, share_s: float) -> float:
        """Seconds of minimisation out of ``share_s`` seconds for one case: the
        rest is its `python CASE` confirmation (the longest measured, else
        CONFIRM_ESTIMATE_S) and a tenth for the last check's overrun."""
        return max(0.3 * share_s, 0.9 * share_s - self.confirm_s)

    def _record_filing(self, queued: QueuedCase, case: Any, filed: set[str]) -> None:
        """Record what filing ``queued`` came to (a FiledCase) in the database and
        the summary; a waiting bucket this campaign did not see is in the summary only."""
        finding, program = queued.finding, queued.program
        stats = dict(case.stats)
        path = str(case.path) if case.filed else None
        # a filed case's signature carries its program's language features
        refined = case.signature.key if case.filed or case.known else finding.signature.key
        if queued.new_bucket:
            self.db.record_case(finding.signature.key, path, **stats)
            if refined != finding.signature.key:  # its root cause may be a corpus case's: then not new
                known_case = case.known or (case.filed and case.signature.id in self.known_ids)
                self.db.rename_bucket(finding.signature.key, refined, known=known_case)
                self.progress.new_buckets -= int(known_case)
        elif case.filed and refined not in filed and not queued.from_backlog:  # a further program of a signature
            refined_finding = Finding(case.signature, finding.backend)
            is_new = self._is_unknown(refined_finding.signature, program)
            if self.db.count_finding(refined_finding, program.program_id, new=is_new):
                self.progress.buckets += 1
                self.progress.new_buckets += int(is_new)
            self.db.record_case(refined, path, **stats)
        filed.add(refined)
        self.minimised.append({"id": finding.signature.id, "kind": finding.signature.kind.value, **stats,
                               "case": path, "from_backlog": queued.from_backlog,
                               **({"reason": case.reason} if case.reason else {}),
                               "standalone": dict(case.standalone) if case.standalone is not None else None})

    def _attribute_new(self) -> None:
        """Decide each new confounded bucket (on a free-threaded build and not
        its GIL twin, or the reverse, whose torch releases differ) by its
        deciding cell; stored in the meta ``attributions`` by bucket id."""
        torch_of = {name: info.torch for name, info in self.pool.info.items()
                    if name in {i.name for i in self.config.interpreters}}
        known = self.db.meta().get("attributions", {})
        todo = [(f, p) for f, p in self.new.values() if f.signature.id not in known]
        if not todo:
            return
        self._tick("attributing")
        found = attribute_all(self.attributor, todo, torch_of)
        if found:
            self.db.set_meta("attributions", {**known, **{k: v.to_json() for k, v in found.items()}})

    def _torch_version(self) -> str:
        return torch_version_of(self.pool.info)
