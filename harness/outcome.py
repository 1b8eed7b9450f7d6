"""``Outcome``: what one program did on one interpreter x backend x device.

Torch-free, so the host imports it to read what workers send and to record
crashes and timeouts that the worker itself could not report.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any


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
            Verdict.INVALID: "the program could not be loaded (not a bug)",
        }[self]

    @property
    def is_bug(self) -> bool:
        return self in (
            Verdict.DIVERGENCE,
            Verdict.COMPILE_ERROR,
            Verdict.CRASH,
            Verdict.TIMEOUT,
        )


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


@dataclasses.dataclass
class Outcome:
    """One program x one interpreter x one backend x one device.

    ``eager`` and ``compiled`` hold each call in order (the compiled function is
    called at least twice). ``aspect`` names what diverged ("value",
    "exception", "exception-message", "stdout", "mutation", "global-state",
    "globals") for a divergence and ``call`` the label of the first call where
    it did; ``error_type`` and
    ``torch_frame`` ("torch/_inductor/lowering.py:make_fallback", function, not
    line) describe a compile error or crash. Times are in seconds.
    """

    program_id: str
    interpreter: str
    backend: str
    device: str = "cpu"
    fullgraph: bool = False
    verdict: Verdict = Verdict.MATCH
    aspect: str = ""
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

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["verdict"] = self.verdict.value
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        data = dict(data)
        data["verdict"] = Verdict(data["verdict"])
        data["eager"] = [CallResult(**c) for c in data.get("eager", [])]
        data["compiled"] = [CallResult(**c) for c in data.get("compiled", [])]
        data["graph_breaks"] = [GraphBreak(**g) for g in data.get("graph_breaks", [])]
        return cls(**data)
