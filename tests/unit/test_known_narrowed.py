"""A known bug met by a program that runs only on the newest interpreters
(3.14+ or 3.15+ grammar) shows on those alone; it is the corpus's bucket,
not a new one per grammar gate. A program that runs everywhere and shows
the same cause on fewer interpreters is still new (its interpreter set is
part of what it is)."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness.program import Program
from fuzz.campaign import loop
from fuzz.campaign.config import CampaignConfig
from fuzz.campaign.interpreters import Interpreter
from fuzz.corpus.filing import narrowed_signature_ids
from fuzz.triage.signature import Signature

ROOT = Path(__file__).resolve().parents[2]
# compile-error|dynamo|IndexError@torch/_dynamo/utils.py:run_node|3.11,3.12,3.13,3.14,3.15
KNOWN = ROOT / "corpus" / "compile-error" / "4923bd0421b1.py"
NAMES = ("3.11", "3.12", "3.13", "3.14", "3.15")


def _campaign(tmp_path: Path) -> loop.Campaign:
    corpus = tmp_path / "corpus"
    (corpus / "compile-error").mkdir(parents=True)
    shutil.copyfile(KNOWN, corpus / "compile-error" / KNOWN.name)
    config = CampaignConfig(interpreters=[Interpreter(n, Path(f"/nonexistent/python{n}")) for n in NAMES],
                            backends=["eager"], out_dir=tmp_path / "out", corpus_dir=corpus, budget_s=None,
                            programs=1, feedback=False)
    return loop.Campaign(config)


def _sig(interpreters: tuple[str, ...]) -> Signature:
    return Signature.parse(f"compile-error|dynamo|IndexError@torch/_dynamo/utils.py:run_node|{','.join(interpreters)}")


def test_a_3_15_program_meeting_a_known_bug_is_that_bucket(tmp_path):
    campaign = _campaign(tmp_path)
    newest = Program("import torch\n", features=("comprehension-unpacking",))
    assert not campaign._is_unknown(_sig(("3.15",)), newest)
    # the same cause on another set is another bucket
    assert campaign._is_unknown(_sig(("3.14", "3.15")), newest) is True


def test_a_program_of_every_interpreter_keeps_its_interpreter_set(tmp_path):
    campaign = _campaign(tmp_path)
    everywhere = Program("import torch\n", features=("closure",))
    assert not campaign._is_unknown(_sig(NAMES), everywhere)
    assert campaign._is_unknown(_sig(("3.15",)), everywhere)


def test_narrowed_ids_cut_each_case_to_the_interpreters_given(tmp_path):
    ids = narrowed_signature_ids(ROOT / "corpus", ("3.14", "3.15"))
    assert _sig(("3.14", "3.15")).id in ids
    assert narrowed_signature_ids(tmp_path, ("3.15",)) == set()
