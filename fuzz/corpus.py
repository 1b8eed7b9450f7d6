"""The corpus: minimised cases, one PEP 723 script each, ``corpus/<kind>/<id>.py``.

A case is the program (``f``, ``inputs``, helpers), the definition of a planted
backend where one was used, and a short ``__main__`` block that runs eager and
compiled with nothing but torch, prints both and exits 1 while the bug is
there. Its ``[tool.tcfuzz]`` table holds the signature and provenance; the
harness loads the same file as a ``Program``. Writes are atomic (temp file in
the same folder, then rename), so a killed campaign never leaves a partial case.
"""

from __future__ import annotations

import ast
import datetime
import json
import os
import subprocess
import tempfile
import tomllib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from harness.backends import PLANTED_BACKENDS
from harness.program import Program, ProgramError, read_pep723
from fuzz.errors import CorpusError
from fuzz.interpreters import Interpreter
from fuzz.signature import GRAPH_BREAK, GRAPH_BREAK_REGRESSION, Signature

# Seconds `python CASE` may run before it counts as a hang (a fresh process
# pays `import torch` and, for Inductor, its first compile: 26-70 s here).
STANDALONE_TIMEOUT_S = 300.0

_RUNNER_VALUE = '''\
if __name__ == "__main__":  # eager vs compiled, twice each; exit 1 while they differ
    import sys
    from torch._dynamo.utils import same
    def run(fn):
        try: return [fn(*inputs()) for _ in range(2)]
        except Exception as e: return f"raised {type(e).__name__}: {e}"
    eager, compiled = run(f), run(torch.compile(f, backend=BACKEND))
    print(f"eager:    {eager}\\ncompiled: {compiled}")
    sys.exit(0 if type(eager) is type(compiled) and same(eager, compiled, equal_nan=True) else 1)
'''

_RUNNER_EFFECTS = '''\
if __name__ == "__main__":  # eager vs compiled: values, printed text, arguments after the call
    import contextlib, io, sys
    from torch._dynamo.utils import same
    def run(fn):
        out = []
        for _ in range(2):
            args, buf = inputs(), io.StringIO()
            try:
                with contextlib.redirect_stdout(buf): value = fn(*args)
            except Exception as e: value = f"raised {type(e).__name__}"
            out.append([value, list(args), buf.getvalue()])
        return out
    eager, compiled = run(f), run(torch.compile(f, backend=BACKEND))
    print(f"eager:    {eager}\\ncompiled: {compiled}")
    sys.exit(0 if same(eager, compiled, equal_nan=True) else 1)
'''

_RUNNER_GRAPH_BREAK = '''\
if __name__ == "__main__":  # exit 1 while Dynamo still breaks the graph for this reason
    import sys
    from torch._dynamo.utils import counters
    compiled = torch.compile(f, backend="eager")
    for _ in range(2):
        try: compiled(*inputs())
        except Exception as e: print(f"raised {type(e).__name__}: {e}")
    breaks = [m.splitlines()[0] for c in ("graph_break", "unimplemented") for m in counters[c]]
    print("graph breaks:", breaks)
    sys.exit(GB_TYPE in breaks)
'''


def case_path(root: Path, signature: Signature) -> Path:
    return root / signature.kind / f"{signature.id}.py"


def program_body(source: str) -> str:
    """The program alone: without a PEP 723 block, a ``__main__`` block, planted
    backend definitions or the ``BACKEND``/``GB_TYPE`` settings of a case."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    lines = source.splitlines(keepends=True)
    drop: set[int] = set()
    header = read_pep723(source)
    if header:
        start, end = (int(x) for x in header["span"].split(":"))
        first = source.count("\n", 0, start)
        drop.update(range(first, source.count("\n", 0, end) + 1))
    for node in tree.body:
        main = isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
        planted = isinstance(node, ast.FunctionDef) and node.name in PLANTED_BACKENDS
        setting = isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in ("BACKEND", "GB_TYPE") for t in node.targets)
        if main or planted or setting:
            drop.update(range(node.lineno - 1, node.end_lineno or node.lineno))
    kept = "".join(line for i, line in enumerate(lines) if i not in drop).strip("\n")
    return kept + "\n"


def code_lines(source: str) -> int:
    """Lines of code: neither blank nor comment-only."""
    return sum(1 for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#"))


def _toml(value: Any) -> str:
    return json.dumps(value)  # JSON strings and arrays of strings are valid TOML


def render_case(program: Program, signature: Signature, *, backend: str, torch_version: str = "2.12.0",
                device: str = "cpu", meta: dict[str, Any] | None = None) -> str:
    """The text of a standalone corpus case for ``program`` showing ``signature``.

    Its ``__main__`` block compares what the signature's detail names: return
    values and exceptions, plus printed text and arguments after the call for
    "stdout", "mutation" and "globals" divergences; for a graph break, whether
    Dynamo still reports that ``gb_type``.
    """
    today = datetime.date.today().isoformat()
    table: dict[str, Any] = {
        "signature": signature.key, "kind": signature.kind, "stage": signature.stage,
        "interpreters": list(signature.interpreters), "backend": backend, "device": device,
        "torch": torch_version, "first-seen": today, "last-seen": today,
    }
    table.update(meta or {})
    header = ["# /// script", '# requires-python = ">=3.11"',
              f"# dependencies = [{_toml('torch==' + torch_version.split('+')[0])}]", "# [tool.tcfuzz]"]
    header += [f"# {k} = {_toml(v)}" for k, v in table.items()]
    header.append("# ///")
    body = program_body(program.source)
    if "import torch" not in body:
        body = "import torch\n" + body
    parts = ["\n".join(header), body.rstrip("\n")]
    if signature.kind in (GRAPH_BREAK, GRAPH_BREAK_REGRESSION):
        parts.append(f"GB_TYPE = {_toml(signature.cause[1])}\n\n{_RUNNER_GRAPH_BREAK}")
    else:
        if backend in PLANTED_BACKENDS:
            parts.append(PLANTED_BACKENDS[backend].rstrip("\n") + f"\n\nBACKEND = {backend}")
        else:
            parts.append(f"BACKEND = {_toml(backend)}")
        effects = signature.kind == "divergence" and signature.detail in ("stdout", "mutation", "globals")
        parts.append(_RUNNER_EFFECTS if effects else _RUNNER_VALUE)
    return "\n\n\n".join(p.strip("\n") for p in parts) + "\n"


def read_case(path: Path) -> tuple[Program, dict[str, Any]]:
    """A case's Program and its ``[tool.tcfuzz]`` table. Raises CorpusError
    with a one-line message for a file that is not a case."""
    try:
        program = Program.from_file(path)
    except ProgramError as e:
        raise CorpusError(str(e)) from None
    header = read_pep723(program.source)
    meta: dict[str, Any] = {}
    if header is not None:
        try:
            meta = tomllib.loads(header["content"]).get("tool", {}).get("tcfuzz", {})
        except tomllib.TOMLDecodeError as e:
            raise CorpusError(f"{path}: malformed PEP 723 block ({e}); fix or delete the header") from None
    return program, meta


def write_case(path: Path, text: str) -> Path:
    """Write atomically; an existing case is replaced only by a smaller one.
    Returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and code_lines(path.read_text()) <= code_lines(text):
        return path
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
    return path


def run_standalone(text: str, interpreters: Iterable[Interpreter], *,
                   timeout_s: float = STANDALONE_TIMEOUT_S) -> dict[str, int]:
    """Run a case as ``python CASE`` in each interpreter's env, in parallel, each
    in a fresh process. Returns the exit code per interpreter name (-9 for a
    run killed after timeout_s seconds; negative codes are signals)."""
    interpreters = list(interpreters)
    with tempfile.TemporaryDirectory(prefix="tcfuzz-case-") as tmp:
        path = Path(tmp) / "case.py"
        path.write_text(text)

        def one(interp: Interpreter) -> tuple[str, int]:
            env = interp.environ()
            env.pop("PYTHONPATH", None)  # nothing but torch
            try:
                proc = subprocess.run([str(interp.python), str(path)], cwd=tmp, env=env, timeout=timeout_s,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                return interp.name, proc.returncode
            except subprocess.TimeoutExpired:
                return interp.name, -9

        with ThreadPoolExecutor(max_workers=len(interpreters) or 1) as pool:
            return dict(pool.map(one, interpreters))


def list_cases(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*/*.py") if not p.name.startswith((".", "_")) and p.name != "conftest.py")
