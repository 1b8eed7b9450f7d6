"""Tests of the other program sources: corpus mutation (fuzz.generate.mutate),
hypothesmith (fuzz.generate.sources) and the campaign's source mix. Host env, no torch."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fuzz.generate.mutate import MUTATION, load_donors, mutate, splice
from fuzz.generate.program import generate
from fuzz.generate.sources import (
    DEFAULT_MIX,
    HYPOTHESMITH,
    SourceMix,
    draw_program,
    hypothesmith_program,
)
from harness.program import Program

ROOT = Path(__file__).resolve().parents[2]

DONOR = Program(source='''import torch


class Marker:
    pass


def f(t0, t1, n):
    t7 = torch.tanh(t0 * 0.5)
    xs9 = [t7, t1]
    donated = xs9[0] + Marker.__name__.__len__()
    return donated


def inputs():
    return (torch.ones(3), torch.ones(3), 1)
''')


def test_mutation_is_deterministic_and_compiles() -> None:
    donors = [DONOR]
    for seed in range(30):
        first, second = mutate(seed, donors), mutate(seed, donors)
        assert first == second
        compile(first.source, "<mutated>", "exec")
        first.check()


def test_a_splice_carries_donor_statements_and_their_helpers() -> None:
    spliced = [p for p in (mutate(seed, [DONOR]) for seed in range(40)) if p.generator == MUTATION]
    assert len(spliced) >= 30
    with_helper = [p for p in spliced if "Marker.__name__" in p.source]
    assert with_helper, "no splice took the statement that reads a module-level helper"
    for program in with_helper:
        tree = ast.parse(program.source)
        assert any(isinstance(n, ast.ClassDef) and n.name == "Marker" for n in tree.body)


def test_names_a_run_reads_are_bound_before_it() -> None:
    """A run that reads the donor's list xs9 without the statement that builds
    it gets xs9 bound to a list of three tensors first, and only then."""
    import random

    base = generate(1)
    unbuilt = 0
    for seed in range(20):
        program = splice(base, DONOR, random.Random(seed))
        assert program is not None
        reads, builds = "xs9[0]" in program.source, "xs9 = [t7" in program.source
        assert ("xs9 = [t0, t1, t0]" in program.source) == (reads and not builds), seed
        unbuilt += reads and not builds
    assert unbuilt >= 3  # the case is exercised, not only the others


def test_mutation_without_donors_splices_generated_programs() -> None:
    programs = [mutate(seed) for seed in range(10)]
    assert sum(p.generator == MUTATION for p in programs) >= 7


def test_corpus_cases_load_as_donors() -> None:
    donors = load_donors(ROOT / "corpus")
    assert all(isinstance(d, Program) for d in donors)
    assert load_donors(ROOT / "no-such-corpus") == []


def test_source_mix_picks_by_seed_in_proportion() -> None:
    mix = SourceMix(ours=0.8, mutation=0.1, hypothesmith=0.1)
    picks = [mix.pick(seed) for seed in range(2000)]
    assert picks == [mix.pick(seed) for seed in range(2000)]
    assert 0.75 < picks.count("ours") / len(picks) < 0.85
    assert picks.count("mutation") > 100 and picks.count("hypothesmith") > 100
    assert {SourceMix(ours=1, mutation=0, hypothesmith=0).pick(s) for s in range(100)} == {"ours"}


def test_adding_graphs_to_a_mix_moves_only_the_seeds_under_its_share_off_ours() -> None:
    before, after = SourceMix(ours=0.8, mutation=0.1, hypothesmith=0.1), DEFAULT_MIX
    moved = [(before.pick(seed), after.pick(seed)) for seed in range(2000)
             if before.pick(seed) != after.pick(seed)]
    assert moved and set(moved) == {("ours", "graphs")}
    assert 0.07 < len(moved) / 2000 < 0.13
    # the field defaults stay the mix without graphs: a resumed older campaign's
    assert "graphs" not in {SourceMix().pick(seed) for seed in range(2000)}


def test_source_mix_parse_names_the_bad_part() -> None:
    assert SourceMix.parse("ours=0.5,hypothesmith=0.5") == SourceMix(0.5, 0.0, 0.5)
    for text, message in (("ours=x", "Expected a share"), ("nnsmith=1", "Expected sources"),
                          ("ours=0", "share > 0"), ("ours=-1", ">= 0")):
        with pytest.raises(ValueError, match=message):
            SourceMix.parse(text)


def test_draw_program_rejects_an_unknown_source() -> None:
    with pytest.raises(ValueError, match="Expected a source"):
        draw_program(0, "nnsmith")


@pytest.mark.slow
def test_hypothesmith_programs_are_wrapped_and_reproducible() -> None:
    """Slow: hypothesmith's grammar takes 20-100 s to build. A program that
    defines f and inputs, with hypothesmith provenance, the same from the same seed."""
    program = hypothesmith_program(3)
    program.check()
    compile(program.source, "<hypothesmith>", "exec")
    assert program.generator == HYPOTHESMITH and program.seed == 3
    assert hypothesmith_program(3) == program
