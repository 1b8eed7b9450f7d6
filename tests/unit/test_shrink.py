import dataclasses

import pytest

from fuzz.corpus.render import code_lines
from fuzz.generate.program import generate
from fuzz.reduce.shrink import choices_of, replayable, shrink_program


def test_only_the_generators_own_programs_replay():
    program = generate(7)
    assert choices_of(program)
    assert not replayable(dataclasses.replace(program, seed=None))
    assert not replayable(program.with_source(program.source + "\nx = 1\n"))
    with pytest.raises(ValueError, match="Expected a program written by"):
        shrink_program(program.with_source("x = 1"), lambda s: True, budget_s=1)


def test_shrinks_towards_fewer_statements_and_never_grows():
    program = max((generate(s) for s in range(40)), key=lambda p: code_lines(p.source))
    result = shrink_program(program, lambda s: "def f" in s, budget_s=60)
    assert code_lines(result.program.source) < code_lines(program.source)
    assert result.checks > 1 and result.accepted >= 1


def test_stops_at_its_budget_with_the_best_so_far():
    program = max((generate(s) for s in range(40)), key=lambda p: code_lines(p.source))
    result = shrink_program(program, lambda s: True, budget_s=0.0)
    assert not result.complete and result.program.source == program.source
