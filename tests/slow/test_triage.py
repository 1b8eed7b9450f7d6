"""tcfuzz triage on known bugs with real workers (cheap backends, two interpreters)."""

from __future__ import annotations

import json

import pytest

from fuzz import cli
from tests.conftest import KNOWN_BUGS, require_env

pytestmark = pytest.mark.slow

COMPREHENSION = KNOWN_BUGS / "comprehension_graph_break_rebinds_loop_name.py"


def test_triage_names_a_bug_that_needs_312(tmp_path, capsys):
    """The inlined-comprehension crash (PEP 709) reproduces on 3.12 and not on 3.11."""
    for name in ("3.11", "3.12"):
        require_env(name)
    from fuzz.campaign import cells
    from fuzz.campaign.torch_releases import Matrix

    # the crash is fixed in torch 2.15: triage it on the mission's torch 2.12.0 envs
    pythons = ",".join(str(i.python) for i in cells.choose("3.11,3.12", Matrix.MISSION).interpreters)
    code = cli.main(["triage", str(COMPREHENSION), "--python", pythons, "--backend", "eager",
                     "--log-dir", str(tmp_path), "--json"])
    assert code == cli.EXIT_OK
    data = json.loads(capsys.readouterr().out)
    assert data["pattern"] == "3.12+ only"
    cells = {c["interpreter"]: c for c in data["cells"]}
    assert cells["3.12"]["verdict"] == "crash" and cells["3.12"]["shows"]
    assert cells["3.12"]["short_signature"].split(" / ")[1].startswith("SIGSEGV@")
    assert cells["3.11"]["verdict"] == "match" and not cells["3.11"]["shows"]
    assert cells["3.11"]["graph_breaks"] > 0  # the planted graph_break() calls
