"""How small the corpus cases are (fuzz.corpus.sizes, tcfuzz corpus-status --sizes)."""

from fuzz import cli
from fuzz.corpus.sizes import SizeGroup, case_sizes, group_sizes, program_lines

KNOWN_BUG = '''# /// script
# [tool.tcfuzz]
# kind = "divergence"
# ///
"""A docstring that says what the bug is,
over two lines."""
import torch


def f(x):
    # a comment
    return x + 1


def inputs():
    return (torch.ones(1),)


EXPECT = {
    "backend": "eager",
    "calls": 1,
}

BACKEND = "eager"

if __name__ == "__main__":
    print(f(*inputs()))
'''


def test_program_lines_are_the_program_s_code_without_comments_or_the_runner():
    # a docstring (2), import, def f, return, def inputs, return, the EXPECT table (4)
    assert program_lines(KNOWN_BUG) == 11
    # a program the host cannot parse is counted by lines, what program_body keeps of it
    assert program_lines("def f(x):\n    return x\ntype A[T] = T if 0 else x y\n") == 3


def test_the_groups_and_the_command(tmp_path, capsys):
    for kind, case_id, lines in (("divergence", "aaaaaaaaaaaa", 3), ("crash", "bbbbbbbbbbbb", 20),
                                 ("graph-break", "cccccccccccc", 2), ("graph-break-regression", "dddddddddddd", 4)):
        (tmp_path / kind).mkdir()
        (tmp_path / kind / f"{case_id}.py").write_text("x = 0\n" * lines)
    sizes = case_sizes(tmp_path)
    assert [c.case_id for c in sizes][:1] == ["bbbbbbbbbbbb"]
    bug, graph_break = group_sizes(sizes)
    assert (bug.group, bug.cases, bug.median, [c.case_id for c in bug.over], bug.met) == (
        SizeGroup.BUG, 2, 11.5, ["bbbbbbbbbbbb"], False)
    assert (graph_break.group, graph_break.cases, graph_break.median, graph_break.met) == (
        SizeGroup.GRAPH_BREAK, 2, 3, True)
    assert cli.main(["corpus-status", "--sizes", "--corpus", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "bug cases: 2, median 11.5 lines (target <= 8), over 15: bbbbbbbbbbbb (20) -> not met" in out
    assert "graph-break cases: 2, median 3 lines (target <= 10), over 25: none -> met" in out
