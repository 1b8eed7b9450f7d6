"""Worker envs per (interpreter, torch release), made on demand with uv and cached.

``tcfuzz triage --torch 2.10.0,2.11.0`` runs a case under several torch
releases. Each (interpreter, release) gets a venv of its own under
``~/.cache/tcfuzz/envs/<interpreter>-torch<release>/`` (``$TCFUZZ_CACHE``
moves the cache): ``uv venv --python <the interpreter>`` then ``uv pip install
--no-build torch==<release> "numpy<2.5"``. uv hard-links packages from its own
cache, so a second env of the same release costs seconds. A release that has
no wheel for an interpreter (torch 2.12.1 has no cp313t wheel) is not an
error: it is recorded next to the env (``.unavailable``) and shown as "n/a".
The tox env of an interpreter is reused when it already has the release.
Envs are made under a file lock, so two triage runs can share the cache.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from fuzz.errors import HarnessError, UsageError
from fuzz.campaign.interpreters import Interpreter

log = logging.getLogger(__name__)

# Packages every worker env gets besides torch (as tox.ini's deps).
EXTRA_REQUIREMENTS: tuple[str, ...] = ("numpy",)
# Seconds one `uv pip install` may take: torch is ~900 MB plus ~3 GB of CUDA
# wheels when uv's cache is cold.
INSTALL_TIMEOUT_S = 1800.0
# Written into an env once torch is installed; an env folder without it is a
# leftover of an interrupted install and is made again.
READY_MARKER = ".tcfuzz-ready"
# Written beside an env that cannot exist (no wheel for the interpreter); holds uv's reason.
UNAVAILABLE_SUFFIX = ".unavailable"
RELEASE = re.compile(r"^\d+\.\d+(\.\d+)?([a-z0-9.+]*)$")


@dataclasses.dataclass(frozen=True)
class TorchEnv:
    """One (interpreter, torch release) cell of the torch axis: ``interpreter``
    runs in the env (None when the release has no wheel for it, ``reason``
    then says why)."""

    name: str
    torch: str
    interpreter: Interpreter | None
    reason: str = ""
    reused: bool = False

    @property
    def available(self) -> bool:
        return self.interpreter is not None


def cache_root() -> Path:
    """``$TCFUZZ_CACHE/envs`` (default ``~/.cache/tcfuzz/envs``)."""
    return Path(os.environ.get("TCFUZZ_CACHE", Path.home() / ".cache" / "tcfuzz")) / "envs"


def parse_releases(text: str) -> list[str]:
    """"2.10.0,2.11.0" -> ["2.10.0", "2.11.0"] (order kept: it is the bisection order).
    Raises UsageError for something that is not a release number."""
    releases = [v.strip() for v in text.split(",") if v.strip()]
    bad = [v for v in releases if not RELEASE.match(v)]
    if not releases or bad:
        raise UsageError(f"Expected torch releases like 2.10.0,2.11.0 but got --torch {text}")
    return releases


def env_path(name: str, release: str, index_url: str | None = None, root: Path | None = None) -> Path:
    """The cache folder of one env: ``<root>/<name>-torch<release>``, plus a
    hash of the index URL when one other than the default is used."""
    suffix = f"-{hashlib.sha256(index_url.encode()).hexdigest()[:8]}" if index_url else ""
    return (root or cache_root()) / f"{name}-torch{release}{suffix}"


def uv_command() -> list[str]:
    """How to run uv: the one beside the host python (the host .venv has it),
    else ``python -m uv``, else uv on PATH. Raises HarnessError if there is none."""
    beside = Path(sys.executable).parent / "uv"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("uv")
    if found:
        return [found]
    try:
        import uv  # noqa: F401

        return [sys.executable, "-m", "uv"]
    except ImportError:
        raise HarnessError("uv is needed to make torch envs: install it into the host venv "
                           "(.venv/bin/python -m pip install uv, or run scripts/provision.sh)") from None


def installed_torch(python: Path) -> str | None:
    """The torch version installed for ``python`` (from its dist-info, no import),
    without a local part ("2.12.0+cu130" -> "2.12.0"); None if there is none."""
    lib = python.parent.parent / "lib"
    for dist in lib.glob("python3*/site-packages/torch-*.dist-info"):
        return dist.name[len("torch-"):-len(".dist-info")].split("+")[0]
    return None


def ensure_env(base: Interpreter, release: str, *, index_url: str | None = None,
               root: Path | None = None) -> TorchEnv:
    """The env of ``base`` with torch ``release``, made if missing.

    Reuses ``base``'s own env when it has that release and no other index is
    asked for. Returns an unavailable TorchEnv when uv finds no wheel of the
    release for the interpreter. Raises HarnessError when uv fails otherwise
    (network, disk), naming the log of the attempt.
    """
    if index_url is None and installed_torch(base.python) == release:
        return TorchEnv(base.name, release, base, reused=True)
    path = env_path(base.name, release, index_url, root)
    unavailable = path.with_name(path.name + UNAVAILABLE_SUFFIX)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if unavailable.exists():
            return TorchEnv(base.name, release, None, reason=unavailable.read_text().strip())
        if not (path / READY_MARKER).exists():
            reason = _make(base, release, path, index_url)
            if reason:
                unavailable.write_text(reason + "\n")
                return TorchEnv(base.name, release, None, reason=reason)
    python = path / "bin" / "python"
    return TorchEnv(base.name, release, Interpreter(name=base.name, python=python, env=base.env))


def _make(base: Interpreter, release: str, path: Path, index_url: str | None) -> str:
    """Make the env at ``path``; "" on success, uv's reason when no wheel fits."""
    if path.exists():
        shutil.rmtree(path)
    uv = uv_command()
    interpreter = os.path.realpath(base.python)
    log.info("making torch %s env for %s at %s", release, base.name, path)
    _uv(uv + ["venv", "--quiet", "--python", interpreter, str(path)], path)
    install = uv + ["pip", "install", "--no-build", "--python", str(path / "bin" / "python"),
                    f"torch=={release}", *EXTRA_REQUIREMENTS]
    if index_url:
        install += ["--index-url", index_url]
    proc = subprocess.run(install, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
                          env={**os.environ, "UV_NO_BUILD": "1"})
    if proc.returncode != 0:
        shutil.rmtree(path, ignore_errors=True)
        if "No solution found" in proc.stderr:
            return _no_solution_reason(proc.stderr)
        log_path = path.with_name(path.name + ".log")
        log_path.write_text(proc.stdout + proc.stderr)
        raise HarnessError(f"uv could not install torch=={release} for Python {base.name}: "
                           f"{_last_line(proc.stderr)} (log: {log_path})")
    (path / READY_MARKER).write_text(f"torch=={release}\n")
    return ""


def has_package(python: Path, name: str) -> bool:
    """True if the env of ``python`` has distribution ``name`` installed (its
    dist-info, no import)."""
    lib = python.parent.parent / "lib"
    return any(lib.glob(f"python3*/site-packages/{name}-*.dist-info"))


def ensure_packages(interp: Interpreter, requirements: tuple[str, ...]) -> None:
    """Install the missing ones of ``requirements`` ("coverage>=7.6": the
    distribution name before any version bound) into ``interp``'s env with uv
    (the envs of ``tcfuzz coverage --torch``, made before they got
    ``coverage``). Raises HarnessError when uv fails."""
    missing = [r for r in requirements if not has_package(interp.python, re.split(r"[<>=!~\[ ]", r)[0])]
    if not missing:
        return
    log.info("installing %s into %s", " ".join(missing), interp.python)
    proc = subprocess.run(uv_command() + ["pip", "install", "--quiet", "--python", str(interp.python), *missing],
                          capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    if proc.returncode != 0:
        raise HarnessError(f"uv could not install {' '.join(missing)} into {interp.python}: "
                           f"{_last_line(proc.stderr)}")


def _uv(command: list[str], path: Path) -> None:
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise HarnessError(f"uv could not make the env {path}: {_last_line(proc.stderr)}")


def _no_solution_reason(stderr: str) -> str:
    """uv's one-line cause of an unsatisfiable install ("... has no wheels with a
    matching Python ABI tag ..."), shortened."""
    for line in stderr.splitlines():
        line = line.strip()
        if line.startswith(("cause:", "╰─▶", "Because")):
            text = line.split(":", 1)[1].strip() if line.startswith("cause:") else line.lstrip("╰─▶ ").strip()
            text = text.split(" and you require")[0].removeprefix("Because ")
            return text[:200]
    return "no wheel of torch for this interpreter"


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no output"
