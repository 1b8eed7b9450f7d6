"""The worker protocol: one JSON object per line, in both directions.

Requests (host -> worker, on the worker's stdin):
  {"op": "run", "id": N, "program": {...Program...}, "backend": "inductor",
   "device": "cpu", "fullgraph": false, "cpu_limit_s": 180, "threads": 0, "calls": null,
   "compile": {"dynamic": true, ...}}
   (cpu_limit_s: CPU seconds the whole worker may spend on this program;
   threads: K > 0 asks for the free-threaded concurrency run, harness.threads;
   calls: N makes only the first N calls of harness.execute's plan, null all;
   "compiled_calls": N (optional) only the first N of the compiled run, the
   eager runs making all;
   compile: harness.settings.CompileSettings.to_json(), absent or {} for the
   defaults; the concurrency run ignores it; "reach": true (optional) makes the
   outcome carry the compiler lines new for this worker, harness.reach)
  {"op": "shutdown"}
Replies (worker -> host, on a private duplicate of the worker's original
stdout, so that programs printing or writing to fd 1 from C cannot corrupt it):
  {"event": "ready", "interpreter": {...InterpreterInfo...}, "protocol": 2,
   "pid": P, "workdir": "/tmp/...", "address_space_mib": M, "rss_mib": R}
  {"id": N, "outcome": {...Outcome...}, "rss_mib": R, "peak_rss_mib": P}
  {"id": N, "error": "traceback text", "rss_mib": R, ...}   (a harness failure)
rss_mib: the worker's resident set size after the program, in MiB (VmRSS);
the host replaces a worker above its limit.
"retiring": true on an outcome reply: the worker exits after sending it (a
CUDA fault poisoned its process, harness.device); the host replaces it.
A worker that dies or stops answering is detected by the host (EOF or
timeout) and recorded as a crash or timeout of the program it was running.
"""

from __future__ import annotations

import json
from typing import IO, Any

# Bumped whenever a request or an Outcome gains a field: a host and a worker
# from different checkouts then refuse each other in one line (3: "compile"; 4: a program's "weights";
# 5: "reach").
PROTOCOL_VERSION = 5


def encode(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, sort_keys=True) + "\n").encode()


def decode(line: bytes | str) -> dict[str, Any]:
    """Parse one line; raises ValueError naming the problem if it is not a JSON object."""
    try:
        message = json.loads(line)
    except json.JSONDecodeError as e:
        raise ValueError(f"worker sent a line that is not JSON ({e}): {line[:200]!r}") from None
    if not isinstance(message, dict):
        raise ValueError(f"Expected a JSON object from the worker but got {line[:200]!r}")
    return message


def send(stream: IO[bytes], message: dict[str, Any]) -> None:
    stream.write(encode(message))
    stream.flush()
