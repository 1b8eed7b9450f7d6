"""Replays the corpus: ``pytest corpus -n auto`` in a tox env (see harness/corpus_plugin.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # harness/, when PYTHONPATH is not set

from harness.corpus_plugin import (  # noqa: E402,F401  (pytest finds the hooks here)
    pytest_addoption,
    pytest_collect_file,
    pytest_runtest_logreport,
    pytest_terminal_summary,
)
