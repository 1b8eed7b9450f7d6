"""A corpus case file on disk: its ``[tool.tcfuzz]`` table, and safe rewrites.

Stdlib only, so both the host (``fuzz.corpus``) and the corpus replay plugin
running inside a worker env (``harness.corpus_plugin``) use it. A rewrite is a
read-modify-write under an exclusive ``fcntl.flock`` on a lock file beside the
case (``.<id>.lock``), and the new text goes to a temp file in the same folder
(``.<id>.<random>.tmp``) that is fsynced and renamed over the case, so several
campaigns may write one case at once and a ``kill -9`` at any point leaves
either the old or the new file, never a partial one. Neither helper file
matches ``corpus/**/*.py``, so no reader takes it for a case.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.program import read_pep723, required_python

# Values of the table's ``status`` field: "open" while the bug is there (the
# default for a case without one), "fixed" once an upstream fix was confirmed;
# a fixed case that reproduces again is a regression (harness.corpus_plugin).
STATUS_OPEN, STATUS_FIXED = "open", "fixed"
# Values of the ``replay`` table: "<python>/<torch version>" -> one of these.
REPRODUCES, DOES_NOT_REPRODUCE = "reproduces", "does not reproduce"
# The torch release the worker envs are pinned to (tox.ini's ``torch==`` dep,
# held to this by tests/unit/test_torch_pin.py): a case's pin when nothing
# says otherwise. fuzz/ reads it from here (harness cannot import fuzz).
DEFAULT_TORCH = "2.12.0"


class CaseFileError(ValueError):
    """A case's PEP 723 block is missing or is not valid TOML."""


def toml_value(value: Any) -> str:
    """``value`` (str, bool, int, float, list of those, or dict of str to
    those) as TOML; dicts become inline tables with quoted keys."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)  # JSON strings and numbers are valid TOML


def render_header(table: dict[str, Any], *, torch_version: str = DEFAULT_TORCH,
                  requires_python: str = "3.11") -> str:
    """The ``# /// script`` block of a case holding ``table`` as ``[tool.tcfuzz]``;
    ``requires_python`` is the oldest Python its grammar parses on ("3.14"
    for a case that uses t-strings)."""
    lines = ["# /// script", f'# requires-python = ">={requires_python}"',
             f"# dependencies = [{toml_value('torch==' + torch_version.split('+')[0])}]", "# [tool.tcfuzz]"]
    lines += [f"# {key} = {toml_value(value)}" for key, value in table.items()]
    lines.append("# ///")
    return "\n".join(lines)


def read_table(text: str) -> dict[str, Any]:
    """The ``[tool.tcfuzz]`` table of a case's text ({} for a plain program).
    Raises CaseFileError for a block that is not valid TOML."""
    header = read_pep723(text)
    if header is None:
        return {}
    try:
        return tomllib.loads(header["content"]).get("tool", {}).get("tcfuzz", {})
    except tomllib.TOMLDecodeError as e:
        raise CaseFileError(f"malformed PEP 723 block ({e}); fix or delete the header") from None


def replace_table(text: str, table: dict[str, Any]) -> str:
    """``text`` with its ``[tool.tcfuzz]`` table replaced by ``table`` (keeping
    the torch pin and ``requires-python``). Raises CaseFileError if the text
    has no PEP 723 block."""
    header = read_pep723(text)
    if header is None:
        raise CaseFileError("the case has no '# /// script' block to hold its metadata")
    start, end = (int(x) for x in header["span"].split(":"))
    pin = tomllib.loads(header["content"]).get("dependencies", [f"torch=={DEFAULT_TORCH}"])
    version = next((d.split("==", 1)[1] for d in pin if d.startswith("torch==")),
                   str(table.get("torch", DEFAULT_TORCH)))
    needed = required_python(text)
    return text[:start] + render_header(table, torch_version=version,
                                        requires_python=f"{needed[0]}.{needed[1]}" if needed else "3.11") + text[end:]


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock for case ``path`` (on ``.<name>.lock`` beside it)
    for a read-modify-write. Blocks until other holders release it; the OS
    drops it when a holder dies, even by SIGKILL."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.parent / f".{path.stem}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def atomic_write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one rename (temp file ``.<name>.*.tmp``
    in the same folder, fsynced first). Raises OSError if it cannot."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def replay_key(python: str, torch_version: str) -> str:
    """Key of the ``replay`` table: "3.12/2.12.0" (local version suffix dropped)."""
    return f"{python}/{torch_version.split('+')[0]}"


def record_replay(path: Path, python: str, torch_version: str, result: str) -> None:
    """Store ``result`` (REPRODUCES or DOES_NOT_REPRODUCE) as the last replay of
    case ``path`` on ``python`` with ``torch_version``, under the case's lock."""
    with locked(path):
        text = path.read_text()
        table = read_table(text)
        table["replay"] = {**table.get("replay", {}), replay_key(python, torch_version): result}
        atomic_write(path, replace_table(text, table))
