"""Where one run's time goes: wall and CPU seconds by phase.

A run (``harness.execute.execute``) is split into the phases of
``TimePhase``: the two eager runs, each call of the compiled run's plan
(``call:fresh``, ``call:cached``, ... ; the fresh call includes the first
compile, the guard and shape calls their recompiles), the float64 reference
run and the comparison. The compile inside those calls is split further by
torch's own timers (``torch._dynamo.utils.compilation_time_metrics``, filled
by ``dynamo_timed``): Dynamo's tracing, AOTAutograd, Inductor's code
generation and the C++ compiler. Those timers are wall seconds; with
``TORCHINDUCTOR_COMPILE_THREADS=1`` (fuzz.campaign.interpreters) the
compile runs on the worker's own thread (and the C++ compiler in a child it
waits for), so their CPU seconds are estimated as their wall seconds times
the CPU share of the compiled calls they ran in (1 on an idle machine).

CPU seconds are the process's user + system time plus that of its reaped
children (the C++ compiler runs as a child), from ``os.times()``.

The result is ``{phase: [wall_s, cpu_s]}``, JSON-ready, stored in
``Outcome.phases``; torch's compile phases lie inside the calls' time.
"""

from __future__ import annotations

import contextlib
import enum
import os
import time
from collections.abc import Iterator


class TimePhase(str, enum.Enum):
    """A part of one run whose time is recorded; the compiled calls are
    ``call:<label>`` (``CALL_PREFIX``)."""

    EAGER = "eager"
    COMPARE = "compare"
    FP64 = "fp64"
    DYNAMO = "dynamo"
    AOT = "aot"
    INDUCTOR = "inductor-codegen"
    CPP_COMPILE = "cpp-compile"

    def __str__(self) -> str:
        return self.value


CALL_PREFIX = "call:"

# torch's dynamo_timed names (torch/_dynamo/utils.py callers, torch 2.12-2.15)
# whose seconds make up each compile phase: a phase is its own timer minus the
# nested timer of the next phase down.
_DYNAMO_TOTAL = "_compile.compile_inner"
_BACKEND_TOTAL = "OutputGraph.call_user_compiler"
_AOT_TOTAL = "create_aot_dispatcher_function"
_INDUCTOR_TOTAL = "compile_fx_inner"
_CPP_TOTAL = "compile_file"


def _cpu_s() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _compile_metrics() -> dict[str, float]:
    """torch's compile timers so far, name -> seconds (empty without torch)."""
    try:
        from torch._dynamo.utils import compilation_time_metrics
    except Exception:  # torch without the timers: no compile split
        return {}
    return {name: float(sum(times)) for name, times in compilation_time_metrics.items()}


class PhaseClock:
    """Accumulates wall and CPU seconds per phase over one run."""

    def __init__(self) -> None:
        self.seconds: dict[str, list[float]] = {}
        self._metrics_before = _compile_metrics()
        self._cpu_at_start = _cpu_s()

    def cpu_s(self) -> float:
        """CPU seconds since the clock started, every phase and the harness's own work."""
        return _cpu_s() - self._cpu_at_start

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the block as ``name`` (a TimePhase value or ``call:<label>``)."""
        wall, cpu = time.perf_counter(), _cpu_s()
        try:
            yield
        finally:
            self.add(str(name), time.perf_counter() - wall, _cpu_s() - cpu)

    def add(self, name: str, wall_s: float, cpu_s: float) -> None:
        entry = self.seconds.setdefault(name, [0.0, 0.0])
        entry[0] += wall_s
        entry[1] += cpu_s

    def result(self) -> dict[str, list[float]]:
        """``{phase: [wall_s, cpu_s]}`` rounded to milliseconds, with the
        compile phases torch timed since this clock started."""
        after = _compile_metrics()
        delta = {k: after.get(k, 0.0) - self._metrics_before.get(k, 0.0) for k in after}
        cpp = delta.get(_CPP_TOTAL, 0.0)
        inductor = max(0.0, delta.get(_INDUCTOR_TOTAL, 0.0) - cpp)
        aot = max(0.0, delta.get(_AOT_TOTAL, 0.0) - delta.get(_INDUCTOR_TOTAL, 0.0))
        dynamo = max(0.0, delta.get(_DYNAMO_TOTAL, 0.0) - delta.get(_BACKEND_TOTAL, 0.0))
        out = {k: [round(w, 3), round(c, 3)] for k, (w, c) in self.seconds.items()}
        # torch's timers are wall seconds: their CPU is estimated at the CPU
        # share of the compiled calls they ran in (under 1 on a loaded machine)
        calls = [v for k, v in self.seconds.items() if k.startswith(CALL_PREFIX)]
        call_wall_s = sum(w for w, _ in calls)
        cpu_share = min(1.0, sum(c for _, c in calls) / call_wall_s) if call_wall_s > 0 else 1.0
        for phase, seconds in ((TimePhase.DYNAMO, dynamo), (TimePhase.AOT, aot),
                               (TimePhase.INDUCTOR, inductor), (TimePhase.CPP_COMPILE, cpp)):
            if seconds > 0:
                out[phase.value] = [round(seconds, 3), round(seconds * cpu_share, 3)]
        return out
