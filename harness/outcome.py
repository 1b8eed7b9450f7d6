"""``Outcome``: what one program did on one interpreter x backend x device.

Torch-free, so the host imports it to read what workers send and to record
crashes and timeouts that the worker itself could not report.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from harness.settings import CompileSettings


class Verdict(str, enum.Enum):
    """How compiled behaviour relates to eager behaviour for one run."""

    MATCH = "match"
    FLAKY = "flaky"
    DIVERGENCE = "divergence"
    COMPILE_ERROR = "compile-error"
    CRASH = "crash"
    TIMEOUT = "timeout"
    INVALID = "invalid"

    def describe(self) -> str:
        return {
            Verdict.MATCH: "compiled behaved as eager",
            Verdict.FLAKY: "eager disagreed with itself; discarded, never a bug",
            Verdict.DIVERGENCE: "compiled returned, raised, printed or mutated something other than eager",
            Verdict.COMPILE_ERROR: "torch raised one of its own errors where eager did not",
            Verdict.CRASH: "the process died (signal, abort, os._exit)",
            Verdict.TIMEOUT: "the run did not finish within its time limit",
            Verdict.INVALID: "the program could not be loaded, or eager itself exited, hung or killed the process "
                             "(not a bug)",
        }[self]

    @property
    def is_bug(self) -> bool:
        return self in (
            Verdict.DIVERGENCE,
            Verdict.COMPILE_ERROR,
            Verdict.CRASH,
            Verdict.TIMEOUT,
        )


class Aspect(str, enum.Enum):
    """What differed between eager and compiled (or eager and eager) behaviour,
    in the order harness.execute compares a call: its exception, then return
    value, printed text, arguments, global state; after the run, globals."""

    EXCEPTION = "exception"
    EXCEPTION_MESSAGE = "exception-message"
    VALUE = "value"
    STDOUT = "stdout"
    MUTATION = "mutation"
    GLOBAL_STATE = "global-state"
    GLOBALS = "globals"

    def __str__(self) -> str:  # the value in f-strings on every Python (3.11's format() gives the name)
        return self.value

    def describe(self) -> str:
        return {
            Aspect.EXCEPTION: "one raised and the other did not, or they raised different exception types",
            Aspect.EXCEPTION_MESSAGE: "both raised the same exception type with different (normalised) messages",
            Aspect.VALUE: "the return values differ (tensors beyond tolerance, as in torch._dynamo.utils.same)",
            Aspect.STDOUT: "the call printed different text",
            Aspect.MUTATION: "the arguments differ after the call",
            Aspect.GLOBAL_STATE: "the call left torch's global state (grad mode, default dtype, autocast, torch "
                                 "function and dispatch modes...) changed differently",
            Aspect.GLOBALS: "module globals, class attributes or closure cells differ after the run",
        }[self]


class Phase(str, enum.Enum):
    """The part of a run that was going on when a crash, timeout or CUDA fault
    happened (the worker logs "phase <value>" as each run starts), or in which
    a threaded run turned out flaky."""

    EAGER = "eager"
    COMPILED = "compiled"
    FP64 = "fp64"
    HARNESS = "harness"
    AFTER_RUN = "after-run"

    def __str__(self) -> str:  # the value in f-strings on every Python
        return self.value

    def describe(self) -> str:
        return {
            Phase.EAGER: "the eager runs (the reference)",
            Phase.COMPILED: "the compiled run",
            Phase.FP64: "the float64 reference run that decides float differences",
            Phase.HARNESS: "the worker's own code, outside any run of the program",
            Phase.AFTER_RUN: "after the run: the CUDA context turned out poisoned",
        }[self]


# Starts the signature detail of a threaded run's finding (fuzz.triage.signature).
# Rows written before ``Outcome.phase`` existed also started such a run's
# aspect and error type with it; Outcome.from_json removes it from them.
THREADS_PREFIX = "threads:"
# Starts the error type of a crash that glibc's heap checks aborted, before
# their message ("SIGABRT: free(): invalid next size (fast)"): memory
# corruption, bucketed with SIGSEGV (fuzz.triage.signature.crash_class).
HEAP_ABORT_PREFIX = "SIGABRT: "


@dataclasses.dataclass
class CallResult:
    """One call of eager or compiled code.

    ``value`` is a short repr of the return value (tensors as dtype, shape and a
    few values); ``exc_type`` the qualified exception type name or None;
    ``stdout`` what the call printed through ``sys.stdout``; ``label`` which
    call of the plan it was ("fresh", "cached", "guard", "shape": see
    harness.execute).
    """

    label: str = ""
    value: str = ""
    exc_type: str | None = None
    exc_message: str = ""
    stdout: str = ""
    elapsed_s: float = 0.0


@dataclasses.dataclass
class GraphBreak:
    """One graph break: Dynamo's ``gb_type`` (empty when torch gives none), the
    first line of its reason, and the user line it happened at."""

    gb_type: str
    reason: str
    filename: str = ""
    lineno: int = 0


@dataclasses.dataclass
class InterpreterInfo:
    """The interpreter a worker runs in: ``version`` like "3.13.5", ``name``
    like "3.13t", whether it is a free-threaded build and whether the GIL is on."""

    name: str
    version: str
    free_threaded: bool
    gil_enabled: bool
    torch: str
    executable: str = ""
    # torch's reason for refusing torch.compile here ("" when it accepts it):
    # the cell is unsupported (harness.support)
    compile_refused: str = ""


@dataclasses.dataclass
class Outcome:
    """One program x one interpreter x one backend x one device.

    ``eager`` and ``compiled`` hold each call in order (the compiled function is
    called at least twice). For a divergence (or flaky), ``aspect`` is what
    differed and ``call`` the label of the first call where it did;
    ``error_type`` and ``torch_frame``
    ("torch/_inductor/lowering.py:make_fallback", function, not line) describe
    a compile error or crash, ``phase`` where in the run a crash, timeout or
    CUDA fault happened. ``threads`` is K for the free-threaded concurrency
    run (harness.threads), 0 for the ordinary one. Times are in seconds.
    """

    program_id: str
    interpreter: str
    backend: str
    device: str = "cpu"
    fullgraph: bool = False
    verdict: Verdict = Verdict.MATCH
    aspect: Aspect | None = None
    call: str = ""
    error_type: str = ""
    error_message: str = ""
    torch_frame: str = ""
    eager: list[CallResult] = dataclasses.field(default_factory=list)
    compiled: list[CallResult] = dataclasses.field(default_factory=list)
    graph_count: int = 0
    graph_breaks: list[GraphBreak] = dataclasses.field(default_factory=list)
    recompiles: int = 0
    eager_s: float = 0.0
    compile_s: float = 0.0
    elapsed_s: float = 0.0
    gil_enabled: bool | None = None
    detail: str = ""
    # Threads that called the compiled function at once (harness.threads,
    # free-threaded builds); 0 for the ordinary single-threaded run.
    threads: int = 0
    phase: Phase | None = None
    # Comparisons that could not be made ("value@fresh: RuntimeError: ..."):
    # counted as equal, never a finding (harness.compare.Incomparable).
    incomparable: list[str] = dataclasses.field(default_factory=list)
    # Process state the program left behind that the harness put back after
    # it (harness.state: "torch.sin rebound", "thread t1 still running").
    state_left: list[str] = dataclasses.field(default_factory=list)
    # How torch.compile was called (harness.settings): dynamic, marked dims,
    # mode, config keys. Rows written before it existed read as the defaults.
    compile_settings: CompileSettings = dataclasses.field(default_factory=CompileSettings)
    # CPU seconds of the run (the worker's user + system time and its reaped
    # children's, harness.timing) and its split by phase, {phase: [wall_s, cpu_s]}
    # (harness.timing.TimePhase; compiled calls as "call:<label>"). A run the
    # worker did not finish (crash, timeout) has the host's wall time as cpu_s.
    cpu_s: float = 0.0
    phases: dict[str, list[float]] = dataclasses.field(default_factory=dict)
    # Lines of torch's compiler this run executed that were new for its
    # worker, {"torch/_dynamo/guards.py": [line, ...]} (harness.reach; only
    # when the run request asked for "reach"). Rows before it read as {}.
    reach: dict[str, list[int]] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        """Accept the enums' values as strings ("" for none). Raises ValueError
        for a value that is not one."""
        self.verdict = Verdict(self.verdict)
        self.aspect = Aspect(self.aspect) if self.aspect else None
        self.phase = Phase(self.phase) if self.phase else None
        if not isinstance(self.compile_settings, CompileSettings):
            self.compile_settings = CompileSettings.from_json(self.compile_settings)

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["verdict"] = self.verdict.value
        data["aspect"] = self.aspect.value if self.aspect else None
        data["phase"] = self.phase.value if self.phase else None
        data["compile_settings"] = self.compile_settings.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        """The Outcome of ``to_json``'s dict, also of one written before
        ``phase`` existed (``aspect`` held the phase of a crash, and a threaded
        run's ``aspect`` and ``error_type`` started with "threads:"), so old
        campaign databases read the same. Raises ValueError or TypeError for
        a dict that is neither."""
        data = dict(data)
        if "phase" not in data:
            _read_old_fields(data)
        data["eager"] = [CallResult(**c) for c in data.get("eager", [])]
        data["compiled"] = [CallResult(**c) for c in data.get("compiled", [])]
        data["graph_breaks"] = [GraphBreak(**g) for g in data.get("graph_breaks", [])]
        return cls(**data)


def _read_old_fields(data: dict[str, Any]) -> None:
    """Move what an old row's ``aspect`` and ``error_type`` strings held into
    the fields that hold it now (in place)."""
    aspect = data.get("aspect") or ""
    threaded = aspect.startswith(THREADS_PREFIX) or str(data.get("error_type", "")).startswith(THREADS_PREFIX)
    if threaded:  # always came with threads = K (one commit added both)
        aspect = aspect.removeprefix(THREADS_PREFIX)
        data["error_type"] = str(data.get("error_type", "")).removeprefix(THREADS_PREFIX)
    phases = {p.value for p in Phase}
    if aspect in phases:  # a crash's or a fault's phase; "threads:eager" marked a flaky threaded run
        data["aspect"], data["phase"] = None, aspect
    else:
        data["aspect"] = aspect or None
