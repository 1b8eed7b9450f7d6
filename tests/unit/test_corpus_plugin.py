"""The corpus replay (harness/corpus_plugin.py) skips a case whose
requires-python the running interpreter does not meet: there ``python CASE``
is a SyntaxError, and recording it as "reproduces" would make the case look
alive on that interpreter (fuzz.corpus.status, fuzz.corpus.filing.shown_on)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_case_of_newer_grammar_is_skipped_and_not_recorded(tmp_path):
    case = ROOT / "corpus" / "graph-break" / "e6adb45bc63b.py"
    text = re.sub(r'requires-python = ">=3\.\d+"', 'requires-python = ">=3.99"', case.read_text(), count=1)
    assert 'requires-python = ">=3.99"' in text
    (tmp_path / "graph-break").mkdir()
    (tmp_path / "graph-break" / case.name).write_text(text)
    shutil.copy(ROOT / "corpus" / "conftest.py", tmp_path / "conftest.py")
    proc = subprocess.run([sys.executable, "-m", "pytest", str(tmp_path), "-q", "-rs", "-p", "no:cacheprovider",
                           "-p", "no:xdist", "--tcfuzz-record", "--rootdir", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert "needs Python >= 3.99" in proc.stdout, proc.stdout + proc.stderr
    assert (tmp_path / "graph-break" / case.name).read_text() == text  # no replay recorded
