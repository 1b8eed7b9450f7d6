"""``Program``: the unit of work that crosses the host/worker boundary.

A program is module source text that defines an entry function (default ``f``)
and a zero-argument input factory (default ``inputs``) returning the argument
tuple. It seeds its own RNG, so running it twice gives the same inputs.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

# PEP 723 inline metadata block (https://peps.python.org/pep-0723/#reference-implementation).
PEP723_BLOCK = re.compile(
    r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$"
)


class ProgramError(ValueError):
    """A file or text is not a usable program (syntax error, no entry function)."""


@dataclasses.dataclass(frozen=True)
class Program:
    """Module source plus provenance; serialisable to JSON.

    ``source`` must define ``entry`` (a function) and ``inputs`` (a function of
    no arguments returning the argument tuple). ``seed`` and ``choices`` record
    how the generator drew it (``choices`` is Hypothesis' choice sequence, kept
    for generator-level shrinking); ``features`` names the constructs used;
    ``weights``: the statement weights the generator drew it with ((kind,
    factor) pairs, sorted; () for the generator's own), without which its
    seed does not replay it.
    """

    source: str
    entry: str = "f"
    inputs: str = "inputs"
    generator: str = "manual"
    seed: int | None = None
    features: tuple[str, ...] = ()
    weights: tuple[tuple[str, float], ...] = ()

    @property
    def program_id(self) -> str:
        """First 16 hex digits of the SHA-256 of the source text."""
        return hashlib.sha256(self.source.encode()).hexdigest()[:16]

    def with_source(self, source: str) -> Program:
        """The same program with new source text (for reducers)."""
        return dataclasses.replace(self, source=source)

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["features"] = list(self.features)
        data["weights"] = [list(pair) for pair in self.weights]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Program:
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - fields
        if unknown or "source" not in data:
            raise ProgramError(
                f"Expected a program object with keys {sorted(fields)} but got keys {sorted(data)}"
            )
        data = dict(data)
        data["features"] = tuple(data.get("features", ()))
        data["weights"] = tuple((str(k), float(v)) for k, v in data.get("weights", ()))
        return cls(**data)

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)

    def check(self) -> None:
        """Raise ``ProgramError`` unless the source parses and defines both functions."""
        try:
            tree = ast.parse(self.source)
        except SyntaxError as e:
            if self._newer_grammar():
                return  # the interpreters it requires check it
            raise ProgramError(f"not a Python program: {e.msg} at line {e.lineno}") from None
        defined = {
            node.name
            for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        } | {
            t.id
            for node in tree.body
            if isinstance(node, ast.Assign)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        for name in (self.entry, self.inputs):
            if name not in defined:
                raise self.missing(name)

    def _newer_grammar(self) -> bool:
        """Whether the source is a case that requires a newer Python than this
        one (``requires-python = ">=3.14"``: t-strings, PEP 758, PEP 798) and
        defines both functions at the top level: this interpreter cannot parse
        it, those it requires can."""
        needed = required_python(self.source)
        if needed is None or needed <= sys.version_info[:2]:
            return False
        return all(re.search(rf"^(async )?def {re.escape(name)}\(", self.source, re.MULTILINE)
                   for name in (self.entry, self.inputs))

    def missing(self, name: str) -> ProgramError:
        """The error for a program without its entry or input function ``name``."""
        return ProgramError(f"the program defines no top-level {name!r}: a program needs "
                            f"`def {self.entry}(...)` and `def {self.inputs}()` returning its arguments")

    @classmethod
    def from_file(cls, path: str | Path) -> Program:
        """Load a program file (a corpus case, a known-bug file or a plain script).

        Raises ``ProgramError`` with a one-line message if the file cannot be read
        or does not define ``f`` and ``inputs``.
        """
        path = Path(path)
        try:
            source = path.read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise ProgramError(f"cannot read program {path}: {e}") from None
        program = cls(source=source, generator=f"file:{path.name}")
        try:
            program.check()
        except ProgramError as e:
            raise ProgramError(f"{path}: {e}") from None
        return program


def read_pep723(source: str) -> dict[str, str] | None:
    """The raw text of the ``# /// script`` block, or None if there is none."""
    for match in PEP723_BLOCK.finditer(source):
        if match.group("type") == "script":
            return {
                "content": "".join(
                    line[2:] if line.startswith("# ") else line[1:]
                    for line in match.group("content").splitlines(keepends=True)
                ),
                "span": f"{match.start()}:{match.end()}",
            }
    return None


REQUIRES_PYTHON = re.compile(r'^# requires-python = ">=\s*(\d+)\.(\d+)"', re.MULTILINE)


def required_python(text: str) -> tuple[int, int] | None:
    """The (major, minor) of a case's ``requires-python = ">=X.Y"``, or None."""
    found = REQUIRES_PYTHON.search(text)
    return (int(found.group(1)), int(found.group(2))) if found else None
