"""``tcfuzz``: the command line (see docs/design.md, "Command line").

Each command first parses and checks all of its arguments: a usage error (an
unknown backend, interpreter, source or device, a bad duration or shard, a
file that is not a case) is one line on stderr and exit 2, before any worker
env is looked at or any worker starts. Then it calls the stage that does the
work and prints what came back.

Exit codes: run: 0 nothing new, 1 new buckets, 2 usage, 3 harness failure;
repro: 0 passes everywhere, 1 reproduces; minimize: 0 reduced, 1 could not.
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import os
import re
import sys
from pathlib import Path
from typing import Any

from harness.backends import LADDER, PLANTED_BACKENDS, STANCE_BACKENDS
from harness.outcome import Outcome, Verdict
from harness.program import Program, ProgramError
from harness.settings import CompileSettings
from fuzz.campaign import cells, interpreters
from fuzz import console
from fuzz.corpus import render
from fuzz.errors import CouldNotMinimize, HarnessError, TcfuzzError, UsageError
from fuzz.triage.signature import Kind, Signature, case_target, findings
from fuzz.campaign.workers import RSS_GROWTH_LIMIT_MIB, RSS_LIMIT_MIB

EXIT_OK, EXIT_FOUND, EXIT_USAGE, EXIT_HARNESS = 0, 1, 2, 3
DEFAULT_BACKENDS = "eager,aot_eager,inductor"
DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smh]?)$")
# torch's deliberately failing test backends: accepted without asking torch.
TESTING_ONLY_SUFFIX = "_TESTING_ONLY"
# How to see the backends a worker env's torch registers.
LIST_TORCH_BACKENDS = 'python -c "import torch._dynamo; print(torch._dynamo.list_backends(exclude_tags=()))"'


def parse_duration_s(text: str) -> float:
    """"90s", "10m", "1.5h" or plain seconds -> seconds."""
    match = DURATION.match(text.strip())
    if not match:
        raise UsageError(f"Expected a duration like 90s, 10m or 1h but got --budget {text}")
    return float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]


def parse_shard(text: str) -> tuple[int, int]:
    """"I/N" with 1 <= I <= N -> (I - 1, N)."""
    match = re.match(r"^(\d+)/(\d+)$", text)
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise UsageError(f"Expected a shard like 1/4 (index from 1) but got --shard {text}")
    return int(match.group(1)) - 1, int(match.group(2))


def daily_seed(today: datetime.date | None = None) -> int:
    """The default first seed: the same all day (so the shards of one nightly
    run agree) and new each day (so nightly runs explore new programs):
    days since 1970-01-01 x 100,000."""
    today = today or datetime.datetime.now(datetime.timezone.utc).date()
    return (today - datetime.date(1970, 1, 1)).days * 100_000


def known_backends() -> list[str]:
    """The backend names --backend names in its error: the ladder's, then the
    planted and stance ones (harness.backends)."""
    return [name for name, _ in LADDER] + sorted(PLANTED_BACKENDS) + sorted(STANCE_BACKENDS)


def parse_backends(text: str | None) -> list[str]:
    """"eager,inductor" -> ["eager", "inductor"]; None or "all": the default three.

    Raises UsageError, one line naming the known backends and how to list
    torch's, for a name that is none of ``known_backends()``, a
    ``*_TESTING_ONLY`` one or one the worker envs' torch registers
    (``interpreters.registered_backends``, asked only for such a name and
    cached; third-party backends included). No worker starts for this.
    """
    text = DEFAULT_BACKENDS if text in (None, "", "all") else text
    names = [b.strip() for b in text.split(",") if b.strip()]
    unknown = [n for n in names if n not in known_backends() and not n.endswith(TESTING_ONLY_SUFFIX)]
    registered = interpreters.registered_backends() if unknown else None
    for name in unknown:
        if registered is None or name not in registered:
            raise UsageError(f"Expected backends from {', '.join(known_backends())}, a torch *{TESTING_ONLY_SUFFIX} "
                             f"one or another that torch registers (see them: {LIST_TORCH_BACKENDS}) "
                             f"but got --backend {name}")
    return names


def check_device_name(device: str) -> str:
    """``device`` if it is "cpu" or "cuda"; raises UsageError otherwise."""
    if device not in ("cpu", "cuda"):
        raise UsageError(f"Expected --device cpu or cuda but got --device {device}")
    return device


def check_device(device: str, interps: list[interpreters.Interpreter]) -> list[interpreters.Interpreter]:
    """The interpreters set up to run on ``device`` (interpreters.for_device).
    Raises UsageError, one line naming the problem and the fix, for an unknown
    device or, for cuda, an interpreter whose torch sees no GPU (each is asked)."""
    check_device_name(device)
    interps = interpreters.for_device(interps, device)
    if device == "cuda":
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=len(interps) or 1) as probes:
            problems = [p for p in probes.map(interpreters.cuda_problem, interps) if p]
        if problems:
            raise UsageError(f"--device cuda: {'; '.join(problems)}. Run on a machine with an NVIDIA GPU "
                             "(scripts/gpu-check.sh), pass --python the path of a python whose torch sees one, "
                             "or use --device cpu")
        with ThreadPoolExecutor(max_workers=len(interps) or 1) as probes:
            for problem in probes.map(interpreters.triton_problem, interps):
                if problem:  # per interpreter: Inductor's runs there will fail, the other backends are fine
                    print(f"tcfuzz: warning: {problem}", file=sys.stderr)
    return interps


def check_cpp_compiler(backends: list[str], device: str) -> list[str]:
    """``backends`` less inductor when it would run on the CPU and no C++
    compiler works (fuzz.campaign.toolchain), said in one line on stderr.
    Raises UsageError when inductor was the only backend."""
    if device != "cpu" or "inductor" not in backends:
        return backends
    from fuzz.campaign.toolchain import cpp_compiler_problem

    problem = cpp_compiler_problem()
    if not problem:
        return backends
    rest = [b for b in backends if b != "inductor"]
    if not rest:
        raise UsageError(problem)
    print(f"tcfuzz: {problem}; running {','.join(rest)} without inductor", file=sys.stderr)
    return rest


def check_threads(threads: int, interps: list[interpreters.Interpreter] | None = None) -> int:
    """``--threads K``: K >= 2, and (once ``interps`` are known) only with a
    free-threaded interpreter (the concurrency runs happen there; the others
    run as usual). Raises UsageError."""
    if not threads:
        return 0
    if threads < 2:
        raise UsageError(f"Expected --threads of at least 2 but got --threads {threads}")
    if interps is not None and not any(i.free_threaded for i in interps):
        raise UsageError(f"--threads {threads} needs a free-threaded interpreter with the GIL off: "
                         "add 3.13t to --python (the concurrency oracle runs only there)")
    return threads


def load_case(path: str) -> tuple[Program, dict[str, Any]]:
    """A Program and its ``[tool.tcfuzz]`` metadata (fuzz.corpus.newer_grammar.load_case)."""
    from fuzz.corpus.newer_grammar import load_case as load

    return load(path)


# ---------------------------------------------------------------- run

def _resumed_config(args: argparse.Namespace) -> Any:
    """The config of the campaign in ``--resume DIR`` (its meta); --programs
    and --budget given now extend it."""
    from fuzz.campaign.config import CampaignConfig
    from fuzz.campaign.database import CampaignDB

    budget_s = parse_duration_s(args.budget) if args.budget else None
    path = Path(args.resume) / "campaign.sqlite"
    if not path.exists():
        raise UsageError(f"--resume {args.resume}: no campaign.sqlite there; pass the --out folder of a tcfuzz run")
    db = CampaignDB(path)
    meta = db.meta().get("config", {})
    db.close()
    config = CampaignConfig.from_meta(meta, Path(args.resume))
    config.resume = True
    config.running = (os.cpu_count() or 1) if args.running is None else args.running  # this machine's cores
    if args.programs is not None:
        config.programs = args.programs
    if budget_s is not None:
        config.budget_s = budget_s
    return config


def _new_config(args: argparse.Namespace) -> Any:
    """The CampaignConfig of ``tcfuzz run`` without --resume: every argument
    checked (UsageError) before the interpreters' envs are looked at."""
    from fuzz.campaign.config import DEFAULT_SCHEDULE, CampaignConfig, parse_share
    from fuzz.generate.sources import DEFAULT_MIX, SourceMix

    device = check_device_name(args.device or "cpu")
    interpreters.parse_specs(args.python)
    backends = parse_backends(args.backend)
    budget = "10m" if args.programs is None and args.budget is None else args.budget
    budget_s = parse_duration_s(budget) if budget else None
    shard = parse_shard(args.shard) if args.shard else (0, 1)
    share = parse_share(args.share)
    if args.schedule == "share" and not share:
        raise UsageError("--schedule share needs --share, e.g. --share aot_eager=0.5,inductor=0.25")
    if args.picks < 1:
        raise UsageError(f"Expected --picks of at least 1 but got --picks={args.picks}")
    check_threads(args.threads)
    sources = DEFAULT_MIX
    if args.sources:
        try:
            sources = SourceMix.parse(args.sources)
        except ValueError as e:
            raise UsageError(f"--sources: {e}") from None
    matrix = cells.parse_matrix(args.matrix)
    release = args.torch or os.environ.get("TCFUZZ_TORCH_RELEASE") or None
    chosen = cells.choose(args.python, matrix, release)
    for name, reason in chosen.unavailable.items():
        print(f"tcfuzz: Python {name} is unavailable: {reason}", file=sys.stderr)
    interps = check_device(device, chosen.interpreters)
    backends = check_cpp_compiler(backends, device)
    seed = args.seed if args.seed is not None else daily_seed()
    name = f"{datetime.datetime.now().strftime('%Y%m%d-%H%M%S')}-seed{seed}"
    return CampaignConfig(
        interpreters=interps, backends=backends, out_dir=Path(args.out) if args.out else Path("reports") / name,
        corpus_dir=Path(args.corpus), device=device, fullgraph=args.fullgraph, budget_s=budget_s,
        programs=args.programs, seed=seed, jobs=args.jobs,
        running=(os.cpu_count() or 1) if args.running is None else args.running, shard=shard, minimise=not args.no_minimize, name=name,
        sources=sources, feedback=not args.no_feedback, coverage=not args.no_coverage,
        guided=not args.no_guidance, share=share,
        threads=check_threads(args.threads, interps),
        worker_rss_mib=args.worker_rss_mib, worker_rss_growth_mib=args.worker_rss_growth_mib,
        matrix=matrix.value, torch=release, unavailable=chosen.unavailable, vary_compile=not args.default_compile,
        schedule=args.schedule or DEFAULT_SCHEDULE.value, picks=args.picks)


def cmd_run(args: argparse.Namespace) -> int:
    from fuzz.campaign.loop import Campaign

    config = _resumed_config(args) if args.resume else _new_config(args)
    with console.progress_display() as show:
        result = Campaign(config, on_progress=show).run()
    return _print_run(result, config.name, config.out_dir)


def _print_run(result: Any, name: str, out: Path) -> int:
    """Print a campaign's closing lines (fuzz.console); its exit code."""
    console.print_run(result, name, out)
    return EXIT_FOUND if result.new_buckets else EXIT_OK


_backlog_lines = console.backlog_lines


# ---------------------------------------------------------------- repro / triage

def _case_settings(args: argparse.Namespace, meta: dict[str, Any]) -> tuple[str, bool]:
    """(device, fullgraph) for a case: the flags, else what its table says
    (a case found on cuda runs there; a fullgraph case keeps fullgraph).
    Raises UsageError for an unknown device and any malformed --python spec."""
    device = check_device_name(args.device or meta.get("device", "cpu"))
    interpreters.parse_specs(args.python)
    return device, args.fullgraph or bool(meta.get("fullgraph", False))


def _compile_settings(meta: dict[str, Any]) -> CompileSettings:
    """The compile settings a case's table records (``compile``; none: the
    defaults). Raises UsageError for a malformed entry."""
    try:
        return CompileSettings.from_json(meta.get("compile"))
    except (TypeError, ValueError) as e:
        raise UsageError(f"the case's compile = {meta.get('compile')!r} is malformed ({e}): fix or remove it") from None


def _run_matrix(program: Program, interps: list[interpreters.Interpreter], backends: list[str], *,
                fullgraph: bool, device: str, log_dir: Path, infos: dict[str, Any] | None = None,
                settings: CompileSettings | None = None) -> list[Outcome]:
    from fuzz.campaign.workers import Task, WorkerPool

    with WorkerPool(interps, jobs=1, log_dir=log_dir) as pool:
        started = pool.start()
        if infos is not None:  # the interpreters' versions, for --markdown
            infos.update(started)
        return pool.run_all(Task(program, i.name, b, device, fullgraph, settings=settings or CompileSettings())
                            for i in interps for b in backends)


def _table(outcomes: list[Outcome], meta: dict[str, Any], interps: list[str], backends: list[str]) -> str:
    """The interpreter x backend table of ``outcomes``, each cell as triage
    writes it (fuzz.triage.matrix.cell_text; * marks the cells that show the
    case's signature, or any bug for a plain program)."""
    from fuzz.triage import matrix

    cells = {(c.interpreter, c.backend): matrix.cell_text(c)
             for c in matrix.cells_of(outcomes, matrix.target_of(meta))}
    widths = [max([len("python")] + [len(i) for i in interps])] + [
        max([len(b)] + [len(cells.get((i, b), "")) for i in interps]) for b in backends]
    rows = [["python", *backends]] + [[i, *(cells.get((i, b), "-") for b in backends)] for i in interps]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def pattern(outcomes: list[Outcome], interps: list[str], backends: list[str]) -> str:
    """A name for where the bug shows ("all versions", "3.12+ only",
    "free-threaded only", "all versions, Inductor only", ...; see fuzz.triage.matrix)."""
    from fuzz.triage.matrix import name_pattern

    return name_pattern({(o.interpreter, o.backend) for o in outcomes if o.verdict.is_bug}, interps, backends)


def cmd_repro(args: argparse.Namespace) -> int:
    program, meta = load_case(args.case)
    device, fullgraph = _case_settings(args, meta)
    backends = parse_backends(args.backend or meta.get("backend"))
    if args.bisect:  # Inductor-only needs the rungs below it too
        backends += [b for b in ("aot_eager", "inductor") if b not in backends]
    interps = check_device(device, interpreters.parse_list(args.python))
    names = [i.name for i in interps]
    infos: dict[str, Any] = {}
    settings = _compile_settings(meta)
    outcomes = _run_matrix(program, interps, backends, fullgraph=fullgraph, device=device,
                           log_dir=Path(args.log_dir), infos=infos, settings=settings)
    blamed = _bisect(args.case, program, meta, interps, outcomes, device=device) if args.bisect else None
    if args.json:
        print(json.dumps({"case": args.case, "pattern": pattern(outcomes, names, backends),
                          "outcomes": [o.to_json() for o in outcomes], "bisect": blamed}, indent=2))
    elif args.markdown:
        from fuzz.report import issue

        sys.stdout.write(issue.render_markdown(args.case, Path(args.case).read_text(), meta, outcomes, infos,
                                               _issue_extras(args, interps, outcomes, infos)))
    else:
        print(_table(outcomes, meta, names, backends))
        print(f"\npattern: {pattern(outcomes, names, backends)}")
        if not settings.is_default:
            print(f"compile settings: {settings.describe()}")
        for f in findings(outcomes):
            # a case is minimised: its root cause names it (from the runs on the finding's backend)
            sig = f.signature.with_root_cause(program.source, [o for o in outcomes if o.backend == f.backend])
            print(f"  {sig.describe()}  [{f.backend}] id {sig.id}")
        for o in outcomes:
            if o.verdict is Verdict.CRASH:
                print(f"\n{o.interpreter}/{o.backend}: {o.error_type} at {o.torch_frame or '?'} "
                      f"(phase {o.phase or '?'})")
        if blamed is not None:
            from fuzz.triage import compiler_bisect

            print(f"\n{blamed['interpreter']}: {compiler_bisect.describe(blamed)}" if blamed.get("interpreter")
                  else "\n--bisect: no Inductor-only finding to bisect (a lower backend shows it, or nothing does)")
    if args.save:
        _save(program, interps, outcomes, Path(args.save), device=device, fullgraph=fullgraph, infos=infos,
              settings=settings)
    return EXIT_FOUND if any(o.verdict.is_bug for o in outcomes) else EXIT_OK


def _issue_extras(args: argparse.Namespace, interps: list[interpreters.Interpreter], outcomes: list[Outcome],
                  infos: dict[str, Any]) -> Any:
    """``repro --markdown``'s template fields (fuzz.report.issue.IssueExtras):
    collect_env per interpreter, a TORCH_TRACE run under --log-dir, the
    newest torch run and whether it reproduces there, the ablation unless
    --no-ablation (minutes: python CASE per setting)."""
    from fuzz.report import issue
    from fuzz.triage import ablation

    text = Path(args.case).read_text()
    newest = max((info.torch for info in infos.values()), default="", key=lambda v: [
        int(p) if p.isdigit() else 0 for p in re.split(r"[.+]", v)])
    on_newest = {o.interpreter for o in outcomes if infos.get(o.interpreter) and infos[o.interpreter].torch == newest}
    trace = ablation.torch_trace(text, interps[0], Path(args.log_dir) / f"trace-{Path(args.case).stem}") \
        if interps else None
    minified = _minified(args, interps, outcomes)
    return issue.IssueExtras(
        ablation=[] if args.no_ablation else ablation.run_ablation(text, interps),
        collect_env={i.name: ablation.collect_env(i) for i in interps}, newest_torch=newest,
        reproduces_on_newest=any(o.verdict.is_bug for o in outcomes if o.interpreter in on_newest) if newest else None,
        trace_dir=str(trace.raw_dir) if trace else "", tlparse_dir=str(trace.tlparse_dir or "") if trace else "",
        trace_note=trace.note if trace else "",
        minifier_repro=minified.repro if minified else "", minifier_note=minified.note if minified else "")


def _minified(args: argparse.Namespace, interps: list[interpreters.Interpreter], outcomes: list[Outcome]) -> Any:
    """torch's after-AOT minifier on an AOT- or Inductor-stage corpus case
    (fuzz.triage.minifier), on the first interpreter where it showed; None
    for other cases or with --no-minifier."""
    from fuzz.triage import minifier

    _, meta = load_case(args.case)
    if args.no_minifier or not minifier.applies(meta) or "[tool.tcfuzz]" not in Path(args.case).read_text():
        return None
    shown = [i for i in interps if any(o.interpreter == i.name and o.verdict.is_bug for o in outcomes)]
    if not shown:
        return minifier.MinifierResult("", "the case did not reproduce here", 0.0)
    print(f"running torch's after-AOT minifier on {shown[0].name} (minutes)...", file=sys.stderr)
    return minifier.after_aot_repro(Path(args.case), shown[0], kind=str(meta.get("kind", "")))


def _save(program: Program, interps: list[interpreters.Interpreter], outcomes: list[Outcome], corpus_dir: Path, *,
          device: str, fullgraph: bool, infos: dict[str, Any], settings: CompileSettings | None = None) -> None:
    """``repro --save``: file each bug (not graph break) the case shows into
    ``corpus_dir`` as it is, confirmed standalone and with its replay recorded
    (fuzz.corpus.filing.file_unreduced); say what was saved."""
    from fuzz.corpus import filing

    torch_version = filing.torch_version_of(infos)
    for f in findings(outcomes):
        if f.signature.kind in (Kind.GRAPH_BREAK, Kind.GRAPH_BREAK_REGRESSION):
            continue
        case = filing.file_unreduced(program, f, interps, corpus_dir=corpus_dir, device=device, fullgraph=fullgraph,
                                     torch_version=torch_version, outcomes=outcomes, settings=settings,
                                     torch_of={n: i.torch for n, i in infos.items()})
        if case.filed:
            print(f"saved {case.path}")
        else:
            print(f"not saved: python CASE does not reproduce {case.signature.id} everywhere "
                  f"(exit codes {dict(case.standalone or {})})", file=sys.stderr)


def _bisect(case: str, program: Program, meta: dict[str, Any], interps: list[interpreters.Interpreter],
            outcomes: list[Outcome], *, device: str) -> dict[str, Any]:
    """CompilerBisector's verdict on the first interpreter where the case is
    Inductor-only ({} when there is none); recorded in a corpus case's table."""
    from fuzz.triage import compiler_bisect

    where = compiler_bisect.inductor_only(outcomes)
    if not where:
        return {}
    interp = next(i for i in interps if i.name == where[0])
    print(f"bisecting on {interp.name} with CompilerBisector (minutes)...", file=sys.stderr)
    blamed = {"interpreter": interp.name, **compiler_bisect.bisect(program, interp, device=device)}
    if "signature" in meta:  # a corpus case records what the bisector blames
        compiler_bisect.record_bisect(Path(case), blamed)
    return blamed


def cmd_triage(args: argparse.Namespace) -> int:
    """The interpreter x backend (x torch release) matrix of one case, compiled
    with the compile settings its table records; exit 0."""
    from fuzz.triage import matrix
    from fuzz.campaign import torch_envs

    if args.bisect and not args.torch:
        raise UsageError("--bisect searches torch releases: pass them too, e.g. --torch 2.10.0,2.11.0,2.12.0")
    releases = torch_envs.parse_releases(args.torch) if args.torch else []
    program, meta = load_case(args.case)
    device, fullgraph = _case_settings(args, meta)
    backends = parse_backends(args.backend)
    settings = _compile_settings(meta)  # as repro and minimize run it
    interps = check_device(device, interpreters.parse_list(args.python))
    run = matrix.pool_runner(program, device=device, fullgraph=fullgraph, log_dir=Path(args.log_dir),
                             settings=settings)
    result = matrix.triage(
        args.case, run, interps, backends, target=matrix.target_of(meta), releases=releases, bisect=args.bisect,
        env_for=lambda interp, release: torch_envs.ensure_env(interp, release, index_url=args.index_url),
        settings=settings)
    _print_result(args, result, matrix)
    return EXIT_OK


def _print_result(args: argparse.Namespace, result: Any, renderer: Any) -> None:
    """``result`` as JSON (``--json``), Markdown (``--markdown``) or text, by
    the ``render_markdown``/``render_text`` of module ``renderer``."""
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    elif args.markdown:
        sys.stdout.write(renderer.render_markdown(result))
    else:
        print(renderer.render_text(result))


def cmd_diff(args: argparse.Namespace) -> int:
    """Compare two campaigns; exit 0 when nothing changed, 1 when something did."""
    from fuzz.triage import diff

    result = diff.diff(diff.load(Path(args.old)), diff.load(Path(args.new)))
    _print_result(args, result, diff)
    return EXIT_FOUND if result.changed else EXIT_OK


# ---------------------------------------------------------------- minimize

def _pinned(python: str | None, release: str | None) -> list[interpreters.Interpreter]:
    """The interpreters of ``--python``, each on torch ``release`` (an env
    made with uv as for ``tcfuzz run --torch``) when one is given. Raises
    UsageError or HarnessError as fuzz.campaign.cells.choose does."""
    if not release:
        return interpreters.parse_list(python)
    chosen = cells.choose(python, cells.Matrix.NEWEST, release)
    for name, reason in chosen.unavailable.items():
        print(f"tcfuzz: Python {name} is unavailable: {reason}", file=sys.stderr)
    return list(chosen.interpreters)


def cmd_minimize(args: argparse.Namespace) -> int:
    from fuzz.corpus import filing
    from fuzz.reduce.pipeline import SignatureCheck, minimize_source
    from fuzz.campaign.workers import Task, WorkerPool

    program, meta = load_case(args.case)
    device, fullgraph = _case_settings(args, meta)
    backends = parse_backends(args.backend or meta.get("backend"))
    budget_s = parse_duration_s(args.budget)
    interps = check_device(device, _pinned(args.python, args.torch))
    names = [i.name for i in interps]
    settings = _compile_settings(meta)
    jobs = args.jobs or max(1, (os.cpu_count() or 1) // len(names))  # every core of the machine
    with WorkerPool(interps, jobs=jobs, log_dir=Path(args.log_dir)) as pool:
        pool.start()
        outcomes = pool.run_all(Task(program, n, b, device, fullgraph, settings=settings)
                                for n in names for b in backends)
        target = case_target(meta.get("signature"), findings(outcomes))
        if target is None:
            print(f"could not minimise {args.case}: it shows no divergence, crash or graph break here", file=sys.stderr)
            return EXIT_FOUND
        print(f"minimising for {target.signature.describe()} [{target.backend}]", file=sys.stderr)
        check = SignatureCheck(pool, program, target.signature, target.backend, names, fullgraph=fullgraph,
                               device=device, settings=settings, fast=True)  # the best confirmed in full
        try:
            result = minimize_source(program.source, check, budget_s=budget_s, program=program, jobs=jobs,
                                     progress=lambda message: print(f"  {message}", file=sys.stderr))
        except CouldNotMinimize as e:
            print(f"could not minimise {args.case}: {e}", file=sys.stderr)
            return EXIT_FOUND
        torch_version = filing.torch_version_of({n: pool.info[n] for n in target.signature.interpreters
                                                 if n in pool.info} or pool.info)
    signature = target.signature.with_root_cause(result.source, check.shown or outcomes)
    texts = render.render_case_runners(program.with_source(result.source), signature, backend=target.backend,
                                       device=device, fullgraph=fullgraph, torch_version=torch_version,
                                       settings=result.settings if result.settings is not None else settings)
    print(f"{result.lines_before} -> {result.lines_after} lines in {result.elapsed_s:.0f} s, {result.checks} checks"
          f"{'' if result.complete else ' (budget reached)'}", file=sys.stderr)
    if args.in_place:
        from fuzz.corpus.rewrite import rewrite_case

        rewritten, why = rewrite_case(Path(args.case), meta, texts, signature, interps,
                                      smaller=result.lines_after < result.lines_before)
        print(f"{args.case}: {why}", file=sys.stderr)
        return EXIT_OK if rewritten else EXIT_FOUND
    text = texts[-1]  # the runner that makes every call the harness made
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return EXIT_OK if result.lines_after < result.lines_before else EXIT_FOUND


# ---------------------------------------------------------------- report

def cmd_merge(args: argparse.Namespace) -> int:
    from fuzz.campaign.merge import merge

    summary = merge([Path(d) for d in args.dirs], Path(args.output))
    print(f"merged {len(args.dirs)} shards: {summary['programs']} programs, {summary['runs']} runs, "
          f"{len(summary['buckets'])} buckets ({summary['new_signatures']} new)")
    print(f"report: {Path(args.output) / 'index.html'}")
    return EXIT_OK


def cmd_corpus_status(args: argparse.Namespace) -> int:
    from fuzz.corpus import sizes, status

    root = Path(args.corpus)
    if not root.is_dir():
        raise UsageError(f"no corpus folder {root}: pass --corpus DIR")
    if args.sizes:  # program lines instead of standings
        print(sizes.render_sizes(sizes.case_sizes(root)))
        return EXIT_OK
    standings = status.corpus_standings(root)
    if args.json:
        print(json.dumps([s.to_json() for s in standings], indent=2))
    else:
        print(status.render_table(standings, markdown=args.markdown))
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    from fuzz.report.summary import rebuild_reports

    paths = rebuild_reports(Path(args.dir))
    print("\n".join(str(p) for p in paths.values()))
    return EXIT_OK


# ---------------------------------------------------------------- main

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tcfuzz", description="Differential fuzzer for torch.compile across CPython versions.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the harness does")
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--python", help="interpreters: 3.11,3.12,3.13,3.13t,3.14,3.14t,3.15,3.15t or paths "
                                        "(default: all of them that are provisioned)")
        p.add_argument("--backend", help=f"backends, comma-separated (default {DEFAULT_BACKENDS})")
        p.add_argument("--device", help="cpu (default; for a case, the device it was found on) or cuda")
        p.add_argument("--fullgraph", action="store_true", help="compile with fullgraph=True")
        p.add_argument("--log-dir", default="reports/logs", help="where worker logs go")

    run = sub.add_parser("run", help="a fuzzing campaign")
    common(run)
    run.add_argument("--budget", help="time budget, e.g. 10m (default 10m unless --programs)")
    run.add_argument("--programs", type=int, help="run the first N seeds (with --shard: this shard's part of them)")
    run.add_argument("--seed", type=int, help="first seed (default: one per UTC day, the same for every shard)")
    run.add_argument("--jobs", type=int, default=1, help="workers per interpreter (default 1)")
    run.add_argument("--running", type=int, metavar="N",
                     help="runs executing at once over all workers (default: the machine's cores; 0: no limit)")
    run.add_argument("--shard", help="I/N: run the I-th of N shards of the seed space")
    run.add_argument("--out", help="report folder (default reports/<campaign>)")
    run.add_argument("--corpus", default="corpus", help="corpus folder (default ./corpus)")
    run.add_argument("--no-minimize", "--no-minimise", dest="no_minimize", action="store_true",
                     help="bucket only; file nothing")
    run.add_argument("--default-compile", action="store_true",
                     help="compile every program with torch.compile's defaults (default: a share of programs get "
                          "dynamic, marked dims, max-autotune or Inductor config keys, chosen by seed)")
    run.add_argument("--resume", metavar="DIR",
                     help="continue the campaign in DIR (after a kill): its config, the next unfinished program")
    run.add_argument("--share", help="share of programs on the slower backends, e.g. aot_eager=0.5,inductor=0.25 "
                                     "(every interpreter; the lowest backend always runs; chosen by seed; "
                                     "implies --schedule share)")
    run.add_argument("--schedule", choices=["yield", "full", "share"],
                     help="which (interpreter, backend) cells run each program: yield (default: the lowest backend "
                          "on every interpreter, each slower one on --picks interpreters chosen by each cell's new "
                          "buckets per CPU-second), full (every backend on every interpreter), share (--share)")
    run.add_argument("--picks", type=int, default=1,
                     help="interpreters each slower backend runs a program on under --schedule yield (default 1)")
    run.add_argument("--threads", type=int, default=0,
                     help="K: also call each compiled function from K threads at once (free-threaded 3.13t only)")
    run.add_argument("--worker-rss-mib", type=float, default=RSS_LIMIT_MIB,
                     help=f"replace a worker whose resident memory after a program exceeds this (default {RSS_LIMIT_MIB})")
    run.add_argument("--worker-rss-growth-mib", type=float, default=RSS_GROWTH_LIMIT_MIB,
                     help="replace a worker whose resident memory has grown by more than this since it was warm "
                          f"(default {RSS_GROWTH_LIMIT_MIB}; 0: never; Dynamo keeps ~0.5 MiB per program that nothing "
                          "releases)")
    run.add_argument("--no-feedback", action="store_true",
                     help="programs a function of the seed alone (shards then merge into exactly one run's buckets); "
                          "coverage is still recorded")
    run.add_argument("--no-guidance", action="store_true",
                     help="draw every program as without coverage: no mutants of the programs that reached new "
                          "compiler lines (coverage still recorded; the campaign before guidance)")
    run.add_argument("--no-coverage", action="store_true",
                     help="workers do not record the compiler lines each run reaches, so no coverage guidance "
                          "(about 1-5%% of a worker's time saved)")
    run.add_argument("--matrix", help="named (interpreter, torch) cells: newest (default: each interpreter with the "
                                      "newest torch that has a wheel for it) or mission (3.11-3.13t on torch 2.12.0)")
    run.add_argument("--torch", help="pin one torch release on every interpreter, e.g. 2.13.0 "
                                     "(envs made with uv, cached under ~/.cache/tcfuzz/envs; also TCFUZZ_TORCH_RELEASE)")
    run.add_argument("--sources", help="where programs come from, with shares "
                                       "(default graphs=0.1,ours=0.7,mutation=0.1,hypothesmith=0.1; graphs=1: "
                                       "operator-heavy programs only)")
    run.set_defaults(func=cmd_run)

    repro = sub.add_parser("repro", help="run one case on every interpreter x backend")
    common(repro)
    repro.add_argument("case")
    repro.add_argument("--json", action="store_true")
    repro.add_argument("--markdown", action="store_true", help="print a block ready to paste into a PyTorch issue")
    repro.add_argument("--no-ablation", action="store_true",
                       help="with --markdown: skip the backend x dynamic x fullgraph ablation (python CASE per setting)")
    repro.add_argument("--no-minifier", action="store_true",
                       help="with --markdown: skip torch's after-AOT minifier on an AOT- or Inductor-stage case")
    repro.add_argument("--save", metavar="CORPUS",
                       help="file each bug the case shows into this corpus folder as a seed case, unreduced")
    repro.add_argument("--bisect", action="store_true",
                       help="for an Inductor-only finding, run torch's CompilerBisector and record what it blames")
    repro.set_defaults(func=cmd_repro)

    triage = sub.add_parser("triage", help="the interpreter x backend (x torch release) matrix of one case")
    common(triage)
    triage.add_argument("case")
    output = triage.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the matrix as JSON")
    output.add_argument("--markdown", action="store_true", help="print the matrix as Markdown (for an issue)")
    triage.add_argument("--torch", help="torch releases to add as an axis, in order: 2.10.0,2.11.0,2.12.0 "
                                        "(envs made with uv, cached under ~/.cache/tcfuzz/envs)")
    triage.add_argument("--index-url", help="package index for the torch envs (e.g. a nightly index)")
    triage.add_argument("--bisect", action="store_true",
                        help="find the first --torch release where the behaviour changes, running as few as it can")
    triage.set_defaults(func=cmd_triage)

    dif = sub.add_parser("diff", help="what changed between two campaigns (exit 1 when something did)")
    dif.add_argument("old", help="the earlier campaign's folder (campaign.sqlite or summary.json)")
    dif.add_argument("new", help="the later campaign's folder")
    output = dif.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the diff as JSON")
    output.add_argument("--markdown", action="store_true", help="print the diff as Markdown (a nightly post)")
    dif.set_defaults(func=cmd_diff)

    standing = sub.add_parser("corpus-status", help="each corpus case live on the newest torch, fixed since a "
                                                    "release, or 3.13t-only (from its recorded replays; "
                                                    "scripts/refresh-corpus.sh replays them all)")
    standing.add_argument("--corpus", default="corpus", help="corpus folder (default ./corpus)")
    output = standing.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true")
    output.add_argument("--markdown", action="store_true")
    output.add_argument("--sizes", action="store_true", help="each case's program lines instead, and each group "
                        "against its target (bug cases: median <= 8, none over 15; graph breaks: <= 10, none over 25)")
    standing.set_defaults(func=cmd_corpus_status)

    mini = sub.add_parser("minimize", help="reduce a case, keeping its signature")
    common(mini)
    mini.add_argument("case")
    mini.add_argument("-o", "--output", help="write the minimised case here (default: stdout)")
    mini.add_argument("--in-place", action="store_true",
                      help="rewrite the corpus case itself, its table kept, when the minimised program is smaller, "
                           "keeps the bucket and reproduces standalone")
    mini.add_argument("--budget", default="5m", help="time budget (default 5m)")
    mini.add_argument("--jobs", type=int, default=0, help="workers per interpreter (default: cores / interpreters)")
    mini.add_argument("--torch", help="minimise on torch RELEASE (e.g. 2.12.0) on every interpreter, for a case "
                                      "that is live only there: an env made with uv as for tcfuzz run --torch")
    mini.set_defaults(func=cmd_minimize)

    mrg = sub.add_parser("merge", help="merge shard campaigns (tcfuzz run --shard I/N) into one report")
    mrg.add_argument("dirs", nargs="+", metavar="DIR", help="the shards' --out folders")
    mrg.add_argument("-o", "--output", required=True, help="folder for the merged campaign and its report")
    mrg.set_defaults(func=cmd_merge)

    rep = sub.add_parser("report", help="rebuild a campaign's report from its database")
    rep.add_argument("dir")
    rep.set_defaults(func=cmd_report)

    cov = sub.add_parser("coverage", help="opcodes and torch/_dynamo lines a generator's programs reach")
    cov.add_argument("--programs", type=int, default=500, help="programs to draw (default 500)")
    cov.add_argument("--python", help="interpreters: 3.11 ... 3.15t or paths (default: all that are provisioned)")
    cov.add_argument("--generator", default="ours",
                     help="ours (default), hypothesmith, mutation or graphs (operator-heavy)")
    cov.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    cov.add_argument("--no-lines", action="store_true", help="opcodes only: skip running the programs")
    cov.add_argument("--backend", default="eager", choices=("eager", "inductor"),
                     help="compile with this for line coverage (default eager); inductor also reports aten_ops "
                          "and the line coverage of torch/_inductor and torch/_functorch")
    cov.add_argument("--default-compile", action="store_true",
                     help="compile every program with torch.compile's defaults (default: the settings a "
                          "campaign draws for each program's seed: dynamic, marked dims, max-autotune, config keys)")
    cov.add_argument("--torch", help="measure torch RELEASE (e.g. 2.12.0) instead of each env's own: an env made "
                                     "with uv as for tcfuzz run --torch, given the coverage package")
    cov.add_argument("--data-dir", metavar="DIR",
                     help="keep the coverage data in DIR/<python>/.coverage, with missed.tsv: each measured file's "
                          "statements and missed ones, most missed first")
    cov.add_argument("--json", action="store_true", help="print JSON: {interpreters: {name: {...}}}")
    cov.add_argument("--campaign", metavar="DIR",
                     help="report the compiler coverage the campaign in DIR recorded (per package and file, "
                          "per interpreter) instead of measuring a generator's")
    cov.set_defaults(func=cmd_coverage)
    return parser


# ---------------------------------------------------------------- coverage

def cmd_coverage(args: argparse.Namespace) -> int:
    from fuzz.report import coverage
    from fuzz.generate.sources import SOURCES

    if args.campaign:  # the lines the campaign's workers reached
        from fuzz.report import campaign_coverage

        print(campaign_coverage.describe(Path(args.campaign), as_json=args.json))
        return EXIT_OK

    if args.generator not in SOURCES:
        raise UsageError(f"Expected --generator to be one of {', '.join(SOURCES)} but got --generator {args.generator}")
    if args.programs < 1:
        raise UsageError(f"Expected --programs to be at least 1 but got --programs {args.programs}")
    probed = _pinned(args.python, args.torch)
    if args.torch:
        from fuzz.campaign import torch_envs

        for interp in probed if not args.no_lines else ():
            torch_envs.ensure_packages(interp, coverage.PROBE_REQUIREMENTS)
    try:
        measured = coverage.measure(probed, programs=args.programs,
                                    generator=args.generator, seed=args.seed, lines=not args.no_lines,
                                    backend=args.backend, vary_compile=not args.default_compile,
                                    data_dir=Path(args.data_dir).resolve() if args.data_dir else None)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if args.json:
        print(json.dumps(coverage.as_json(measured)))
    else:
        print(coverage.render_table(measured, args.generator))
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except (UsageError, ProgramError) as e:
        print(f"tcfuzz: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except (HarnessError, TcfuzzError) as e:
        print(f"tcfuzz: harness failure: {e}", file=sys.stderr)
        return EXIT_HARNESS
    except KeyboardInterrupt:
        print("tcfuzz: interrupted", file=sys.stderr)
        return EXIT_HARNESS


if __name__ == "__main__":
    sys.exit(main())
