"""Feedback: steer generation towards the constructs that find new behaviour.

After lafleur's coverage-guided mutator choice (the CPython JIT fuzzer
weights each mutator by how often it led to new coverage): every feature a
program used is credited when the program produced new behaviour, here a new
bucket in this campaign (a new graph-break ``gb_type`` on some interpreter,
a new divergence, crash, ...) or at least ``NOVEL_LINES`` compiler lines no
program of the campaign had reached (fuzz.campaign.guidance), and the statement kinds written for those
features (``Construct.features`` in ``fuzz.generate.registry``) get a larger
weight in the generator's table.

Weights: ``weight(kind) = 1 + BONUS * successes / (uses + PRIOR)``, for the
best of the features the kind is written for, capped at ``MAX_WEIGHT``, so a
kind never drops below its base weight (exploration stays on) and an untried
kind is not penalised; a kind written for no feature (plain assignment) is
never steered.

Reproducibility: ``generate(seed, weights)`` is a function of its arguments,
and ``choose()`` returns the weights in force; the campaign records them with
each program (``FeatureScheduler.snapshot()`` in campaign.sqlite's meta), so a
program can be rebuilt from (seed, weights). Updates happen only in
``record()``, in the order results arrive.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from fuzz.generate.program import STATEMENTS

__all__ = ["BONUS", "MAX_WEIGHT", "NOVEL_LINES", "FeatureScheduler"]

# Extra weight of a kind whose features always led to new behaviour (a kind
# with success rate r gets weight 1 + BONUS * r).
BONUS = 4.0
# Largest weight multiplier of a kind.
MAX_WEIGHT = 5.0
# Pseudo-uses added to every count, so one lucky program does not dominate.
PRIOR = 5.0
# Compiler lines a program must reach first for its features to be credited
# as if it had found a new bucket (lafleur weights its mutators by new
# coverage; a few lines are noise: a new guard, a new error path).
NOVEL_LINES = 20


@dataclasses.dataclass
class _Count:
    uses: int = 0
    successes: int = 0


class FeatureScheduler:
    """Per-feature counts of programs and of programs that found something new.

    ``choose()`` -> weights for ``generate``; ``record(features, new, buckets)``
    after each program. ``stats()`` is what summary.json reports per feature.
    """

    def __init__(self) -> None:
        self.counts: dict[str, _Count] = {}
        self.buckets: dict[str, int] = {}

    def record(self, features: tuple[str, ...] | list[str], *, new: bool, buckets: int = 0,
               new_lines: int = 0) -> None:
        """Count one program: ``new`` if it produced a bucket not seen before in
        this campaign, ``buckets`` the findings it produced (any, new or not),
        ``new_lines`` the compiler lines it reached first (fuzz.campaign.guidance);
        at least ``NOVEL_LINES`` of them count as new behaviour too."""
        success = new or new_lines >= NOVEL_LINES
        for feature in set(features):
            count = self.counts.setdefault(feature, _Count())
            count.uses += 1
            count.successes += int(success)
            if buckets:
                self.buckets[feature] = self.buckets.get(feature, 0) + 1

    def rate(self, feature: str) -> float:
        count = self.counts.get(feature, _Count())
        return count.successes / (count.uses + PRIOR)

    def choose(self) -> dict[str, float]:
        """Weight multiplier per statement kind (1.0 for kinds with no signal)."""
        weights = {}
        for entry in STATEMENTS:
            if not entry.features:
                continue
            best = max(self.rate(feature) for feature in entry.features)
            if best > 0:
                weights[entry.kind] = round(min(MAX_WEIGHT, 1.0 + BONUS * best), 3)
        return weights

    def stats(self) -> dict[str, dict[str, Any]]:
        """{feature: {"programs", "new_behaviour", "bucket_programs"}}, sorted by name."""
        return {
            feature: {"programs": c.uses, "new_behaviour": c.successes,
                      "bucket_programs": self.buckets.get(feature, 0)}
            for feature, c in sorted(self.counts.items())
        }

    def snapshot(self) -> dict[str, Any]:
        """JSON-serialisable state: the per-feature stats and the weights in force."""
        return {"features": self.stats(), "weights": self.choose()}
