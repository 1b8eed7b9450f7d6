"""The differential harness: runs inside every interpreter under test.

Only the standard library and torch may be imported here (never ``fuzz`` or
hypothesis): ``python -m harness.worker`` runs in each tox env. The data types
(``Program``, ``Outcome``) and the wire protocol are torch-free so that the host
side can import them too.
"""

from harness.outcome import CallResult, GraphBreak, InterpreterInfo, Outcome, Verdict
from harness.program import Program, ProgramError

__all__ = [
    "CallResult",
    "GraphBreak",
    "InterpreterInfo",
    "Outcome",
    "Program",
    "ProgramError",
    "Verdict",
]
