import ast
import os
import tomllib

import pytest

from harness.program import Program, read_pep723
from fuzz import corpus
from fuzz.errors import CorpusError
from fuzz.signature import Signature

PROGRAM = """import torch

def f(x):
    return x.sin()

def inputs():
    return (torch.ones(3),)
"""


def test_case_has_pep723_metadata_and_loads_as_program(tmp_path):
    sig = Signature("divergence", "tcfuzz_add_one", "value", ("3.11", "3.13t"))
    text = corpus.render_case(Program(PROGRAM), sig, backend="tcfuzz_add_one")
    ast.parse(text)
    meta = tomllib.loads(read_pep723(text)["content"])
    assert meta["dependencies"] == ["torch==2.12.0"]
    table = meta["tool"]["tcfuzz"]
    assert table["signature"] == sig.key and table["kind"] == "divergence"
    assert table["interpreters"] == ["3.11", "3.13t"] and table["backend"] == "tcfuzz_add_one"
    path = corpus.write_case(corpus.case_path(tmp_path, sig), text)
    assert path.name == f"{sig.id}.py" and path.parent.name == "divergence"
    program, read_meta = corpus.read_case(path)
    assert read_meta == table
    assert "def tcfuzz_add_one" in text and "BACKEND = tcfuzz_add_one" in text


def test_program_body_strips_what_render_adds():
    sig = Signature("graph-break", "dynamo", 'Data-dependent "branching"', ("3.12",))
    text = corpus.render_case(Program(PROGRAM), sig, backend="eager")
    assert corpus.program_body(text).strip() == PROGRAM.strip()
    # rendering a rendered case gives the same case
    assert corpus.render_case(Program(text), sig, backend="eager") == text
    assert tomllib.loads(read_pep723(text)["content"])["tool"]["tcfuzz"]["signature"] == sig.key


def test_write_keeps_the_smaller_case(tmp_path):
    path = tmp_path / "divergence" / "abc.py"
    corpus.write_case(path, "a = 1\nb = 2\n")
    corpus.write_case(path, "a = 1\nb = 2\nc = 3\n")
    assert path.read_text() == "a = 1\nb = 2\n"
    corpus.write_case(path, "a = 1\n")
    assert path.read_text() == "a = 1\n"
    assert os.listdir(path.parent) == ["abc.py"]  # no temp files left


def test_read_case_one_line_errors(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("# /// script\n# [tool.tcfuzz\n# ///\ndef f(): pass\ndef inputs(): return ()\n")
    with pytest.raises(CorpusError, match="malformed PEP 723"):
        corpus.read_case(bad)
    with pytest.raises(CorpusError, match="cannot read program"):
        corpus.read_case(tmp_path / "missing.py")


def test_code_lines_ignores_comments_and_blanks():
    assert corpus.code_lines("# c\n\nx = 1\n  # d\ny = 2\n") == 2
