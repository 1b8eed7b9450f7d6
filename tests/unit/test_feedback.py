"""Tests of the feedback scheduler (fuzz.generate.feedback)."""

from __future__ import annotations

import json

from fuzz.generate.feedback import MAX_WEIGHT, FeatureScheduler
from fuzz.generate.program import STATEMENT_KINDS, STATEMENTS


def test_no_signal_means_no_steer() -> None:
    scheduler = FeatureScheduler()
    assert scheduler.choose() == {}
    for _ in range(10):
        scheduler.record(("match", "for"), new=False)
    assert scheduler.choose() == {}


def test_features_that_find_new_behaviour_gain_weight() -> None:
    scheduler = FeatureScheduler()
    for i in range(20):
        scheduler.record(("match", "for"), new=i % 2 == 0, buckets=1)
        scheduler.record(("for",), new=False)
    weights = scheduler.choose()
    assert set(weights) <= set(STATEMENT_KINDS)
    assert weights["match"] > weights.get("for", 1.0) >= 1.0
    assert all(1.0 <= w <= MAX_WEIGHT for w in weights.values())


def test_kinds_are_credited_through_the_features_they_write() -> None:
    scheduler = FeatureScheduler()
    for _ in range(10):
        scheduler.record(("exception-group",), new=True)
    # 10 of 10 programs (+ 5 pseudo-uses): 1 + 4 * 10/15
    assert abs(scheduler.choose()["except-star"] - (1 + 4 * 10 / 15)) < 1e-3


def test_stats_count_programs_new_behaviour_and_buckets() -> None:
    scheduler = FeatureScheduler()
    scheduler.record(("generator", "for"), new=True, buckets=2)
    scheduler.record(("generator",), new=False, buckets=0)
    stats = scheduler.stats()
    assert stats["generator"] == {"programs": 2, "new_behaviour": 1, "bucket_programs": 1}
    assert stats["for"] == {"programs": 1, "new_behaviour": 1, "bucket_programs": 1}
    assert json.loads(json.dumps(scheduler.snapshot()))["weights"] == scheduler.choose()


def test_each_kind_is_credited_through_the_features_its_construct_declares() -> None:
    for entry in STATEMENTS:
        scheduler = FeatureScheduler()
        scheduler.record(tuple(entry.features), new=True)
        steered = {kind for kind, weight in scheduler.choose().items() if weight > 1.0}
        # a kind written for no feature (assign) is never steered
        assert (entry.kind in steered) == bool(entry.features), entry.kind
        # features of one kind credit no other kind
        assert steered <= {entry.kind}, entry.kind
