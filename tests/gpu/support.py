"""Which interpreter the GPU tests use, and why they skip where there is no GPU.

The interpreter is ``$TCFUZZ_GPU_PYTHON`` (a path: ``scripts/gpu-check.sh``
sets it to the machine's own python with torch) or else the 3.12 worker env.
It is asked once per session whether its torch sees a GPU.
"""

from __future__ import annotations

import functools
import os

from fuzz.campaign import interpreters
from fuzz.errors import TcfuzzError
from tests.conftest import env_python


def gpu_interpreter_spec() -> str:
    """The ``--python`` value of the GPU tests."""
    return os.environ.get("TCFUZZ_GPU_PYTHON") or str(env_python("3.12"))


def skip_reason(spec: str) -> str:
    """Why the GPU tests cannot run with ``spec`` ("" when they can), with the fix."""
    try:
        interp = interpreters.resolve(spec)
    except TcfuzzError as e:
        return f"no interpreter for the GPU tests ({e}); set TCFUZZ_GPU_PYTHON to a python with torch"
    problem = interpreters.cuda_problem(interp)
    if problem:
        return f"no GPU: {problem}; scripts/gpu-check.sh runs these tests on a machine with one"
    return ""


@functools.cache
def session_skip_reason() -> str:
    return skip_reason(gpu_interpreter_spec())
