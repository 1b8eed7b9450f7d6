"""A bare program of newer grammar than the host parses: read as a case that
requires the oldest Python that parses it.

A corpus case of 3.14 or 3.15 grammar (PEP 758 ``except A, B:``, t-strings,
PEP 798 unpacking in comprehensions) says so with its PEP 723
``requires-python``, and the host (3.11) leaves its parsing to the workers
that can. A program written by hand, or cut from an issue, has no such
header: ``tcfuzz repro``, ``triage`` and ``minimize`` ask the provisioned
3.14 and 3.15 envs (fuzz.campaign.interpreters.first_parsing) and read it as
if it had one.
"""

from __future__ import annotations

import logging
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness.program import Program
from fuzz.campaign import interpreters
from fuzz.corpus import store
from fuzz.errors import CorpusError, UsageError

log = logging.getLogger(__name__)


def load_case(path: str) -> tuple[Program, dict[str, Any]]:
    """A program file's Program and its ``[tool.tcfuzz]`` table (empty for a
    plain program), a bare one of newer grammar read as ``read_as_newer``
    does. Raises UsageError, in one line naming the fix, for a missing file,
    a file that is not a case, and a program no provisioned Python parses."""
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"no such case file: {path}")
    try:
        return store.read_case(p)
    except CorpusError as e:
        if "not a Python program" not in str(e):
            raise UsageError(str(e)) from None
        host = f"{sys.version_info[0]}.{sys.version_info[1]}"
        try:
            read = read_as_newer(p)
        except CorpusError as again:
            raise UsageError(str(again)) from None
        if read is None:
            raise UsageError(f"{e} on this Python {host}; for a program of newer grammar, provision its Python "
                             f"(scripts/provision.sh) or head it with a PEP 723 block: '# /// script', "
                             f"'# requires-python = \">=3.14\"', '# ///'") from None
    log.warning("%s parses on Python %s, not on this %s: read as requires-python >=%s", path, read[0], host, read[0])
    return read[1]


def read_as_newer(path: Path) -> tuple[str, tuple[Program, dict[str, Any]]] | None:
    """(the oldest provisioned Python that parses ``path``, the case read with
    a ``requires-python`` of it) for a file this Python cannot parse; None
    when no provisioned newer env parses it either. Raises CorpusError as
    store.read_case does for what follows the parse."""
    newer = interpreters.first_parsing(path)
    if newer is None:
        return None
    header = "\n".join(["# /// script", f'# requires-python = ">={newer}"', "# ///", ""])
    with tempfile.TemporaryDirectory() as tmp:
        headed = Path(tmp) / path.name
        headed.write_text(header + path.read_text())
        return newer, store.read_case(headed)
