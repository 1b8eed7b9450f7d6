"""The text of a corpus case: one PEP 723 script, ``corpus/<kind>/<id>.py``.

A case is the program (``f``, ``inputs``, helpers), the definition of a planted
backend where one was used, and a ``__main__`` block that runs eager and
compiled with nothing but torch, prints both and exits 1 while the bug is
there. A divergence's block makes the harness's calls with the harness's own
code: the source of harness/plan.py is embedded in it (for a case up to the
cached call, only the functions those calls use), so re-render the corpus
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
from harness.settings import CompileSettings
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
    import random, sys
    from torch._dynamo.utils import same
    def call(fn):  # seeded as the harness seeds: inputs() and the call each draw from seed 0
        torch.manual_seed(0); random.seed(0); args = inputs(); torch.manual_seed(0); random.seed(0)
        return fn(*(args if isinstance(args, tuple) else (args,)))  # one value is one argument, as in the harness
    def run(fn):
        try: return [call(fn) for _ in range(2)]
        except BaseException as e: return f"raised {type(e).__name__}: {e}"
    with torch.compiler.set_stance("force_eager"):  # eager never passes through Dynamo (torch.cond compiles itself)
        eager = run(f)
    compiled = run(torch.compile(f, backend=BACKEND, fullgraph=FULLGRAPH))
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
_RUNNER_PLAN = """\
if __name__ == "__main__":  # eager vs compiled, each in a fresh copy of this module; exit 1 while they differ
    # The harness's call plan: tcfuzz's harness/plan.py CallPlan and what it uses, so that
    # this case makes the calls the harness made.
    # <harness/plan.py>
"""
# A divergence up to the cached call (LAST_CALL "cached", the plan's first
# two calls whatever the module: harness.plan.decide) needs neither the guard
# mutation nor grown shapes: its runner embeds only the functions of
# harness/plan.py that those calls use (``_plan_definitions``) and makes them
# as harness.plan.CallPlan makes them (tests/harness/test_plan.py checks).
_RUNNER_FRESH_CACHED = """\
if __name__ == "__main__":  # eager vs compiled, each in a fresh copy of this module; exit 1 while they differ
    # The harness's calls up to LAST_CALL "cached", with what they use of tcfuzz's harness/plan.py.
    # <harness/plan.py>
    PLAN = ("fresh", "cached")  # harness.plan.decide(..., last="cached"), whatever the module and its inputs
    def fresh_and_cached(make_inputs):  # the (call, args) of harness.plan.CallPlan(module, make_inputs, last="cached")
        grad_enabled = torch.is_grad_enabled()
        for call in PLAN:
            reset_global_state(grad_enabled)
            seed_rngs()
            args = make_inputs()
            args = args if isinstance(args, tuple) else (args,)
            seed_rngs()
            yield call, args
        reset_global_state(grad_enabled)
"""
# What the fresh/cached runner uses of harness/plan.py.
_FRESH_CACHED_NEEDS = ("is_program_class", "reset_global_state", "seed_rngs")
# What the whole plan's runner uses of harness/plan.py.
_WHOLE_PLAN_NEEDS = ("CallPlan", "is_program_class")
# Words of a program that let the plan's looks before the first call (at the
# module: has_guard_targets; at the inputs: changeable_inputs, and
# grow_shapes's torch.cat) run the program's own code: such a case keeps the
# whole plan, which looks as the harness does.
_CODE_WHEN_LOOKED_AT = ("__torch_function__", "__torch_dispatch__", "__getattr__", "__getattribute__", "metaclass")
# The fresh/cached runner's lines of the runs.
_FRESH_CACHED_RUNS = (
    ("plan, out = CallPlan(module, module.inputs, calls, last=LAST_CALL), []",
     "plan, out = fresh_and_cached(module.inputs), []"),
    ("return plan.calls, out", "return PLAN, out"),
)
# The runs, after either plan.
_RUNNER_RUNS = """\
    # The runs.
    import contextlib, io, re, sys, types
    from torch._dynamo.utils import same
    def load():  # a fresh copy of this module without the runner's settings: the program as the harness ran it
        module = sys.modules["case"] = types.ModuleType("case")
        module.__file__ = __file__
        with open(__file__) as fh: exec(compile(fh.read(), __file__, "exec"), vars(module))
        for name in RUNNER_SETTINGS: vars(module).pop(name, None)
        return module
    def state(module):  # after the calls: data globals and the public attributes of its classes, their objects' too
        owners = [module] + [v for v in vars(module).values() if is_program_class(v, module)]
        return [[k, dict(vars(v)) if type(v).__module__ == "case" else v] for o in owners for k, v in list(vars(o).items())
                if not k.startswith("_") and not callable(v) and not isinstance(v, (types.ModuleType, property, classmethod, staticmethod))]
    def run(compiled, calls=None):
        module = load()
        fn = torch.compile(module.f, backend=BACKEND, fullgraph=FULLGRAPH) if compiled else module.f
        plan, out = CallPlan(module, module.inputs, calls, last=LAST_CALL), []
        for call, args in plan:
            buf = io.StringIO()
            try:
                with contextlib.redirect_stdout(buf), contextlib.nullcontext() if compiled else torch.compiler.set_stance(
                        "force_eager"):  # eager never passes through Dynamo (torch.cond compiles itself)
                    value = fn(*args)
                    value = list(value) if hasattr(value, "__next__") else value  # a generator runs when drained
            except BaseException as e: value = f"raised {type(e).__name__}: " + re.sub(r" at 0x\\w+", "", str(e).split(chr(10))[0])
            out.append([value, list(args), buf.getvalue(), torch.is_grad_enabled()])
        return plan.calls, out + [state(module)]
    def order(v):  # dicts' key orders and deques' maxlen, which same() does not compare (harness/compare.py does)
        if isinstance(v, dict): return [list(v)] + [o for x in v.values() for o in order(x)]
        if isinstance(v, (list, tuple)): return [o for x in v for o in order(x)]
        return [v.maxlen] + order(list(v)) if type(v).__name__ == "deque" else []
    calls, eager = run(False)
    compiled = run(True, calls)[1]
    print(f"calls:    {', '.join(calls)}\\neager:    {eager}\\ncompiled: {compiled}")
    try: ok = same(eager, compiled, equal_nan=True) and repr(order(eager)) == repr(order(compiled))
    except Exception: ok = repr(eager) == repr(compiled)  # a value same() does not know
    sys.exit(0 if ok else 1)
"""


def compact_runner(last: str | None, body: str, whole_plan: bool | None = None) -> bool:
    """Does the divergence runner for a plan up to call ``last`` of program
    ``body`` make the fresh and cached calls only (harness.plan.decide makes
    those two whatever the module for ``last`` "cached")? ``whole_plan``:
    True for the whole plan, False for the compact runner where ``last``
    allows it, None to decide by the program's words: a program with code
    that the plan's looks before the first call would run
    (``_CODE_WHEN_LOOKED_AT``) gets the whole plan, which looks as the
    harness does (filing tries the compact runner first: fuzz.corpus.filing)."""
    if last != call_plan.Call.CACHED.value or whole_plan:
        return False
    return whole_plan is False or not any(word in body for word in _CODE_WHEN_LOOKED_AT)


def _plan_runner(last: str | None, body: str, whole_plan: bool | None = None) -> str:
    """The divergence runner for a plan up to call ``last`` of program
    ``body``: where ``compact_runner`` says so, the fresh/cached runner with
    only the harness/plan.py functions it uses (``_plan_definitions``);
    otherwise harness/plan.py's CallPlan and what it uses, without
    docstrings (indented into the ``__main__`` block: the module's only
    multi-line strings are docstrings). Both with the names of the runner's
    settings, which each run's copy of the module drops."""
    runs = _RUNNER_RUNS
    if compact_runner(last, body, whole_plan):
        head, code = _RUNNER_FRESH_CACHED, _plan_definitions(_FRESH_CACHED_NEEDS)
        for line, compact in _FRESH_CACHED_RUNS:
            assert line in runs, line  # the two runners' runs differ in these lines only
            runs = runs.replace(line, compact)
    else:
        head, code = _RUNNER_PLAN, _plan_definitions(_WHOLE_PLAN_NEEDS)
    runner = head.replace(_PLAN_MARKER, textwrap.indent(code.strip("\n") + "\n", "    ")) + runs
    return runner.replace("in RUNNER_SETTINGS:", f"in {RUNNER_SETTINGS!r}:")


def _plan_definitions(names: tuple[str, ...]) -> str:
    """The statements of harness/plan.py that define ``names`` and what they
    use, transitively (every name their code reads that the module defines:
    functions, classes, constants, imports), in the module's order, each from
    its source (``inspect.getsource`` for functions and classes, without
    docstring and blank lines); imports cut to the names used. Raises
    KeyError for a name the module does not define."""
    source = inspect.getsource(call_plan)
    statements = ast.parse(source).body[1:]  # after the module docstring
    defining = {name: node for node in statements for name in _defined(node)}
    used: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name not in used:
            used.add(name)
            todo += [n.id for n in ast.walk(defining[name]) if isinstance(n, ast.Name) and n.id in defining]
    parts: list[str] = []
    for node in statements:
        if not used & set(_defined(node)):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            node.names = [alias for alias in node.names if (alias.asname or alias.name.split(".")[0]) in used]
            if isinstance(node, ast.Import) and parts and parts[-1].startswith("import "):
                parts[-1] += ", " + ast.unparse(node).removeprefix("import ")  # one line of plain imports
            else:
                parts.append(ast.unparse(node))
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            parts.append(_without_docstrings(inspect.getsource(getattr(call_plan, node.name))))
        else:
            parts.append(ast.get_source_segment(source, node) or "")
    return "\n".join(part.strip("\n") for part in parts) + "\n"


def _defined(node: ast.stmt) -> list[str]:
    """The module-level names a top-level statement binds."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [alias.asname or alias.name.split(".")[0] for alias in node.names]
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return [t.id for t in targets if isinstance(t, ast.Name)]


def _without_docstrings(source: str) -> str:
    """Function or class ``source`` without its docstrings (its own and its
    methods') and blank lines: harness/plan.py has no other multi-line
    string, so no line of code is taken for a blank one."""
    tree = ast.parse(source)
    drop: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.FunctionDef, ast.ClassDef)) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            drop.update(range(body[0].lineno - 1, body[0].end_lineno or body[0].lineno))
    lines = source.splitlines(keepends=True)
    return "".join(line for i, line in enumerate(lines) if i not in drop and line.strip())


# A hang's runner: a timer thread ends the process with exit 1 (after
# printing every thread's stack) when the compiled calls have not returned
# within HANG_S seconds, so `python CASE` terminates while the bug is there.
# (Not faulthandler.dump_traceback_later(exit=True): its watchdog reads the
# frames without the GIL and crashed the process with SIGSEGV under load; the
# timer thread dumps while holding the GIL, which the hanging tracer, being
# Python code, hands over every switch interval.)
_RUNNER_HANG = '''\
if __name__ == "__main__":  # exit 1, with the stack of the hang, while the compiled calls still do not return
    import faulthandler, os, random, sys, threading
    from torch._dynamo.utils import same
    def call(fn):  # seeded as the harness seeds: inputs() and the call each draw from seed 0
        torch.manual_seed(0); random.seed(0); args = inputs(); torch.manual_seed(0); random.seed(0)
        return fn(*(args if isinstance(args, tuple) else (args,)))  # one value is one argument, as in the harness
    def run(fn):
        try: return [call(fn) for _ in range(2)]
        except BaseException as e: return f"raised {type(e).__name__}: {e}"
    def hung():
        print(f"compiled: no return within {HANG_S} s", flush=True)
        faulthandler.dump_traceback(all_threads=True)
        os._exit(1)
    with torch.compiler.set_stance("force_eager"):  # eager never passes through Dynamo (torch.cond compiles itself)
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
        try: args = inputs(); compiled(*(args if isinstance(args, tuple) else (args,)))  # one value: one argument
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
                device: str = "cpu", meta: dict[str, Any] | None = None, fullgraph: bool = False,
                settings: CompileSettings | None = None, whole_plan: bool | None = None) -> str:
    """The text of a standalone corpus case for ``program`` showing ``signature``.

    Its ``__main__`` block compares, for a divergence, harness.plan's calls up
    to the one the signature names (``divergence_last_call``): return values
    and exceptions, printed text, arguments after each call and grad mode,
    then module globals and class attributes; for a timeout, whether the
    compiled calls return within ``HANG_S`` seconds; for a graph break,
    whether Dynamo still reports that ``gb_type``; otherwise the return values
    or exceptions of two calls. A case found on ``device`` "cuda"
    says so in its table and its ``__main__`` moves the inputs there first.
    Non-default compile ``settings`` (harness.settings) are its table's
    ``compile`` and a ``__main__`` block before the runner that compiles with them.
    ``whole_plan``: a divergence runner's plan (``compact_runner``); True for a compile error
    or crash: the whole plan's runner instead of eager against compiled twice.
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
    if settings is not None and not settings.is_default:
        table["compile"] = settings.to_json()
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
    if settings is not None and not settings.is_default:
        parts.append(settings.runner_block())
    if signature.kind in (GRAPH_BREAK, GRAPH_BREAK_REGRESSION):
        parts.append(f"GB_TYPE = {_toml(signature.cause[1])}\n\n{_RUNNER_GRAPH_BREAK}")
    else:
        if backend in PLANTED_BACKENDS:
            parts.append(PLANTED_BACKENDS[backend].rstrip("\n") + f"\n\nBACKEND = {backend}")
        else:
            parts.append(f"BACKEND = {_toml(backend)}")
        parts[-1] += f"\nFULLGRAPH = {fullgraph}"
        if signature.kind == "divergence" or whole_plan:  # a compile error or crash of a later call: whole plan
            last = divergence_last_call(signature) if signature.kind == "divergence" else None
            parts.append(f"LAST_CALL = {_toml(last) if last else None}  # the plan's calls are made up to this one"
                         f" (None: all)\n\n{_plan_runner(last, body, whole_plan)}")
        elif signature.kind == "timeout":
            parts.append(f"HANG_S = {HANG_S:g}  # seconds the compiled calls may take before the case counts as hanging"
                         f"\n\n{_RUNNER_HANG}")
        else:
            parts.append(_RUNNER_VALUE)
    return "\n\n\n".join(p.strip("\n") for p in parts) + "\n"


def render_case_runners(program: Program, signature: Signature, **kwargs: Any) -> list[str]:
    """The texts ``render_case(program, signature, **kwargs)`` may take, in
    the order filing tries them (fuzz.corpus.filing.file_case): for a
    divergence up to the cached call whose program has code that the plan's
    looks would run, the compact runner first and the whole plan after (the
    looks rarely matter, and the compact case is about 250 lines shorter);
    for a compile error or crash, eager against compiled twice each first and
    the whole plan after (an error of the guard, shape or carried call: the
    default campaign of 2026-12-05 could file neither of its two compile
    errors, both of the guard call); otherwise the one text."""
    last = divergence_last_call(signature) if signature.kind == "divergence" else None
    body = program_body(program.source)
    if signature.kind == "divergence" and not compact_runner(last, body) and compact_runner(last, body, False):
        return [render_case(program, signature, whole_plan=whole, **kwargs) for whole in (False, True)]
    if signature.kind in ("compile-error", "crash"):
        return [render_case(program, signature, **kwargs), render_case(program, signature, whole_plan=True, **kwargs)]
    return [render_case(program, signature, **kwargs)]


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
    ``[tool.tcfuzz]`` table kept as it is, and the compact runner where it
    has one (filing chose it: it reproduces). Raises CaseFileError for a text
    without a table, ValueError for a malformed signature."""
    table = casefile.read_table(text)
    whole_plan = False if "def fresh_and_cached(" in text else None
    if not table:
        raise casefile.CaseFileError("not a corpus case: it has no [tool.tcfuzz] table")
    signature = Signature.parse(str(table["signature"]))
    if signature.kind != "divergence" and "\nLAST_CALL = " in text:
        whole_plan = True  # a compile error or crash that filing found with the whole plan only
    fresh = render_case(Program(text), signature, backend=str(table["backend"]),
                        torch_version=str(table.get("torch", casefile.DEFAULT_TORCH)),
                        device=str(table.get("device", "cpu")), fullgraph=bool(table.get("fullgraph", False)),
                        settings=CompileSettings.from_json(table.get("compile")), whole_plan=whole_plan)
    return casefile.replace_table(fresh, table)
