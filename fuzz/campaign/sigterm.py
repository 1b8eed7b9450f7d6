"""SIGTERM as Ctrl-C while a campaign runs, so a campaign stopped either way writes its report."""

from __future__ import annotations

import signal
import threading


class stop_on_sigterm:
    """While entered (in the main thread), SIGTERM, what CI runners and
    ``timeout`` send, raises KeyboardInterrupt as Ctrl-C does, so a campaign
    stopped either way writes its report. Elsewhere it does nothing."""

    def __enter__(self) -> stop_on_sigterm:
        self.previous = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGTERM, _interrupt)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")
