"""Whether Inductor can compile C++ here: the compiler it would use, checked on the host.

Inductor on CPU writes C++ and compiles it with ``$CXX``, or ``g++`` when
that is unset (torch/_inductor/cpp_builder.py, ``get_cpp_compiler``); workers
inherit ``CXX`` (fuzz.campaign.interpreters.Interpreter.environ). Without a
working compiler every Inductor run would fail the same way: that is the
machine's problem, not a compiler finding, so a campaign refuses Inductor in
one line and runs the other backends.

It also picks the linker. Inductor links every CPU kernel into a shared
object against libtorch_cpu.so (about 430 MiB), and GNU ld spends most of a
kernel's link reading that library's symbols: on this project's 2-core
machine, 0.31 s of a kernel's 0.84 s build with ld.bfd, 0.11 s with ld.gold
(torch 2.15.0, 3.12). Kernels are built once per program and per recompile,
tens per Inductor run, so a worker whose ``CXX`` the user left unset gets a
``g++`` that links with gold where gold links here (``inductor_cxx``). The
linker does not change the code Inductor generates or the compiler's
output.
"""

from __future__ import annotations

import functools
import logging
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

# Seconds `$CXX --version` may take.
PROBE_TIMEOUT_S = 30.0
# The linker flag tried for Inductor's kernels (see the module docstring).
FAST_LINKER_FLAG = "-fuse-ld=gold"


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


def inductor_cxx() -> str:
    """The ``CXX`` a worker gets: ``$CXX`` when set; else, where ``g++``
    with FAST_LINKER_FLAG links a shared object here (a probe of about 0.1 s,
    once per process), the path of a ``g++-gold`` script that runs ``g++``
    with the flag (under ``$TCFUZZ_CACHE/bin``, default
    ``~/.cache/tcfuzz/bin``); else ``g++``. A script, not ``g++ -fuse-ld=gold``:
    torch 2.12.0 runs ``$CXX`` as one executable (``cpp_compiler_search``
    raised InvalidCxxCompiler on 3.13t), and tells gcc by its name."""
    if os.environ.get("CXX", "").strip():
        return os.environ["CXX"].strip()
    return _gold_cxx()


@functools.cache
def _gold_cxx() -> str:
    """``inductor_cxx`` without ``$CXX``: the probe, once per process."""
    compiler = shutil.which("g++")
    if not compiler:
        return "g++"
    cache = Path(os.environ.get("TCFUZZ_CACHE", Path.home() / ".cache" / "tcfuzz"))
    script = cache / "bin" / "g++-gold"
    text = f'#!/bin/sh\n# g++ whose links use a faster linker (tcfuzz: fuzz/campaign/toolchain.py)\n' \
           f'exec {shlex.quote(compiler)} {FAST_LINKER_FLAG} "$@"\n'
    try:
        script.parent.mkdir(parents=True, exist_ok=True)
        if not script.exists() or script.read_text() != text:
            fd, tmp_name = tempfile.mkstemp(dir=script.parent, prefix=".g++-gold.")
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
            os.chmod(tmp_name, 0o755)
            os.replace(tmp_name, script)  # workers starting now see the old script or the new, whole
    except OSError as e:
        log.info("cannot write %s (%s): kernels link with the default linker", script, e)
        return "g++"
    with tempfile.TemporaryDirectory(prefix="tcfuzz-ld-") as tmp:
        source = Path(tmp) / "probe.c"
        source.write_text("int tcfuzz_probe(void) { return 1; }\n")
        try:
            proc = subprocess.run([str(script), "-x", "c", "-shared", "-fPIC", str(source),
                                   "-o", str(Path(tmp) / "probe.so")], capture_output=True, text=True,
                                  timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as e:
            log.info("%s does not run (%s): kernels link with the default linker", script, e)
            return "g++"
    if proc.returncode != 0:
        log.info("g++ %s fails (%s): kernels link with the default linker", FAST_LINKER_FLAG,
                 proc.stderr.strip().splitlines()[-1:] or proc.returncode)
        return "g++"
    return str(script)
