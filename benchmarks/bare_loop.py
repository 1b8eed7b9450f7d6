"""The bare loop that benchmarks/throughput.py compares tcfuzz with.

Runs in an interpreter under test with nothing but torch: for each program,
``torch._dynamo.reset(); torch.compile(f, backend=b)(*inputs())`` plus the
eager call ``f(*inputs())``, all in this one process. Usage:

    python benchmarks/bare_loop.py PROGRAMS.json BACKEND

PROGRAMS.json: {"warmup": {...}, "programs": [{...}, ...]} with each program
as ``Program.to_json`` writes it (``source``, ``entry``, ``inputs``). Prints
one JSON line: {"programs": N, "elapsed_s": wall seconds of the timed loop,
"errors": programs that raised, "rss_mib": resident MiB at the end}.
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
    path, backend = sys.argv[1], sys.argv[2]
    spec = json.load(open(path))
    os.chdir(os.path.dirname(os.path.abspath(path)))
    import torch
    import torch._dynamo

    run_one(torch, spec["warmup"], -1, backend)  # the backend's first compile, not timed
    errors = 0
    started = time.perf_counter()
    for i, program in enumerate(spec["programs"]):
        errors += run_one(torch, program, i, backend)
    elapsed_s = time.perf_counter() - started
    rss_kib = next(int(line.split()[1]) for line in open(f"/proc/{os.getpid()}/status") if line.startswith("VmRSS:"))
    print(json.dumps({"programs": len(spec["programs"]), "elapsed_s": elapsed_s, "errors": errors,
                      "rss_mib": round(rss_kib / 1024, 1)}))


if __name__ == "__main__":
    main()
