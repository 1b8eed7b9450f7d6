"""How long the fuzz phase's next program is expected to take, so the phase
stops submitting in time for its deadline (fuzz.campaign.loop)."""

from __future__ import annotations

import collections
import statistics

# Programs whose wall times (submission to last result) the fuzz phase's
# running mean covers: recent ones, so the first programs' compiler warm-up
# fades out.
PACE_WINDOW = 8


class ProgramPace:
    """How long a program started now is expected to take, in seconds: the
    running mean of the wall time of the last ``window`` programs, from
    submission to their last result (in-flight queueing included), and the
    time the runs in flight need at the pool's recent rate of results.

    The mean of the finished programs alone underestimates while the slow
    ones are still running (Inductor compiles on a loaded machine): a
    default campaign at a load of 7 on 2 cores spent all but 54 s of its
    720 fuzzing and draining, and filed nothing. A new program's runs queue
    behind those in flight, so the drain (Little's law: runs in flight times
    the mean seconds between results) bounds it from below."""

    def __init__(self, window: int = PACE_WINDOW):
        self.recent: collections.deque[float] = collections.deque(maxlen=window)
        self.results_s: collections.deque[float] = collections.deque(maxlen=window + 1)

    def record(self, wall_s: float) -> None:
        """A program finished after ``wall_s`` seconds."""
        self.recent.append(wall_s)

    def record_result(self, now_s: float) -> None:
        """A run's result came back at ``now_s`` (seconds, the campaign's clock)."""
        self.results_s.append(now_s)

    def expected_s(self) -> float:
        """The mean of the recent wall times; 0.0 before any program finished."""
        return statistics.fmean(self.recent) if self.recent else 0.0

    def drain_s(self, runs: int) -> float:
        """Seconds until ``runs`` more results come back at the recent rate
        (0.0 before two results)."""
        if len(self.results_s) < 2:
            return 0.0
        interval_s = (self.results_s[-1] - self.results_s[0]) / (len(self.results_s) - 1)
        return runs * interval_s

    def fits(self, now_s: float, deadline_s: float, queued_runs: int = 0, queued_work_s: float = 0.0,
             parallel: int = 1) -> bool:
        """Whether a program started at ``now_s`` is expected to end by
        ``deadline_s``, its runs behind ``queued_runs`` others (those in
        flight and its own), which need ``queued_work_s`` seconds of runs
        at each one's backend's mean (an Inductor run is tens of eager ones:
        the rate of results, mostly eager, says too little) spread over
        ``parallel`` workers that run at once."""
        drain_s = max(self.drain_s(queued_runs), queued_work_s / max(1, parallel))
        return now_s + max(self.expected_s(), drain_s) <= deadline_s
