"""Isolation and resource limits for the generated code a worker runs.

Applied by ``harness.worker`` (Linux; where a limit is unavailable it is
skipped and logged):

- a private temporary working directory, emptied after every program and
  removed when the worker exits;
- an address-space limit (``RLIMIT_AS``): the worker's size after
  ``import torch`` plus a headroom, so a program that allocates without bound
  gets ``MemoryError`` / ``RuntimeError`` instead of the OOM killer. A CUDA
  build of torch maps ~3 GiB of address space at import (measured: 3.1 GiB
  with torch 2.12.0 on CPU) and initialising CUDA maps far more, so the
  limit is off for ``--device cuda``;
- a per-program CPU-time limit (``RLIMIT_CPU`` soft limit, reset before each
  program): past it the kernel sends ``SIGXCPU``, ``faulthandler`` dumps the
  Python stacks and the process dies of the signal, which the host records as
  a timeout. It also stops a runaway program whose host has gone away;
- no core files (``RLIMIT_CORE`` 0);
- no network while a program runs: an audit hook (PEP 578) refuses internet
  sockets and name lookups (``socket.__new__`` for AF_INET/AF_INET6,
  ``socket.connect``, ``socket.bind``, ``socket.getaddrinfo`` ...) with
  ``PermissionError``. Unix sockets and pipes stay allowed (torch uses them);
- stdin is /dev/null and the environment is scrubbed by the host
  (``fuzz.campaign.interpreters.Interpreter.environ``).
"""

from __future__ import annotations

import contextlib
import faulthandler
import logging
import os
import resource
import shutil
import signal
import socket
import sys
import tempfile
from collections.abc import Iterator

log = logging.getLogger(__name__)

# MiB of address space a worker may map beyond its size after `import torch`
# (a warm Inductor worker maps ~0.5 GiB more; compiled kernels and a
# program's tensors need the rest).
ADDRESS_SPACE_HEADROOM_MIB = 8 * 1024
# Audit events refused while a program runs (PEP 578 table of audit events).
NETWORK_EVENTS = frozenset({
    "socket.connect", "socket.bind", "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr",
    "socket.sendto", "socket.sendmsg", "socket.getnameinfo",
})
INTERNET_FAMILIES = frozenset({socket.AF_INET, socket.AF_INET6})

_network_blocked = False
_hook_installed = False


def _audit(event: str, args: tuple) -> None:
    if not _network_blocked:
        return
    if event == "socket.__new__":
        if len(args) > 1 and args[1] in INTERNET_FAMILIES:
            raise PermissionError("tcfuzz: no network for generated programs (internet socket refused)")
    elif event in NETWORK_EVENTS:
        raise PermissionError(f"tcfuzz: no network for generated programs ({event} refused)")


def install_network_guard() -> None:
    """Install the audit hook once per process; it refuses network use only
    inside ``program_limits``. Audit hooks cannot be removed (PEP 578)."""
    global _hook_installed
    if not _hook_installed:
        sys.addaudithook(_audit)
        _hook_installed = True


def make_workdir() -> str:
    """A fresh private temporary directory (under $TMPDIR), made the cwd."""
    path = tempfile.mkdtemp(prefix="tcfuzz-worker-")
    os.chdir(path)
    return path


def clean_workdir(path: str) -> None:
    """Remove everything a program left in ``path`` (keeps the folder)."""
    with os.scandir(path) as entries:
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass
    if os.getcwd() != path:  # the program may have chdir'ed
        os.chdir(path)


def remove_workdir(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _status_mib(field: str) -> float | None:
    try:
        with open(f"/proc/{os.getpid()}/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return None


def rss_mib() -> float:
    """This process's resident set size now, in MiB (VmRSS; on systems
    without /proc, the peak from getrusage)."""
    now = _status_mib("VmRSS")
    return now if now is not None else peak_rss_mib()


def peak_rss_mib() -> float:
    """This process's peak resident set size, in MiB."""
    peak = _status_mib("VmHWM")
    if peak is not None:
        return peak
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss / (1024 * 1024) if sys.platform == "darwin" else maxrss / 1024  # bytes on macOS, kB on Linux


def address_space_mib() -> float:
    """Mapped address space now, in MiB (VmSize), 0 when unknown."""
    return _status_mib("VmSize") or 0.0


def set_address_space_limit(limit_mib: int) -> None:
    """Limit the address space to ``limit_mib`` MiB (0: no limit). Raises
    ValueError if the limit is below what is already mapped."""
    if limit_mib <= 0:
        return
    mapped = address_space_mib()
    if mapped and limit_mib < mapped:
        raise ValueError(f"Expected an address-space limit above the {mapped:.0f} MiB already mapped "
                         f"but got address_space_mib={limit_mib}")
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = limit_mib * 1024 * 1024
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def disable_core_files() -> None:
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))


def install_signal_dumps(stream: object = None) -> None:
    """``faulthandler`` stack dumps for SIGXCPU (CPU-time limit: dump, then die
    of the signal) and SIGUSR1 (the host asks before it kills a hung worker:
    dump and go on)."""
    stream = stream or sys.stderr
    faulthandler.register(signal.SIGXCPU, file=stream, all_threads=True, chain=True)
    faulthandler.register(signal.SIGUSR1, file=stream, all_threads=True, chain=False)


def _cpu_time_s() -> int:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return int(usage.ru_utime + usage.ru_stime)


@contextlib.contextmanager
def program_limits(cpu_limit_s: float | None) -> Iterator[None]:
    """While a program runs: at most ``cpu_limit_s`` more seconds of CPU time
    for the whole process (None: no limit) and no network."""
    global _network_blocked
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if cpu_limit_s:
        soft = _cpu_time_s() + max(1, int(cpu_limit_s + 0.5))
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    _network_blocked = True
    try:
        yield
    finally:
        _network_blocked = False
        if cpu_limit_s:
            resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
