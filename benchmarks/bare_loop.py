"""The bare loop that benchmarks/throughput.py compares tcfuzz with.

Runs in an interpreter under test with nothing but torch: for each program,
``torch._dynamo.reset(); torch.compile(f, backend=b)(*inputs())`` plus the
eager call ``f(*inputs())``, all in this one process. A server: reads one
JSON request per line on stdin, ``{"program": {...}, "backend": "eager",
"index": N}`` (the program as ``Program.to_json`` writes it), runs it and
answers ``{"elapsed_s": wall seconds, "raised": bool, "rss_mib": ...}``.
``benchmarks/throughput.py`` interleaves these requests with tcfuzz's runs
of the same programs, so that a shared machine's load changes both alike.
"""

import contextlib
import io
import json
import os
import sys
import time
import types


def load(program, index):
    """A fresh module from the program's source (registered in sys.modules,
    written to a file, as Dynamo needs to find its globals and lines)."""
    name = f"bare_program_{index}"
    path = os.path.abspath(f"{name}.py")
    with open(path, "w") as fh:
        fh.write(program["source"])
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(program["source"], path, "exec"), module.__dict__)
    return getattr(module, program.get("entry", "f")), getattr(module, program.get("inputs", "inputs"))


def run_one(torch, program, index, backend):
    """One program: compiled once, eager once. Returns True if it raised."""
    f, inputs = load(program, index)
    raised = False
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            torch._dynamo.reset()
            torch.compile(f, backend=backend)(*inputs())
        except Exception:
            raised = True
        try:
            f(*inputs())
        except Exception:
            raised = True
    return raised


def main():
    import torch
    import torch._dynamo

    os.chdir(os.environ.get("TMPDIR", "/tmp"))
    out = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # programs print; replies stay clean
    for line in sys.stdin:
        request = json.loads(line)
        started = time.perf_counter()
        raised = run_one(torch, request["program"], request["index"], request["backend"])
        elapsed_s = time.perf_counter() - started
        for name in [n for n in sys.modules if n.startswith("bare_program_")]:
            del sys.modules[name]
        rss_kib = next(int(x.split()[1]) for x in open(f"/proc/{os.getpid()}/status") if x.startswith("VmRSS:"))
        out.write(json.dumps({"elapsed_s": elapsed_s, "raised": raised, "rss_mib": round(rss_kib / 1024, 1)}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
