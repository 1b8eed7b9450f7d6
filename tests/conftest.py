"""Shared fixtures. Tests under tests/slow start real workers in the tox envs
(made by scripts/provision.sh) and are marked ``slow``."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Public torch.compile bugs rewritten as programs with an EXPECT table (tests/known_bugs/README.md).
KNOWN_BUGS = ROOT / "tests" / "known_bugs"

# tests/harness runs inside the worker envs (torch installed): the host's run
# reaches it through tests/slow/test_oracle.py, once per env.
collect_ignore = [] if importlib.util.find_spec("torch") else ["harness"]


def env_python(name: str) -> Path:
    return ROOT / ".tox" / ("py" + name.replace(".", "")) / "bin" / "python"


def require_env(name: str) -> None:
    """Skip (with the fix in the reason) when a worker env is missing."""
    if not env_python(name).exists():
        pytest.skip(f"no worker env for {name}: run scripts/provision.sh")


@pytest.fixture
def available_pythons() -> list[str]:
    from fuzz.campaign.interpreters import DEFAULT_PYTHONS

    names = [n for n in DEFAULT_PYTHONS if env_python(n).exists()]
    if not names:
        pytest.skip("no worker envs: run scripts/provision.sh")
    return names
