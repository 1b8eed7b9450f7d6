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
                  the program's language features in braces
                  ("value {For, zip()}", fuzz.triage.language), since a wrong result
                  has no stack to bucket by
  compile-error   "OuterError(InnerError)@torch/<file>:<function>"
  crash           "SIGSEGV@<innermost frame, torch preferred>", or for a CUDA
                  fault "CUDA error: <what>@<phase>:<kernel or frame>"
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
                  the same backend); it replaces the plain graph-break finding
Graph breaks from explicit ``torch._dynamo.graph_break()`` calls are planted by
the generator and are not findings.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import re
from collections.abc import Iterable

from harness.backends import LADDER, ladder_rank, stage_of
from harness.device import is_fault_outcome
from harness.outcome import THREADS_PREFIX, Aspect, Outcome, Verdict
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
    def id(self) -> str:
        """First 12 hex digits of the SHA-256 of the key (the corpus file name)."""
        return hashlib.sha256(self.key.encode()).hexdigest()[:12]

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

    def with_features(self, source: str) -> Signature:
        """A divergence's signature with the language features of ``source``
        (its minimised program) in the detail; other kinds are returned as
        they are. Raises SyntaxError if ``source`` does not parse."""
        if self.kind is not Kind.DIVERGENCE:
            return self
        from fuzz.triage.language import features_text, language_features

        text = features_text(language_features(source))
        return dataclasses.replace(self.base(), detail=f"{self.base().detail}{FEATURES_OPEN}{text}}}")

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
        detail = f"{outcome.error_type}@{outcome.torch_frame}" if outcome.torch_frame else outcome.error_type
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
    """A signature plus the backend it was attributed to (the lowest on the ladder)."""

    signature: Signature
    backend: str


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
    devices: dict[tuple[Kind, str], set[str]] = {}
    for outcome in outcomes:
        if outcome.verdict in _TRACED:
            traced.setdefault(outcome.backend, set()).add(outcome.interpreter)
        for cause in causes(outcome):
            where.setdefault(cause, {}).setdefault(outcome.backend, set()).add(outcome.interpreter)
            devices.setdefault(cause, set()).add(outcome.device)
    result = []
    for (kind, detail), by_backend in sorted(where.items()):
        lowest = min(by_backend, key=lambda b: (ladder_rank(b), b))
        interps = tuple(sorted(by_backend[lowest], key=interpreter_order))
        if kind is Kind.GRAPH_BREAK:  # Dynamo's, whatever the backend: checked with the cheapest
            absent = sorted(traced.get(lowest, set()) - by_backend[lowest], key=interpreter_order)
            if absent:
                detail = f"{detail}{ABSENT_ON}{', '.join(absent)}]"
                kind = Kind.GRAPH_BREAK_REGRESSION
            result.append(Finding(Signature(kind, "dynamo", detail, interps), "eager"))
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
