"""Filing a finding into the corpus: minimise it (or not), confirm it
standalone, write it.

A case is written only once ``python CASE`` (a fresh process per
interpreter, nothing but torch) exits non-zero on every interpreter of its
signature; the exit codes go into the case's ``replay`` table. The campaign
files minimised cases (``file_finding``); ``tcfuzz repro --save`` files a
case as it is (``file_unreduced``), confirmed and recorded the same way.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness import casefile
from harness.casefile import DEFAULT_TORCH
from harness.outcome import Outcome
from harness.program import Program
from harness.settings import CompileSettings
from fuzz.campaign.interpreters import Interpreter
from fuzz.campaign.workers import WorkerPool
from fuzz.corpus import render, store
from fuzz.errors import CouldNotMinimize
from fuzz.reduce.check import SignatureCheck
from fuzz.reduce.pipeline import minimize_source
from fuzz.triage import known
from fuzz.triage.signature import Finding, Kind, Signature

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class FiledCase:
    """What filing one finding came to.

    ``signature``: the signature the case shows (a divergence's carries the
    root cause of the filed program, fuzz.triage.rootcause); ``path``: the corpus case, None
    when nothing was filed (``reason`` says why); ``standalone``: the exit
    code of ``python CASE`` per interpreter name (None when it never ran);
    ``stats``: the reducer's statistics (``checks``, and after a reduction
    ``lines_before``, ``lines_after``, ``elapsed_s`` in seconds, ``full_checks``
    the stage results confirmed on every interpreter, ``fallbacks`` those that
    failed and put the reduction back to the last confirmed source);
    ``reduced``: where the minimisation ran out of time above ``max_lines``
    (file_finding), the program it had reduced to, not filed; ``known``:
    the minimised program's signature is a corpus case's or merged into one
    (known-issues.toml), so nothing was filed again.
    """

    signature: Signature
    path: Path | None = None
    standalone: Mapping[str, int] | None = None
    stats: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    reason: str = ""
    reduced: Program | None = None
    known: bool = False

    @property
    def filed(self) -> bool:
        return self.path is not None


def file_finding(pool: WorkerPool, finding: Finding, program: Program, *, names: list[str],
                 interpreters: list[Interpreter], corpus_dir: Path, device: str, fullgraph: bool, jobs: int,
                 budget_s: float, torch_version: str, torch_of: Mapping[str, str] | None = None,
                 settings: CompileSettings | None = None, max_lines: int | None = None,
                 known_ids: Collection[str] = ()) -> FiledCase:
    """Minimise one finding on ``pool``'s workers (interpreters ``names``,
    at most ``budget_s`` seconds, ``jobs`` candidates at once; candidates are
    checked on the signature's first interpreter and each stage's result on
    all of them, SignatureCheck ``fast``), confirm it
    standalone on every one of ``interpreters`` and write it under
    ``corpus_dir``. Never raises for a finding that does not reproduce: the
    FiledCase says so (and a warning is logged). ``torch_of``: each
    interpreter's torch version (its replays are recorded with it; the case
    pins the lowest of its signature's interpreters'), else ``torch_version``;
    ``settings``: how the finding compiled (harness.settings); the case
    records those the minimiser kept (``MinimizeResult.settings``);
    ``max_lines``: a minimisation that runs out of its budget with more
    program lines than this (fuzz.corpus.sizes) files nothing and hands
    back its result as ``FiledCase.reduced``, for a later campaign to
    minimise on from (None: file whatever the budget reached); ``known_ids``:
    the corpus's bucket ids and those merged into its cases
    (known_signature_ids): a minimised program whose signature has one of
    them is that case's bug and is not written again (``FiledCase.known``)."""
    sig = finding.signature
    if torch_of:
        shown = [torch_of[n] for n in sig.interpreters if n in torch_of]
        torch_version = torch_version_of({n: _Info(v) for n, v in enumerate(shown)}) if shown else torch_version
    # two-phase: candidates on the signature's first interpreter, each stage's best on all of them
    check = SignatureCheck(pool, program, sig, finding.backend, names, fullgraph=fullgraph, device=device,
                           settings=settings, fast=True)
    try:
        result = minimize_source(program.source, check, budget_s=budget_s, program=program, jobs=jobs)
    except CouldNotMinimize:
        log.warning("bucket %s did not reproduce on the workers; not filed", sig.id)
        return FiledCase(sig, stats={"checks": check.calls}, reason="it did not reproduce on the workers")
    # a divergence buckets by its root cause: the minimised program's skeleton
    # or the compiled exception that the check kept (fuzz.triage.rootcause)
    sig = sig.with_root_cause(result.source, check.shown)
    settings = result.settings if result.settings is not None else settings  # what settings/drop kept
    texts = render.render_case_runners(program.with_source(result.source), sig, backend=finding.backend,
                                       torch_version=torch_version, device=device, fullgraph=fullgraph,
                                       settings=settings)
    stats = {"lines_before": result.lines_before, "lines_after": result.lines_after, "checks": result.checks,
             "elapsed_s": round(result.elapsed_s, 2), "complete": result.complete,
             "full_checks": result.passes.get("confirm/full-signature", [0, 0])[0], "fallbacks": result.fallbacks}
    if max_lines is not None and not result.complete and result.lines_after > max_lines:
        log.warning("bucket %s: minimisation ran out of time at %d program lines (the limit is %d); not filed",
                    finding.signature.id, result.lines_after, max_lines)
        return FiledCase(finding.signature, stats=stats, reduced=program.with_source(result.source),
                         reason=f"its minimisation ran out of time at {result.lines_after} program lines, over "
                                f"{max_lines}: it waits in the backlog, reduced")
    if sig.id in known_ids:
        # the fresh-clone default campaign of 2026-12-07 wrote 92a2366d02f3 again,
        # an id known-issues.toml merges into f511b6484939
        log.info("bucket %s minimised to %s, a corpus case's bug: not filed again", finding.signature.id, sig.id)
        return FiledCase(sig, stats=stats, known=True,
                         reason=f"its minimised program is the corpus's bucket {sig.id} (a case or merged into one)")
    case = file_case(texts, sig, interpreters, corpus_dir=corpus_dir, torch_version=torch_of or torch_version,
                     stats=stats)
    if not case.filed:
        log.warning("bucket %s: %s; not filed", sig.id, case.reason)
    return case


def file_unreduced(program: Program, finding: Finding, interpreters: list[Interpreter], *, corpus_dir: Path,
                   device: str, fullgraph: bool, torch_version: str, outcomes: Sequence[Outcome] = (),
                   settings: CompileSettings | None = None, torch_of: Mapping[str, str] | None = None) -> FiledCase:
    """File ``program`` as it is (no reduction) for ``finding``, once
    ``python CASE`` reproduces it on the signature's interpreters (those of
    ``interpreters`` it names; the others are not run): how public reports
    become seed cases (``tcfuzz repro --save``); ``outcomes``: the runs that
    showed it (their exception messages key a divergence that raised);
    ``torch_of``: each interpreter's torch version, as for ``file_finding``
    (replays recorded with it, the case pinning the lowest of its
    signature's interpreters'), else ``torch_version``."""
    sig = finding.signature.with_root_cause(program.source, outcomes)
    if torch_of:
        shown = [torch_of[n] for n in sig.interpreters if n in torch_of]
        torch_version = torch_version_of({n: _Info(v) for n, v in enumerate(shown)}) if shown else torch_version
    texts = render.render_case_runners(program, sig, backend=finding.backend, torch_version=torch_version,
                                       device=device, fullgraph=fullgraph, settings=settings)
    return file_case(texts, sig, [i for i in interpreters if i.name in sig.interpreters], corpus_dir=corpus_dir,
                     torch_version=torch_of or torch_version)


def file_case(text: str | Sequence[str], signature: Signature, interpreters: list[Interpreter], *,
              corpus_dir: Path, torch_version: str | Mapping[str, str],
              stats: Mapping[str, Any] | None = None) -> FiledCase:
    """Run case ``text`` standalone on ``interpreters`` and write it (with
    the exit codes as its ``replay`` table, store.with_replay) to its place
    under ``corpus_dir`` when it reproduces on every interpreter of
    ``signature``. A sequence of texts (render.render_case_runners) is tried
    in order and the first that reproduces is written. A graph-break
    regression that also breaks on another interpreter is no regression and
    is not filed. Raises CorpusError if the case cannot be written."""
    texts = [text] if isinstance(text, str) else list(text)
    for text in texts[:-1]:
        codes = store.run_standalone(text, interpreters)
        if set(signature.interpreters) <= {n for n, code in codes.items() if code not in (0, store.DOES_NOT_PARSE)}:
            break
        log.info("bucket %s: the compact runner does not reproduce it (exit codes %s): the whole plan's",
                 signature.id, codes)
    else:
        text = texts[-1]
        codes = store.run_standalone(text, interpreters)
    stats = dict(stats or {})
    reproduced = {n for n, code in codes.items() if code not in (0, store.DOES_NOT_PARSE)}
    if signature.kind == Kind.GRAPH_BREAK_REGRESSION and reproduced - set(signature.interpreters):
        return FiledCase(signature, standalone=codes, stats={"checks": stats.get("checks", 0)},
                         reason=f"python CASE breaks on {sorted(reproduced - set(signature.interpreters))} too, "
                                "so it is no regression")
    if not set(signature.interpreters) <= reproduced:
        return FiledCase(signature, standalone=codes, stats=stats,
                         reason=f"python CASE does not reproduce on {sorted(set(signature.interpreters) - reproduced)}"
                                f" (exit codes {codes})")
    text = store.with_replay(text, codes, torch_version)
    path = store.write_case(store.case_path(corpus_dir, signature), text)
    return FiledCase(signature, path=path, standalone=codes, stats=stats)


@dataclasses.dataclass(frozen=True)
class _Info:
    torch: str


def torch_version_of(infos: Mapping[Any, Any]) -> str:
    """The torch version a case is filed with: the lowest that the
    interpreters' workers report (their InterpreterInfo ``torch``),
    casefile.DEFAULT_TORCH when none did."""
    versions = {info.torch for info in infos.values()}
    return sorted(versions)[0] if versions else DEFAULT_TORCH


def known_signature_ids(corpus_dir: Path, torch_of: Mapping[str, str] | None = None) -> set[str]:
    """Ids of the corpus's buckets, and of a divergence's signature without
    its root cause (what a campaign sees before minimisation), for each
    channel it was seen through (its own, and a merged case's ``observed``): a
    campaign that sees a known wrong-result signature again minimises only one
    program of it (last), in case its root cause makes it a different bug.

    ``torch_of``: the campaign's interpreters and the torch version each runs
    ("3.12" -> "2.15.0+cu132"). A case filed on another matrix is known there
    too, by the interpreter set it shows on in this one (``shown_on``), through
    each of its channels: a
    bucket's id holds its interpreters, so without this a nightly on the
    newest releases calls every case filed on the mission's matrix new.
    The ids merged into a case in ``known-issues.toml`` are known too.
    Raises ValueError for a ``known-issues.toml`` that is not valid TOML."""
    ids = set()
    for path in store.list_cases(corpus_dir):
        ids.add(path.stem)
        try:
            table = store.read_case(path)[1]
            sig = Signature.parse(table.get("signature", ""))
            # the other channels a merged bucket was seen through (its table's ``observed``)
            seen = [sig, sig.base(), *(dataclasses.replace(sig, detail=str(o)) for o in table.get("observed", []))]
            ids.update(s.id for s in seen)
            shown = shown_on(sig, table, torch_of) if torch_of else None
            if shown and shown != sig.interpreters:  # each channel too: the default campaign of 2026-12-06
                # listed as NEW a global-state bucket (all six) of 741b40f445d6's observed channels
                ids.update(dataclasses.replace(s, interpreters=shown).id for s in seen)
        except Exception as e:  # a malformed case is still known by its name
            log.warning("%s: %s", path, e)
    # the ids merged into a case (known-issues.toml's [merged]): the same bug seen by
    # another program or interpreter set, which a campaign would otherwise file again
    cases = {path.stem for path in store.list_cases(corpus_dir)}
    merges = known.load(corpus_dir)
    ids.update(old for old in merges.merged if merges.resolve(old) in cases)
    return ids


def narrowed_signature_ids(corpus_dir: Path, runs_on: Iterable[str]) -> set[str]:
    """Ids the corpus's buckets have when seen by a program that runs only on
    the interpreters ``runs_on`` (a program of 3.14+ or 3.15+ grammar): each
    case's signature, and its divergence base, with its interpreters cut to
    those it shares with ``runs_on`` (none shared: left out). A known bug met
    by such a program shows on that cut set alone; without this it was a
    new bucket per grammar gate (the IndexError of
    4923bd0421b1, 3.11-3.15, filed again as 07392cb49777 on 3.14-3.15 and once more on 3.15)."""
    allowed = set(runs_on)
    ids = set()
    for path in store.list_cases(corpus_dir):
        try:
            sig = Signature.parse(store.read_case(path)[1].get("signature", ""))
        except Exception as e:  # a malformed case: known by its name only (known_signature_ids)
            log.warning("%s: %s", path, e)
            continue
        cut = tuple(i for i in sig.interpreters if i in allowed)
        if cut:
            ids.update(dataclasses.replace(s, interpreters=cut).id for s in (sig, sig.base()))
    return ids


def shown_on(sig: Signature, table: Mapping[str, Any], torch_of: Mapping[str, str]) -> tuple[str, ...] | None:
    """The interpreters of ``torch_of`` (name -> torch version) that the case
    of ``sig`` and ``table`` (its ``[tool.tcfuzz]`` table) shows on, in
    ``torch_of``'s order: by its ``replay`` table where that has the
    (interpreter, torch) cell, else yes for an interpreter of its signature
    running the torch it was filed with. None when another interpreter's
    result is unknown, or when it shows on none."""
    replay, filed_with = table.get("replay", {}), str(table.get("torch", DEFAULT_TORCH)).split("+")[0]
    shown = []
    for name, version in torch_of.items():
        result = replay.get(casefile.replay_key(name, version))
        if result is None and name in sig.interpreters and version.split("+")[0] == filed_with:
            result = casefile.REPRODUCES
        if result is None:
            return None
        if result == casefile.REPRODUCES:
            shown.append(name)
    return tuple(shown) or None
