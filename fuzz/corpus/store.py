"""The corpus on disk: cases at ``corpus/<kind>/<id>.py`` (their text comes
from ``fuzz.corpus.render``), read, written, listed and replayed standalone.
Writes are atomic (temp file in the same folder, then rename), so a killed
campaign never leaves a partial case.
"""

from __future__ import annotations

import dataclasses
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from harness import casefile
from harness.casefile import DEFAULT_TORCH
from harness.program import Program, ProgramError
from fuzz.errors import CorpusError
from fuzz.campaign.interpreters import Interpreter
from fuzz.triage.signature import Kind, Signature
from fuzz.corpus.render import code_lines, program_body

# Seconds `python CASE` may run before it counts as a hang (a fresh process
# pays `import torch` and, for Inductor, its first compile: 26-70 s here).
STANDALONE_TIMEOUT_S = 300.0


def case_path(root: Path, signature: Signature) -> Path:
    return root / signature.kind / f"{signature.id}.py"


def read_case(path: Path) -> tuple[Program, dict[str, Any]]:
    """A case's Program and its ``[tool.tcfuzz]`` table. Raises CorpusError
    with a one-line message for a file that is not a case.

    The Program is the case's program alone (``render.program_body``, lines
    kept in place): the runner's settings are not globals of the program, so
    the harness makes the calls ``python CASE`` makes (a ``FULLGRAPH = False``
    would otherwise be a guard target), and neither mutation donors nor the
    language features of a signature see the runner."""
    try:
        program = Program.from_file(path)
    except ProgramError as e:
        raise CorpusError(str(e)) from None
    try:
        meta = casefile.read_table(program.source)
    except casefile.CaseFileError as e:
        raise CorpusError(f"{path}: {e}") from None
    program = dataclasses.replace(program, source=program_body(program.source, keep_lines=True))
    if meta.get("generator") and "seed" in meta:  # provenance, for generator-level shrinking
        program = dataclasses.replace(program, generator=str(meta["generator"]), seed=int(meta["seed"]))
    return program, meta


def with_replay(text: str, codes: dict[str, int], torch_version: str | Mapping[str, str]) -> str:
    """Case ``text`` with the exit codes of ``python CASE`` per interpreter
    (run_standalone) recorded in its ``replay`` table ("3.12/2.12.0" ->
    "reproduces" for a non-zero exit, else "does not reproduce", as for an
    interpreter that cannot parse the case, DOES_NOT_PARSE);
    ``torch_version`` is one release, or each interpreter's."""
    def version(name: str) -> str:
        return torch_version if isinstance(torch_version, str) else torch_version.get(name, DEFAULT_TORCH)

    table = casefile.read_table(text)
    table["replay"] = {**table.get("replay", {}), **{
        casefile.replay_key(name, version(name)): casefile.REPRODUCES if code and code != DOES_NOT_PARSE else casefile.DOES_NOT_REPRODUCE
        for name, code in codes.items()}}
    return casefile.replace_table(text, table)


def smaller(text: str, than: str) -> bool:
    """Is the program in case ``text`` smaller than the one in ``than``: fewer
    lines of code, or as many and fewer characters?"""
    a, b = program_body(text), program_body(than)
    return (code_lines(a), len(a)) < (code_lines(b), len(b))


def merge_tables(old: dict[str, Any], new: dict[str, Any], *, keep_new: bool) -> dict[str, Any]:
    """The table of a case found again: ``count`` summed, the earliest
    ``first-seen`` and the latest ``last-seen``, ``replay`` results merged,
    the stored ``status`` kept (a fixed case found again stays "fixed", so its
    replay fails as a regression), ``observed`` (observed_channels) the
    channels both were seen through; the rest from the case whose text is kept."""
    table = dict(new if keep_new else old)
    channels = observed_channels(old, new, kept=table)
    if channels:
        table["observed"] = channels
    table["count"] = int(old.get("count", 1)) + int(new.get("count", 1))
    seen = [str(t[k]) for t in (old, new) for k in ("first-seen", "last-seen") if k in t]
    if seen:
        table["first-seen"], table["last-seen"] = min(seen), max(seen)
    replay = {**new.get("replay", {}), **old.get("replay", {})} if not keep_new else {
        **old.get("replay", {}), **new.get("replay", {})}
    if replay:
        table["replay"] = replay
    if "status" in old:
        table["status"] = old["status"]
    return table


def observed_channels(*tables: Mapping[str, Any], kept: Mapping[str, Any]) -> list[str]:
    """What a divergence bucket was seen through (Signature.observed: the
    channel and call, "stdout", "value@guard") in ``tables`` and their
    ``observed`` lists, less the ``kept`` table's own: sorted. A campaign
    knows a case by each of them before minimisation
    (filing.known_signature_ids), so a program that shows the bug through
    another channel is not minimised as a new bucket again (the default
    campaign of 2026-12-06 spent 224 s minimising a "stdout" program into
    0f98a32ff03f, which was filed through "value"). [] for other kinds and
    for tables without a parsable signature."""
    def channel(table: Mapping[str, Any]) -> str | None:
        try:
            sig = Signature.parse(str(table.get("signature", "")))
        except ValueError:
            return None
        return sig.observed if sig.kind is Kind.DIVERGENCE else None

    own = channel(kept)
    if own is None:
        return []
    seen = {str(o) for t in (*tables, kept) for o in t.get("observed", [])}
    seen.update(c for c in map(channel, tables) if c is not None)
    return sorted(seen - {own})


def write_case(path: Path, text: str) -> Path:
    """Store case ``text`` at ``path``; returns the path.

    A new case is written atomically (casefile.atomic_write). If a case is
    already there (the same signature found again, maybe by another campaign
    at the same time: the read-modify-write holds the case's lock), its count
    and dates are updated (merge_tables) and its program is replaced only by a
    smaller one (``smaller``). Raises CorpusError if ``path`` cannot be written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with casefile.locked(path):
            if path.exists():
                old = path.read_text()
                keep_new = smaller(text, old)
                try:
                    table = merge_tables(casefile.read_table(old), casefile.read_table(text), keep_new=keep_new)
                    merged = casefile.replace_table(text if keep_new else old, table)
                except casefile.CaseFileError:  # a plain program without a table: the smaller one wins
                    merged = text if keep_new else old
                if merged == old:
                    return path
                text = merged
            casefile.atomic_write(path, text)
    except OSError as e:
        raise CorpusError(f"cannot write corpus case {path}: {e}; check the folder's permissions and free space") from None
    return path


# run_standalone's code for a case this interpreter cannot parse (a grammar
# newer than it: 3.14 t-strings, 3.15's PEP 798 on 3.12): its exit 1 is the
# interpreter's SyntaxError, not the case's "reproduces". Above any real exit
# status (0-255; negative: signals).
DOES_NOT_PARSE = 256
_PARSE_ERRORS = ("SyntaxError:", "IndentationError:", "TabError:")


def does_not_parse(returncode: int, stderr: str) -> bool:
    """Did ``python CASE`` exit because the interpreter could not parse the
    case: exit 1 with a syntax error and no traceback (one raised while the
    case runs, by ``compile()`` or ``exec``, has one)?"""
    lines = [line for line in stderr.splitlines() if line.strip()]
    return returncode == 1 and bool(lines) and lines[-1].startswith(_PARSE_ERRORS) \
        and not any(line.startswith("Traceback (most recent call last)") for line in lines)


def run_standalone(text: str, interpreters: Iterable[Interpreter], *,
                   timeout_s: float = STANDALONE_TIMEOUT_S) -> dict[str, int]:
    """Run a case as ``python CASE`` in each interpreter's env, in parallel, each
    in a fresh process. Returns the exit code per interpreter name (-9 for a
    run killed after timeout_s seconds; negative codes are signals;
    DOES_NOT_PARSE where the interpreter cannot parse the case)."""
    interpreters = list(interpreters)
    with tempfile.TemporaryDirectory(prefix="tcfuzz-case-") as tmp:
        path = Path(tmp) / "case.py"
        path.write_text(text)

        def one(interp: Interpreter) -> tuple[str, int]:
            env = interp.environ()
            env.pop("PYTHONPATH", None)  # nothing but torch
            try:
                proc = subprocess.run([str(interp.python), str(path)], cwd=tmp, env=env, timeout=timeout_s,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      text=True, errors="replace")
                return interp.name, DOES_NOT_PARSE if does_not_parse(proc.returncode, proc.stderr) \
                    else proc.returncode
            except subprocess.TimeoutExpired:
                return interp.name, -9

        with ThreadPoolExecutor(max_workers=len(interpreters) or 1) as pool:
            return dict(pool.map(one, interpreters))


def list_cases(root: Path) -> list[Path]:
    """The cases under ``root`` (``<kind>/<id>.py``), never a lock or temp file."""
    return sorted(p for p in root.glob("*/*.py") if not p.name.startswith((".", "_")) and p.name != "conftest.py")
