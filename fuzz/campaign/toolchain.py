"""Whether Inductor can compile C++ here: the compiler it would use, checked on the host.

Inductor on CPU writes C++ and compiles it with ``$CXX``, or ``g++`` when
that is unset (torch/_inductor/cpp_builder.py, ``get_cpp_compiler``); workers
inherit ``CXX`` (fuzz.campaign.interpreters.Interpreter.environ). Without a
working compiler every Inductor run would fail the same way: that is the
machine's problem, not a compiler finding, so a campaign refuses Inductor in
one line and runs the other backends.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess

# Seconds `$CXX --version` may take.
PROBE_TIMEOUT_S = 30.0


def cpp_compiler() -> str:
    """The C++ compiler Inductor's CPU backend uses: ``$CXX`` or ``g++``."""
    return os.environ.get("CXX", "").strip() or "g++"


def cpp_compiler_problem() -> str:
    """Why Inductor cannot compile C++ here, naming the compiler it tried and
    the fix; "" when ``<compiler> --version`` runs."""
    compiler = cpp_compiler()
    words = shlex.split(compiler)
    found = shutil.which(words[0]) if words else None
    fix = "install g++ (apt-get install g++) or set CXX to a working C++ compiler"
    if not found:
        return f"Inductor needs a C++ compiler, and {compiler!r} (from {'CXX' if 'CXX' in os.environ else 'the default'}) is not found: {fix}"
    try:
        proc = subprocess.run([found, *words[1:], "--version"], capture_output=True, text=True,
                              timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"Inductor needs a C++ compiler, and {compiler!r} does not run ({e}): {fix}"
    if proc.returncode != 0:
        return f"Inductor needs a C++ compiler, and {compiler!r} --version exits {proc.returncode}: {fix}"
    return ""
