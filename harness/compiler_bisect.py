"""``python -m harness.compiler_bisect PROGRAM.json``: which part of Inductor breaks a program.

Runs ``torch._inductor.compiler_bisector.CompilerBisector.do_bisect`` in this
process with a test that runs the program eagerly and under ``inductor``
(``harness.execute.run_program``) and passes when the verdict is no bug. The
bisector first lowers the backend (``eager``, ``aot_eager``,
``aot_eager_decomp_partition``, ``inductor``: the stage ladder), then, inside
the failing one, turns subsystems (decompositions, passes, lowerings) off one
application at a time. Prints one JSON object on stdout:
``{"backend": ..., "subsystem": ..., "bisect_number": ..., "debug_info": ..., "runs": N}``,
with nulls where the bisector found nothing (the program passes on inductor).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from typing import Any

from harness.program import Program


def bisect_program(program: Program, *, interpreter: str, device: str = "cpu") -> dict[str, Any]:
    """CompilerBisector's verdict on ``program`` (see the module docstring).

    Raises ProgramError if the program does not load.
    """
    from torch._inductor.compiler_bisector import CompilerBisector

    from harness.execute import run_program

    workdir = tempfile.mkdtemp(prefix="tcfuzz-bisect-")
    runs = 0

    def passes() -> bool:
        nonlocal runs
        runs += 1
        outcome = run_program(program, "inductor", interpreter=interpreter, device=device, workdir=workdir)
        return not outcome.verdict.is_bug

    with contextlib.redirect_stdout(sys.stderr):  # the bisector prints its progress
        result = CompilerBisector.do_bisect(passes)
    found = {"backend": None, "subsystem": None, "bisect_number": None, "debug_info": None}
    if result is not None:
        found = {"backend": result.backend, "subsystem": result.subsystem, "bisect_number": result.bisect_number,
                 "debug_info": None if result.debug_info is None else str(result.debug_info)[:500]}
    return {**found, "runs": runs}


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print("usage: python -m harness.compiler_bisect PROGRAM.json [DEVICE]", file=sys.stderr)
        return 2
    with open(sys.argv[1]) as fh:
        program = Program.from_json(json.load(fh))
    name = os.environ.get("TCFUZZ_INTERPRETER", "")
    result = bisect_program(program, interpreter=name, device=sys.argv[2] if len(sys.argv) == 3 else "cpu")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
