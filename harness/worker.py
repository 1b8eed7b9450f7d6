"""``python -m harness.worker``: a long-lived server that runs many programs.

``import torch`` and the first compile of each backend are paid once per
process. The protocol (see ``harness.protocol``) is read from stdin and
written to a private duplicate of stdout; fds 0 and 1 are then pointed at
/dev/null so that programs cannot read requests or corrupt replies. Fatal
signals dump a ``faulthandler`` traceback on stderr, which the host keeps.
"""

from __future__ import annotations

import argparse
import faulthandler
import logging
import os
import platform
import sys
import sysconfig
import tempfile
import traceback

from harness import protocol
from harness.outcome import InterpreterInfo
from harness.program import Program


def interpreter_info() -> InterpreterInfo:
    """This interpreter's version, build and GIL state, and torch's version."""
    import torch

    free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    gil = sys._is_gil_enabled() if hasattr(sys, "_is_gil_enabled") else True
    return InterpreterInfo(
        name=f"{sys.version_info.major}.{sys.version_info.minor}{'t' if free_threaded else ''}",
        version=platform.python_version(),
        free_threaded=free_threaded,
        gil_enabled=gil,
        torch=torch.__version__,
        executable=sys.executable,
    )


def _isolate_stdio() -> tuple[object, object]:
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    sys.stdin = open(os.devnull)
    return proto_in, proto_out


def serve() -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.worker")
    parser.add_argument("--name", help="interpreter label reported in outcomes (default: derived)")
    options = parser.parse_args()

    proto_in, proto_out = _isolate_stdio()
    faulthandler.enable(file=sys.stderr, all_threads=True)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="[worker] %(message)s")
    for noisy in ("torch", "filelock"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    workdir = tempfile.mkdtemp(prefix="tcfuzz-worker-")
    os.chdir(workdir)

    import torch  # noqa: F401  (paid once per worker)
    from harness import execute, observe

    observe.install()
    info = interpreter_info()
    name = options.name or info.name
    protocol.send(proto_out, {"event": "ready", "interpreter": info.__dict__, "pid": os.getpid(),
                               "protocol": protocol.PROTOCOL_VERSION})
    for line in proto_in:
        if not line.strip():
            continue
        request = protocol.decode(line)
        op = request.get("op")
        if op == "shutdown":
            break
        if op != "run":
            protocol.send(proto_out, {"id": request.get("id"), "error": f"unknown op {op!r}"})
            continue
        try:
            program = Program.from_json(request["program"])
            outcome = execute.run_program(
                program,
                request["backend"],
                interpreter=name,
                device=request.get("device", "cpu"),
                fullgraph=bool(request.get("fullgraph", False)),
                workdir=workdir,
            )
            outcome.gil_enabled = sys._is_gil_enabled() if hasattr(sys, "_is_gil_enabled") else True
            protocol.send(proto_out, {"id": request.get("id"), "outcome": outcome.to_json()})
        except Exception:
            protocol.send(proto_out, {"id": request.get("id"), "error": traceback.format_exc()})
    return 0


if __name__ == "__main__":
    sys.exit(serve())
