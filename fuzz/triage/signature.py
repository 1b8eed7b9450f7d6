"""Signatures: the bucket key of a finding, stable across runs and machines.

A signature is (kind, stage, normalised detail, interpreters). ``kind`` (Kind)
is a bug verdict or a graph break; ``stage`` is the lowest rung of the backend
ladder on which the finding shows (harness.backends.LADDER, after torch's
CompilerBisector), with "@cuda" appended for a bug found on a GPU
("inductor@cuda"; graph breaks are Dynamo's and keep "dynamo"); ``detail`` is,
per kind:
  divergence      what differed ("value", "stdout", "mutation", "globals",
                  "global-state", "exception:EagerType->CompiledType" or
                  "exception-message:Type"), then "@call" where the first
                  differing call was not the first ("@cached", "@guard",
                  "@shape": harness.execute's call plan); after minimisation,
                  its root cause in braces (fuzz.triage.rootcause:
                  "stdout {wrong-result: def f(): ...#1a2b3c4d}", "exception:
                  None->AttributeError {raises AttributeError: 'tuple_iterator'
                  object has no attribute 'send'}"). What was observed before
                  the braces is a label: the bucket (``bucket_key``, ``id``) is
                  the root cause alone, so one bug seen through a value, printed
                  text, grad mode or a later backward is one bucket
  compile-error   "OuterError(InnerError)@torch/<file>:<function>"
  crash           "SIGSEGV@<innermost frame, torch preferred>", or for a CUDA
                  fault "CUDA error: <what>@<phase>:<kernel or frame>"; the
                  signal is its class (``crash_class``): SIGSEGV stands for
                  every invalid memory access, so SIGBUS and an abort by
                  glibc's heap checks ("free(): invalid next size"), which
                  one memory corruption gives from run to run, key SIGSEGV
  (threaded)      a finding of the free-threaded concurrency run
                  (``Outcome.threads``, harness.threads) is a bucket of its
                  own: its divergence detail is "threads:<aspect>" alone, its
                  compile-error or crash detail the above after "threads:"
                  (not a CUDA fault's: the poisoned context is the process's)
  timeout         "timeout"
  graph-break     Dynamo's gb_type (or the break reason, normalised)
  graph-break-regression
                  "<gb_type> [absent on 3.11, 3.12]": a graph break that shows
                  on some interpreters (the signature's set) and not on others
                  that traced the same program (match or divergence verdict on
                  the same backend); it replaces the plain graph-break finding.
                  When interpreters break one program differently, only the
                  first difference of their break sequences (user line,
                  gb_type) is a finding (``first_difference``); the breaks
                  after it are its ``consequences``, not buckets of their own
Graph breaks from explicit ``torch._dynamo.graph_break()`` calls are planted by
the generator and are not findings.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import functools
import hashlib
import re
from collections.abc import Iterable

from harness.backends import LADDER, ladder_rank, stage_of
from harness.device import is_fault_outcome
from harness.outcome import HEAP_ABORT_PREFIX, THREADS_PREFIX, Aspect, Outcome, Verdict
from fuzz.campaign.interpreters import DEFAULT_PYTHONS


class Kind(str, enum.Enum):
    """The kind of a finding: the bug verdicts, and the two kinds of graph break."""

    DIVERGENCE = "divergence"
    COMPILE_ERROR = "compile-error"
    CRASH = "crash"
    TIMEOUT = "timeout"
    GRAPH_BREAK = "graph-break"
    GRAPH_BREAK_REGRESSION = "graph-break-regression"

    def __str__(self) -> str:  # the value in f-strings on every Python (3.11's format() gives the name)
        return self.value

    def describe(self) -> str:
        if self in _VERDICT_KINDS:
            return Verdict(self.value).describe()
        return {
            Kind.GRAPH_BREAK: "Dynamo broke the graph (a gb_type the generator did not plant)",
            Kind.GRAPH_BREAK_REGRESSION: "a graph break on some interpreters that others traced without it",
        }[self]

    @classmethod
    def of(cls, verdict: Verdict) -> Kind:
        """The kind of a bug verdict's finding. Raises ValueError for a verdict that is no bug."""
        if not verdict.is_bug:
            raise ValueError(f"Expected a bug verdict but got verdict={verdict.value!r}")
        return cls(verdict.value)


_VERDICT_KINDS = (Kind.DIVERGENCE, Kind.COMPILE_ERROR, Kind.CRASH, Kind.TIMEOUT)
# The names these two kinds had before Kind (fuzz.corpus.render imports them).
GRAPH_BREAK, GRAPH_BREAK_REGRESSION = Kind.GRAPH_BREAK, Kind.GRAPH_BREAK_REGRESSION
# Joins a regression's gb_type and the interpreters it is absent on in its detail.
ABSENT_ON = " [absent on "
# Verdicts after which a missing graph break means Dynamo traced the program and
# did not break (a compile error or crash may stop before the break is reached).
_TRACED = (Verdict.MATCH, Verdict.DIVERGENCE)
# Joins a divergence's detail and the language features of its minimised program.
FEATURES_OPEN = " {"
# gb_types that the generator plants on purpose.
PLANTED_GB_TYPES = ("Call to `torch._dynamo.graph_break()`",)

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_LINE = re.compile(r"(line |:)\d+")
_SPACE = re.compile(r"\s+")


def normalise(detail: str) -> str:
    """Remove addresses, line numbers and runs of whitespace; at most 200 characters."""
    detail = _ADDRESS.sub("0x?", detail)
    detail = _LINE.sub(r"\1N", detail)
    return _SPACE.sub(" ", detail).strip()[:200]


def interpreter_order(name: str) -> tuple[int, str]:
    return (DEFAULT_PYTHONS.index(name), name) if name in DEFAULT_PYTHONS else (len(DEFAULT_PYTHONS), name)


@dataclasses.dataclass(frozen=True)
class Signature:
    """A bucket key; ``interpreters`` are sorted in ladder order (3.11 ... 3.13t).
    ``kind`` may be given as its value ("divergence"); raises ValueError for
    one that is no Kind."""

    kind: Kind
    stage: str
    detail: str
    interpreters: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", Kind(self.kind))

    @property
    def key(self) -> str:
        return f"{self.kind.value}|{self.stage}|{self.detail}|{','.join(self.interpreters)}"

    @property
    def root(self) -> str:
        """A minimised divergence's root cause (the text in its detail's
        braces), else ""."""
        if self.kind is not Kind.DIVERGENCE or FEATURES_OPEN not in self.detail:
            return ""
        return self.detail.split(FEATURES_OPEN, 1)[1].removesuffix("}")

    @property
    def observed(self) -> str:
        """What a run reported (the detail before the root cause): a label."""
        return self.detail.split(FEATURES_OPEN, 1)[0] if self.kind is Kind.DIVERGENCE else self.detail

    @property
    def bucket_key(self) -> str:
        """The key a bucket is known by: ``key``, but for a minimised
        divergence its root cause stands for the detail (the observation
        channel and call are labels, not part of it)."""
        if self.root:
            return f"{self.kind.value}|{self.stage}|{{{self.root}}}|{','.join(self.interpreters)}"
        return self.key

    @property
    def id(self) -> str:
        """First 12 hex digits of the SHA-256 of ``bucket_key`` (the corpus file name)."""
        return hashlib.sha256(self.bucket_key.encode()).hexdigest()[:12]

    @property
    def cause(self) -> tuple[str, str]:
        """(kind, detail): what must hold on each interpreter of the set; for a
        graph-break regression, the plain graph break ("graph-break", gb_type)."""
        if self.kind is Kind.GRAPH_BREAK_REGRESSION:
            return (Kind.GRAPH_BREAK, self.detail.split(ABSENT_ON, 1)[0])
        return (self.kind, self.detail.split(FEATURES_OPEN, 1)[0])

    def base(self) -> Signature:
        """This signature without the language features of a minimised program:
        what a run of the harness reports (``findings``)."""
        return dataclasses.replace(self, detail=self.detail.split(FEATURES_OPEN, 1)[0]) \
            if self.kind is Kind.DIVERGENCE else self

    def with_root_cause(self, source: str, outcomes: Iterable[Outcome] = ()) -> Signature:
        """A divergence's signature with the root cause of ``source`` (its
        minimised program) in braces after what was observed
        (fuzz.triage.rootcause); ``outcomes``: the runs that showed it, whose
        exception messages key a divergence that raised (without them the
        skeleton stands in). Other kinds are returned as they are. Raises
        SyntaxError if ``source`` does not parse."""
        if self.kind is not Kind.DIVERGENCE or self.observed.startswith(THREADS_PREFIX):
            return self
        from fuzz.triage.rootcause import exception_fingerprint, root_cause

        base = self.base()
        mine = [o for o in outcomes if o.verdict is Verdict.DIVERGENCE and bug_detail(o) == base.detail
                and (not self.interpreters or o.interpreter in self.interpreters)]
        cause = root_cause(base.detail, source, stage=self.stage.split("@", 1)[0],
                           fingerprint=exception_fingerprint(mine))
        return dataclasses.replace(base, detail=f"{base.detail}{FEATURES_OPEN}{cause.text}}}")

    def with_features(self, source: str, outcomes: Iterable[Outcome] = ()) -> Signature:
        """The former name of ``with_root_cause``."""
        return self.with_root_cause(source, outcomes)

    @classmethod
    def parse(cls, key: str) -> Signature:
        """Inverse of ``key``; raises ValueError for a malformed key."""
        parts = key.split("|")
        if len(parts) != 4 or parts[0] not in {k.value for k in Kind}:
            raise ValueError(f"Expected a signature key 'kind|stage|detail|interpreters' but got {key!r}")
        return cls(parts[0], parts[1], parts[2], tuple(p for p in parts[3].split(",") if p))

    def describe(self) -> str:
        where = ", ".join(self.interpreters)
        return f"{self.kind.value} at {self.stage}: {self.detail} (on {where})"


# Crash error types that are one invalid memory access, keyed as SIGSEGV: a
# heap corruption aborts in glibc's checks on one run and faults on the next
# (seen: Inductor's CPU code on torch 2.12.0, SIGABRT "free(): invalid next
# size (fast)" or SIGSEGV from one program).
MEMORY_FAULT = "SIGSEGV"


def crash_class(error_type: str) -> str:
    """The signal a crash is keyed by: ``MEMORY_FAULT`` for SIGBUS and for an
    abort of glibc's heap checks (``HEAP_ABORT_PREFIX``), else ``error_type``."""
    if error_type == "SIGBUS" or error_type.startswith(HEAP_ABORT_PREFIX):
        return MEMORY_FAULT
    return error_type


def bug_detail(outcome: Outcome) -> str:
    """The normalised detail of a bug verdict (see the module docstring)."""
    if outcome.verdict is Verdict.DIVERGENCE:
        aspect = outcome.aspect.value if outcome.aspect else ""
        if outcome.threads:  # its call is one of K threads': bucketed by what diverged alone
            return normalise(THREADS_PREFIX + aspect)
        if outcome.aspect is Aspect.EXCEPTION:
            detail = f"exception:{outcome.error_type}"
        elif outcome.aspect is Aspect.EXCEPTION_MESSAGE:
            detail = f"exception-message:{outcome.error_type.split('->', 1)[0]}"
        else:
            detail = aspect
        if outcome.call not in ("", "fresh"):
            detail += f"@{outcome.call}"
        return normalise(detail)
    if outcome.verdict in (Verdict.COMPILE_ERROR, Verdict.CRASH):
        error = crash_class(outcome.error_type) if outcome.verdict is Verdict.CRASH else outcome.error_type
        detail = f"{error}@{outcome.torch_frame}" if outcome.torch_frame else error
        if outcome.threads and not is_fault_outcome(outcome):
            detail = THREADS_PREFIX + detail
        return normalise(detail)
    return outcome.verdict.value


def causes(outcome: Outcome) -> set[tuple[Kind, str]]:
    """Every (kind, detail) an outcome shows: its bug verdict and its graph breaks."""
    found: set[tuple[Kind, str]] = set()
    if outcome.verdict.is_bug:
        found.add((Kind.of(outcome.verdict), bug_detail(outcome)))
    for gb in outcome.graph_breaks:
        gb_type = normalise(gb.gb_type or gb.reason)
        if gb_type and gb_type not in PLANTED_GB_TYPES:
            found.add((Kind.GRAPH_BREAK, gb_type))
    return found


@dataclasses.dataclass(frozen=True)
class Finding:
    """A signature plus the backend it was attributed to (the lowest on the
    ladder); for a graph-break regression, ``consequences``: the later breaks
    that differ because of it ("3.12: Data-dependent branching at line 9"),
    listed with it and not buckets of their own."""

    signature: Signature
    backend: str
    consequences: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class FirstDifference:
    """Where interpreters' sequences of graph breaks (user line, gb_type)
    first differ: the earliest break there (``gb_type`` at ``lineno``), the
    interpreters that break so, and the breaks from there on that follow
    from it (not reached, or reached in another frame)."""

    gb_type: str
    lineno: int
    interpreters: tuple[str, ...]
    consequences: tuple[str, ...]


def break_sequence(outcome: Outcome) -> list[tuple[int, str]]:
    """An outcome's graph breaks in the order Dynamo reported them, as (user
    line, normalised gb_type), planted ones left out.

    A break without a user line (line 0: Dynamo counted it but did not log it
    with a user stack, harness.observe) takes the line of the run's break of
    the same gb_type where the run has exactly one such line: Dynamo counted
    that one break twice (as a graph break and as an unimplemented frame) and
    logged it once. Otherwise it is left out: its line is not in the data (the
    case seen is a generator's own frame, "Attempt to trace generator",
    refused when it runs eagerly after a break in its caller, so its cause is
    that earlier break), and line 0 would order it before every real break."""
    seq = []
    for gb in outcome.graph_breaks:
        gb_type = normalise(gb.gb_type or gb.reason)
        if gb_type and gb_type not in PLANTED_GB_TYPES:
            seq.append((gb.lineno, gb_type))
    lines: dict[str, set[int]] = {}
    for lineno, gb_type in seq:
        if lineno:
            lines.setdefault(gb_type, set()).add(lineno)
    return [(lineno or next(iter(lines[gb_type])), gb_type) for lineno, gb_type in seq
            if lineno or len(lines.get(gb_type, ())) == 1]


def first_difference(outcomes: Iterable[Outcome]) -> FirstDifference | None:
    """The first difference between the break sequences of ``outcomes`` (one
    backend's runs that traced the program, one per interpreter), None where
    every interpreter broke the same way.

    The breaks every interpreter has (the same user line and gb_type, as
    often) are left out of each sequence (``break_sequence``: breaks without
    a user line are placed or left out there); what remains is where they
    differ. The first remaining break of each interpreter is a candidate, and
    the earliest by user line (then gb_type) is the finding: every other
    remaining break, on any interpreter, is a consequence (not reached, or
    reached in another frame), but for breaks of the finding's own gb_type,
    which repeat the finding (the same break counted again, or met again in a
    loop or another frame) and are not listed."""
    seqs = {o.interpreter: break_sequence(o) for o in outcomes}
    if len(seqs) < 2 or len({tuple(v) for v in seqs.values()}) <= 1:
        return None
    counts = [collections.Counter(v) for v in seqs.values()]
    common = functools.reduce(lambda a, b: a & b, counts)
    rest: dict[str, list[tuple[int, str]]] = {}
    for name, seq in seqs.items():
        left = collections.Counter(common)
        rest[name] = []
        for entry in seq:
            if left[entry]:
                left[entry] -= 1
            else:
                rest[name].append(entry)
    if not any(rest.values()):
        return None  # the same breaks in another order: no difference to name
    lineno, gb_type = min(v[0] for v in rest.values() if v)
    interps = tuple(sorted((n for n, v in rest.items() if v and v[0] == (lineno, gb_type)), key=interpreter_order))
    consequences = tuple(sorted({f"{n}: {g} at line {line}" for n, v in rest.items()
                                 for line, g in v if g != gb_type},
                                key=lambda text: (interpreter_order(text.split(":", 1)[0]), text)))
    return FirstDifference(gb_type, lineno, interps, consequences)


def findings(outcomes: Iterable[Outcome]) -> list[Finding]:
    """Group one program's outcomes (all interpreters x backends) into findings.

    A cause seen on several backends is attributed to the lowest backend on
    the ladder, and its interpreter set is where it shows on that backend.
    Graph breaks are Dynamo's and are attributed to stage "dynamo"; one that
    is absent on an interpreter that traced the program on that backend is a
    ``graph-break-regression`` (its detail names where it is absent) instead
    of a plain ``graph-break``.
    """
    where: dict[tuple[Kind, str], dict[str, set[str]]] = {}
    traced: dict[str, set[str]] = {}
    traced_runs: dict[str, list[Outcome]] = {}
    devices: dict[tuple[Kind, str], set[str]] = {}
    for outcome in outcomes:
        if outcome.verdict in _TRACED:
            traced.setdefault(outcome.backend, set()).add(outcome.interpreter)
            if not outcome.threads:
                traced_runs.setdefault(outcome.backend, []).append(outcome)
        for cause in causes(outcome):
            where.setdefault(cause, {}).setdefault(outcome.backend, set()).add(outcome.interpreter)
            devices.setdefault(cause, set()).add(outcome.device)
    result = []
    regressions: dict[str, set[str]] = {}  # backend -> gb_types absent somewhere that traced
    for (kind, detail), by_backend in where.items():
        if kind is Kind.GRAPH_BREAK:
            lowest = min(by_backend, key=lambda b: (ladder_rank(b), b))
            if traced.get(lowest, set()) - by_backend[lowest]:
                regressions.setdefault(lowest, set()).add(detail)
    firsts = {b: first_difference(traced_runs.get(b, [])) for b in regressions}
    for (kind, detail), by_backend in sorted(where.items()):
        lowest = min(by_backend, key=lambda b: (ladder_rank(b), b))
        interps = tuple(sorted(by_backend[lowest], key=interpreter_order))
        if kind is Kind.GRAPH_BREAK:  # Dynamo's, whatever the backend: checked with the cheapest
            absent = sorted(traced.get(lowest, set()) - by_backend[lowest], key=interpreter_order)
            consequences: tuple[str, ...] = ()
            if absent:
                first = firsts.get(lowest)
                if first is not None and first.gb_type in regressions[lowest]:
                    if first.gb_type != detail:
                        continue  # it follows from the first difference: listed with that one
                    consequences = first.consequences
                detail = f"{detail}{ABSENT_ON}{', '.join(absent)}]"
                kind = Kind.GRAPH_BREAK_REGRESSION
            result.append(Finding(Signature(kind, "dynamo", detail, interps), "eager", consequences))
        else:
            # the ladder's backends are stages of one compiler: the lowest that
            # shows a bug names its stage; any other backend (planted, torch's
            # *_TESTING_ONLY, third-party) is a compiler of its own
            families: dict[str, dict[str, set[str]]] = {}
            for backend, names in by_backend.items():
                family = "ladder" if ladder_rank(backend) < len(LADDER) else backend
                families.setdefault(family, {})[backend] = names
            for family in sorted(families):
                lowest = min(families[family], key=lambda b: (ladder_rank(b), b))
                interps = tuple(sorted(families[family][lowest], key=interpreter_order))
                stage = device_stage(stage_of(lowest), devices[(kind, detail)])
                result.append(Finding(Signature(kind, stage, detail, interps), lowest))
    return result


def device_stage(stage: str, devices: Iterable[str]) -> str:
    """``stage`` for a finding on the CPU (keys of CPU findings stay as they
    were), ``stage@cuda`` for one on a GPU: a Triton bug is not a C++ one."""
    gpus = sorted(set(devices) - {"cpu"})
    return f"{stage}@{','.join(gpus)}" if gpus else stage


def case_target(key: str | None, found: list[Finding]) -> Finding | None:
    """The finding to minimise a corpus case for: the one whose cause is that
    of the case's table's signature ``key``, else the first that is no graph
    break, else the first (None: ``found`` is empty). Raises ValueError for a
    malformed ``key``."""
    if key:
        wanted = Signature.parse(key)
        target = next((f for f in found if f.signature.cause == wanted.cause), None)
        if target is not None:
            return target
    return next((f for f in found if f.signature.kind != Kind.GRAPH_BREAK), None) or (found[0] if found else None)
