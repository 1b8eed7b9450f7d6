"""A campaign: generate programs, run each on every interpreter x backend,
bucket the findings, minimise each new bucket into the corpus, write reports.

Time is split in two: programs are generated and run for ``FUZZ_SHARE`` of the
budget, then new buckets are minimised (each at most ``minimise_budget_s``)
and confirmed standalone (``python CASE`` in a fresh process per interpreter)
before they are filed. A case that ``python CASE`` does not reproduce is never
written.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.backends import ladder_rank
from harness.outcome import Outcome, Verdict
from harness.program import Program
from fuzz.report import pages
from fuzz.corpus import render, store
from fuzz.campaign.database import CampaignDB
from fuzz.errors import CouldNotMinimize, UsageError
from fuzz.generate.feedback import FeatureScheduler
from fuzz.generate.mutate import load_donors
from fuzz.generate.sources import SourceMix, draw_program
from fuzz.campaign.interpreters import Interpreter
from fuzz.reduce.pipeline import SignatureCheck, minimize_source
from fuzz.triage.signature import Finding, Signature, findings, interpreter_order
from fuzz.campaign import interpreters as interpreter_specs
from fuzz.campaign.workers import RSS_GROWTH_LIMIT_MIB, RSS_LIMIT_MIB, Task, WorkerPool

log = logging.getLogger(__name__)

# Share of the time budget spent generating and running programs; the rest
# goes to minimising and confirming the new buckets.
FUZZ_SHARE = 0.5
# Least time worth giving one case, in seconds: less and pysource-minimize
# barely starts, and `python CASE` on four interpreters alone takes 10-70 s.
MIN_CASE_BUDGET_S = 60.0
# Programs minimised per divergence signature in a campaign: one wrong-result
# signature before minimisation can hold several bugs that their minimised
# programs' language features tell apart (fuzz.features).
MAX_DIVERGENCE_CANDIDATES = 3
# Programs between saves of the feedback state to the database.
FEEDBACK_SAVE_EVERY = 20
# Programs kept in flight per worker, so no worker idles while the host
# classifies results.
INFLIGHT_PER_WORKER = 2


@dataclasses.dataclass
class CampaignConfig:
    """What to run. ``budget_s`` in seconds (None: until ``programs`` ran);
    ``shard`` is (index, count), 0-based index."""

    interpreters: list[Interpreter]
    backends: list[str]
    out_dir: Path
    corpus_dir: Path
    device: str = "cpu"
    fullgraph: bool = False
    budget_s: float | None = 600.0
    programs: int | None = None
    seed: int = 0
    jobs: int = 1
    shard: tuple[int, int] = (0, 1)
    minimise_budget_s: float = 300.0
    minimise: bool = True
    # Kinds of new bucket to minimise and file (None: every kind).
    minimise_kinds: tuple[str, ...] | None = None
    name: str = ""
    # Where programs come from (fuzz.sources) and whether feedback steers our
    # generator (fuzz.feedback).
    sources: SourceMix = dataclasses.field(default_factory=SourceMix)
    feedback: bool = True
    # Share of programs run on each backend (missing: 1.0); the lowest selected
    # backend on the ladder runs every program. See ``runs_on``.
    share: dict[str, float] = dataclasses.field(default_factory=dict)
    # K >= 2: also the concurrency run with K threads on free-threaded interpreters.
    threads: int = 0
    # Resident MiB after a program above which a worker is replaced.
    worker_rss_mib: float = RSS_LIMIT_MIB
    # MiB a worker may grow past its warm size before it is replaced (0: no limit).
    worker_rss_growth_mib: float = RSS_GROWTH_LIMIT_MIB
    # Continue the campaign already in out_dir (tcfuzz run --resume).
    resume: bool = False

    def seeds(self) -> Any:
        """Seeds of this shard, in order: seed + index, index = shard, shard + count, ..."""
        k = 0
        while True:
            yield self.seed_of(k)
            k += 1

    def seed_of(self, k: int) -> int:
        """The seed of this shard's k-th program (0-based)."""
        index, count = self.shard
        return self.seed + index + k * count

    def shard_programs(self) -> int | None:
        """Programs this shard runs: its part of seeds seed .. seed + programs - 1
        (so the shards of ``--programs N`` together run exactly the N seeds
        one unsharded run would); None without ``programs``."""
        if self.programs is None:
            return None
        index, count = self.shard
        return max(0, -(-(self.programs - index) // count))

    def runs_on(self, seed: int, backend: str) -> bool:
        """Whether the program of ``seed`` runs on ``backend``: always for the
        lowest selected backend on the ladder (eager by default), else with
        probability ``share[backend]``, decided by the seed alone, so every
        shard and a resumed run agree."""
        if backend == min(self.backends, key=lambda b: (ladder_rank(b), self.backends.index(b))):
            return True
        share = self.share.get(backend, 1.0)
        return share >= 1.0 or random.Random(f"share-{seed}-{backend}").random() < share

    def to_meta(self) -> dict[str, Any]:
        """What ``from_meta`` needs to resume this campaign (JSON)."""
        return {"backends": self.backends, "interpreters": [i.name for i in self.interpreters],
                "pythons": {i.name: str(i.python) for i in self.interpreters},
                "seed": self.seed, "shard": list(self.shard), "device": self.device, "fullgraph": self.fullgraph,
                "budget_s": self.budget_s, "programs": self.programs, "jobs": self.jobs,
                "corpus_dir": str(self.corpus_dir), "minimise": self.minimise,
                "minimise_budget_s": self.minimise_budget_s,
                "minimise_kinds": list(self.minimise_kinds) if self.minimise_kinds is not None else None,
                "name": self.name, "sources": dataclasses.asdict(self.sources), "feedback": self.feedback,
                "share": self.share, "threads": self.threads, "worker_rss_mib": self.worker_rss_mib,
                "worker_rss_growth_mib": self.worker_rss_growth_mib}

    @classmethod
    def from_meta(cls, meta: dict[str, Any], out_dir: Path) -> CampaignConfig:
        """The config a campaign in ``out_dir`` was started with (``to_meta``).
        Raises UsageError if the meta predates resumable campaigns."""
        if "budget_s" not in meta:
            raise UsageError(f"{out_dir} was made by a tcfuzz without --resume support: start a new campaign")
        interps = [interpreter_specs.resolve(name if interpreter_specs.NAME.match(name) else meta["pythons"][name])
                   for name in meta["interpreters"]]
        return cls(interpreters=interps, backends=meta["backends"], out_dir=out_dir,
                   corpus_dir=Path(meta["corpus_dir"]), device=meta["device"], fullgraph=meta["fullgraph"],
                   budget_s=meta["budget_s"], programs=meta["programs"], seed=meta["seed"], jobs=meta["jobs"],
                   shard=tuple(meta["shard"]), minimise_budget_s=meta["minimise_budget_s"],
                   minimise=meta["minimise"],
                   minimise_kinds=tuple(meta["minimise_kinds"]) if meta["minimise_kinds"] is not None else None,
                   name=meta["name"], sources=SourceMix(**meta["sources"]), feedback=meta["feedback"],
                   share=meta["share"], threads=meta["threads"], worker_rss_mib=meta["worker_rss_mib"],
                   worker_rss_growth_mib=meta.get("worker_rss_growth_mib", RSS_GROWTH_LIMIT_MIB))


def parse_share(text: str | None) -> dict[str, float]:
    """``"aot_eager=0.5,inductor=0.25"`` -> {backend: share}; raises UsageError
    for a malformed part or a share outside [0, 1]."""
    shares: dict[str, float] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        name, _, value = part.partition("=")
        try:
            share = float(value)
        except ValueError:
            share = -1.0
        if not name.strip() or not 0.0 <= share <= 1.0:
            raise UsageError(f"Expected --share like aot_eager=0.5,inductor=0.25 (shares 0..1) but got {part!r}")
        shares[name.strip()] = share
    return shares


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
    summary: dict[str, Any]
    out_dir: Path
    new_buckets: int


class Campaign:
    """One campaign over a worker pool; see the module docstring."""

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
                               rss_growth_limit_mib=config.worker_rss_growth_mib)
        self.known_ids = known_signature_ids(config.corpus_dir)
        self.new: dict[str, tuple[Finding, Program]] = {}
        # More programs per divergence signature, minimised after the new buckets
        # (see _classify); filed only where their features make a new bucket.
        self.candidates: dict[str, list[tuple[Finding, Program]]] = {}
        self.started = time.monotonic()
        self.elapsed_by_backend: dict[str, float] = {b: 0.0 for b in config.backends}
        self.minimised: list[dict[str, Any]] = []
        self.seeds = config.seeds()
        self.next_seq = 0
        # programs started but unfinished when a resumed campaign was killed
        self.resume_queue: list[tuple[int, Program]] = []
        self.started_at = datetime.datetime.now(datetime.timezone.utc)
        if self.db.meta().get("config"):
            if not config.resume:
                self.db.close()
                raise UsageError(f"{config.out_dir} already holds a campaign: continue it with "
                                 f"tcfuzz run --resume {config.out_dir}, or pass a new --out")
            self._load_progress()
        self.scheduler = FeatureScheduler()
        self.donors = load_donors(config.corpus_dir)

    def _tick(self, phase: str | None = None) -> None:
        if phase:
            self.progress.phase = phase
        self.progress.elapsed_s = time.monotonic() - self.started
        self.on_progress(self.progress)

    def _load_progress(self) -> None:
        """Continue the campaign already in ``out_dir`` (``tcfuzz run --resume``):
        finished programs keep their results; programs that were in flight run
        again first; then the next seeds; time already spent counts against
        the budget; new buckets not yet filed are filed."""
        meta = self.db.meta()
        self.next_seq = self.db.next_seq()
        self.resume_queue = self.db.unfinished_programs()
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
        try:
            infos = self.pool.start()
            self.db.set_meta("interpreters", {k: dataclasses.asdict(v) for k, v in infos.items()})
            # Rounds: fuzz for a share of the time left, file what it found,
            # and fuzz again with whatever time filing did not need.
            while True:
                deadline_s = None
                if config.budget_s is not None:
                    left_s = config.budget_s - (time.monotonic() - self.started)
                    deadline_s = config.budget_s - left_s * (1 - FUZZ_SHARE if config.minimise else 0.0)
                self._fuzz(deadline_s)
                if config.minimise:
                    self._file_new_buckets()
                    self.new.clear()
                if config.budget_s is None or self._out_of_programs() or (
                        config.budget_s - (time.monotonic() - self.started) < MIN_CASE_BUDGET_S):
                    break
        finally:
            # a harness failure still leaves the report of what ran before it
            self.pool.close()
            self.db.set_meta("feedback", self.scheduler.snapshot())
            finished_at = datetime.datetime.now(datetime.timezone.utc)
            summary = build_summary(self.db, name=config.name, started=started_at, finished=finished_at,
                                    elapsed_s=time.monotonic() - self.started,
                                    elapsed_by_backend=self.elapsed_by_backend, minimised=self.minimised)
            write_reports(self.db, config.out_dir, summary)
            self.db.close()
        return CampaignResult(summary, config.out_dir, summary["new_signatures"])

    def _out_of_programs(self) -> bool:
        limit = self.config.shard_programs()
        return not self.resume_queue and limit is not None and self.next_seq >= limit

    def _tasks(self, seq: int, program: Program) -> list[Task]:
        """The runs of one program: eager first on every interpreter, then the
        slower backends where the share picks them; then, on free-threaded
        interpreters with ``threads``, the concurrency runs."""
        config = self.config
        seed = config.seed_of(seq)
        backends = [b for b in config.backends if config.runs_on(seed, b)]
        tasks = [Task(program, i.name, b, config.device, config.fullgraph)
                 for b in backends for i in config.interpreters]
        if config.threads >= 2:
            tasks += [Task(program, i.name, b, config.device, config.fullgraph, threads=config.threads)
                      for b in backends for i in config.interpreters if i.free_threaded]
        return tasks

    def _fuzz(self, deadline_s: float | None) -> None:
        """Generate and run programs until ``deadline_s`` seconds after the
        campaign's start (None: until ``programs`` ran), then drain."""
        config = self.config
        limit = INFLIGHT_PER_WORKER * len(self.pool.workers) * len(config.backends)
        inflight: dict[int, tuple[Program, dict[tuple[str, str, int], Outcome], int]] = {}
        seq_of_task: dict[int, int] = {}
        self._tick("fuzzing")

        def out_of_budget() -> bool:
            if self._out_of_programs():
                return True
            return deadline_s is not None and time.monotonic() - self.started >= deadline_s

        while True:
            while not out_of_budget() and self.pool.pending < limit:
                if self.resume_queue:  # in flight when the campaign was killed
                    seq, program = self.resume_queue.pop(0)
                else:
                    seq = self.next_seq
                    program = self._next_program(config.seed_of(seq))
                    self.db.add_program(seq, program)
                    self.next_seq += 1
                tasks = self._tasks(seq, program)
                inflight[seq] = (program, {}, len(tasks))
                for task in tasks:
                    seq_of_task[self.pool.submit(task)] = seq
            if not self.pool.pending:
                break
            task_id, task, outcome = self.pool.next_result()
            seq = seq_of_task.pop(task_id)
            program, outcomes, expected = inflight[seq]
            outcomes[(task.interpreter, task.backend, task.threads)] = outcome
            self.elapsed_by_backend[task.backend] = self.elapsed_by_backend.get(task.backend, 0.0) + outcome.elapsed_s
            self.progress.runs += 1
            if len(outcomes) == expected:
                del inflight[seq]
                self._classify(seq, program, list(outcomes.values()))
                self.db.set_meta("elapsed_s", round(time.monotonic() - self.started, 3))
            self._tick()

    def _next_program(self, seed: int) -> Program:
        """The program for ``seed`` from the configured source mix, steered by feedback."""
        weights = self.scheduler.choose() if self.config.feedback else None
        return draw_program(seed, self.config.sources.pick(seed), weights=weights, donors=self.donors)

    def _classify(self, seq: int, program: Program, outcomes: list[Outcome]) -> None:
        self.db.finish_program(seq, outcomes)
        self.progress.programs += 1
        if any(o.verdict is Verdict.FLAKY for o in outcomes):
            return  # eager disagrees with itself: never a bug
        program_findings = findings(outcomes)
        first_seen = 0
        for finding in program_findings:
            sig = finding.signature
            is_new = sig.id not in self.known_ids
            if self.db.count_finding(finding, program.program_id, new=is_new):
                first_seen += 1
                self.progress.buckets += 1
                if is_new:
                    self.progress.new_buckets += 1
                    self.new[sig.key] = (finding, program)
                    log.info("new bucket %s: %s", sig.id, sig.describe())
            if sig.kind == "divergence" and self.new.get(sig.key, (None, None))[1] is not program:
                # a wrong result's bucket is only known after minimisation (its
                # language features): keep a few more programs that show it
                extra = self.candidates.setdefault(sig.key, [])
                if len(extra) < (MAX_DIVERGENCE_CANDIDATES - 1 if is_new else 1):
                    extra.append((finding, program))
        # feedback: credit the program's features; a bucket seeds mutation
        self.scheduler.record(program.features, new=first_seen > 0, buckets=len(program_findings))
        if first_seen and self.config.feedback:  # donors too steer later seeds
            self.donors.append(program)
        if self.progress.programs % FEEDBACK_SAVE_EVERY == 0:
            self.db.set_meta("feedback", self.scheduler.snapshot())

    def _file_new_buckets(self) -> None:
        config = self.config
        names = [i.name for i in config.interpreters]
        todo = sorted(((f, p) for f, p in self.new.values()
                       if config.minimise_kinds is None or f.signature.kind in config.minimise_kinds),
                      key=lambda fp: filing_priority(fp[0], len(names)))
        if config.minimise_kinds is None or "divergence" in config.minimise_kinds:
            todo += [fp for extra in self.candidates.values() for fp in extra]  # last: often a known bug again
        self.candidates.clear()
        filed: set[str] = set()
        for n, (finding, program) in enumerate(todo):
            remaining_s = None if config.budget_s is None else config.budget_s - (time.monotonic() - self.started)
            if remaining_s is not None and remaining_s < MIN_CASE_BUDGET_S:
                log.warning("out of time: %d new buckets left unfiled (their programs are in campaign.sqlite)",
                            len(todo) - n)
                break
            per_case_s = config.minimise_budget_s if remaining_s is None else min(
                config.minimise_budget_s, max(MIN_CASE_BUDGET_S, remaining_s / max(1, len(todo) - n)) * 0.6)
            self._tick(f"minimising {n + 1}/{len(todo)}")
            case = file_finding(self.pool, finding, program, names, config, budget_s=per_case_s,
                                interpreters=config.interpreters, torch_version=self._torch_version())
            stats = case.pop("stats", {})
            refined = case.get("signature") or finding.signature.key
            if finding.signature.key in self.new and finding is self.new[finding.signature.key][0]:
                self.db.record_case(finding.signature.key, case.get("case"), **stats)
                if refined != finding.signature.key:
                    self.db.rename_bucket(finding.signature.key, refined)
            elif case.get("case") and refined not in filed:  # a further program of a divergence signature
                refined_finding = Finding(Signature.parse(refined), finding.backend)
                is_new = refined_finding.signature.id not in self.known_ids
                if self.db.count_finding(refined_finding, program.program_id, new=is_new):
                    self.progress.buckets += 1
                    self.progress.new_buckets += int(is_new)
                self.db.record_case(refined, case.get("case"), **stats)
            filed.add(refined)
            self.minimised.append({"id": finding.signature.id, **stats, "case": case.get("case"),
                                   "standalone": case.get("standalone")})

    def _torch_version(self) -> str:
        versions = {i.torch for i in self.pool.info.values()}
        return sorted(versions)[0] if versions else "2.12.0"


def filing_priority(finding: Finding, interpreter_count: int) -> int:
    """Order in which new buckets are filed when time is short: bugs first,
    then graph breaks that show on some interpreters only (the regression
    view), then the rest."""
    sig = finding.signature
    if sig.kind == "graph-break-regression":
        return 1
    if sig.kind != "graph-break":
        return 0
    return 1 if len(sig.interpreters) < interpreter_count else 2


def file_finding(pool: WorkerPool, finding: Finding, program: Program, names: list[str], config: CampaignConfig, *,
                 budget_s: float, interpreters: list[Interpreter], torch_version: str) -> dict[str, Any]:
    """Minimise one finding, confirm it standalone and write it to the corpus.

    Returns {"case": path or None, "standalone": exit codes, "stats": reducer statistics}.
    """
    sig = finding.signature
    check = SignatureCheck(pool, program, sig, finding.backend, names, fullgraph=config.fullgraph, device=config.device)
    try:
        result = minimize_source(program.source, check, budget_s=budget_s, program=program, jobs=config.jobs)
    except CouldNotMinimize:
        log.warning("bucket %s did not reproduce on the workers; not filed", sig.id)
        return {"case": None, "stats": {"checks": check.calls}}
    # a wrong result buckets by the language features of its minimised program
    sig = sig.with_features(result.source)
    text = render.render_case(program.with_source(result.source), sig, backend=finding.backend,
                              torch_version=torch_version, device=config.device, fullgraph=config.fullgraph)
    codes = store.run_standalone(text, interpreters)
    reproduced = {n for n, code in codes.items() if code != 0}
    if sig.kind == "graph-break-regression" and reproduced - set(sig.interpreters):
        log.warning("bucket %s: python CASE breaks on %s too, so it is no regression; not filed",
                    sig.id, sorted(reproduced - set(sig.interpreters)))
        return {"case": None, "standalone": codes, "stats": {"checks": result.checks}}
    stats = {"lines_before": result.lines_before, "lines_after": result.lines_after, "checks": result.checks,
             "elapsed_s": round(result.elapsed_s, 2)}
    if not set(sig.interpreters) <= reproduced:
        log.warning("bucket %s: python CASE does not reproduce on %s (exit codes %s); not filed",
                    sig.id, sorted(set(sig.interpreters) - reproduced), codes)
        return {"case": None, "standalone": codes, "stats": stats}
    text = store.with_replay(text, codes, torch_version)
    path = store.write_case(store.case_path(config.corpus_dir, sig), text)
    return {"case": str(path), "standalone": codes, "stats": stats, "signature": sig.key}


def known_signature_ids(corpus_dir: Path) -> set[str]:
    """Ids of the corpus's signatures, and of a divergence's signature without
    its language features (what a campaign sees before minimisation): a
    campaign that sees a known wrong-result signature again minimises only one
    program of it (last), in case its features make it a different bug."""
    ids = set()
    for path in store.list_cases(corpus_dir):
        ids.add(path.stem)
        try:
            key = store.read_case(path)[1].get("signature", "")
            ids.add(Signature.parse(key).base().id)
        except Exception as e:  # a malformed case is still known by its name
            log.warning("%s: %s", path, e)
    return ids


def build_summary(db: CampaignDB, *, name: str, started: datetime.datetime, finished: datetime.datetime,
                  elapsed_s: float, elapsed_by_backend: dict[str, float] | None = None,
                  minimised: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """``summary.json``'s content from the database (see DESIGN.md)."""
    meta = db.meta()
    config = meta.get("config", {})
    outcomes = db.outcomes()
    programs = db.programs_done()
    verdicts: dict[str, int] = {v.value: 0 for v in Verdict}
    graph_breaks: dict[str, dict[str, set[str]]] = {}
    by_backend_s: dict[str, float] = dict(elapsed_by_backend or {})
    matrix: dict[str, dict[str, dict[str, str]]] = {}
    for o in outcomes:
        verdicts[o.verdict.value] = verdicts.get(o.verdict.value, 0) + 1
        for gb in o.graph_breaks:
            graph_breaks.setdefault(gb.gb_type or gb.reason, {}).setdefault(o.interpreter, set()).add(o.program_id)
        if elapsed_by_backend is None:
            by_backend_s[o.backend] = by_backend_s.get(o.backend, 0.0) + o.elapsed_s
    by_program: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_program.setdefault(o.program_id, []).append(o)
    buckets = []
    for b in db.buckets():
        for o in by_program.get(b["program_id"], []):
            column = f"{o.backend}+threads{o.threads}" if o.threads else o.backend  # concurrency runs apart
            matrix.setdefault(b["key"], {}).setdefault(o.interpreter, {})[column] = o.verdict.value
        buckets.append({
            "signature": b["key"], "id": b["id"], "kind": b["kind"], "stage": b["stage"], "detail": b["detail"],
            "interpreters": [i for i in b["interpreters"].split(",") if i], "backends": [b["backend"]],
            "count": b["count"], "case": b["case_path"], "new": bool(b["new"]),
            "matrix": matrix.get(b["key"], {}),
        })
    return {
        "campaign": name,
        "started": started.isoformat(timespec="seconds"),
        "finished": finished.isoformat(timespec="seconds"),
        "programs": programs,
        "runs": len(outcomes),
        "elapsed_s": round(elapsed_s, 2),
        "programs_per_s": round(programs / elapsed_s, 4) if elapsed_s else 0.0,
        # programs per second of worker time spent on each backend
        "programs_per_s_by_backend": {
            b: round(sum(1 for o in outcomes if o.backend == b) / s, 4) if s else 0.0 for b, s in by_backend_s.items()
        },
        "verdicts": verdicts,
        "interpreters": {
            name: {"version": info["version"], "torch": info["torch"], "free_threaded": info["free_threaded"],
                   "gil_enabled": _gil(outcomes, name, info["gil_enabled"])}
            for name, info in sorted(meta.get("interpreters", {}).items(), key=lambda kv: interpreter_order(kv[0]))
        },
        "backends": config.get("backends", []),
        "device": config.get("device", "cpu"),
        "seed": config.get("seed"),
        "shard": config.get("shard"),
        "graph_breaks": {gb: {i: len(p) for i, p in per.items()} for gb, per in sorted(graph_breaks.items())},
        "buckets": buckets,
        "new_buckets": sum(1 for b in buckets if b["new"] and b["case"]),
        "new_signatures": sum(1 for b in buckets if b["new"]),
        "minimised": minimised or [],
        # per construct: programs using it, how many found new behaviour, how
        # many produced a bucket (fuzz.feedback)
        "features": meta.get("feedback", {}).get("features", {}),
    }


def _gil(outcomes: list[Outcome], interpreter: str, at_start: bool) -> bool:
    """Whether the GIL was on in any run on this interpreter (it can turn on
    after start, when an extension that is not free-threading-safe loads)."""
    states = [o.gil_enabled for o in outcomes if o.interpreter == interpreter and o.gil_enabled is not None]
    return any(states) if states else at_start


def write_reports(db: CampaignDB, out_dir: Path, summary: dict[str, Any]) -> dict[str, Path]:
    cases = {}
    for b in summary["buckets"]:
        if b.get("case") and Path(b["case"]).exists():
            cases[b["case"]] = Path(b["case"]).read_text()
    return pages.write_report(out_dir, summary, cases, db.runs())
