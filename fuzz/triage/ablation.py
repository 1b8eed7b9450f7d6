"""What a PyTorch issue asks for beyond the reproducer: the ablation across
backends, ``dynamic`` and ``fullgraph``; ``collect_env`` per interpreter; a
``TORCH_TRACE`` run and its tlparse report.

Source of the list: PyTorch's ``.github/ISSUE_TEMPLATE/pt2-bug-report.yml``
(tlparse trace, "Ablation - which torch.compile backend/mode/settings cause
the bug", a minimal reproducer, collect_env output). Every run is the case
itself as ``python CASE`` in a fresh process (fuzz.corpus.store.run_standalone),
with its runner's settings rewritten: exit 1 means it reproduces.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from fuzz.campaign.interpreters import Interpreter
from fuzz.corpus import store

# The ablation's axes, in the order the table lists them.
BACKENDS = ("eager", "aot_eager", "inductor")
DYNAMIC = (False, True)
FULLGRAPH = (False, True)
# Seconds a collect_env or TORCH_TRACE run may take.
COLLECT_ENV_TIMEOUT_S = 120.0
TRACE_TIMEOUT_S = 300.0

_BACKEND = re.compile(r'^BACKEND = .*$', re.MULTILINE)
_FULLGRAPH = re.compile(r'^FULLGRAPH = .*$', re.MULTILINE)
_COMPILE = re.compile(r"torch\.compile\(([^()]*)fullgraph=FULLGRAPH\)")


@dataclasses.dataclass(frozen=True)
class Cell:
    """One ablation setting and its verdict per interpreter name
    ("reproduces", "passes", "hangs", "does not parse", "not run: <why>")."""

    backend: str
    dynamic: bool
    fullgraph: bool
    verdicts: dict[str, str]


def variant(text: str, *, backend: str, dynamic: bool, fullgraph: bool) -> str | None:
    """Case ``text`` with its runner set to ``backend``, ``dynamic`` and
    ``fullgraph`` (``torch.compile(..., dynamic=...)``); None for a case
    whose runner has no such settings (a planted backend's definition)."""
    if not _BACKEND.search(text) or not _FULLGRAPH.search(text) or not _COMPILE.search(text):
        return None
    text = _BACKEND.sub(f'BACKEND = "{backend}"', text, count=1)
    text = _FULLGRAPH.sub(f"FULLGRAPH = {fullgraph}", text, count=1)
    return _COMPILE.sub(lambda m: f"torch.compile({m.group(1)}fullgraph=FULLGRAPH, dynamic={dynamic})", text)


def verdict_of(code: int) -> str:
    """``python CASE``'s exit code as a verdict."""
    if code == store.DOES_NOT_PARSE:
        return "does not parse"
    return "hangs" if code == -9 else ("passes" if code == 0 else "reproduces")


def run_ablation(text: str, interpreters: Iterable[Interpreter]) -> list[Cell]:
    """Every setting of BACKENDS x DYNAMIC x FULLGRAPH, ``python CASE`` on each
    interpreter (in parallel per setting). Minutes: one fresh process each."""
    interpreters = list(interpreters)
    cells = []
    for backend in BACKENDS:
        for dynamic in DYNAMIC:
            for fullgraph in FULLGRAPH:
                case = variant(text, backend=backend, dynamic=dynamic, fullgraph=fullgraph)
                if case is None:
                    verdicts = {i.name: "not run: the case's runner has no backend setting" for i in interpreters}
                else:
                    verdicts = {n: verdict_of(c) for n, c in store.run_standalone(case, interpreters).items()}
                cells.append(Cell(backend, dynamic, fullgraph, verdicts))
    return cells


def collect_env(interpreter: Interpreter) -> str:
    """``python -m torch.utils.collect_env`` in ``interpreter``'s env (its
    output, or one line saying why there is none)."""
    try:
        proc = subprocess.run([str(interpreter.python), "-m", "torch.utils.collect_env"], env=interpreter.environ(),
                              capture_output=True, text=True, timeout=COLLECT_ENV_TIMEOUT_S, stdin=subprocess.DEVNULL,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"collect_env did not run: {type(e).__name__}: {e}"
    return proc.stdout.strip() or f"collect_env printed nothing (exit {proc.returncode}): {proc.stderr.strip()[-300:]}"


@dataclasses.dataclass(frozen=True)
class Trace:
    """A TORCH_TRACE run: the raw trace folder, and tlparse's output folder
    (None with ``note`` saying why when tlparse is not installed or failed)."""

    raw_dir: Path
    tlparse_dir: Path | None
    note: str = ""


def torch_trace(text: str, interpreter: Interpreter, out_dir: Path) -> Trace:
    """Run case ``text`` once with ``TORCH_TRACE=out_dir/raw`` on
    ``interpreter``, then ``tlparse`` (PyPI ``tlparse``, found on PATH or in
    the host env) over the trace into ``out_dir/tlparse``."""
    raw = out_dir / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tcfuzz-trace-") as tmp:
        path = Path(tmp) / "case.py"
        path.write_text(text)
        env = {**interpreter.environ(), "TORCH_TRACE": str(raw)}
        env.pop("PYTHONPATH", None)
        try:
            subprocess.run([str(interpreter.python), str(path)], cwd=tmp, env=env, timeout=TRACE_TIMEOUT_S,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        except subprocess.TimeoutExpired:
            return Trace(raw, None, f"the traced run took over {TRACE_TIMEOUT_S:g} s")
        except OSError as e:
            return Trace(raw, None, f"the traced run did not start: {e}")
    beside = Path(sys.executable).parent / "tlparse"  # the host env's, installed with pip
    tlparse = str(beside) if beside.exists() else shutil.which("tlparse")
    logs = sorted(raw.glob("*.log"))
    if tlparse is None:
        return Trace(raw, None, "tlparse is not installed (pip install tlparse); attach the raw trace folder")
    if not logs:
        return Trace(raw, None, "the run wrote no trace log")
    parsed = out_dir / "tlparse"
    proc = subprocess.run([tlparse, str(logs[0]), "-o", str(parsed), "--overwrite", "--no-browser"],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return Trace(raw, None, f"tlparse failed: {proc.stderr.strip()[-200:]}")
    return Trace(raw, parsed)
