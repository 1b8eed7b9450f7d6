"""torch's own after-AOT minifier beside ours, for ``tcfuzz repro --markdown``.

The pt2 bug-report template asks Inductor and AOTAutograd bugs for torch's
minified repro (``TORCHDYNAMO_REPRO_AFTER="aot"``, see
https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html). This
module runs it on a standalone case in one interpreter's env, in a temporary
folder, within a budget:

1. ``python CASE`` with ``TORCHDYNAMO_REPRO_AFTER=aot`` and
   ``TORCHDYNAMO_REPRO_LEVEL`` 4 (accuracy: the compiled graph is checked
   against eager, for divergences) or 2 (a compile error or crash), so that
   torch writes ``torch_compile_debug/run_*/minifier/minifier_launcher.py``
   where the failing FX graph is compiled;
2. ``python minifier_launcher.py``, which minimises that graph and copies its
   last checkpoint to ``repro.py`` in the folder it runs in.

Its output is torch's, not ours: what the case table says is tcfuzz's
verdict, ``repro.py`` is what torch's maintainers run.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import subprocess
import tempfile
import time
from pathlib import Path

from fuzz.campaign.interpreters import Interpreter

log = logging.getLogger(__name__)

# Seconds the two steps may take together: a first Inductor compile is
# 26-70 s on this project's 2-core machine, and the minifier compiles each
# candidate graph again.
MINIFIER_BUDGET_S = 600.0
# The stages whose bugs torch's after-AOT minifier reduces (a Dynamo-stage
# bug shows with the eager backend, before AOTAutograd: nothing to minify).
AFTER_AOT_STAGES = ("aot", "inductor")


@dataclasses.dataclass(frozen=True)
class MinifierResult:
    """``repro``: the text of torch's ``repro.py`` ("" when none came);
    ``note``: one line saying what happened (why there is no repro);
    ``elapsed_s``: seconds both steps took."""

    repro: str
    note: str
    elapsed_s: float


def applies(meta: dict) -> bool:
    """Whether ``meta`` (a case's ``[tool.tcfuzz]`` table) is of a stage the
    after-AOT minifier reduces."""
    return meta.get("stage") in AFTER_AOT_STAGES


def repro_level(kind: str) -> int:
    """``TORCHDYNAMO_REPRO_LEVEL`` for a case of ``kind``: 4 (check the
    compiled graph's accuracy) for a divergence, 2 (dump on a compile error)
    otherwise (torch/_dynamo/config.py's ``repro_level``)."""
    return 4 if kind == "divergence" else 2


def after_aot_repro(case: Path, interpreter: Interpreter, *, kind: str,
                    budget_s: float = MINIFIER_BUDGET_S) -> MinifierResult:
    """Run torch's after-AOT minifier on the standalone case at ``case`` (a
    corpus file: ``python CASE`` compiles it) in ``interpreter``'s env.

    ``kind``: the case's kind (divergence, compile-error, ...). Never raises
    for the minifier's own failures: they are the result's ``note``."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tcfuzz-minifier-") as tmp:
        env = {**interpreter.environ(), "TORCHDYNAMO_REPRO_AFTER": "aot",
               "TORCHDYNAMO_REPRO_LEVEL": str(repro_level(kind)), "TORCH_COMPILE_DEBUG_DIR": tmp}
        env.pop("PYTHONPATH", None)  # the case stands alone, as a user runs it
        if not _run([str(interpreter.python), str(case.resolve())], tmp, env, budget_s):
            return MinifierResult("", f"python CASE ran past the {budget_s:.0f} s budget",
                                  time.monotonic() - started)
        launchers = sorted(Path(tmp).glob("torch_compile_debug/*/minifier/minifier_launcher.py"))
        if not launchers:
            return MinifierResult("", "torch wrote no minifier_launcher.py: the failure is not in the graph "
                                      "AOTAutograd hands to the backend", time.monotonic() - started)
        left_s = budget_s - (time.monotonic() - started)
        if left_s <= 0 or not _run([str(interpreter.python), str(launchers[-1])], tmp, env, left_s):
            return MinifierResult("", f"the minifier ran past the {budget_s:.0f} s budget",
                                  time.monotonic() - started)
        repro = Path(tmp) / "repro.py"
        if not repro.exists():
            return MinifierResult("", "the minifier wrote no repro.py: its graph did not fail on its own",
                                  time.monotonic() - started)
        return MinifierResult(portable(repro.read_text(), tmp), f"torch's after-AOT minifier on {interpreter.name}",
                              time.monotonic() - started)


def portable(repro: str, tmp: str) -> str:
    """``repro`` (a ``repro.py``'s text) made to run anywhere: its inputs'
    data lived in the temporary folder ``tmp``, so ``save_dir`` becomes None
    (torch's InputReader then draws random data of the same shapes and
    dtypes), and the ``os.environ`` lines that name ``tmp`` or tcfuzz's own
    caches are dropped."""
    text = re.sub(r"save_dir='[^']*'", "save_dir=None", repro)
    return "\n".join(line for line in text.split("\n")
                     if not (line.startswith("os.environ[") and (tmp in line or "/tcfuzz/" in line)))


def _run(cmd: list[str], cwd: str, env: dict[str, str], timeout_s: float) -> bool:
    """Run ``cmd``; False if it ran past ``timeout_s`` seconds (its exit
    status is the program's business: the case exits 1 while its bug is there)."""
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return False
    log.debug("%s: exit %s, stderr %s", cmd[-1], proc.returncode, proc.stderr[-2000:])
    return True
