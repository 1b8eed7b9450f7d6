"""Host side of ``tcfuzz repro --bisect``: run ``python -m harness.compiler_bisect`` in
one interpreter's env and read what ``CompilerBisector`` blames.

Only Inductor-only findings are bisected: where a lower rung of the backend
ladder already shows the bug, the stage is known without it. What the
bisector blames is recorded in a corpus case's table (``record_bisect``).
"""

from __future__ import annotations

import json
import logging
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from harness import casefile
from harness.backends import ladder_rank
from harness.outcome import Outcome
from harness.program import Program
from fuzz.errors import HarnessError
from fuzz.campaign.interpreters import ROOT, Interpreter

log = logging.getLogger(__name__)

# Seconds one bisection may take: it compiles the program with Inductor once
# per step (a few dozen steps; Inductor's first compile alone is 26-70 s here).
BISECT_TIMEOUT_S = 1800.0


def inductor_only(outcomes: list[Outcome]) -> list[str]:
    """Interpreters on which ``inductor`` shows a bug and no lower backend of
    the ladder that ran there does."""
    names = []
    for name in dict.fromkeys(o.interpreter for o in outcomes):
        mine = [o for o in outcomes if o.interpreter == name]
        bad_inductor = any(o.backend == "inductor" and o.verdict.is_bug for o in mine)
        bad_lower = any(o.verdict.is_bug and ladder_rank(o.backend) < ladder_rank("inductor") for o in mine)
        if bad_inductor and not bad_lower:
            names.append(name)
    return names


def bisect(program: Program, interpreter: Interpreter, *, device: str = "cpu",
           timeout_s: float = BISECT_TIMEOUT_S) -> dict[str, Any]:
    """``{"backend", "subsystem", "bisect_number", "debug_info", "runs"}`` from
    CompilerBisector run on ``program`` in ``interpreter``'s env.

    Raises HarnessError if the bisection dies, hangs past ``timeout_s`` seconds
    or prints no result.
    """
    with tempfile.TemporaryDirectory(prefix="tcfuzz-bisect-") as tmp:
        path = Path(tmp) / "program.json"
        path.write_text(json.dumps(program.to_json()))
        env = {**interpreter.environ(), "TCFUZZ_INTERPRETER": interpreter.name}
        try:
            proc = subprocess.run([str(interpreter.python), "-m", "harness.compiler_bisect", str(path), device], cwd=ROOT,
                                  env=env, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise HarnessError(f"CompilerBisector did not finish within {timeout_s:.0f} s on {interpreter.name}; "
                               "run `python -m harness.compiler_bisect` by hand to see where it stops") from None
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = proc.stderr.strip().splitlines()[-3:]
        raise HarnessError(f"CompilerBisector failed on {interpreter.name} (exit {proc.returncode}): "
                           + " | ".join(tail))
    return json.loads(lines[-1])


def record_bisect(path: Path, blamed: dict[str, Any]) -> None:
    """Record what the bisector blamed (a ``bisect`` result plus its
    ``interpreter``) in case ``path``'s ``bisect`` table, under the case's
    lock; ``debug_info`` and empty fields are left out. Raises
    casefile.CaseFileError for a file without a ``[tool.tcfuzz]`` block."""
    with casefile.locked(path):
        text = path.read_text()
        table = casefile.read_table(text)
        table["bisect"] = {k: v for k, v in blamed.items() if v is not None and k != "debug_info"}
        casefile.atomic_write(path, casefile.replace_table(text, table))


def describe(result: dict[str, Any]) -> str:
    """One line: what the bisector blames."""
    if not result.get("backend"):
        return "CompilerBisector: the program passes under inductor (nothing to blame)"
    where = result["backend"] + (f" / {result['subsystem']}" if result.get("subsystem") else "")
    if result.get("bisect_number") is not None:
        where += f" (application #{result['bisect_number']})"
    if result.get("debug_info"):
        where += f": {result['debug_info']}"
    return f"CompilerBisector blames {where} after {result.get('runs', '?')} runs"
