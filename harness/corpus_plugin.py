"""pytest plugin that replays the corpus: ``pytest corpus -n auto`` in a tox env.

``corpus/conftest.py`` loads it. Each ``corpus/<kind>/<id>.py`` is one test
that runs the case as ``python CASE`` (a fresh process, so Dynamo state never
leaks between cases; pytest-xdist spreads them over cores) in the env that
runs pytest, and compares the exit code with what the case's ``[tool.tcfuzz]``
table expects on this interpreter: it reproduces (exit non-zero) where the
interpreter is in ``interpreters``, and does not elsewhere.

  still reproduces where expected    xfail "known failure: ..."
  no longer reproduces where expected  pass, listed as FIXED in the summary
                                     (close the upstream issue, then set
                                     ``status = "fixed"`` in the case)
  ``status = "fixed"`` but reproduces  FAIL: a regression
  reproduces outside ``interpreters``  xfail, listed as SPREAD (the bug now
                                     shows on more interpreters than filed)

``--tcfuzz-record`` writes each result into the case's ``replay`` table
(harness.casefile.record_replay), keyed "<python>/<torch version>".
Runs inside the worker envs: stdlib, pytest and harness only (no hypothesis,
no ``fuzz``); torch is only imported by the case processes.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

import pytest

from harness import casefile
from harness.program import required_python

# Seconds one `python CASE` may run (import torch 4-7 s, Inductor's first
# compile 26-70 s on a busy CPU); past it the case counts as hanging, which
# reproduces a "timeout" case and fails any other.
CASE_TIMEOUT_S = 300.0
_PROPERTY = "tcfuzz"


def python_name() -> str:
    """This interpreter as the corpus names it: "3.12", or "3.13t" when free-threaded."""
    threaded = "t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""
    return f"{sys.version_info.major}.{sys.version_info.minor}{threaded}"


def torch_version() -> str:
    """The installed torch's version, without importing it ("" if none)."""
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return ""


def is_case(path: Path) -> bool:
    return path.suffix == ".py" and not path.name.startswith((".", "_")) and path.name != "conftest.py"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--tcfuzz-record", action="store_true",
                     help="write each case's replay result into its [tool.tcfuzz] replay table")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if is_case(file_path):
        return CaseFile.from_parent(parent, path=file_path)
    return None


class CaseFile(pytest.File):
    def collect(self):  # type: ignore[override]
        yield CaseItem.from_parent(self, name=self.path.stem)


class Regression(Exception):
    """A case marked fixed reproduces again."""


class CaseItem(pytest.Item):
    """One corpus case, replayed as ``python CASE``."""

    def runtest(self) -> None:
        text = self.path.read_text()
        try:
            table = casefile.read_table(text)
        except casefile.CaseFileError as e:
            raise pytest.UsageError(f"{self.path}: {e}") from None
        required = required_python(text)
        if required and sys.version_info[:2] < required:
            # newer grammar: `python CASE` here is a SyntaxError, no replay of the bug
            pytest.skip(f"needs Python >= {required[0]}.{required[1]} (its requires-python)")
        version = torch_version()
        if not version:
            pytest.skip("torch is not installed here: replay the corpus in a tox env (tox -e py312)")
        python = python_name()
        expected = python in table.get("interpreters", [])
        reproduces, tail = self._run()
        if self.config.getoption("--tcfuzz-record"):
            casefile.record_replay(self.path, python, version,
                                   casefile.REPRODUCES if reproduces else casefile.DOES_NOT_REPRODUCE)
        what = table.get("signature", self.path.name)
        if table.get("status") == casefile.STATUS_FIXED and reproduces:
            raise Regression(f"REGRESSION: {self.path} is marked fixed but reproduces again on {python} with "
                             f"torch {version}: {what}\n{tail}")
        if reproduces:
            if not expected:
                self.user_properties.append((_PROPERTY, f"SPREAD: {self.path} reproduces on {python} too, "
                                                        f"outside its interpreters {table.get('interpreters')}"))
            pytest.xfail(f"known failure on {python}: {what}")
        if expected:
            self.user_properties.append((_PROPERTY, f"FIXED: {self.path} no longer reproduces on {python} with "
                                                    f"torch {version} ({what}): close its upstream issue and "
                                                    f'set status = "fixed"'))

    def _run(self) -> tuple[bool, str]:
        """(does the case reproduce, the last lines of its output)."""
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)  # nothing but torch
        with tempfile.TemporaryDirectory(prefix="tcfuzz-replay-") as tmp:
            try:
                proc = subprocess.run([sys.executable, str(self.path.resolve())], cwd=tmp, env=env,
                                      stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                      timeout=CASE_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                return True, f"(no exit within {CASE_TIMEOUT_S:.0f} s)"
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-8:])
        return proc.returncode != 0, tail

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, Regression):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"corpus case {self.path.name}"


_notes: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        _notes.extend(text for key, text in report.user_properties if key == _PROPERTY)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _notes:
        terminalreporter.section("tcfuzz corpus")
        for line in sorted(_notes):
            terminalreporter.write_line(line)
