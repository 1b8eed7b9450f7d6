"""Which torch release each interpreter gets: the newest with a wheel for it.

A worker env's torch is resolved from the package index when the env is made
(``scripts/provision.sh`` runs ``python -m fuzz.campaign.torch_releases``), so
the default matrix moves with torch's releases: uv is asked to resolve an
unpinned ``torch`` for the interpreter with building from source disabled,
which skips every release without a wheel for that interpreter's tag (torch
2.13-2.15 have no cp313t wheel, so 3.13t gets 2.12.0). ``TCFUZZ_TORCH``
("torch==2.13.0") pins one release instead.

The named matrices keep comparisons that hold the compiler still:
``mission`` is CPython 3.11, 3.12, 3.13 and 3.13t on torch 2.12.0, the newest
release with wheels for all four.
"""

from __future__ import annotations

import argparse
import enum
import os
import re
import subprocess
import sys
from pathlib import Path

from fuzz.errors import HarnessError
from fuzz.campaign.torch_envs import uv_command

# Seconds one resolution may take (the index is asked over the network once,
# then uv's cache answers).
RESOLVE_TIMEOUT_S = 180.0
PIN = re.compile(r"^torch==(\S+)$", re.MULTILINE)


class Matrix(enum.Enum):
    """A named set of (interpreter, torch) cells (``tcfuzz run --matrix``)."""

    # Every interpreter with the newest torch release that has a wheel for it.
    NEWEST = "newest"
    # The mission's comparison: one compiler (torch 2.12.0) on four interpreters.
    MISSION = "mission"


# The interpreters of each named matrix and the torch release pinned on all of
# them (None: each env's own, the newest with a wheel for it).
MATRIX_PYTHONS: dict[Matrix, tuple[str, ...]] = {
    Matrix.NEWEST: ("3.11", "3.12", "3.13", "3.13t", "3.14", "3.14t", "3.15", "3.15t"),
    Matrix.MISSION: ("3.11", "3.12", "3.13", "3.13t"),
}
MATRIX_TORCH: dict[Matrix, str | None] = {Matrix.NEWEST: None, Matrix.MISSION: "2.12.0"}


def newest_release(python: Path, *, index_url: str | None = None) -> str:
    """The newest torch release ("2.15.0") that has a wheel for the interpreter
    at ``python``, as uv resolves it (the index uv is configured with, or
    ``index_url``). Raises HarnessError, with uv's reason, when none fits or
    the index cannot be reached."""
    command = uv_command() + ["pip", "compile", "--quiet", "--no-header", "--no-annotate",
                              "--python", str(python), "-"]
    if index_url:
        command += ["--index-url", index_url]
    try:
        proc = subprocess.run(command, input="torch\n", capture_output=True, text=True,
                              timeout=RESOLVE_TIMEOUT_S, env={**os.environ, "UV_NO_BUILD": "1"})
    except subprocess.TimeoutExpired:
        raise HarnessError(f"uv did not resolve torch for {python} within {RESOLVE_TIMEOUT_S:.0f} s: "
                           f"check the network, or pin a release with TCFUZZ_TORCH=torch==X.Y.Z") from None
    found = PIN.search(proc.stdout)
    if proc.returncode != 0 or not found:
        lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
        reason = next((line for line in lines if "no wheels" in line or "No solution" in line),
                      lines[-1] if lines else "no output")
        raise HarnessError(f"no torch release has a wheel for {python}: {reason}")
    return found.group(1).split("+")[0]


def pin_for(python: Path) -> str:
    """The requirement an env of ``python`` is made with: ``$TCFUZZ_TORCH`` when
    set ("torch==2.13.0"), else ``torch==<newest_release>``."""
    forced = os.environ.get("TCFUZZ_TORCH", "").strip()
    return forced or f"torch=={newest_release(python)}"


def main(argv: list[str] | None = None) -> int:
    """``python -m fuzz.campaign.torch_releases --python EXE [--pin-file F]``:
    print (and write to F) the torch requirement for EXE. Exit 1 with a
    one-line message when none can be resolved; an existing pin file is then
    kept, so a machine that is offline keeps the release it has."""
    parser = argparse.ArgumentParser(prog="python -m fuzz.campaign.torch_releases")
    parser.add_argument("--python", required=True, type=Path)
    parser.add_argument("--pin-file", type=Path)
    args = parser.parse_args(argv)
    try:
        pin = pin_for(args.python)
    except HarnessError as e:
        if args.pin_file and args.pin_file.exists():
            kept = args.pin_file.read_text().strip()
            print(f"warning: {e}; keeping {kept}", file=sys.stderr)
            print(kept)
            return 0
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.pin_file:
        args.pin_file.parent.mkdir(parents=True, exist_ok=True)
        if not args.pin_file.exists() or args.pin_file.read_text().strip() != pin:
            args.pin_file.write_text(pin + "\n")
    print(pin)
    return 0


if __name__ == "__main__":
    sys.exit(main())
