"""tcfuzz's exceptions: one hierarchy, each message naming the problem and the fix.

Failures of the program under test are data (an ``Outcome``), never these.
"""

from __future__ import annotations


class TcfuzzError(Exception):
    """Base class of every harness failure tcfuzz raises."""


class UsageError(TcfuzzError):
    """A command-line argument or option value is invalid (exit code 2)."""


class HarnessError(TcfuzzError):
    """The harness itself failed: a missing interpreter or env, a worker that
    cannot start, a protocol violation (exit code 3)."""


class CorpusError(TcfuzzError):
    """A corpus file is malformed or cannot be written."""


class CouldNotMinimize(TcfuzzError):
    """The case does not show its signature to begin with, so there is nothing
    to minimise (after shrinkray/pysource-minimize's check on the input)."""
