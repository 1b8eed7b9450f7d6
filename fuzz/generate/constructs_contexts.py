"""Constructs over the context managers Dynamo models.

Registered constructs (see ``fuzz.generate.registry``): autocast nested in
autocast and mixed with grad modes (on element-wise ops, whose dtype
autocast leaves alone, so eager and compiled stay within tolerance), the
autocast state read inside; ``inference_mode`` with views made inside it
and read outside; ``set_grad_enabled`` called as a function and restored,
and a ``no_grad`` decorator; ``contextlib.ExitStack`` with callbacks and
entered contexts, ``contextlib.suppress`` and ``nullcontext``; a user
``__exit__`` that swallows an exception or replaces it with another; and the
other managers Dynamo has a variable for (``record_function``,
``catch_warnings``, ``DisableTorchFunction(Subclass)``,
``disable_saved_tensors_hooks``, forward-AD ``dual_level``, ``sdpa_kernel``,
fx ``annotate``, ``error_on_graph_break``, a device context), each around
the op it is about; and a grad mode entered by explicit ``__enter__``/
``__exit__`` calls, or applied in ``f`` as a decorator (context-protocol).
Dynamo models them in
``torch/_dynamo/variables/ctx_manager.py``.
"""

from __future__ import annotations

from fuzz.generate.prelude import helper, imported
from fuzz.generate.registry import StatementWriter, construct
from fuzz.generate.scope import Scope

# Element-wise expressions over one tensor, |value| <= 2 (autocast keeps their dtype).
_ELEMENTWISE = ("torch.tanh({0} * 0.5)", "({0}.abs() * 0.5)", "torch.sigmoid({0})", "{0}.clamp(-2.0, 2.0)")

_NO_GRAD_FN = helper("no_grad_scale", '''
    @torch.no_grad()
    def no_grad_scale(x, k):
        return torch.tanh(x * k), torch.is_grad_enabled()
''')
_REPLACE = helper("Replace", '''
    class Replace:
        """Turns a ValueError into a KeyError carrying its message; swallows IndexError."""

        def __init__(self):
            self.seen = []

        def __enter__(self):
            self.seen.append("enter")
            return self

        def __exit__(self, exc_type, exc, tb):
            self.seen.append("exit" if exc_type is None else exc_type.__name__)
            if exc_type is ValueError:
                raise KeyError(str(exc)) from exc
            return exc_type is IndexError
''')


@construct("autocast-nested", weight=2, features={
    "autocast-nested": "torch.autocast nested (enabled/disabled, cpu bfloat16) and mixed with grad modes",
})
def autocast_nested(w: StatementWriter, scope: Scope) -> None:
    """``with torch.autocast("cpu"):`` around a nested autocast or a grad mode; its state printed."""
    w.features.update({"autocast-nested", "print"})
    outer = w.pick(('torch.autocast("cpu", dtype=torch.bfloat16)', 'torch.autocast("cpu", enabled=n > 2)',
                    'torch.autocast(device_type="cpu", enabled=False)'))
    inner = w.pick(('torch.autocast("cpu", enabled=False)', 'torch.autocast("cpu", dtype=torch.bfloat16)',
                    "torch.enable_grad()", "torch.set_grad_enabled(n % 2 == 0)"))
    on = w.fresh("on")
    w.emit(scope, f"with {outer}:")
    w.emit(scope, f"{w.target(scope)} = torch.tanh({w.atom(scope)} * 0.5)", 1)
    w.maybe_break(scope, 1, 30)
    w.emit(scope, f"with {inner}:", 1)
    body = scope.block()
    body.indent = scope.indent + 2
    w.emit(body, f'{on} = torch.is_autocast_enabled("cpu")')
    # element-wise ops only: autocast leaves their dtype alone
    for _ in range(w.count((1, 2))):
        w.emit(body, f"{w.target(scope)} = {w.pick(_ELEMENTWISE).format(w.atom(scope))}")
        w.maybe_break(body, 0, 20)
    w.emit(scope, f'print({on}, torch.is_autocast_enabled("cpu") is False)')


@construct("inference-mode", weight=2, features={
    "inference-mode": "torch.inference_mode (and inference_mode(False)) with a view made inside, read outside",
})
def inference_mode(w: StatementWriter, scope: Scope) -> None:
    """A tensor and a view of it made in inference mode, used (not mutated) after it."""
    w.features.update({"inference-mode", "print"})
    made, view = w.fresh("inf"), w.fresh("view")
    w.emit(scope, "with torch.inference_mode():")
    w.emit(scope, f"{made} = torch.tanh({w.atom(scope)} * 0.5)", 1)
    # any tensor of f may be 0-dim; .t() only where t0 (so every tensor) has at most 2 dims
    views = (".unsqueeze(0)", ".view(-1)[:1]", "[...]", ".t()" if len(w.shape) <= 2 else ".detach()")
    w.emit(scope, f"{view} = {made}{w.pick(views)}", 1)
    if w.chance(30):
        w.emit(scope, "with torch.inference_mode(False):", 1)
        w.emit(scope, f"{made} = {made} * 1.0", 2)
    w.maybe_break(scope, 1, 30)
    flags = w.fresh("flags")
    w.emit(scope, f"{flags} = ({made}.is_inference(), {view}.is_inference(), torch.is_inference_mode_enabled())")
    w.emit(scope, f"print({flags})")
    w.put(scope, f"({made} + {view}.sum() * 0.0)", 1.0)
    w.features.add("reduction")


@construct("grad-enabled-call", weight=2, features={
    "grad-enabled-call": "torch.set_grad_enabled(False) called as a function and restored; a @no_grad() function",
})
def grad_enabled_call(w: StatementWriter, scope: Scope) -> None:
    """Grad mode switched by a call (not a with), across a graph break, then restored."""
    w.features.update({"grad-enabled-call", "print"})
    prev = w.fresh("prev")
    if w.chance(50):
        w.emit(scope, f"{prev} = torch.is_grad_enabled()")
        w.emit(scope, "torch.set_grad_enabled(False)")
        w.put(scope, f"({w.atom(scope)} * 0.5)", 2.0)
        w.maybe_break(scope, 0, 40)
        w.emit(scope, "print(torch.is_grad_enabled())")
        w.emit(scope, f"torch.set_grad_enabled({prev})")
    else:
        w.need(_NO_GRAD_FN)
        w.emit(scope, f"_scaled, {prev} = no_grad_scale({w.atom(scope)}, {w.pick(scope.ints)} * 0.25)")
        w.maybe_break(scope, 0, 30)
        w.put(scope, "_scaled", 1.0)
        w.emit(scope, f"print({prev}, torch.is_grad_enabled())")


@construct("exit-stack", weight=2, features={
    "exit-stack": "contextlib.ExitStack with callbacks and entered contexts, suppress, nullcontext",
})
def exit_stack(w: StatementWriter, scope: Scope) -> None:
    """contextlib's managers: an ExitStack unwinding callbacks, a suppress, a nullcontext."""
    w.features.update({"exit-stack", "print"})
    w.need("contextlib")
    form = w.pick(("stack", "suppress", "nullcontext"))
    log = w.fresh("unwound")
    if form == "stack":
        stack = w.fresh("stack")
        w.emit(scope, f"{log} = []")
        w.emit(scope, f"with contextlib.ExitStack() as {stack}:")
        w.emit(scope, f"{stack}.callback({log}.append, 1)", 1)
        w.emit(scope, f"{stack}.enter_context({w.pick(('torch.no_grad()', 'torch.enable_grad()', 'contextlib.nullcontext()'))})", 1)
        w.emit(scope, f"{stack}.callback({log}.append, n)", 1)
        w.maybe_break(scope, 1, 30)
        w.put(scope, f"({w.atom(scope)} * 0.5)", 2.0, 1)
        w.emit(scope, f"print({log}, torch.is_grad_enabled())")
    elif form == "suppress":
        seq = w.fresh("seq")
        w.emit(scope, f"{seq} = [{w.tensors(scope, 2)}]")
        w.emit(scope, "with contextlib.suppress(IndexError, KeyError):")
        w.put(scope, f"{seq}[0]", 4.0, 1)
        w.maybe_break(scope, 1, 30)
        w.put(scope, f"{seq}[n]", 4.0, 1)
        w.emit(scope, f'print("suppressed", len({seq}))')
    else:
        v = w.fresh("v")
        w.emit(scope, f"with contextlib.nullcontext({w.atom(scope)}) as {v}:")
        w.maybe_break(scope, 1, 30)
        w.put(scope, f"({v} * 0.5)", 2.0, 1)
        w.emit(scope, f'print("null", {v}.shape)')


@construct("exit-replaces", weight=2, features={
    "exit-replaces": "a user __exit__ that swallows one exception and replaces another (raise ... from)",
})
def exit_replaces(w: StatementWriter, scope: Scope) -> None:
    """``with Replace():`` around a raise: an IndexError swallowed, a ValueError turned into KeyError."""
    w.features.update({"exit-replaces", "try-except", "raise", "print"})
    w.need(_REPLACE)
    cm = w.fresh("cm")
    raised = w.pick(("ValueError", "IndexError"))
    w.emit(scope, f"{cm} = Replace()")
    w.emit(scope, "try:")
    w.emit(scope, f"with {cm}:", 1)
    w.put(scope, f"({w.atom(scope)} * 0.5)", 2.0, 2)
    w.maybe_break(scope, 2, 30)
    w.emit(scope, f'raise {raised}("r{w.index(9)}")', 2)
    w.emit(scope, "except (KeyError, ValueError, IndexError) as e:")
    w.emit(scope, "print(type(e).__name__, e.args, type(e.__cause__).__name__)", 1)
    w.emit(scope, f"print({cm}.seen)")


_WARNINGS = imported("warnings")
_SDPA = helper("sdpa_kernel", "from torch.nn.attention import SDPBackend, sdpa_kernel")
_FORWARD_AD = helper("fwAD", "import torch.autograd.forward_ad as fwAD")
# The other context managers Dynamo models (ctx_manager.py's variables), with
# the prelude helper each needs: header, helper.
_TORCH_CONTEXTS: tuple[tuple[str, str | None], ...] = (
    ('torch.autograd.profiler.record_function("tcfuzz")', None),
    ('torch.profiler.record_function("tcfuzz")', None),
    ("warnings.catch_warnings()", _WARNINGS),
    ("torch._C.DisableTorchFunctionSubclass()", None),
    ("torch._C.DisableTorchFunction()", None),
    ('torch.autograd.graph.disable_saved_tensors_hooks("tcfuzz")', None),
    ("fwAD.dual_level()", _FORWARD_AD),
    ("sdpa_kernel(SDPBackend.MATH)", _SDPA),
    ('torch.fx.traceback.annotate({"stage": n})', None),
    ("torch._dynamo.error_on_graph_break(False)", None),
    ('torch.device("cpu")', None),
)


@construct("torch-contexts", weight=2, compound=True, features={
    "torch-contexts": "the other context managers Dynamo models: record_function, catch_warnings, "
                      "DisableTorchFunction(Subclass), disable_saved_tensors_hooks, forward-AD dual_level, "
                      "sdpa_kernel, fx annotate, error_on_graph_break, a device context; maybe two in one with "
                      "statement; a graph break inside",
})
def torch_contexts(w: StatementWriter, scope: Scope) -> None:
    """``with <context>:`` around an op the context is about, a graph break and a body."""
    w.features.add("torch-contexts")
    header, need = w.pick(_TORCH_CONTEXTS)
    if need is not None:
        w.need(need)
    t = w.target(scope)
    if w.chance(40):
        # a second manager entered by the same statement (exited first): one whose body
        # needs nothing of its own, so the first one's body fits both
        other = w.pick([name for name, needs in _TORCH_CONTEXTS
                        if name != header and needs is None and not name.startswith("torch.device")])
        header = f"{header}, {other}"
    w.emit(scope, f"with {header}:")
    x = f"(t0 * 0.0 + {w.atom(scope)}.clamp(-3.0, 3.0))"
    if header.startswith("warnings."):
        w.emit(scope, 'warnings.simplefilter("ignore")', 1)
        w.put(scope, f"{x} * 0.5", 1.5, 1)
    elif header.startswith("fwAD."):
        dual = w.fresh("dual")
        w.emit(scope, f"{dual} = fwAD.make_dual({x}, torch.ones_like(t0))", 1)
        # d/dx sin(x) with tangent 1: cos(x), |value| <= 1
        w.put(scope, f"fwAD.unpack_dual(torch.sin({dual})).tangent", 1.0, 1)
    elif header.startswith("sdpa_kernel"):
        q = w.fresh("q")
        w.emit(scope, f"{q} = {x}.reshape(1, 1, -1, 1)", 1)
        # an average of the values: |value| <= 3
        w.put(scope, f"torch.nn.functional.scaled_dot_product_attention({q}, {q}, {q}).reshape(t0.shape)", 3.0, 1)
    elif header.startswith("torch.device"):
        w.put(scope, f"torch.ones(t0.shape) * {x} * 0.5", 1.5, 1)
    else:
        w.emit(scope, f"{t} = torch.tanh({x} * 0.5)", 1)
    w.maybe_break(scope, 1, 40)
    w.body(scope.block(), (0, 1))


# Grad-mode managers for context-protocol: the mode each leaves inside.
_GRAD_MANAGERS = ("torch.no_grad()", "torch.enable_grad()", "torch.set_grad_enabled(n > 2)")


@construct("context-protocol", weight=2, features={
    "context-protocol": "a grad-mode manager entered and exited by explicit __enter__/__exit__ calls across a "
                        "graph break; a manager applied in f as a decorator, by a call or by @ on a nested def",
})
def context_protocol(w: StatementWriter, scope: Scope) -> None:
    """The context-manager protocol without a ``with`` statement: explicit
    ``__enter__``/``__exit__``, or a manager wrapping a function made in ``f``;
    the grad mode seen inside printed."""
    w.features.update({"context-protocol", "print"})
    # explicit __enter__ is a graph break on torch 2.15 (a skipped function), so rarer
    forms = [("call", 2), ("decorator", 2), ("explicit", 1)]
    for _ in range(2 if w.chance(50) else 1):
        form = w.weighted(forms)
        forms = [entry for entry in forms if entry[0] != form]
        # set_grad_enabled(...) sets the mode when called: as a decorator it
        # would leave it set for the rest of f, so it is entered explicitly only
        manager = w.pick(_GRAD_MANAGERS if form == "explicit" else _GRAD_MANAGERS[:2])
        if form == "explicit":
            cm = w.fresh("cm")
            w.emit(scope, f"{cm} = {manager}")
            w.emit(scope, f"{cm}.__enter__()")
            w.put(scope, f"torch.tanh({w.atom(scope)} * 0.5)", 1.0)
            w.maybe_break(scope, 0, 40)
            w.emit(scope, "print(torch.is_grad_enabled())")
            w.emit(scope, f"{cm}.__exit__(None, None, None)")
            continue
        w.features.add("closure")
        inner, out, seen = w.fresh("inner"), w.fresh("out"), w.fresh("seen")
        if form == "decorator":
            w.emit(scope, f"@{manager}")
        w.emit(scope, f"def {inner}(x, k):")
        w.emit(scope, "return torch.tanh(x * k), torch.is_grad_enabled()", 1)
        call = f"{manager}({inner})" if form == "call" else inner
        w.emit(scope, f"{out}, {seen} = {call}({w.atom(scope)}, 0.5)")
        w.maybe_break(scope, 0, 25)
        w.put(scope, out, 1.0)
        w.emit(scope, f"print({seen}, torch.is_grad_enabled())")
