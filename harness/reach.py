"""Which lines of torch's compiler a worker runs: the coverage that guides a campaign.

A worker asked for it (``"reach": true`` in a run request, harness.protocol)
starts one ``LineCollector`` for its whole life and, after each run, sends
the lines of ``COMPILER_PACKAGES`` that run executed *for the first time in
this process* as ``Outcome.reach``: ``{"torch/_dynamo/guards.py": [12, 40],
...}`` (paths relative to torch's parent folder, lines sorted). The host
(``fuzz.campaign.reach``) unions them into its map per interpreter x backend;
a worker never sends a line twice, so a warm worker's reports are small.

On 3.12+ it uses ``sys.monitoring`` (PEP 669), as coverage.py's ``sysmon``
core and slipcover do: a global ``PY_START`` event looks at each code object
once (then returns ``DISABLE`` for it); a code object of the four packages
gets ``LINE`` events of its own (``set_local_events``), every other code
object none. A ``LINE`` callback records its line and returns ``DISABLE``,
so each line of the compiler costs one Python call per worker, and code
outside it nothing after its first call. ``restart_events()`` (called by
torch's bytecode debugger, never by a campaign) would only make lines
already sent fire again: they are then filtered out here, not sent again.

On 3.11, where there is no ``sys.monitoring``, workers are not guided: the
collector is ``NullCollector`` and every report is empty. A ``sys.settrace``
collector (its global function on every Python call, a local one on the
lines of compiler frames whose code still had unseen lines) was measured
with benchmarks/throughput.py --reach (3.11, eager, 24 programs): it cost
64% of the programs/s and changed verdicts (7 divergences against 2 without
it; not investigated further), so it is not used. 3.11
runs the programs that the other interpreters' coverage selects.

A line executed by the worker between runs (``torch._dynamo.reset()``, cache
clears) is sent with the next run's report: the same lines for every
program, so they are new only on a worker's first program.

Runs inside the interpreters under test: stdlib only.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import types
from typing import Any

log = logging.getLogger(__name__)

# The folders of torch whose lines are recorded (relative to torch's parent
# folder, "/"-separated): Dynamo, AOTAutograd, Inductor and FX.
COMPILER_PACKAGES = ("torch/_dynamo/", "torch/_functorch/", "torch/_inductor/", "torch/fx/")
# sys.monitoring tool ids tried in turn: 0 (debugger), 1 (coverage.py), 2
# (profilers) and 5 (optimizers) are CPython's reserved ids; Hypothesis
# uses 3 for its own explain phase, HypoFuzz 4. A worker runs neither.
TOOL_IDS = (4, 3)
TOOL_NAME = "tcfuzz-reach"

# Lines per file that were new for a worker: {"torch/_dynamo/x.py": [line, ...]}
Reach = dict[str, list[int]]


def compiler_path(filename: str) -> str | None:
    """``torch/_dynamo/x.py`` for a file of ``COMPILER_PACKAGES``, None for any other."""
    path = filename.replace(os.sep, "/")
    head, sep, tail = path.rpartition("/torch/")
    if not sep:
        return None
    short = "torch/" + tail
    return short if short.startswith(COMPILER_PACKAGES) else None


class _Collector:
    """What both collectors share: new lines since the last ``drain()``, and
    every line sent (so none is sent twice)."""

    def __init__(self) -> None:
        self._new: dict[str, set[int]] = {}
        self._sent: dict[str, set[int]] = {}
        self._paths: dict[str, str | None] = {}  # co_filename -> compiler_path, cached
        self._lock = threading.Lock()
        self.started = False

    def _path(self, filename: str) -> str | None:
        try:
            return self._paths[filename]
        except KeyError:
            path = self._paths[filename] = compiler_path(filename)
            return path

    def _add(self, path: str, line: int) -> None:
        # under the lock: the threads of a free-threaded concurrency run
        # report at once, and each line is reported only once (cheap)
        with self._lock:
            lines = self._new.get(path)
            if lines is None:
                lines = self._new[path] = set()
            lines.add(line)

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def drain(self) -> Reach:
        """The lines recorded since the last drain that were never drained
        before, by file, sorted; forgets them. Empty when not started."""
        with self._lock:
            new, self._new = self._new, {}
        found: Reach = {}
        for path, lines in new.items():
            sent = self._sent.setdefault(path, set())
            fresh = lines - sent
            if fresh:
                sent |= fresh
                found[path] = sorted(fresh)
        return found


class LineCollector(_Collector):
    """``sys.monitoring`` collector (3.12+): see the module docstring."""

    def __init__(self) -> None:
        super().__init__()
        self.tool_id: int | None = None

    def start(self) -> None:
        """Register the tool and its events; raises RuntimeError when every
        id in ``TOOL_IDS`` is taken."""
        if self.started:
            return
        mon = sys.monitoring
        free = [tool for tool in TOOL_IDS if mon.get_tool(tool) is None]
        if not free:
            raise RuntimeError(f"Expected a free sys.monitoring tool id in {TOOL_IDS} but got none free")
        self.tool_id = free[0]
        mon.use_tool_id(self.tool_id, TOOL_NAME)
        mon.register_callback(self.tool_id, mon.events.PY_START, self._on_start)
        mon.register_callback(self.tool_id, mon.events.LINE, self._on_line)
        mon.set_events(self.tool_id, mon.events.PY_START)
        self.started = True

    def _on_start(self, code: types.CodeType, offset: int) -> Any:
        if self._path(code.co_filename) is not None:
            sys.monitoring.set_local_events(self.tool_id, code, sys.monitoring.events.LINE)
        return sys.monitoring.DISABLE

    def _on_line(self, code: types.CodeType, line: int) -> Any:
        path = self._path(code.co_filename)
        if path is not None:
            self._add(path, line)
        return sys.monitoring.DISABLE

    def stop(self) -> None:
        """Unregister the tool (its events stop at once)."""
        if not self.started or self.tool_id is None:
            return
        mon = sys.monitoring
        mon.set_events(self.tool_id, 0)
        mon.register_callback(self.tool_id, mon.events.PY_START, None)
        mon.register_callback(self.tool_id, mon.events.LINE, None)
        mon.free_tool_id(self.tool_id)
        self.started = False


class NullCollector(_Collector):
    """3.11's collector: records nothing (see the module docstring)."""

    def start(self) -> None:
        self.started = True

    def stop(self) -> None:
        self.started = False


def monitoring_available() -> bool:
    """Whether this interpreter has ``sys.monitoring`` (3.12+)."""
    return hasattr(sys, "monitoring")


def collector() -> _Collector:
    """A new collector for this interpreter: ``LineCollector`` on 3.12+,
    ``NullCollector`` on 3.11. Not started."""
    return LineCollector() if monitoring_available() else NullCollector()


_worker_collector: _Collector | None = None


def worker_collector() -> _Collector:
    """The worker's one collector, created and started on first use (the
    first run request that asks for reach)."""
    global _worker_collector
    if _worker_collector is None:
        _worker_collector = collector()
        _worker_collector.start()
        log.info("reach: collecting compiler lines with %s", type(_worker_collector).__name__)
    return _worker_collector
