"""The syntax-tree passes of the minimiser, run by an interpreter that parses the program.

A program of 3.14 or 3.15 grammar (t-strings, ``except A, B:``, unpacking in
comprehensions: fuzz.generate.constructs_newest) cannot be parsed by an
older host's ``ast``, so on the host only the line passes could reduce it
(fuzz.reduce.line_passes). Instead, ``minimize_elsewhere`` starts
``python -m fuzz.reduce.remote_worker`` in the worker env of an interpreter the
program ran on, which runs ``minimize_source``'s source, graph and tidy
stages there, on its own ``ast``. Every check it makes is sent back to the
host and answered by the host's check (a SignatureCheck on the campaign's
warm workers), so the candidates are judged exactly as the host's own passes'
would be; the remote process only parses, transforms and unparses.

The protocol is one JSON object per line: the host writes the request, then
answers each ``check``, ``many`` and ``confirm`` message with ``{"ok": ...}``
(``{"oks": [...]}`` for ``many``); ``fast`` (the check's fast mode turned
off after a failed confirmation) and ``progress`` get no answer; ``done``
carries the MinimizeResult, and ``could_not`` the reason when the input
itself no longer shows its signature (raised here as CouldNotMinimize). The remote's own ``print`` and logging go to its
stderr, which the host keeps in a temporary file and logs when the process
fails.
"""

from __future__ import annotations

import json
import logging
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from typing import IO, Any

from fuzz.errors import CouldNotMinimize

log = logging.getLogger(__name__)

# The stages that parse the program: those minimize_elsewhere runs remotely.
PARSING_STAGES = ("source", "graph", "tidy")
# Seconds the remote process gets past its budget to send its result
# (its last check may run past the deadline: one check, as on the host).
GRACE_S = 30.0


def minimize_elsewhere(source: str, check: Callable[[str], bool], python: str, env: dict[str, str], *,
                       budget_s: float, jobs: int = 1, stages: Sequence[str] = PARSING_STAGES,
                       entry: str = "f", inputs: str = "inputs",
                       progress: Callable[[str], None] | None = None) -> dict[str, Any] | None:
    """Run the parsing ``stages`` of ``minimize_source`` on ``source`` (the
    program body) in interpreter ``python`` (its environment ``env``, with
    tcfuzz on its PYTHONPATH), answering its checks with ``check`` here,
    for at most ``budget_s`` seconds. Returns the remote MinimizeResult's
    fields (fuzz.reduce.pipeline builds it), or None when the remote process could not run
    or did not finish (it is logged, with the tail of its stderr; the
    caller falls back to its own passes). Raises CouldNotMinimize when the
    remote's first check, of ``source`` itself, fails: the host's own check
    of it had held, so the signature is flaky and the host's line passes
    would spend the budget on candidates that cannot hold (a campaign of
    2026-12-06 spent 136 s of its 218 s of filing so, 133 checks, none
    accepted). Never raises for the remote's failure; a ``check`` that
    raises propagates after the remote process is stopped."""
    request = {"source": source, "budget_s": budget_s, "jobs": jobs, "stages": list(stages), "entry": entry,
               "inputs": inputs, "fast": bool(getattr(check, "fast", False)),
               "spread": int(getattr(check, "spread", 1)), "confirm": hasattr(check, "confirm"),
               "many": hasattr(check, "check_many")}
    with tempfile.TemporaryFile(mode="w+") as stderr:
        try:
            proc = subprocess.Popen([python, "-m", "fuzz.reduce.remote_worker"], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=stderr, env=env, text=True, bufsize=1)
        except OSError as e:
            log.warning("the remote reducer could not start %s (%s): the host's line passes instead", python, e)
            return None
        assert proc.stdin is not None and proc.stdout is not None
        done: dict[str, Any] | None = None
        could_not: str | None = None
        try:
            send(proc.stdin, request)
            for line in proc.stdout:
                message = json.loads(line)
                if "done" in message:
                    done = message["done"]
                    break
                if "could_not" in message:
                    could_not = str(message["could_not"])
                    break
                if "progress" in message:
                    if progress:
                        progress(str(message["progress"]))
                elif "fast" in message:
                    check.fast = bool(message["fast"])  # type: ignore[attr-defined]
                elif "many" in message:
                    many = getattr(check, "check_many")
                    send(proc.stdin, {"oks": [bool(ok) for ok in many(message["many"])]})
                elif "confirm" in message:
                    send(proc.stdin, {"ok": bool(check.confirm(message["confirm"]))})  # type: ignore[attr-defined]
                else:
                    send(proc.stdin, {"ok": bool(check(message["check"]))})
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
        if could_not is not None:
            # the same check the host's input passed, failing now: a flaky
            # signature, which no later pass would hold either
            raise CouldNotMinimize(f"on {python}, {could_not} (checked again: it showed once)")
        if done is None:
            stderr.seek(0)
            tail = stderr.read()[-2000:]
            log.warning("the remote reducer on %s gave no result (exit code %s); its stderr ends:\n%s",
                        python, proc.returncode, tail)
            return None
    return done


def send(stream: IO[str], message: dict[str, Any]) -> None:
    """Write ``message`` as one JSON line and flush."""
    stream.write(json.dumps(message) + "\n")
    stream.flush()
