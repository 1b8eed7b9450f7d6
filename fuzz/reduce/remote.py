"""The syntax-tree passes of the minimiser, run by an interpreter that parses the program.

A program of 3.14 or 3.15 grammar (t-strings, ``except A, B:``, unpacking in
comprehensions: fuzz.generate.constructs_newest) cannot be parsed by an
older host's ``ast``, so on the host only the line passes could reduce it
(fuzz.reduce.line_passes). Instead, ``minimize_elsewhere`` starts
``python -m fuzz.reduce.remote`` in the worker env of an interpreter the
program ran on, which runs ``minimize_source``'s source, graph and tidy
stages there, on its own ``ast``. Every check it makes is sent back to the
host and answered by the host's check (a SignatureCheck on the campaign's
warm workers), so the candidates are judged exactly as the host's own passes'
would be; the remote process only parses, transforms and unparses.

The protocol is one JSON object per line: the host writes the request, then
answers each ``check``, ``many`` and ``confirm`` message with ``{"ok": ...}``
(``{"oks": [...]}`` for ``many``); ``fast`` (the check's fast mode turned
off after a failed confirmation) and ``progress`` get no answer; ``done``
carries the MinimizeResult. The remote's own ``print`` and logging go to its
stderr, which the host keeps in a temporary file and logs when the process
fails.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import IO, Any

log = logging.getLogger(__name__)

# The stages that parse the program: those minimize_elsewhere runs remotely.
PARSING_STAGES = ("source", "graph", "tidy")
# Seconds the remote process gets past its budget to send its result
# (its last check may run past the deadline: one check, as on the host).
GRACE_S = 30.0


def minimize_elsewhere(source: str, check: Callable[[str], bool], python: str, env: dict[str, str], *,
                       budget_s: float, jobs: int = 1, stages: Sequence[str] = PARSING_STAGES,
                       entry: str = "f", inputs: str = "inputs",
                       progress: Callable[[str], None] | None = None) -> Any:
    """Run the parsing ``stages`` of ``minimize_source`` on ``source`` (the
    program body) in interpreter ``python`` (its environment ``env``, with
    tcfuzz on its PYTHONPATH), answering its checks with ``check`` here,
    for at most ``budget_s`` seconds. Returns the remote MinimizeResult
    (fuzz.reduce.pipeline), or None when the remote process could not run
    or did not finish (it is logged, with the tail of its stderr; the
    caller falls back to its own passes). Never raises for the remote's
    failure; a ``check`` that raises propagates after the remote process is
    stopped."""
    from fuzz.reduce.pipeline import MinimizeResult

    request = {"source": source, "budget_s": budget_s, "jobs": jobs, "stages": list(stages), "entry": entry,
               "inputs": inputs, "fast": bool(getattr(check, "fast", False)),
               "spread": int(getattr(check, "spread", 1)), "confirm": hasattr(check, "confirm"),
               "many": hasattr(check, "check_many")}
    with tempfile.TemporaryFile(mode="w+") as stderr:
        try:
            proc = subprocess.Popen([python, "-m", "fuzz.reduce.remote"], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=stderr, env=env, text=True, bufsize=1)
        except OSError as e:
            log.warning("the remote reducer could not start %s (%s): the host's line passes instead", python, e)
            return None
        assert proc.stdin is not None and proc.stdout is not None
        done: dict[str, Any] | None = None
        try:
            _send(proc.stdin, request)
            for line in proc.stdout:
                message = json.loads(line)
                if "done" in message:
                    done = message["done"]
                    break
                if "progress" in message:
                    if progress:
                        progress(str(message["progress"]))
                elif "fast" in message:
                    check.fast = bool(message["fast"])  # type: ignore[attr-defined]
                elif "many" in message:
                    many = getattr(check, "check_many")
                    _send(proc.stdin, {"oks": [bool(ok) for ok in many(message["many"])]})
                elif "confirm" in message:
                    _send(proc.stdin, {"ok": bool(check.confirm(message["confirm"]))})  # type: ignore[attr-defined]
                else:
                    _send(proc.stdin, {"ok": bool(check(message["check"]))})
        except (BrokenPipeError, json.JSONDecodeError) as e:
            log.warning("the remote reducer on %s broke off (%s)", python, e)
        finally:
            try:
                proc.stdin.close()
            except BrokenPipeError:
                pass
            try:
                proc.wait(timeout=GRACE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if done is None:
            stderr.seek(0)
            tail = stderr.read()[-2000:]
            log.warning("the remote reducer on %s gave no result (exit code %s); its stderr ends:\n%s",
                        python, proc.returncode, tail)
            return None
    return MinimizeResult(source=done["source"], lines_before=done["lines_before"], lines_after=done["lines_after"],
                          checks=done["checks"], accepted=done["accepted"], elapsed_s=done["elapsed_s"],
                          complete=done["complete"], passes={k: list(v) for k, v in done["passes"].items()},
                          fallbacks=done["fallbacks"])


def _send(stream: IO[str], message: dict[str, Any]) -> None:
    stream.write(json.dumps(message) + "\n")
    stream.flush()


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
        _send(self._writer, message)
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
        _send(self._writer, {"fast": self._fast})


def main() -> int:
    """The remote side: read the request from stdin, minimise, write ``done``."""
    from harness.program import Program
    from fuzz.reduce.pipeline import minimize_source

    reader, writer = sys.stdin, sys.stdout
    sys.stdout = sys.stderr  # the pipe carries the protocol only
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    request = json.loads(reader.readline())
    check = _HostCheck(reader, writer, fast=request["fast"], spread=request["spread"], confirm=request["confirm"],
                       many=request["many"])
    program = Program(request["source"], entry=request["entry"], inputs=request["inputs"])
    result = minimize_source(request["source"], check, budget_s=request["budget_s"], program=program,
                             jobs=request["jobs"], stages=request["stages"],
                             progress=lambda message: _send(writer, {"progress": message}))
    _send(writer, {"done": {"source": result.source, "lines_before": result.lines_before,
                            "lines_after": result.lines_after, "checks": result.checks, "accepted": result.accepted,
                            "elapsed_s": result.elapsed_s, "complete": result.complete, "passes": result.passes,
                            "fallbacks": result.fallbacks}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
