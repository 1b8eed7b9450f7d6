"""Batched checks for a reducer whose search asks one candidate at a time.

pysource-minimize calls its check with one candidate and goes on from the
answer, so its checks cannot run in parallel on the workers as they come.
Most of its candidates fail, and its search is deterministic given the
answers. So when it asks about a candidate nobody has checked yet, the
process forks: the child answers that candidate "fails" and lets the search
run on, answering from what is known and taking each unknown candidate as
failing, until it has proposed ``step - 1`` more (or the search ends); it
sends them back over a pipe and exits. The parent checks the candidate and
those predicted after it in one batch on the warm workers, and answers the
search. Where the first candidate fails, the search asks next exactly what
the child predicted, now answered from the cache; where one in the batch
holds, the checks after it may be wasted (``Lookahead.wasted``: those the
search never asks). The result is
always the one of checking one candidate at a time.

Forking is what makes the prediction cheap: the child continues the search
from where it is (about 1.5 ms for the fork, 1 ms per candidate), where
replaying the search from its start for every batch cost more than the
checks it saved (be620e810b38: 25.0 s against 19.5 s one at a time, 181
checks). Without ``os.fork`` (Windows), or with ``step`` 1, every candidate
is checked alone.
"""

from __future__ import annotations

import json
import logging
import os
import select
import signal
import time
import warnings
from collections.abc import Callable
from typing import TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

# Longest a parent waits for its child's prediction, in seconds; past it the
# candidate is checked alone (a child that hangs is killed).
PREDICT_TIMEOUT_S = 10.0


class _Ahead(BaseException):
    """The child has predicted its batch (a BaseException, so that a
    reducer's ``except Exception`` cannot swallow it)."""


class Lookahead:
    """The check a sequential search calls (``lookahead(source) -> bool``),
    answered in batches of up to ``step`` candidates.

    ``known(source)``: the answer without a check, or None (the oracle's
    cache). ``check_batch(sources)``: the answers of a batch, checked in
    parallel, recorded where ``known`` finds them. The search must run
    inside ``run`` so that a forked child never returns into the caller.
    ``wasted``: checks of predicted candidates the search never asked. ``predict_timeout_s``: seconds a parent waits for a
    child's prediction."""

    def __init__(self, known: Callable[[str], bool | None], check_batch: Callable[[list[str]], list[bool]],
                 step: int, predict_timeout_s: float = PREDICT_TIMEOUT_S):
        self.known, self.check_batch = known, check_batch
        self.step = step if hasattr(os, "fork") else 1
        self.predict_timeout_s = predict_timeout_s
        self._asked: set[str] = set()  # what the search asked (in the parent)
        self._checked: set[str] = set()  # what the batches checked
        self._child: list[str] | None = None  # in the child: the candidates predicted so far
        self._pipe = -1

    @property
    def wasted(self) -> int:
        """Checks of predicted candidates that the search never asked (an
        earlier success in their batch led it elsewhere)."""
        return len(self._checked - self._asked)

    def __call__(self, source: str) -> bool:
        if self._child is None:
            self._asked.add(source)
        known = self.known(source)
        if known is not None:
            return known
        if self._child is not None:
            self._child.append(source)
            if len(self._child) >= self.step - 1:
                raise _Ahead
            return False
        predicted = self._predict() if self.step > 1 else []
        if predicted is None:  # this is the child: the search goes on as if ``source`` failed
            return False
        batch = [source] + [c for c in dict.fromkeys(predicted) if c != source]
        self._checked.update(batch)
        return self.check_batch(batch)[0]

    def run(self, search: Callable[[], T]) -> T:
        """``search()``; in a forked child, its prediction is sent and the
        child exits here whatever the search did."""
        try:
            result = search()
        except BaseException:
            if self._child is not None:
                self._exit_child()
            raise
        if self._child is not None:
            self._exit_child()
        return result

    def _predict(self) -> list[str] | None:
        """Fork: in the child None (it predicts from here on); in the parent
        the child's predicted candidates ([] when it failed or took too long)."""
        read_fd, write_fd = os.pipe()
        with warnings.catch_warnings():  # 3.12+ warns that fork() in a threaded process may deadlock the child
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            self._child, self._pipe = [], write_fd
            return None
        os.close(write_fd)
        data, deadline = b"", time.monotonic() + self.predict_timeout_s
        try:
            while True:
                left_s = deadline - time.monotonic()
                if left_s <= 0 or not select.select([read_fd], [], [], left_s)[0]:
                    log.warning("the search's lookahead gave no answer in %.0f s: checking one candidate",
                                self.predict_timeout_s)
                    os.kill(pid, signal.SIGKILL)
                    data = b""
                    break
                chunk = os.read(read_fd, 1 << 16)
                if not chunk:
                    break
                data += chunk
        finally:
            os.close(read_fd)
            os.waitpid(pid, 0)
        try:
            predicted = json.loads(data) if data else []
        except ValueError:
            return []
        return [c for c in predicted if isinstance(c, str)]

    def _exit_child(self) -> None:
        try:
            data = json.dumps(self._child).encode()
            while data:
                data = data[os.write(self._pipe, data):]
        finally:
            os._exit(0)

