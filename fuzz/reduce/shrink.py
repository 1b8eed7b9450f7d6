"""Generator-level shrinking: Hypothesis' own shrinker on a generated program.

A program that ``fuzz.generate.program.generate(seed)`` wrote is replayed to recover
its choice sequence (the ``ConjectureData`` that the seed drove), and that
sequence is handed to Hypothesis' shrinker (``ConjectureRunner.shrink``, the
same engine ``@given`` uses in its shrink phase) with "the check holds" (in
tcfuzz: the exact signature) as the failure. Every candidate is drawn by the
generator itself, so it is a valid program by construction: statements drop
out whole, constructs simplify to the first (simplest) option of each table,
shapes and loop counts go towards the smallest.

Why the engine and not ``@given`` + a database + ``Phase.reuse``/``Phase.shrink``:
with hypothesis 6.170 both reach the same ``Shrinker``, but ``@given`` would
report the shrunk failure by raising it, replay it once more, and stop after
its own limits (``MAX_SHRINKS`` = 500 successful shrinks and five minutes,
then "very slow shrinking"), while the engine lets the budget here decide
(``ignore_limits``) and hands back the best candidate directly. These are
Hypothesis internals (``hypothesis.internal.conjecture``), so a new hypothesis
release may need this module adjusted; the unit tests exercise it.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import time
from collections.abc import Callable

from hypothesis import HealthCheck, Phase, settings
from hypothesis.errors import FlakyStrategyDefinition, StopTest
from hypothesis.internal.conjecture.data import ConjectureData, Status
from hypothesis.internal.conjecture.engine import ConjectureRunner
from hypothesis.internal.escalation import InterestingOrigin

from fuzz.generate import program as generator
from harness.program import Program

log = logging.getLogger(__name__)

# Interesting origin of every candidate: one failure, "shows the signature".
_ORIGIN = InterestingOrigin(AssertionError, "tcfuzz", 0, (), ())


class _OutOfTime(Exception):
    pass


@dataclasses.dataclass
class ShrinkResult:
    """The smallest accepted program and the shrinker's statistics (seconds)."""

    program: Program
    checks: int = 0
    accepted: int = 0
    elapsed_s: float = 0.0
    complete: bool = True


def choices_of(program: Program) -> tuple | None:
    """The choice sequence that wrote ``program``, or None when ``program`` is
    not the current generator's output for its seed and weights (another
    generator, no seed, or a source edited since). The weights matter: a
    campaign draws every program with its feedback and version-gate weights
    (measured: without them no program of a default campaign replayed, and
    its cases skipped this stage)."""
    if program.generator != generator.GENERATOR or program.seed is None:
        return None
    data = ConjectureData(random=random.Random(program.seed), provider=generator._SeededProvider)
    try:
        drawn = data.draw(generator.programs(dict(program.weights) or None))
    except StopTest:
        return None
    data.freeze()
    if drawn.source.strip() != program.source.strip():
        return None
    return tuple(data.choices)


def replayable(program: Program) -> bool:
    """Can ``shrink_program`` work on ``program`` (see ``choices_of``)?"""
    return choices_of(program) is not None


def _size(source: str) -> tuple[int, int]:
    lines = [line for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return len(lines), len(source)


def shrink_program(program: Program, check: Callable[[str], bool], *, budget_s: float,
                   progress: Callable[[str], None] | None = None) -> ShrinkResult:
    """Shrink generated ``program`` through Hypothesis while ``check(source)`` holds.

    ``check`` must hold on ``program.source`` (the caller verified it). Stops
    after ``budget_s`` seconds with the smallest program accepted so far (by
    lines of code, then characters); never returns a larger one. Raises
    ValueError if ``program`` is not replayable (``choices_of`` is None).
    """
    started = time.monotonic()
    choices = choices_of(program)
    if choices is None:
        raise ValueError(f"Expected a program written by {generator.GENERATOR} from its seed but got "
                         f"generator={program.generator!r}, seed={program.seed!r}")
    best = [program]
    stats = {"checks": 0, "accepted": 0}

    def test_function(data: ConjectureData) -> None:
        candidate = data.draw(generator.programs(dict(program.weights) or None))
        # Stop only after the draws: a test that stops drawing early where an
        # earlier one with the same prefix went on is "flaky" to Hypothesis.
        if time.monotonic() - started > budget_s:
            raise _OutOfTime
        stats["checks"] += 1
        if check(candidate.source):
            if _size(candidate.source) < _size(best[0].source):
                best[0] = dataclasses.replace(candidate, seed=program.seed, weights=program.weights)
                stats["accepted"] += 1
                if progress:
                    progress(f"generator/shrink: {_size(candidate.source)[0]} lines")
            data.mark_interesting(_ORIGIN)

    runner = ConjectureRunner(
        test_function,
        settings=settings(database=None, phases=[Phase.shrink], deadline=None, max_examples=10**6,
                          suppress_health_check=list(HealthCheck)),
        random=random.Random(0),
        ignore_limits=True,
    )
    complete = True
    try:
        initial = runner.cached_test_function(choices)
        if initial.status is Status.INTERESTING:
            runner.shrink(initial, lambda d: d.status is Status.INTERESTING)
        else:
            log.info("the generated program's replay does not hold the check; generator stage skipped")
    except _OutOfTime:
        complete = False
    except FlakyStrategyDefinition as e:  # the generator drew differently on a replay: keep the best so far
        log.warning("generator stage stopped: %s", str(e).splitlines()[0])
        complete = False
    return ShrinkResult(best[0], checks=stats["checks"], accepted=stats["accepted"],
                        elapsed_s=time.monotonic() - started, complete=complete)
