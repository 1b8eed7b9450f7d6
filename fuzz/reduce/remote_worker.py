"""The remote side of fuzz.reduce.remote: ``python -m fuzz.reduce.remote_worker``.

Runs in the worker env of an interpreter that parses the program; reads the
request from stdin, runs ``minimize_source``'s parsing stages with every
check asked of the host over the pipe, and writes ``done`` (or
``could_not`` with the reason, when the input no longer shows its
signature).
"""

from __future__ import annotations

import json
import logging
import sys
from typing import IO, Any

from harness.program import Program
from fuzz.errors import CouldNotMinimize
from fuzz.reduce.pipeline import minimize_source
from fuzz.reduce.remote import send


class _HostCheck:
    """The host's check as the remote oracle sees it: each call a message to
    the host and its answer. ``confirm`` and ``check_many`` exist where the
    host's check has them (the oracle asks ``hasattr``); setting ``fast``
    tells the host."""

    def __init__(self, reader: IO[str], writer: IO[str], *, fast: bool, spread: int, confirm: bool,
                 many: bool) -> None:
        self._reader, self._writer, self._fast, self.spread = reader, writer, fast, spread
        if confirm:
            self.confirm = lambda source: self._ask({"confirm": source})["ok"]
        if many:
            self.check_many = lambda sources: self._ask({"many": list(sources)})["oks"]

    def _ask(self, message: dict[str, Any]) -> dict[str, Any]:
        send(self._writer, message)
        line = self._reader.readline()
        if not line:
            raise SystemExit("the host closed the pipe")
        return json.loads(line)

    def __call__(self, source: str) -> bool:
        return bool(self._ask({"check": source})["ok"])

    @property
    def fast(self) -> bool:
        return self._fast

    @fast.setter
    def fast(self, value: bool) -> None:
        self._fast = bool(value)
        send(self._writer, {"fast": self._fast})


def main() -> int:
    """Read the request from stdin, minimise, write ``done`` (or ``could_not``) to stdout."""
    reader, writer = sys.stdin, sys.stdout
    sys.stdout = sys.stderr  # the pipe carries the protocol only
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    request = json.loads(reader.readline())
    check = _HostCheck(reader, writer, fast=request["fast"], spread=request["spread"], confirm=request["confirm"],
                       many=request["many"])
    program = Program(request["source"], entry=request["entry"], inputs=request["inputs"])
    try:
        result = minimize_source(request["source"], check, budget_s=request["budget_s"], program=program,
                                 jobs=request["jobs"], stages=request["stages"],
                                 progress=lambda message: send(writer, {"progress": message}))
    except CouldNotMinimize as e:  # the host's check no longer holds on the input: said, not a crash
        send(writer, {"could_not": str(e)})
        return 0
    send(writer, {"done": {"source": result.source, "lines_before": result.lines_before,
                            "lines_after": result.lines_after, "checks": result.checks, "accepted": result.accepted,
                            "elapsed_s": result.elapsed_s, "complete": result.complete, "passes": result.passes,
                            "fallbacks": result.fallbacks}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
