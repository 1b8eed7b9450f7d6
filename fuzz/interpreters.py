"""The interpreters under test and the worker env each one runs in.

A name such as "3.13t" maps to the tox env ``.tox/py313t`` (made by
``scripts/provision.sh``); a path to an existing interpreter that has torch is
accepted as well, for machines where the envs cannot be made.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

from fuzz.errors import HarnessError, UsageError

# The interpreters of a default campaign, in ladder order.
DEFAULT_PYTHONS: tuple[str, ...] = ("3.11", "3.12", "3.13", "3.13t")
NAME = re.compile(r"^3\.(\d+)(t?)$")
ROOT = Path(__file__).resolve().parent.parent


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
        keep = ("PATH", "HOME", "LANG", "LC_ALL", "USER", "LOGNAME", "TERM", "SYSTEMROOT")
        env = {k: v for k, v in os.environ.items() if k in keep or k.startswith(("TORCH", "TCFUZZ_"))}
        cache = Path(os.environ.get("TCFUZZ_CACHE", Path.home() / ".cache" / "tcfuzz"))
        # Inductor writes precompiled headers under $TMPDIR/torchinductor_$USER
        # whatever TORCHINDUCTOR_CACHE_DIR says: give each env its own of both.
        tmp = cache / "tmp" / self.name
        tmp.mkdir(parents=True, exist_ok=True)
        env.setdefault("TORCHINDUCTOR_CACHE_DIR", str(cache / "inductor" / self.name))
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
    if os.sep in spec or spec.startswith("python"):
        path = Path(spec).expanduser()
        if not path.exists():
            raise HarnessError(f"interpreter {spec} does not exist: pass a name like 3.12 or the path of a python with torch")
        match = re.search(r"python(3\.\d+t?)$", path.name)
        name = match.group(1) if match else path.name
        extra = (("PYTHON_GIL", "0"),) if name.endswith("t") else ()
        return Interpreter(name=name, python=path, env=extra)
    if not NAME.match(spec):
        raise UsageError(f"Expected an interpreter like 3.11, 3.12, 3.13, 3.13t or a path but got --python {spec}")
    python = env_dir(spec) / "bin" / "python"
    if not python.exists():
        env = "py" + spec.replace(".", "")
        raise HarnessError(
            f"no worker env for Python {spec} ({python} is missing): run scripts/provision.sh "
            f"(or TCFUZZ_PYTHONS={spec} scripts/provision.sh for this one, which runs tox -e {env} --notest)"
        )
    # 3.13t workers run with the GIL off: the first torch.compile imports
    # triton, which would otherwise turn the GIL back on.
    extra = (("PYTHON_GIL", "0"),) if spec.endswith("t") else ()
    return Interpreter(name=spec, python=python, env=extra)


def parse_list(value: str | None) -> list[Interpreter]:
    """Resolve a comma-separated ``--python`` value ("all" or None: the default four)."""
    names = list(DEFAULT_PYTHONS) if value in (None, "", "all") else [v.strip() for v in value.split(",") if v.strip()]
    return [resolve(n) for n in names]
