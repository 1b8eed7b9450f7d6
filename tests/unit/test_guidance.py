"""Coverage guidance on the host, with fake outcomes: the coverage map
(fuzz.campaign.reach), the pool (fuzz.generate.pool) and Guidance
(fuzz.campaign.guidance): novelty enters the pool, entries rebuild,
snapshots resume and merge, and --no-feedback leaves the pool unused."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis.internal.conjecture.data import ConjectureData

from harness.outcome import Outcome
from harness.program import Program
from fuzz.campaign.guidance import Guidance, fresh_entry, merge_snapshots
from fuzz.campaign.reach import CoverageMap, ReachCurve, decode_lines, encode_lines
from fuzz.campaign.workers import Task
from fuzz.generate.pool import (POOL, Mutation, Pool, PoolEntry, PrefixProvider, draw_with_choices, encode_choices,
                                rebuild)
from fuzz.generate.program import generate, program_from_data


def outcome(program: Program, reach: dict[str, list[int]], interpreter: str = "3.12", backend: str = "eager",
            elapsed_s: float = 1.0) -> Outcome:
    return Outcome(program_id=program.program_id, interpreter=interpreter, backend=backend, elapsed_s=elapsed_s,
                   reach=reach)


def roundtrip(data: dict) -> dict:
    return json.loads(json.dumps(data))


# -- the coverage map ---------------------------------------------------------

def test_map_counts_new_lines_per_cell_and_statements_over_all():
    cov = CoverageMap()
    p = generate(0)
    assert cov.record(outcome(p, {"torch/_dynamo/a.py": [1, 2, 3]})) == 3
    assert cov.record(outcome(p, {"torch/_dynamo/a.py": [2, 3, 4]})) == 1
    # the same lines on another backend are new for its cell, not for the union
    assert cov.record(outcome(p, {"torch/_dynamo/a.py": [1, 2]}, backend="inductor")) == 2
    assert cov.statements == 4
    assert cov.cell_statements() == {"3.12/eager": 4, "3.12/inductor": 2}
    assert cov.record(outcome(p, {})) == 0


def test_map_json_roundtrip_and_merge_of_two_shards():
    a, b = CoverageMap(), CoverageMap()
    a.add("3.12/eager", {"torch/fx/graph.py": [1, 2, 3, 10], "torch/_inductor/x.py": [5]})
    b.add("3.12/eager", {"torch/fx/graph.py": [3, 4]})
    b.add("3.11/eager", {"torch/fx/graph.py": [99]})
    restored = CoverageMap.from_json(roundtrip(a.to_json()))
    assert restored.cells == a.cells and restored.statements == 5
    assert restored.merge(CoverageMap.from_json(roundtrip(b.to_json()))) == 2  # line 4 and 3.11's 99
    assert restored.statements == 7
    assert restored.by_file() == {"torch/_inductor/x.py": 1, "torch/fx/graph.py": 6}


def test_lines_encode_as_runs():
    assert encode_lines([9, 1, 2, 3, 4, 12, 13]) == "1-4,9,12-13"
    assert decode_lines("1-4,9,12-13") == {1, 2, 3, 4, 9, 12, 13}
    assert decode_lines([5, 6]) == {5, 6}
    assert decode_lines("") == set()


def test_curve_thins_but_keeps_its_ends():
    curve = ReachCurve(max_points=10)
    for n in range(1, 101):
        curve.add(n, n * 2.0, n // 3)
    points = curve.to_json()
    assert len(points) <= 11
    assert points[-1] == {"programs": 100, "cpu_s": 200.0, "statements": 33}
    assert [p["programs"] for p in points] == sorted(p["programs"] for p in points)


# -- the pool -----------------------------------------------------------------

def test_draw_with_choices_is_generate_and_its_choices_rebuild_it():
    for seed in (0, 7, 123):
        program, choices = draw_with_choices(seed)
        assert program == generate(seed)
        rebuilt = rebuild(choices, seed=seed)
        assert rebuilt is not None and rebuilt.source == program.source and rebuilt.generator == POOL


def test_prefix_provider_replays_a_whole_sequence_and_redraws_what_does_not_fit():
    program, choices = draw_with_choices(11)
    data = ConjectureData(random=random.Random(0), provider=PrefixProvider, provider_kw={"prefix": choices})
    assert program_from_data(data).source == program.source
    # a hole (None fits no draw) is drawn afresh; the rest still replays
    holed = choices[:3] + (None,) * 4 + choices[7:]
    data = ConjectureData(random=random.Random(1), provider=PrefixProvider, provider_kw={"prefix": holed})
    mutant = program_from_data(data)
    compile(mutant.source, "<mutant>", "exec")
    assert data.choices[:3] == choices[:3]


def _pool_of(seeds: range) -> Pool:
    pool = Pool()
    for seed in seeds:
        program, choices = draw_with_choices(seed)
        pool.add(PoolEntry(program.program_id, seed, program, encode_choices(choices),
                           new_lines={"torch/_dynamo/guards.py": 5}))
    return pool


def test_every_mutant_rebuilds_from_its_entry_and_is_valid_python():
    pool = _pool_of(range(4))
    kinds = set()
    for seed in range(1000, 1080):
        made = pool.next_program(seed)
        if made is None:
            continue
        program, draft = made
        kinds.add(draft.entry.mutation)
        compile(program.source, "<mutant>", "exec")
        assert draft.entry.rebuild().source == program.source
        assert PoolEntry.from_json(roundtrip(draft.entry.to_json())).rebuild().source == program.source
        assert all(parent in pool.entries for parent in draft.entry.parents)
    # every kind of mutation is made
    assert {Mutation.REPLACE, Mutation.DUPLICATE, Mutation.SPLICE, Mutation.CROSSOVER, Mutation.AST_SPLICE} <= kinds


def test_an_empty_pool_draws_fresh():
    assert all(Pool().next_program(seed) is None for seed in range(20))


def test_fresh_share_follows_the_arms_yields_within_bounds():
    pool = Pool()
    for _ in range(200):
        pool.observe(mutant=True, new_lines=50)
        pool.observe(mutant=False, new_lines=0)
    assert pool.fresh_share() == pytest.approx(0.2)
    for _ in range(400):
        pool.observe(mutant=True, new_lines=0)
        pool.observe(mutant=False, new_lines=50)
    assert pool.fresh_share() == pytest.approx(0.8)


def test_energy_favours_thinly_covered_files_and_fades_with_picks():
    covered = {"torch/_dynamo/symbolic_convert.py": 2500, "torch/_dynamo/variables/user_defined.py": 25}
    pool = Pool(density=lambda path: covered.get(path, 1))
    program = generate(0)
    common = PoolEntry("a", 0, program, new_lines={"torch/_dynamo/symbolic_convert.py": 10})
    rare = PoolEntry("b", 1, program, new_lines={"torch/_dynamo/variables/user_defined.py": 10})
    assert pool.energy(rare) > 5 * pool.energy(common)
    before = pool.energy(rare)
    rare.picks = 3
    assert pool.energy(rare) < before


# -- Guidance -------------------------------------------------------------------

def test_coverage_novelty_enters_the_pool_and_repeats_do_not():
    guidance = Guidance()
    first, second = generate(1), generate(2)
    assert guidance.record(0, first, [outcome(first, {"torch/_dynamo/a.py": [1, 2, 3]})]) == 3
    assert list(guidance.pool.entries) == [first.program_id]
    entry = guidance.pool.entries[first.program_id]
    assert entry.new_lines == {"torch/_dynamo/a.py": 3} and entry.choices
    assert entry.rebuild().source == first.source
    # nothing new: not in the pool
    assert guidance.record(1, second, [outcome(second, {"torch/_dynamo/a.py": [2, 3]})]) == 0
    assert len(guidance.pool) == 1
    summary = guidance.summary()
    at = {"interpreters": {"3.12": 3}}
    assert summary == {"statements": 3, "interpreters": {"3.12": 3}, "packages": {"torch/_dynamo": 3},
                       "curve": [{"programs": 1, "cpu_s": 1.0, "statements": 3, **at},
                                 {"programs": 2, "cpu_s": 2.0, "statements": 3, **at}], "pool": 1}


def test_a_mutant_that_adds_coverage_enters_with_its_lineage():
    guidance = Guidance()
    for seq in range(3):
        program = generate(seq)
        guidance.record(seq, program, [outcome(program, {"torch/_dynamo/a.py": [seq]})])
    seq, program = next((s, p) for s in range(10, 200) if (p := guidance.next_program(s, s)) is not None)
    parents = guidance.drafts[seq].entry.parents
    assert guidance.record(seq, program, [outcome(program, {"torch/_inductor/b.py": [7]})]) == 1
    entry = guidance.pool.entries[program.program_id]
    assert entry.parents == parents and entry.mutation is not Mutation.FRESH
    assert entry.rebuild().source == program.source
    assert sum(guidance.pool.entries[p].finds for p in parents) >= 1


def test_without_feedback_the_pool_is_unused_but_coverage_is_recorded():
    guidance = Guidance(feedback=False)
    for seq in range(5):
        program = generate(seq)
        guidance.record(seq, program, [outcome(program, {"torch/_dynamo/a.py": [seq, 100 + seq]})])
    assert all(guidance.next_program(seed, seed) is None for seed in range(100))
    assert len(guidance.pool) == 0
    assert guidance.summary()["statements"] == 10
    assert guidance.task(Task(generate(0), "3.12", "eager")).reach


def test_coverage_off_asks_no_worker():
    task = Task(generate(0), "3.12", "eager")
    assert not Guidance(coverage=False).task(task).reach
    assert Guidance(coverage=False).next_program(0, 0) is None


def test_resume_continues_the_map_the_pool_and_the_mutants_in_flight():
    guidance = Guidance()
    for seq in range(4):
        program = generate(seq)
        guidance.record(seq, program, [outcome(program, {"torch/_dynamo/a.py": [seq]})])
    inflight = next((s, p) for s in range(10, 200) if (p := guidance.next_program(s, s)) is not None)
    resumed = Guidance()
    resumed.restore(roundtrip(guidance.snapshot()))
    assert resumed.summary() == guidance.summary()
    assert sorted(resumed.pool.entries) == sorted(guidance.pool.entries)
    # the same state draws the same next mutant
    for seed in range(300, 320):
        a, b = guidance.next_program(seed, seed), resumed.next_program(seed, seed)
        assert (a and a.source) == (b and b.source)
    # the mutant in flight when it stopped still enters with its lineage
    seq, program = inflight
    resumed.record(seq, program, [outcome(program, {"torch/fx/c.py": [1]})])
    assert resumed.pool.entries[program.program_id].parents == guidance.drafts[seq].entry.parents


def test_shards_merge_their_maps_and_pools():
    shards = [Guidance(), Guidance()]
    for n, shard in enumerate(shards):
        for seq in range(3):
            program = generate(100 * n + seq)
            shard.record(seq, program, [outcome(program, {"torch/_dynamo/a.py": [n, 10 + seq]})])
    merged = Guidance()
    merged.restore(roundtrip(merge_snapshots([s.snapshot() for s in shards])))
    # lines 0, 1 and 10-12
    assert merged.summary()["statements"] == 5
    assert sorted(merged.pool.entries) == sorted({*shards[0].pool.entries, *shards[1].pool.entries})
    assert merged.summary()["curve"][-1] == {"programs": 6, "cpu_s": 6.0, "statements": 5,
                                             "interpreters": {"3.12": 5}}


def test_a_program_from_elsewhere_enters_with_its_source_only():
    program = Program("import torch\n\ndef f(x):\n    return x\n\ndef inputs():\n    return (torch.ones(1),)\n",
                      generator="tcfuzz.mutate", seed=5)
    entry = fresh_entry(program)
    assert entry.choices == "" and entry.rebuild() == program


def test_outcomes_without_reach_still_read():
    data = outcome(generate(0), {"torch/fx/a.py": [1]}).to_json()
    assert Outcome.from_json(roundtrip(data)).reach == {"torch/fx/a.py": [1]}
    del data["reach"]
    assert Outcome.from_json(data).reach == {}


def test_the_curve_counts_each_interpreter_over_its_backends():
    guidance = Guidance(feedback=False)
    program = generate(0)
    guidance.record(0, program, [outcome(program, {"torch/_dynamo/a.py": [1, 2]}, "3.12", "eager"),
                                 outcome(program, {"torch/_inductor/b.py": [5]}, "3.12", "inductor"),
                                 outcome(program, {"torch/_dynamo/a.py": [2, 3]}, "3.13", "eager")])
    summary = guidance.summary()
    # 3.12: a.py 1-2 and b.py 5; 3.13: a.py 2-3; all: a.py 1-3 and b.py 5
    assert summary["statements"] == 4
    assert summary["interpreters"] == {"3.12": 3, "3.13": 2}
    assert summary["packages"] == {"torch/_dynamo": 3, "torch/_inductor": 1}
    assert summary["curve"][-1]["interpreters"] == {"3.12": 3, "3.13": 2}
