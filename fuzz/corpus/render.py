"""The text of a corpus case: one PEP 723 script, ``corpus/<kind>/<id>.py``.

A case is the program (``f``, ``inputs``, helpers), the definition of a planted
backend where one was used, and a short ``__main__`` block that runs eager and
compiled with nothing but torch, prints both and exits 1 while the bug is
there. Its ``[tool.tcfuzz]`` table holds the signature and provenance; the
harness loads the same file as a ``Program``. ``fuzz.corpus.store`` reads and
writes cases; docs/design.md gives the format.
"""

from __future__ import annotations

import ast
import datetime
import json
from typing import Any

from harness import casefile
from harness.backends import PLANTED_BACKENDS
from harness.program import Program, read_pep723
from fuzz.triage.signature import GRAPH_BREAK, GRAPH_BREAK_REGRESSION, Signature

# Seconds a timeout case's compiled calls may take standalone before its
# runner ends it as hanging (exit 1): the campaign's run timeout is 90 s, and
# the hangs it files do not return at all.
HANG_S = 60.0
# Module-level names a case's runner reads; not part of the program.
RUNNER_SETTINGS = ("BACKEND", "FULLGRAPH", "GB_TYPE", "CALLS", "HANG_S")

_RUNNER_VALUE = '''\
if __name__ == "__main__":  # eager vs compiled, twice each; exit 1 while they differ
    import sys
    from torch._dynamo.utils import same
    def run(fn):
        try: return [fn(*inputs()) for _ in range(2)]
        except Exception as e: return f"raised {type(e).__name__}: {e}"
    eager, compiled = run(f), run(torch.compile(f, backend=BACKEND, fullgraph=FULLGRAPH))
    print(f"eager:    {eager}\\ncompiled: {compiled}")
    sys.exit(0 if type(eager) is type(compiled) and same(eager, compiled, equal_nan=True) else 1)
'''

_RUNNER_EFFECTS = '''\
if __name__ == "__main__":  # eager vs compiled: values, printed text, arguments after the call
    import contextlib, io, sys
    from torch._dynamo.utils import same
    def run(fn):
        out = []
        for _ in range(2):
            args, buf = inputs(), io.StringIO()
            try:
                with contextlib.redirect_stdout(buf): value = fn(*args)
            except Exception as e: value = f"raised {type(e).__name__}"
            out.append([value, list(args), buf.getvalue()])
        return out
    eager, compiled = run(f), run(torch.compile(f, backend=BACKEND))
    print(f"eager:    {eager}\\ncompiled: {compiled}")
    sys.exit(0 if same(eager, compiled, equal_nan=True) else 1)
'''

# A divergence's runner follows harness.execute's call plan: each run in a
# fresh copy of the module; calls "fresh" and "cached", then, where the
# signature names a later call, "guard" (scalar globals and class attributes
# mutated) and "shape" (the largest dimension grown by one); after each call
# the value, printed text, arguments and grad mode are compared, after the
# last call the module's data globals and its classes' public attributes
# (objects of its classes as their attributes), as harness.execute does.
_RUNNER_PLAN = '''\
if __name__ == "__main__":  # eager vs compiled, each in a fresh copy of this module; exit 1 while they differ
    import contextlib, io, re, runpy, sys
    from torch._dynamo.utils import same
    def attributes(ns):
        owners = [ns] + [v for v in ns.values() if isinstance(v, type) and v.__module__ == "case"]
        return [(o, k, v) for o in owners for k, v in list(o.items() if o is ns else vars(o).items())
                if not k.startswith("_") and k not in ("BACKEND", "FULLGRAPH", "CALLS")
                and not callable(v) and not isinstance(v, (type(sys), property, classmethod, staticmethod))]
    def scalars(ns):
        return [(o, k) for o, k, v in attributes(ns) if isinstance(v, (bool, int, float))]
    def state(ns):  # after the calls
        return [[k, dict(vars(v)) if type(v).__module__ == "case" else v] for _, k, v in attributes(ns)]
    def grow(args):
        n = max([s for a in args if isinstance(a, torch.Tensor) for s in a.shape if s >= 2], default=0)
        def g(t):
            for d, s in enumerate(t.shape if isinstance(t, torch.Tensor) else ()):
                if n and s == n: t = torch.cat([t.detach(), t.detach().narrow(d, s - 1, 1)], d).requires_grad_(t.requires_grad)
            return t
        return tuple(g(a) for a in args)
    def run(compiled):
        ns = runpy.run_path(__file__, run_name="case")
        fn, out = torch.compile(ns["f"], backend=BACKEND, fullgraph=FULLGRAPH) if compiled else ns["f"], []
        for call in CALLS:
            for o, k in scalars(ns) if call == "guard" else []:
                v = o[k] if o is ns else getattr(o, k)
                v = (not v) if isinstance(v, bool) else v + (1 if isinstance(v, int) else 0.5)
                o.__setitem__(k, v) if o is ns else setattr(o, k, v)
            torch.manual_seed(0)
            args = ns["inputs"]()
            args = grow(args if isinstance(args, tuple) else (args,)) if call == "shape" else args
            buf = io.StringIO()
            try:
                with contextlib.redirect_stdout(buf):
                    value = fn(*args)
                    value = list(value) if hasattr(value, "__next__") else value  # a generator runs when drained
            except Exception as e: value = f"raised {type(e).__name__}: " + re.sub(r" at 0x\\w+", "", str(e).split(chr(10))[0])
            out.append([value, list(args), buf.getvalue(), torch.is_grad_enabled()])
            torch.set_grad_enabled(True)
        return out + [state(ns)]
    eager, compiled = run(False), run(True)
    print(f"eager:    {eager}\\ncompiled: {compiled}")
    try: ok = same(eager, compiled, equal_nan=True)
    except Exception: ok = repr(eager) == repr(compiled)  # a value same() does not know
    sys.exit(0 if ok else 1)
'''

# A hang's runner: a timer thread ends the process with exit 1 (after
# printing every thread's stack) when the compiled calls have not returned
# within HANG_S seconds, so `python CASE` terminates while the bug is there.
# (Not faulthandler.dump_traceback_later(exit=True): its watchdog reads the
# frames without the GIL and crashed the process with SIGSEGV under load; the
# timer thread dumps while holding the GIL, which the hanging tracer, being
# Python code, hands over every switch interval.)
_RUNNER_HANG = '''\
if __name__ == "__main__":  # exit 1, with the stack of the hang, while the compiled calls still do not return
    import faulthandler, os, sys, threading
    from torch._dynamo.utils import same
    def run(fn):
        try: return [fn(*inputs()) for _ in range(2)]
        except Exception as e: return f"raised {type(e).__name__}: {e}"
    def hung():
        print(f"compiled: no return within {HANG_S} s", flush=True)
        faulthandler.dump_traceback(all_threads=True)
        os._exit(1)
    eager = run(f)
    print(f"eager:    {eager}", flush=True)
    timer = threading.Timer(HANG_S, hung)
    timer.daemon = True
    timer.start()
    compiled = run(torch.compile(f, backend=BACKEND, fullgraph=FULLGRAPH))
    timer.cancel()
    print(f"compiled: {compiled}")
    sys.exit(0 if type(eager) is type(compiled) and same(eager, compiled, equal_nan=True) else 1)
'''


_RUNNER_GRAPH_BREAK = '''\
if __name__ == "__main__":  # exit 1 while Dynamo still breaks the graph for this reason
    import sys
    from torch._dynamo.utils import counters
    compiled = torch.compile(f, backend="eager")
    for _ in range(2):
        try: compiled(*inputs())
        except Exception as e: print(f"raised {type(e).__name__}: {e}")
    breaks = [m.splitlines()[0] for c in ("graph_break", "unimplemented") for m in counters[c]]
    print("graph breaks:", breaks)
    sys.exit(GB_TYPE in breaks)
'''


_RUNNER_DEVICE = '''\
if __name__ in ("__main__", "case"):  # found on DEVICE: inputs() builds on the CPU, the runs get its tensors on DEVICE
    def _to_device(value):
        if isinstance(value, torch.Tensor):
            if not value.is_leaf: return value.to("DEVICE")
            moved = value.detach().to("DEVICE")
            return moved.requires_grad_() if value.requires_grad else moved
        if type(value) in (tuple, list): return type(value)(_to_device(v) for v in value)
        if type(value) is dict: return {k: _to_device(v) for k, v in value.items()}
        return value
    _inputs_on_cpu = inputs
    def inputs(): return _to_device(_inputs_on_cpu())
'''


def program_body(source: str) -> str:
    """The program alone: without a PEP 723 block, a ``__main__`` block, planted
    backend definitions or the runner's settings (``RUNNER_SETTINGS``) of a case."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    lines = source.splitlines(keepends=True)
    drop: set[int] = set()
    header = read_pep723(source)
    if header:
        start, end = (int(x) for x in header["span"].split(":"))
        first = source.count("\n", 0, start)
        drop.update(range(first, source.count("\n", 0, end) + 1))
    for node in tree.body:
        main = isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
        planted = isinstance(node, ast.FunctionDef) and node.name in PLANTED_BACKENDS
        setting = isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in RUNNER_SETTINGS for t in node.targets)
        if main or planted or setting:
            drop.update(range(node.lineno - 1, node.end_lineno or node.lineno))
    kept = "".join(line for i, line in enumerate(lines) if i not in drop).strip("\n")
    return kept + "\n"


def code_lines(source: str) -> int:
    """Lines of code: neither blank nor comment-only."""
    return sum(1 for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#"))


def _toml(value: Any) -> str:
    return json.dumps(value)  # JSON strings and arrays of strings are valid TOML


def render_case(program: Program, signature: Signature, *, backend: str, torch_version: str = "2.12.0",
                device: str = "cpu", meta: dict[str, Any] | None = None, fullgraph: bool = False) -> str:
    """The text of a standalone corpus case for ``program`` showing ``signature``.

    Its ``__main__`` block compares what the signature's detail names: return
    values and exceptions, plus printed text and arguments after the call for
    "stdout", "mutation" and "globals" divergences; for a graph break, whether
    Dynamo still reports that ``gb_type``. A case found on ``device`` "cuda"
    says so in its table and its ``__main__`` moves the inputs there first.
    """
    today = datetime.date.today().isoformat()
    table: dict[str, Any] = {
        "signature": signature.key, "kind": signature.kind, "stage": signature.stage,
        "interpreters": list(signature.interpreters), "backend": backend, "device": device,
        "torch": torch_version, "first-seen": today, "last-seen": today,
    }
    if program.generator != "manual" and not program.generator.startswith("file:"):
        table["generator"] = program.generator  # provenance, for generator-level shrinking
        if program.seed is not None:
            table["seed"] = program.seed
    if fullgraph:
        table["fullgraph"] = True
    table.update({"count": 1, "status": casefile.STATUS_OPEN})
    table.update(meta or {})
    body = program_body(program.source)
    if "import torch" not in body:
        body = "import torch\n" + body
    parts = [casefile.render_header(table, torch_version=torch_version), body.rstrip("\n")]
    if device != "cpu":  # as harness.device.to_device does in the worker
        parts.append(_RUNNER_DEVICE.replace("DEVICE", device))
    if signature.kind in (GRAPH_BREAK, GRAPH_BREAK_REGRESSION):
        parts.append(f"GB_TYPE = {_toml(signature.cause[1])}\n\n{_RUNNER_GRAPH_BREAK}")
    else:
        if backend in PLANTED_BACKENDS:
            parts.append(PLANTED_BACKENDS[backend].rstrip("\n") + f"\n\nBACKEND = {backend}")
        else:
            parts.append(f"BACKEND = {_toml(backend)}")
        parts[-1] += f"\nFULLGRAPH = {fullgraph}"
        if signature.kind == "divergence":
            parts.append(f"CALLS = {_toml(list(divergence_calls(program, signature)))}\n\n{_RUNNER_PLAN}")
        elif signature.kind == "timeout":
            parts.append(f"HANG_S = {HANG_S:g}  # seconds the compiled calls may take before the case counts as hanging"
                         f"\n\n{_RUNNER_HANG}")
        else:
            parts.append(_RUNNER_VALUE)
    return "\n\n\n".join(p.strip("\n") for p in parts) + "\n"


def divergence_calls(program: Program, signature: Signature) -> tuple[str, ...]:
    """The calls a divergence's standalone runner makes: harness.execute's plan
    ("fresh", "cached", then "guard" where the program has scalar globals or
    class attributes, then "shape"), up to the call the signature names; all
    of them for a divergence in module globals, which the harness compares
    after its whole plan."""
    detail = signature.cause[1]
    last = detail.rsplit("@", 1)[1] if "@" in detail else "shape" if detail == "globals" else "cached"
    calls = ["fresh", "cached"]
    if last in ("guard", "shape"):
        tree = ast.parse(program_body(program.source))  # not the runner settings of a rendered case
        scalar = any(isinstance(n, (ast.Assign, ast.AnnAssign)) and isinstance(getattr(n, "value", None), ast.Constant)
                     and isinstance(n.value.value, (bool, int, float))
                     for top in tree.body if isinstance(top, (ast.Assign, ast.AnnAssign, ast.ClassDef))
                     for n in ([top] if not isinstance(top, ast.ClassDef) else top.body))
        if scalar:
            calls.append("guard")
        if last == "shape":
            calls.append("shape")
    return tuple(calls)


