import os
import time

import pytest

from fuzz.reduce.lookahead import Lookahead

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the lookahead forks; without fork it checks alone")


def bisect_search(check, n: int = 40) -> int:
    """A sequential search: the smallest k in 0..n whose candidate holds,
    asking k = n-1, n-2, ... while they hold (like a reducer's steps)."""
    best = n
    for k in range(n - 1, -1, -1):
        if check(f"k={k}"):
            best = k
    return best


def test_the_batches_predict_the_search_s_next_candidates_and_end_where_one_at_a_time_does():
    def holds(source: str) -> bool:
        return int(source[2:]) % 7 == 0

    def run(step: int) -> tuple[int, list[list[str]], int]:
        cache: dict[str, bool] = {}
        batches: list[list[str]] = []

        def check_batch(sources):
            batches.append(list(sources))
            for s in sources:
                cache[s] = holds(s)
            return [cache[s] for s in sources]

        lookahead = Lookahead(cache.get, check_batch, step)
        parent = os.getpid()
        result = lookahead.run(lambda: bisect_search(lookahead))
        assert os.getpid() == parent  # no child returns here
        return result, batches, lookahead.wasted

    one, one_batches, _ = run(1)
    many, many_batches, wasted = run(4)
    assert many == one == 0
    assert all(len(b) == 1 for b in one_batches) and len(one_batches) == 40
    assert max(len(b) for b in many_batches) == 4 and len(many_batches) < 15, many_batches
    # the search asked each candidate once, in order; what a batch checked after a success was wasted
    asked = [s for b in many_batches for s in b]
    assert len(asked) == len(set(asked)) == 40 + wasted, (len(asked), wasted)


def test_a_lookahead_that_takes_too_long_leaves_the_candidate_checked_alone():
    parent = os.getpid()

    def known(source: str) -> None:
        if os.getpid() != parent:  # the child: too slow to predict anything
            time.sleep(5)
        return None

    batches: list[list[str]] = []
    lookahead = Lookahead(known, lambda sources: batches.append(list(sources)) or [False] * len(sources), 4,
                          predict_timeout_s=0.3)
    started = time.monotonic()
    assert lookahead.run(lambda: [lookahead(f"k={k}") for k in range(3)]) == [False] * 3
    assert batches == [["k=0"], ["k=1"], ["k=2"]]  # k=2 is the search's last: its child predicts nothing
    assert time.monotonic() - started < 4
