"""Persistent worker processes (``python -m harness.worker``) and a pool of them.

A worker pays ``import torch`` and each backend's first compile once. The host
talks to it only through ``harness.protocol``. A worker that dies is recorded
as a ``crash`` of the program it was running (signal, and the innermost frame
of the ``faulthandler`` traceback it left on stderr); one that does not answer
within the time limit is asked for its stacks (SIGUSR1), killed and recorded
as a ``timeout``, as is one killed by its CPU-time limit (SIGXCPU, see
``harness.limits``). Either way it is replaced on the next task and the
campaign goes on. A worker is replaced too (recycled) when its resident
memory after a program exceeds ``rss_limit_mib``, or has grown by more than
``rss_growth_limit_mib`` since it was warm: Dynamo keeps about 0.5 MiB per
program that no reset or cache clear releases (symbolic sizes held from C++,
see benchmarks/throughput.py), so a worker's memory is bounded only by
recycling it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import logging
import os
import queue
import re
import select
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from harness import protocol
from harness.outcome import HEAP_ABORT_PREFIX, InterpreterInfo, Outcome, Phase, Verdict
from harness.program import Program
from harness.settings import CompileSettings
from fuzz.errors import HarnessError
from fuzz.campaign.interpreters import Interpreter

log = logging.getLogger(__name__)

# Seconds a worker may take to import torch and answer "ready" (4-7 s alone,
# far more with every core busy compiling).
STARTUP_TIMEOUT_S = 300.0
# Seconds one program may run on a warm backend before it counts as a hang.
RUN_TIMEOUT_S = 90.0
# Extra seconds for a backend's first compile in a worker: Inductor's first
# compile runs ~10 CPU-feature probes, each a fresh `import torch` (26-70 s here).
WARMUP_ALLOWANCE_S = {"inductor": 240.0, "aot_eager": 60.0}
WARMUP_DEFAULT_S = 30.0
# CPU seconds a program may use per second of its wall-clock limit (torch's
# intra-op threads run in parallel); past it the worker dies of SIGXCPU.
CPU_PER_WALL_S = 2.0
# MiB of resident memory after which a worker is replaced (a warm Inductor
# worker holds ~0.7 GiB on CPU).
RSS_LIMIT_MIB = 6144
# MiB a worker's resident memory may grow past its size once warm (after the
# first program of each backend it runs) before it is replaced: at ~0.5 MiB
# kept per program (eager, measured over 600 programs), one restart (import
# torch, 4-7 s, plus each backend's first compile) per ~500 programs.
RSS_GROWTH_LIMIT_MIB = 256
# Seconds a hung worker gets to dump its stacks (SIGUSR1) before SIGKILL.
DUMP_WAIT_S = 2.0
# Exit codes of harness.worker (kept in step with it).
EXIT_OUT_OF_MEMORY, EXIT_PROTOCOL_LOST = 86, 87
EXIT_NAMES = {EXIT_OUT_OF_MEMORY: "MemoryError", EXIT_PROTOCOL_LOST: "reply channel closed"}
# Characters of stderr kept with a crash.
CRASH_LOG_CHARS = 4000

# faulthandler's names for fatal signals (Modules/faulthandler.c).
FATAL_ERRORS = {"Segmentation fault": "SIGSEGV", "Aborted": "SIGABRT", "Bus error": "SIGBUS",
                "Floating-point exception": "SIGFPE", "Illegal instruction": "SIGILL"}
FATAL = re.compile(r"Fatal Python error: (?P<what>[^\n]+)")
# The messages glibc's heap checks print before they abort the process
# (malloc/malloc.c, malloc_printerr; glibc 2.37+ also "Fatal glibc error:
# malloc assertion failure in sysmalloc: ..."): memory corruption found at a later
# free or malloc, which the same program shows as SIGSEGV on another run.
HEAP_CHECK = re.compile(r"^(?:(?:free|malloc|realloc|calloc|munmap_chunk|malloc_consolidate|_int_free|_int_malloc)\(\): [^\n]+"
                        r"|double free or corruption[^\n]*|corrupted (?:size vs\. prev_size|double-linked list)[^\n]*"
                        r"|Fatal glibc error: [^\n]+)$", re.M)
FAULT_FRAME = re.compile(r'^\s+File "(?P<file>[^"]+)", line \d+ in (?P<func>\S+)', re.M)
# The line harness.execute and harness.threads log as each run of a program starts.
PHASE_LOG = re.compile(r"\[worker\] phase (?P<phase>" + "|".join(re.escape(p.value) for p in Phase) + r")\b")


@dataclasses.dataclass(frozen=True)
class Task:
    """One program on one interpreter x backend x device."""

    program: Program
    interpreter: str
    backend: str
    device: str = "cpu"
    fullgraph: bool = False
    # K > 0: the free-threaded concurrency run with K threads (harness.threads)
    threads: int = 0
    # Only the first N calls of harness.execute's call plan (None: all of it)
    calls: int | None = None
    # Only the first N calls of the compiled run; the eager runs make all calls (None: all)
    compiled_calls: int | None = None
    # Wall seconds this program may run on a warm backend (None: the worker's run_timeout_s)
    timeout_s: float | None = None
    # How torch.compile is called (harness.settings; the concurrency run ignores it)
    settings: CompileSettings = dataclasses.field(default_factory=CompileSettings)
    # Ask the worker for the compiler lines new to it (harness.reach, Outcome.reach)
    reach: bool = False


def short_path(path: str) -> str:
    """``torch/_inductor/x.py`` for torch files, else the last two path parts."""
    path = path.replace(os.sep, "/")
    if "/torch/" in path:
        return "torch/" + path.rsplit("/torch/", 1)[1]
    return "/".join(path.split("/")[-2:])


def crash_frame(stderr_text: str) -> str:
    """``path:function`` of the innermost frame of the last faulthandler dump
    ("most recent call first"), preferring a frame in torch."""
    dump = stderr_text.rsplit("Fatal Python error", 1)[-1]
    frames = [(m.group("file"), m.group("func")) for m in FAULT_FRAME.finditer(dump)]
    for file, func in frames:
        if "/torch/" in file:
            return f"{short_path(file)}:{func}"
    return f"{short_path(frames[0][0])}:{frames[0][1]}" if frames else ""


class Worker:
    """One ``python -m harness.worker`` process for one interpreter."""

    def __init__(self, interpreter: Interpreter, log_dir: Path, *, run_timeout_s: float = RUN_TIMEOUT_S,
                 rss_limit_mib: float = RSS_LIMIT_MIB, rss_growth_limit_mib: float = RSS_GROWTH_LIMIT_MIB,
                 cpu_limit_s: float | None = None, address_space_mib: int | None = None):
        """``run_timeout_s``: wall seconds per program on a warm backend;
        ``rss_limit_mib``: resident MiB after a program above which the worker
        is replaced; ``rss_growth_limit_mib``: MiB of growth past its warm size
        (``warm_rss_mib``) after which it is replaced (0: no limit on growth);
        ``cpu_limit_s``: CPU seconds per program (None: the wall
        limit x CPU_PER_WALL_S); ``address_space_mib``: the worker's RLIMIT_AS
        (None: its size after ``import torch`` + 8 GiB; 0: none)."""
        self.interpreter = interpreter
        self.log_dir = log_dir
        self.run_timeout_s = run_timeout_s
        self.rss_limit_mib = rss_limit_mib
        self.rss_growth_limit_mib = rss_growth_limit_mib
        self.warm_rss_mib = 0.0
        self.cpu_limit_s = cpu_limit_s
        self.address_space_mib = address_space_mib
        self.rss_mib = 0.0
        self.peak_rss_mib = 0.0
        self.recycled = 0
        self.workdir: str | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.info: InterpreterInfo | None = None
        self.warmed: set[str] = set()
        self.programs_run = 0
        self._buffer = b""
        self._eof = False
        self._log_offset = 0
        self._ids = itertools.count()
        self._stderr_path: Path | None = None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> InterpreterInfo:
        """Spawn the process and wait for "ready". Raises HarnessError if it
        cannot start (missing torch, bad env) within STARTUP_TIMEOUT_S seconds."""
        self.close()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._stderr_path = self.log_dir / f"worker-{self.interpreter.name}-{os.getpid()}-{id(self):x}.log"
        stderr = open(self._stderr_path, "ab")
        self._log_offset = stderr.seek(0, 2)  # earlier crashes in this log are not this start's
        command = [str(self.interpreter.python), "-X", "faulthandler", "-m", "harness.worker",
                   "--name", self.interpreter.name]
        if self.address_space_mib is not None:
            command += ["--address-space-mib", str(self.address_space_mib)]
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=self.interpreter.environ(),
            cwd=self.log_dir,
            start_new_session=True,
        )
        stderr.close()
        self._buffer = b""
        self.warmed, self.warm_rss_mib = set(), 0.0
        message = self._read(STARTUP_TIMEOUT_S)
        if message is not None and message.get("protocol") != protocol.PROTOCOL_VERSION:
            self.close()
            raise HarnessError(
                f"the {self.interpreter.name} worker speaks protocol {message.get('protocol')}, the host "
                f"{protocol.PROTOCOL_VERSION}: both must come from the same tcfuzz checkout (PYTHONPATH)"
            )
        if message is None or message.get("event") != "ready":
            tail = self._stderr_tail()
            self.close()
            raise HarnessError(
                f"the {self.interpreter.name} worker ({self.interpreter.python}) did not start: "
                f"{tail.strip().splitlines()[-1] if tail.strip() else 'no output'} (log: {self._stderr_path})"
            )
        self.info = InterpreterInfo(**message["interpreter"])
        self.workdir = message.get("workdir")
        self.rss_mib = float(message.get("rss_mib", 0.0))
        return self.info

    def run(self, task: Task) -> Outcome:
        """Run one task; a crash or hang becomes the Outcome, never an exception.
        Raises HarnessError only if a fresh worker cannot start or the worker
        reports an internal harness failure."""
        if not self.alive:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        request_id = next(self._ids)
        log_offset = self._log_offset = self._stderr_path.stat().st_size if self._stderr_path else 0
        timeout_s = task.timeout_s if task.timeout_s is not None else self.run_timeout_s
        if task.backend not in self.warmed:
            timeout_s += WARMUP_ALLOWANCE_S.get(task.backend, WARMUP_DEFAULT_S)
        started = time.monotonic()
        cpu_limit_s = self.cpu_limit_s if self.cpu_limit_s is not None else timeout_s * CPU_PER_WALL_S
        try:
            protocol.send(self.proc.stdin, {
                "op": "run", "id": request_id, "program": task.program.to_json(), "backend": task.backend,
                "device": task.device, "fullgraph": task.fullgraph, "cpu_limit_s": cpu_limit_s,
                "threads": task.threads, "calls": task.calls, "compile": task.settings.to_json(),
                **({"reach": True} if task.reach else {}),
                **({"compiled_calls": task.compiled_calls} if task.compiled_calls else {}),
            })
            message = self._read(timeout_s)
        except (BrokenPipeError, OSError):
            message, self._eof = None, True
        elapsed_s = time.monotonic() - started
        if message is None:
            return self._died(task, log_offset, elapsed_s, timed_out=not self._eof)
        if "error" in message:
            raise HarnessError(f"the {self.interpreter.name} worker failed internally:\n{message['error']}")
        first_on_backend = task.backend not in self.warmed
        self.warmed.add(task.backend)
        self.programs_run += 1
        self._check_memory(message, first_on_backend=first_on_backend)
        if message.get("retiring"):  # it exits after a CUDA fault (harness.device): the next task starts a fresh one
            log.info("%s worker retires (a CUDA fault, or a thread the program left running)", self.interpreter.name)
            self.close()
        return Outcome.from_json(message["outcome"])

    def _check_memory(self, message: dict[str, Any], *, first_on_backend: bool = False) -> None:
        """Record the worker's memory after a program; replace it (on the next
        task) when its resident set is above ``rss_limit_mib`` or has grown
        more than ``rss_growth_limit_mib`` past ``warm_rss_mib``, its size
        after the first program of each backend (which pays that backend's
        one-time cost)."""
        self.rss_mib = float(message.get("rss_mib", 0.0))
        self.peak_rss_mib = max(self.peak_rss_mib, float(message.get("peak_rss_mib", self.rss_mib)))
        if first_on_backend:
            self.warm_rss_mib = max(self.warm_rss_mib, self.rss_mib)
        over = self.rss_limit_mib and self.rss_mib > self.rss_limit_mib
        grown = self.rss_growth_limit_mib and self.rss_mib - self.warm_rss_mib > self.rss_growth_limit_mib
        if over or grown:
            log.info("%s worker holds %.0f MiB after %d programs (%.0f MiB when warm; limits %.0f MiB, "
                     "growth %.0f MiB): replacing it", self.interpreter.name, self.rss_mib, self.programs_run,
                     self.warm_rss_mib, self.rss_limit_mib, self.rss_growth_limit_mib)
            self.recycled += 1
            self.close()

    def _died(self, task: Task, log_offset: int, elapsed_s: float, *, timed_out: bool) -> Outcome:
        assert self.proc is not None
        if timed_out and self.proc.poll() is None:
            self._dump_stacks()
        try:
            returncode = self.proc.wait(timeout=0 if timed_out else 5)
        except subprocess.TimeoutExpired:
            self._kill()
            returncode = self.proc.wait(timeout=30)
        self._remove_workdir()
        stderr_text = self._stderr_tail(log_offset)
        if returncode == -signal.SIGXCPU:  # its CPU-time limit (harness.limits)
            timed_out = True
        fatal = FATAL.search(stderr_text)
        if fatal and (timed_out or returncode == -signal.SIGKILL):
            # faulthandler dumped a fatal signal but the process hung instead
            # of dying (seen on 3.13 after a segfault in Dynamo): a crash.
            timed_out = False
            returncode = -getattr(signal, FATAL_ERRORS.get(fatal.group("what").strip(), "SIGSEGV"))
        outcome = Outcome(program_id=task.program.program_id, interpreter=self.interpreter.name,
                          backend=task.backend, device=task.device, fullgraph=task.fullgraph, elapsed_s=elapsed_s,
                          cpu_s=round(elapsed_s, 3), threads=task.threads, compile_settings=task.settings)
        if timed_out:
            outcome.verdict = Verdict.TIMEOUT
            outcome.error_type = "cpu-time limit" if returncode == -signal.SIGXCPU else "timeout"
        else:
            outcome.verdict = Verdict.CRASH
            outcome.error_type = (signal.Signals(-returncode).name if returncode < 0 and -returncode in signal.valid_signals()
                                  else EXIT_NAMES.get(returncode, f"exit {returncode}"))
            heap = HEAP_CHECK.search(stderr_text) if outcome.error_type == "SIGABRT" else None
            if heap:  # signature.crash_class files it with SIGSEGV
                outcome.error_type = HEAP_ABORT_PREFIX + heap.group(0).strip()
            outcome.torch_frame = crash_frame(stderr_text)
        phases = PHASE_LOG.findall(stderr_text)
        outcome.phase = Phase(phases[-1]) if phases else None
        if outcome.phase is Phase.EAGER:  # eager itself exited, hung or died: the program's doing, never a finding
            outcome.detail = f"eager itself ended the process ({outcome.verdict.value}: {outcome.error_type})\n"
            outcome.verdict = Verdict.INVALID
        outcome.detail += stderr_text[-CRASH_LOG_CHARS:]
        log.info("%s worker %s on %s: %s", self.interpreter.name, outcome.verdict.value, task.program.program_id, outcome.error_type)
        self.proc = None
        return outcome

    def _read(self, timeout_s: float) -> dict[str, Any] | None:
        """The next protocol message, or None on EOF (``_eof`` set) or after
        timeout_s seconds."""
        assert self.proc is not None and self.proc.stdout is not None
        self._eof = False
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], min(remaining, 1.0))
            if not ready:
                if self._fatal_logged():
                    self._eof = True  # dumped a fatal error; may hang rather than die
                    return None
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                self._eof = True
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            return protocol.decode(line)
        except ValueError as e:
            raise HarnessError(str(e)) from None

    def _fatal_logged(self) -> bool:
        """True if faulthandler reported a fatal error since the current task began."""
        if self._stderr_path is None or self._stderr_path.stat().st_size <= self._log_offset:
            return False
        return "Fatal Python error" in self._stderr_tail(self._log_offset)

    def _stderr_tail(self, offset: int = 0) -> str:
        if self._stderr_path is None or not self._stderr_path.exists():
            return ""
        with open(self._stderr_path, "rb") as fh:
            fh.seek(max(offset, fh.seek(0, 2) - 64 * 1024))
            return fh.read().decode(errors="replace")

    def _dump_stacks(self) -> None:
        """Ask a hung worker for its Python stacks (faulthandler on SIGUSR1)."""
        assert self.proc is not None
        size = self._stderr_path.stat().st_size if self._stderr_path else 0
        try:
            os.kill(self.proc.pid, signal.SIGUSR1)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + DUMP_WAIT_S
        while time.monotonic() < deadline and self._stderr_path and self._stderr_path.stat().st_size == size:
            time.sleep(0.05)
        time.sleep(0.1)  # let the dump finish

    def _remove_workdir(self) -> None:
        """Remove the working directory of a worker that could not (it died)."""
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    def _kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        """Ask the worker to exit; kill it if it does not within 10 s."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                protocol.send(self.proc.stdin, {"op": "shutdown"})
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._kill()
                self.proc.wait(timeout=30)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
        self._remove_workdir()
        self.proc = None


class WorkerPool:
    """``jobs`` persistent workers per interpreter, each served by a thread that
    takes tasks from its interpreter's queue. Results come back in completion
    order from ``next_result()``; ``run_all`` returns them in submission order.

    ``max_running``: at most this many runs execute at once, over all the
    workers (None: no limit, every worker runs its queue's head). A campaign
    holds one worker per interpreter, six or more on a 2-core machine; run
    all at once, they share the cores and their caches, and each run costs
    more CPU than it does alone (fuzz.campaign.loop gives the figures). A
    waiting run's wall clock does not start: ``run_timeout_s`` counts from
    when its worker gets a slot, and until then ``withdraw`` can take it
    back like a queued one."""

    def __init__(self, interpreters: Iterable[Interpreter], *, jobs: int = 1, log_dir: Path,
                 run_timeout_s: float = RUN_TIMEOUT_S, rss_limit_mib: float = RSS_LIMIT_MIB,
                 rss_growth_limit_mib: float = RSS_GROWTH_LIMIT_MIB, address_space_mib: int | None = None,
                 max_running: int | None = None):
        self.interpreters = {i.name: i for i in interpreters}
        self._slots = threading.BoundedSemaphore(max_running) if max_running else None
        self.queues: dict[str, queue.Queue[tuple[int, Task] | None]] = {n: queue.Queue() for n in self.interpreters}
        self.results_queue: queue.Queue[tuple[int, Task, Outcome | BaseException]] = queue.Queue()
        self.workers = [Worker(i, log_dir, run_timeout_s=run_timeout_s, rss_limit_mib=rss_limit_mib,
                               rss_growth_limit_mib=rss_growth_limit_mib, address_space_mib=address_space_mib)
                        for i in self.interpreters.values() for _ in range(max(1, jobs))]
        self.info: dict[str, InterpreterInfo] = {}
        self._seq = itertools.count()
        self._threads: list[threading.Thread] = []
        self.pending = 0
        # tasks a worker has taken from its queue and that wait for a run slot, by task id
        self._waiting: dict[int, Task] = {}
        self._waiting_lock = threading.Lock()

    def start(self) -> dict[str, InterpreterInfo]:
        """Start every worker in parallel; raises HarnessError if one cannot start."""
        errors: list[BaseException] = []

        def boot(worker: Worker) -> None:
            try:
                self.info[worker.interpreter.name] = worker.start()
            except BaseException as e:  # reported below
                errors.append(e)

        boots = [threading.Thread(target=boot, args=(w,)) for w in self.workers]
        for t in boots:
            t.start()
        for t in boots:
            t.join()
        if errors:
            self.close()
            raise errors[0]
        for worker in self.workers:
            thread = threading.Thread(target=self._serve, args=(worker,), daemon=True)
            thread.start()
            self._threads.append(thread)
        return self.info

    def _serve(self, worker: Worker) -> None:
        q = self.queues[worker.interpreter.name]
        while (item := q.get()) is not None:
            seq, task = item
            with self._waiting_lock:
                self._waiting[seq] = task
            try:
                with self._slots or contextlib.nullcontext():
                    with self._waiting_lock:
                        if self._waiting.pop(seq, None) is None:
                            continue  # withdrawn while it waited for the slot: no result
                    result: Outcome | BaseException = worker.run(task)
            except BaseException as e:  # handed to the caller
                result = e
            self.results_queue.put((seq, task, result))
        worker.close()

    def submit(self, task: Task) -> int:
        if task.interpreter not in self.queues:
            raise HarnessError(f"no workers for interpreter {task.interpreter}; the pool has {sorted(self.queues)}")
        seq = next(self._seq)
        self.pending += 1
        self.queues[task.interpreter].put((seq, task))
        return seq

    def next_result(self, timeout_s: float | None = None) -> tuple[int, Task, Outcome]:
        """The next finished task. Raises HarnessError from a worker, or
        queue.Empty after timeout_s seconds."""
        seq, task, result = self.results_queue.get(timeout=timeout_s)
        self.pending -= 1
        if isinstance(result, BaseException):
            raise result
        return seq, task, result

    def withdraw(self, keep: Callable[[int], bool]) -> list[tuple[int, Task]]:
        """Take back the tasks no worker has started yet, queued or waiting
        for a run slot (``max_running``), but those whose id ``keep`` holds
        to, and return them as (task id, task), the waiting ones first, then
        in queue order; ``pending`` drops by their number. A task a worker is
        running is not touched: its result still comes back from
        ``next_result``. Without the waiting ones, a campaign of six workers
        on two slots drained four runs more past its fuzz phase's end
        (fuzz.campaign.loop)."""
        taken: list[tuple[int, Task]] = []
        with self._waiting_lock:
            for seq in [seq for seq in self._waiting if not keep(seq)]:
                taken.append((seq, self._waiting.pop(seq)))
        for q in self.queues.values():
            held = []
            while True:
                try:
                    item = q.get_nowait()
                except queue.Empty:
                    break
                if item is None or keep(item[0]):
                    held.append(item)
                else:
                    taken.append(item)
            for item in held:
                q.put(item)
        self.pending -= len(taken)
        return taken

    def run_all(self, tasks: Iterable[Task]) -> list[Outcome]:
        """Run tasks and return their outcomes in submission order."""
        seqs = [self.submit(t) for t in tasks]
        done: dict[int, Outcome] = {}
        while len(done) < len(seqs):
            seq, _, outcome = self.next_result()
            done[seq] = outcome
        return [done[s] for s in seqs]

    def terminate(self) -> None:
        """Kill every worker now (an interrupted campaign): their running
        programs end as crashes nobody reads, and ``close`` returns at once."""
        for w in self.workers:
            w._kill()

    def close(self) -> None:
        for name, q in self.queues.items():
            for _ in [w for w in self.workers if w.interpreter.name == name]:
                q.put(None)
        for t in self._threads:
            t.join(timeout=60)
        for w in self.workers:
            w.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
