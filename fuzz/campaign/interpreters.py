"""The interpreters under test and the worker env each one runs in.

A name such as "3.13t" maps to the tox env ``.tox/py313t`` (made by
``scripts/provision.sh``); a path to an existing interpreter that has torch is
accepted as well, for machines where the envs cannot be made.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from fuzz.campaign import toolchain
from fuzz.errors import HarnessError, TcfuzzError, UsageError

# Seconds an interpreter may take to say its version (no torch import).
PROBE_TIMEOUT_S = 30.0
# Seconds an interpreter may take to import torch and ask CUDA for a GPU
# (4-7 s alone, far more on a busy machine).
CUDA_PROBE_TIMEOUT_S = 90.0
# The interpreters of a default campaign, in ladder order (also the order
# signatures list them in).
DEFAULT_PYTHONS: tuple[str, ...] = ("3.11", "3.12", "3.13", "3.13t", "3.14", "3.14t", "3.15", "3.15t")
# The ones a default campaign needs: the others (the newest releases) are
# used where scripts/provision.sh could provision them and listed as
# unavailable, with the reason, where it could not.
REQUIRED_PYTHONS: tuple[str, ...] = ("3.11", "3.12", "3.13", "3.13t")
NAME = re.compile(r"^3\.(\d+)(t?)$")
ROOT = Path(__file__).resolve().parents[2]
# Seconds an interpreter may take to import torch._dynamo and list its backends.
BACKENDS_PROBE_TIMEOUT_S = 120.0


@dataclasses.dataclass(frozen=True)
class Interpreter:
    """One interpreter under test: ``name`` ("3.13t"), the ``python`` executable
    of its worker env, and the environment variables its workers get."""

    name: str
    python: Path
    env: tuple[tuple[str, str], ...] = ()

    @property
    def free_threaded(self) -> bool:
        return self.name.endswith("t")

    def environ(self) -> dict[str, str]:
        """The scrubbed environment a worker of this interpreter runs with."""
        # CXX/CC: the compiler Inductor's C++ is built with (fuzz.campaign.toolchain)
        keep = ("PATH", "HOME", "LANG", "LC_ALL", "USER", "LOGNAME", "TERM", "SYSTEMROOT", "LD_LIBRARY_PATH",
                "CXX", "CC")
        # CUDA_*, NVIDIA_* and TRITON_* say where the GPU, its driver and Triton's caches are
        env = {k: v for k, v in os.environ.items()
               if k in keep or k.startswith(("TORCH", "TCFUZZ_", "CUDA_", "NVIDIA_", "TRITON_"))}
        cache = Path(os.environ.get("TCFUZZ_CACHE", Path.home() / ".cache" / "tcfuzz"))
        # Inductor writes precompiled headers under $TMPDIR/torchinductor_$USER
        # whatever TORCHINDUCTOR_CACHE_DIR says: give each env its own of both.
        tmp = cache / "tmp" / self.name
        tmp.mkdir(parents=True, exist_ok=True)
        env.setdefault("TORCHINDUCTOR_CACHE_DIR", str(cache / "inductor" / self.name))
        # $CXX, else g++ with a linker that reads libtorch's symbols faster (fuzz.campaign.toolchain)
        env.setdefault("CXX", toolchain.inductor_cxx())
        # An outcome is a function of the program, not of what the worker compiled
        # before: Inductor's FX graph cache and AOTAutograd's cache hand a graph
        # the code compiled for another program of the same graph (its guards on
        # the size hints pass), so a compile error that depends on the hints
        # read as a match, in 0.1 s, once a minimiser's candidate had filled the
        # cache (compile-error/be620e810b38). Kernels stay cached by their source.
        env.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "0")
        env.setdefault("TORCHINDUCTOR_AUTOGRAD_CACHE", "0")
        # Inductor compiles in the worker itself: its pool of compile
        # subprocesses costs memory per worker and, on a loaded machine, times
        # out while starting (300 s), which would read as a compile error
        env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
        env["TMPDIR"] = str(tmp)
        env["PYTHONPATH"] = str(ROOT)
        env["PYTHONHASHSEED"] = "0"
        env["PYTHONUNBUFFERED"] = "1"
        env.update(dict(self.env))
        return env


def env_dir(name: str) -> Path:
    """The tox env folder for an interpreter name ("3.13t" -> .tox/py313t)."""
    return ROOT / ".tox" / ("py" + name.replace(".", ""))


def resolve(spec: str) -> Interpreter:
    """An Interpreter for a name ("3.11" ... "3.13t") or a path to a python.

    Raises UsageError for a malformed name and HarnessError, naming the command
    that fixes it, when the env is missing.
    """
    if _is_path(spec):
        found = shutil.which(spec) if os.sep not in spec else None
        path = Path(found or spec).expanduser().absolute()  # workers start in their log folder
        if not path.exists():
            raise HarnessError(f"interpreter {spec} does not exist: pass a name like 3.12 or the path of a python with torch")
        name = probe_name(path)
        extra = (("PYTHON_GIL", "0"),) if name.endswith("t") else ()
        return Interpreter(name=name, python=path, env=extra)
    check_spec(spec)
    python = env_dir(spec) / "bin" / "python"
    if not python.exists():
        env = "py" + spec.replace(".", "")
        skipped = ROOT / ".tox" / "pins" / "unavailable" / spec
        if skipped.exists():  # scripts/provision.sh could not provision it here, and said why
            raise HarnessError(f"no worker env for Python {spec}: {skipped.read_text().strip()}")
        raise HarnessError(
            f"no worker env for Python {spec} ({python} is missing): run scripts/provision.sh "
            f"(or TCFUZZ_PYTHONS={spec} scripts/provision.sh for this one, which runs tox -e {env} --notest)"
        )
    # 3.13t workers run with the GIL off: the first torch.compile imports
    # triton, which would otherwise turn the GIL back on.
    extra = (("PYTHON_GIL", "0"),) if spec.endswith("t") else ()
    return Interpreter(name=spec, python=python, env=extra)


# Interpreters whose grammar a program may need that an older host cannot
# parse: 3.14's PEP 758 (``except A, B:``) and t-strings, 3.15's PEP 798.
NEWER_GRAMMARS = ("3.14", "3.15")
# Seconds a worker env's python gets to parse one file.
PARSE_PROBE_TIMEOUT_S = 30.0


def first_parsing(path: Path, *, names: Iterable[str] = NEWER_GRAMMARS,
                  timeout_s: float = PARSE_PROBE_TIMEOUT_S) -> str | None:
    """The first of ``names`` newer than this Python, with a provisioned
    worker env, whose ``ast.parse`` accepts the file ``path``: the oldest
    Python a program of newer grammar runs on; None when none does (or none
    is provisioned)."""
    for name in names:
        if tuple(int(n) for n in name.rstrip("t").split(".")) <= sys.version_info[:2]:
            continue
        try:
            python = resolve(name).python
        except TcfuzzError:  # not provisioned here
            continue
        try:
            done = subprocess.run([str(python), "-c", "import ast, sys; ast.parse(open(sys.argv[1], 'rb').read())",
                                   str(path)], capture_output=True, timeout=timeout_s)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return name
    return None


def _is_path(spec: str) -> bool:
    """Does ``spec`` name a python executable (a path, or ``python3.12`` on PATH)?"""
    return os.sep in spec or spec.startswith("python")


def check_spec(spec: str) -> None:
    """Raise UsageError unless ``spec`` is an interpreter name ("3.11" ...
    "3.13t") or a path; looks at no env (``resolve`` does)."""
    if not _is_path(spec) and not NAME.match(spec):
        raise UsageError(f"Expected an interpreter like 3.11, 3.13t, 3.14 or 3.15t, or a path, but got --python {spec}")


def parse_specs(value: str | None) -> list[str]:
    """The specs of a comma-separated ``--python`` value ("all" or None:
    ``DEFAULT_PYTHONS``), each checked by ``check_spec`` (UsageError) before any env
    is looked at."""
    specs = list(DEFAULT_PYTHONS) if value in (None, "", "all") else [v.strip() for v in value.split(",") if v.strip()]
    for spec in specs:
        check_spec(spec)
    return specs


def parse_list(value: str | None) -> list[Interpreter]:
    """Resolve a comma-separated ``--python`` value ("all" or None: the
    default interpreters, less the optional ones that are not provisioned:
    ``select``). Raises UsageError for a malformed spec (any of them, before
    an env is looked at) and HarnessError for a missing env (``resolve``)."""
    return select(value)[0]


def select(value: str | None) -> tuple[list[Interpreter], dict[str, str]]:
    """The interpreters of a ``--python`` value and, for the default set
    ("all" or None), the optional ones that have no worker env, each with the
    one-line reason (``{"3.14t": "no worker env ..."}``). A name given
    explicitly must have its env. Raises UsageError for a malformed spec and
    HarnessError for a missing required env."""
    default = value in (None, "", "all")
    found: list[Interpreter] = []
    missing: dict[str, str] = {}
    for name in parse_specs(value):
        try:
            found.append(resolve(name))
        except HarnessError as e:
            if not default or name in REQUIRED_PYTHONS:
                raise
            missing[name] = str(e)
    return found, missing


_PROBE_NAME = """
import importlib.util, sys, sysconfig
t = "t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""
print(f"{sys.version_info[0]}.{sys.version_info[1]}{t}", importlib.util.find_spec("torch") is not None)
"""


def probe_name(python: Path) -> str:
    """The name ("3.12", "3.13t") of the interpreter at ``python``, asked of it
    (without importing torch). Raises HarnessError, naming the fix, if it does
    not run or has no torch."""
    try:
        proc = subprocess.run([str(python), "-I", "-c", _PROBE_NAME], capture_output=True, text=True,
                              timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise HarnessError(f"interpreter {python} does not run ({e}): pass a name like 3.12 or the path of a python") from None
    fields = proc.stdout.split()
    if proc.returncode != 0 or len(fields) != 2 or not NAME.match(fields[0]):
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise HarnessError(f"interpreter {python} is not a CPython 3.x that tcfuzz can use ({last})")
    if fields[1] != "True":
        raise HarnessError(f"interpreter {python} (Python {fields[0]}) has no torch: install torch into it "
                           f"or pass a worker env name like {fields[0]}")
    return fields[0]


_PROBE_CUDA = """
import torch
print(torch.cuda.is_available(), torch.version.cuda or "none", torch.cuda.device_count())
"""


def cuda_problem(interpreter: Interpreter, *, timeout_s: float = CUDA_PROBE_TIMEOUT_S) -> str:
    """Why ``interpreter`` cannot run programs on a GPU ("" if it can): it is
    asked, in its worker environment, ``torch.cuda.is_available()``."""
    try:
        proc = subprocess.run([str(interpreter.python), "-c", _PROBE_CUDA], capture_output=True, text=True,
                              timeout=timeout_s, env=interpreter.environ(), stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"Python {interpreter.name} ({interpreter.python}) did not answer within {timeout_s:.0f} s"
    except OSError as e:
        return f"Python {interpreter.name} ({interpreter.python}) does not run: {e}"
    fields = proc.stdout.split()
    if proc.returncode != 0 or len(fields) != 3:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return f"Python {interpreter.name} ({interpreter.python}) could not ask torch: {last}"
    if fields[0] != "True":
        build = "a CPU-only torch" if fields[1] == "none" else f"torch built for CUDA {fields[1]}"
        return f"Python {interpreter.name} ({interpreter.python}, {build}) sees no GPU"
    return ""


def for_device(interpreters: Iterable[Interpreter], device: str) -> list[Interpreter]:
    """The interpreters whose workers serve ``device``: for a GPU, workers get
    ``TCFUZZ_DEVICE`` (harness.device: no address-space limit) and
    ``CUDA_LAUNCH_BLOCKING=1``, so that a CUDA fault is raised at the launch of
    the kernel that faulted and its signature names that kernel (the same
    signature during fuzzing, minimisation and triage)."""
    if device == "cpu":
        return list(interpreters)
    extra = (("TCFUZZ_DEVICE", device), ("CUDA_LAUNCH_BLOCKING", "1"))
    return [dataclasses.replace(i, env=i.env + tuple(kv for kv in extra if kv not in i.env)) for i in interpreters]


_PROBE_TRITON = """
try:
    import triton
    print("ok", triton.__version__)
except Exception as e:
    print("missing", type(e).__name__ + ": " + str(e).splitlines()[0] if str(e) else type(e).__name__)
"""


def triton_problem(interpreter: Interpreter, *, timeout_s: float = CUDA_PROBE_TIMEOUT_S) -> str:
    """Why Inductor on a GPU cannot generate Triton kernels in ``interpreter``'s
    env ("" if ``import triton`` works there): asked of the env, one line."""
    try:
        proc = subprocess.run([str(interpreter.python), "-c", _PROBE_TRITON], capture_output=True, text=True,
                              timeout=timeout_s, env=interpreter.environ(), stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"Python {interpreter.name}: cannot ask whether Triton imports ({e})"
    answer = proc.stdout.strip()
    if proc.returncode == 0 and answer.startswith("ok"):
        return ""
    reason = answer.removeprefix("missing").strip() or (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return (f"Python {interpreter.name} ({interpreter.python}): Triton cannot be imported ({reason}), so Inductor "
            "on cuda fails there: install the triton that matches its torch, or drop inductor for it")


_PROBE_BACKENDS = """
import json, torch._dynamo
print(json.dumps(sorted(torch._dynamo.list_backends(exclude_tags=()))))
"""


def registered_backends() -> frozenset[str] | None:
    """The backend names the first worker env's torch registers
    (``torch._dynamo.list_backends(exclude_tags=())``, third-party ones
    included), or None when no worker env exists yet.

    Asked of the env once per installed torch and cached in
    ``$TCFUZZ_CACHE/backends/`` (the host never imports torch; the probe
    takes a few seconds). Raises HarnessError if the env's torch cannot list
    them.
    """
    env = next((env_dir(name) for name in DEFAULT_PYTHONS if (env_dir(name) / "bin" / "python").exists()), None)
    if env is None:
        return None
    python = env / "bin" / "python"
    version_files = sorted(env.glob("lib/python3*/site-packages/torch/version.py"))
    stamp = "|".join([str(python)] + [f"{f}:{f.stat().st_mtime_ns}" for f in version_files])
    cache = Path(os.environ.get("TCFUZZ_CACHE", Path.home() / ".cache" / "tcfuzz")) / "backends"
    path = cache / (hashlib.sha256(stamp.encode()).hexdigest()[:16] + ".json")
    try:
        return frozenset(json.loads(path.read_text()))
    except (OSError, ValueError):
        pass
    try:
        proc = subprocess.run([str(python), "-c", _PROBE_BACKENDS], capture_output=True, text=True,
                              timeout=BACKENDS_PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL,
                              env=Interpreter(env.name, python).environ())
        names = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        names = None
    if not isinstance(names, list):
        raise HarnessError(f"{python} could not list torch's backends: run {python} -c "
                           f"'import torch._dynamo' to see why, or rerun scripts/provision.sh")
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(names))
    os.replace(tmp, path)
    return frozenset(names)
