"""The text of a corpus case: one PEP 723 script, ``corpus/<kind>/<id>.py``.

A case is the program (``f``, ``inputs``, helpers), the definition of a planted
backend where one was used, and a ``__main__`` block that runs eager and
compiled with nothing but torch, prints both and exits 1 while the bug is
there. A divergence's block makes the harness's calls with the harness's own
code: the source of harness/plan.py is embedded in it, so re-render the corpus
(``rerender``) whenever that module changes (tests/unit/test_corpus.py fails
until then). Its ``[tool.tcfuzz]`` table holds the signature and provenance;
the harness loads the same file as a ``Program``. ``fuzz.corpus.store`` reads and
writes cases; docs/design.md gives the format.
"""

from __future__ import annotations

import ast
import datetime
import inspect
import json
import textwrap
from typing import Any

from harness import casefile, plan as call_plan
from harness.backends import PLANTED_BACKENDS
from harness.program import Program, read_pep723
from fuzz.triage.signature import GRAPH_BREAK, GRAPH_BREAK_REGRESSION, Signature

# Seconds a timeout case's compiled calls may take standalone before its
# runner ends it as hanging (exit 1): the campaign's run timeout is 90 s, and
# the hangs it files do not return at all.
HANG_S = 60.0
# Module-level names a case's runner reads; not part of the program.
RUNNER_SETTINGS = ("BACKEND", "FULLGRAPH", "GB_TYPE", "LAST_CALL", "HANG_S")
# The divergence runner's list of calls in cases rendered before LAST_CALL:
# not part of their program either (``rerender`` replaces it).
_OLD_RUNNER_SETTINGS = ("CALLS",)

_RUNNER_VALUE = '''\
if __name__ == "__main__":  # eager vs compiled, twice each; exit 1 while they differ
    import sys
    from torch._dynamo.utils import same
    def run(fn):
        try: return [fn(*inputs()) for _ in range(2)]
        except BaseException as e: return f"raised {type(e).__name__}: {e}"
    eager, compiled = run(f), run(torch.compile(f, backend=BACKEND, fullgraph=FULLGRAPH))
    print(f"eager:    {eager}\\ncompiled: {compiled}")
    sys.exit(0 if type(eager) is type(compiled) and same(eager, compiled, equal_nan=True) else 1)
'''

# A divergence's runner makes harness.execute's calls: the plan's code
# (harness/plan.py) is embedded where the marker line is, as it is. Each run
# loads a fresh copy of the module without the runner's settings, as the
# harness loads the program; the eager run decides the plan (up to LAST_CALL)
# and the compiled run makes the same calls. After each call the value,
# printed text, arguments and grad mode are compared, after the last call the
# module's data globals and its classes' public attributes (objects of its
# classes as their attributes), as harness.execute does.
_PLAN_MARKER = "    # <harness/plan.py>\n"
_RUNNER_PLAN = '''\
if __name__ == "__main__":  # eager vs compiled, each in a fresh copy of this module; exit 1 while they differ
    # The harness's call plan: tcfuzz's harness/plan.py but for its docstring, so that
    # this case makes the calls the harness made.
    # <harness/plan.py>
    # The runs.
    import contextlib, io, re, sys, types
    SETTINGS = RUNNER_SETTINGS  # names the copies drop
    from torch._dynamo.utils import same
    def load():  # a fresh copy of this module without the runner's settings: the program as the harness ran it
        module = types.ModuleType("case")
        module.__file__ = __file__
        sys.modules["case"] = module
        with open(__file__) as fh:
            exec(compile(fh.read(), __file__, "exec"), vars(module))
        for name in SETTINGS:
            vars(module).pop(name, None)
        return module
    def attributes(module):
        owners = [module] + [v for v in vars(module).values() if is_program_class(v, module)]
        return [(o, k, v) for o in owners for k, v in list(vars(o).items()) if not k.startswith("_")
                and not callable(v) and not isinstance(v, (types.ModuleType, property, classmethod, staticmethod))]
    def state(module):  # after the calls
        return [[k, dict(vars(v)) if type(v).__module__ == "case" else v] for _, k, v in attributes(module)]
    def run(compiled, calls=None):
        module = load()
        fn = torch.compile(module.f, backend=BACKEND, fullgraph=FULLGRAPH) if compiled else module.f
        plan, out = CallPlan(module, module.inputs, calls, last=LAST_CALL), []
        for call, args in plan:
            buf = io.StringIO()
            try:
                with contextlib.redirect_stdout(buf):
                    value = fn(*args)
                    value = list(value) if hasattr(value, "__next__") else value  # a generator runs when drained
            except BaseException as e: value = f"raised {type(e).__name__}: " + re.sub(r" at 0x\\w+", "", str(e).split(chr(10))[0])
            out.append([value, list(args), buf.getvalue(), torch.is_grad_enabled()])
        return plan.calls, out + [state(module)]
    calls, eager = run(False)
    compiled = run(True, calls)[1]
    print(f"calls:    {', '.join(calls)}\\neager:    {eager}\\ncompiled: {compiled}")
    try: ok = same(eager, compiled, equal_nan=True)
    except Exception: ok = repr(eager) == repr(compiled)  # a value same() does not know
    sys.exit(0 if ok else 1)
'''


def _plan_runner() -> str:
    """The divergence runner with harness/plan.py's source in it, but for its
    module docstring (indented into the ``__main__`` block: its only other
    multi-line strings are docstrings), and the names of the runner's
    settings, which each run's copy of the module drops."""
    source = inspect.getsource(call_plan)
    docstring = ast.parse(source).body[0]
    code = source.splitlines(keepends=True)[docstring.end_lineno:]
    runner = _RUNNER_PLAN.replace(_PLAN_MARKER, textwrap.indent("".join(code).strip("\n") + "\n", "    "))
    return runner.replace("SETTINGS = RUNNER_SETTINGS", f"SETTINGS = {RUNNER_SETTINGS!r}")


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
        except BaseException as e: return f"raised {type(e).__name__}: {e}"
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
        except BaseException as e: print(f"raised {type(e).__name__}: {e}")
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


def program_body(source: str, *, keep_lines: bool = False) -> str:
    """The program alone: without a PEP 723 block, a ``__main__`` block, planted
    backend definitions or the runner's settings (``RUNNER_SETTINGS``) of a case.
    With ``keep_lines`` the dropped lines become blank lines, so that every line
    of the program keeps its number in the case (what tracebacks and graph
    breaks report)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return _program_lines(source, keep_lines=keep_lines)  # grammar newer than the host's
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
            isinstance(t, ast.Name) and t.id in RUNNER_SETTINGS + _OLD_RUNNER_SETTINGS for t in node.targets)
        if main or planted or setting:
            drop.update(range(node.lineno - 1, node.end_lineno or node.lineno))
    if keep_lines:
        return "".join("\n" if i in drop else line for i, line in enumerate(lines)).rstrip("\n") + "\n"
    kept = "".join(line for i, line in enumerate(lines) if i not in drop).strip("\n")
    return kept + "\n"


def _program_lines(source: str, *, keep_lines: bool) -> str:
    """``program_body`` by lines, for a source the host's ``ast`` cannot parse
    (3.14/3.15 grammar on an older host): PEP 723 blocks, top-level runner
    settings and everything from ``if __name__ == "__main__":`` on are dropped."""
    lines = source.splitlines(keepends=True)
    drop: set[int] = set()
    in_header = False
    settings = tuple(f"{name} = " for name in RUNNER_SETTINGS + _OLD_RUNNER_SETTINGS)
    for i, line in enumerate(lines):
        text = line.rstrip("\n")
        if text == "# /// script":
            in_header = True
        if in_header or text.startswith(settings):
            drop.add(i)
        if in_header and text == "# ///":
            in_header = False
        if text.startswith("if __name__ == "):
            drop.update(range(i, len(lines)))
            break
    if keep_lines:
        return "".join("\n" if i in drop else line for i, line in enumerate(lines)).rstrip("\n") + "\n"
    return "".join(line for i, line in enumerate(lines) if i not in drop).strip("\n") + "\n"


def code_lines(source: str) -> int:
    """Lines of code: neither blank nor comment-only."""
    return sum(1 for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#"))


def _toml(value: Any) -> str:
    return json.dumps(value)  # JSON strings and arrays of strings are valid TOML


def render_case(program: Program, signature: Signature, *, backend: str, torch_version: str = casefile.DEFAULT_TORCH,
                device: str = "cpu", meta: dict[str, Any] | None = None, fullgraph: bool = False) -> str:
    """The text of a standalone corpus case for ``program`` showing ``signature``.

    Its ``__main__`` block compares, for a divergence, harness.plan's calls up
    to the one the signature names (``divergence_last_call``): return values
    and exceptions, printed text, arguments after each call and grad mode,
    then module globals and class attributes; for a timeout, whether the
    compiled calls return within ``HANG_S`` seconds; for a graph break,
    whether Dynamo still reports that ``gb_type``; otherwise the return values
    or exceptions of two calls. A case found on ``device`` "cuda"
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
    parts = [casefile.render_header(table, torch_version=torch_version,
                                    requires_python=requires_python(program, body, signature)),
             body.rstrip("\n")]
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
            last = divergence_last_call(signature)
            parts.append(f"LAST_CALL = {_toml(last) if last else None}  # the plan's calls are made up to this one"
                         f" (None: all)\n\n{_plan_runner()}")
        elif signature.kind == "timeout":
            parts.append(f"HANG_S = {HANG_S:g}  # seconds the compiled calls may take before the case counts as hanging"
                         f"\n\n{_RUNNER_HANG}")
        else:
            parts.append(_RUNNER_VALUE)
    return "\n\n\n".join(p.strip("\n") for p in parts) + "\n"


def divergence_last_call(signature: Signature) -> str | None:
    """The last call of harness.plan's plan that a divergence's standalone
    runner makes: the call the signature names ("@guard"), "cached" where it
    names none (the first call, and the cached one after it), None (the whole
    plan) for a divergence in module globals, which the harness compares after
    its whole plan. Which calls the plan has (guard, shape) the runner decides
    as the harness does, from the module and the first call's inputs."""
    detail = signature.cause[1]
    if "@" in detail:
        return detail.rsplit("@", 1)[1]
    return None if detail == "globals" else call_plan.Call.CACHED.value


def requires_python(program: Program, body: str, signature: Signature) -> str:
    """The oldest Python a case's program parses on: its version-gated
    features' (fuzz.generate.versions), else, when the host cannot parse it,
    the oldest interpreter it was found on, else "3.11"."""
    gate = None
    try:  # the generator's gates need hypothesis: on the host, not in worker envs (which render too)
        from fuzz.generate import versions
    except ImportError:
        versions = None
    if versions is not None:
        gate = versions.min_python(program.features)
    if gate is None:
        try:
            ast.parse(body)
        except SyntaxError:
            found = [(3, int(name.split(".")[1].rstrip("t"))) for name in signature.interpreters
                     if name.startswith("3.") and name.split(".")[1].rstrip("t").isdigit()]
            gate = min(found) if found else None
    return f"{gate[0]}.{gate[1]}" if gate else "3.11"


def rerender(text: str) -> str:
    """Case ``text`` as ``render_case`` writes it now: the same program,
    signature, backend, device and settings, with today's runner, and its
    ``[tool.tcfuzz]`` table kept as it is. Raises CaseFileError for a text
    without a table, ValueError for a malformed signature."""
    table = casefile.read_table(text)
    if not table:
        raise casefile.CaseFileError("not a corpus case: it has no [tool.tcfuzz] table")
    signature = Signature.parse(str(table["signature"]))
    fresh = render_case(Program(text), signature, backend=str(table["backend"]),
                        torch_version=str(table.get("torch", casefile.DEFAULT_TORCH)),
                        device=str(table.get("device", "cpu")), fullgraph=bool(table.get("fullgraph", False)))
    return casefile.replace_table(fresh, table)
