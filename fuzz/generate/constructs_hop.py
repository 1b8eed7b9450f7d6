"""Constructs over higher-order operators with Python around their functions.

Registered constructs (see ``fuzz.generate.registry``): ``torch.cond`` with
branch functions written in ``f`` (``def`` or ``lambda``, one maybe a nested
``cond``) that read a closed-over tensor, a global, an object's attribute or
the int ``n``; ``while_loop`` whose condition reads ``n`` and whose body
reads a closure; ``map`` over t0's leading dim with an extra operand; a
module-level ``torch.compiler.nested_compile_region`` function that reads a
global and an object, called two or three times (maybe a list append inside
it; never a graph break, which torch refuses by design); ``torch.utils.checkpoint.checkpoint`` and
``torch.vmap`` over functions that append to a list, count calls on an
object or break the graph; ``torch.func.grad`` of a closure's sum. Also
user ``torch.autograd.Function`` subclasses (a ctx attribute and saved
tensors; the ``setup_context`` form) applied in ``f``, their backward run by
``torch.autograd.grad``; ``torch.func.vjp`` and ``jvp``. Dynamo
models them in ``torch/_dynamo/variables/higher_order_ops.py`` (speculating
each function as a subgraph, lifting its free variables, refusing side
effects it cannot replay) and ``variables/invoke_subgraph.py``.

Every function a ``cond``, ``while_loop`` or ``map`` traces is pure: eager
``torch.cond`` itself compiles its branches with ``fullgraph=True``, so a
side effect there is an error in eager code too. Operands are detached
t0-shaped values, so both branches return t0's shape and dtype and no
operator here needs autograd through a higher-order op. Every body ends in
``tanh``/``sin``/``sigmoid`` (|value| <= 1); a ``cond`` predicate is a count
of ``x > c`` or a condition on ints, never a float that rounding could move.
"""

from __future__ import annotations

from fuzz.generate.prelude import helper, imported
from fuzz.generate.registry import StatementWriter, construct
from fuzz.generate.scope import Scope

_CHECKPOINT = imported("torch.utils.checkpoint")
_WHILE_LOOP = helper("while_loop", "from torch._higher_order_ops import while_loop")
_MAP = helper("hop_map", "from torch._higher_order_ops.map import map as hop_map")
# What a higher-order operator's function reads (HOP_SCALE, k) and counts (calls).
_STATE = helper("HopState", '''
    HOP_SCALE = 0.5


    class HopState:
        def __init__(self, k):
            self.k, self.calls = k, 0
''')
# nested_compile_region functions: pure, appending to a list, breaking the graph.
_REGIONS = {
    "pure": helper("region", '''
        @torch.compiler.nested_compile_region
        def region(x, y, state):
            return torch.tanh(x * HOP_SCALE + y * state.k)
    ''', needs=("HopState",)),
    "logged": helper("region_logged", '''
        @torch.compiler.nested_compile_region
        def region_logged(x, log):
            log.append(x.shape[0])
            return torch.sin(x) * HOP_SCALE
    ''', needs=("HopState",)),
}
# No region with a graph break inside: torch raises UncapturedHigherOrderOpError for it
# by design ("doesn't work unless it is captured completely"), while eager runs it.

# torch.autograd.Function subclasses: a ctx attribute and a saved output; the
# setup_context form with a saved input and a clipped gradient.
_AUTOGRAD = helper("ScaledTanh", '''
    class ScaledTanh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k, y = k, torch.tanh(x * k)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * (1 - y * y) * ctx.k, None


    class ClipGrad(torch.autograd.Function):
        @staticmethod
        def forward(x): return x.clamp(-2.0, 2.0)

        @staticmethod
        def setup_context(ctx, inputs, output): ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, grad): return grad * (ctx.saved_tensors[0].abs() <= 2.0) * 0.5
''')

# Element-wise bodies over the operand `{a}` and a read `{r}` (|r| <= 4): |value| <= 1.
_BODIES = ("torch.tanh({a} * 0.5 + {r})", "torch.sin({a} + {r})", "torch.sigmoid({a} * {r})",
           "torch.tanh({a} - {r} * 0.25)")


def _operand(w: StatementWriter, scope: Scope) -> str:
    """A detached value of t0's shape and dtype, |value| <= 3 (float32, no grad)."""
    return f"(t0 * 0.0 + {w.squashed(scope, 1)}).detach()"


def _reads(w: StatementWriter, scope: Scope, kinds: tuple[str, ...] = ("closure", "global", "object", "int")) -> str:
    """What a function closes over, with the line that binds it written first:
    one of ``kinds``: a detached tensor of ``scope`` ("closure"), the global
    HOP_SCALE, a fresh HopState's ``k`` ("object") or the int ``n``. |value| <= 4."""
    w.need(_STATE)
    kind = w.pick(kinds)
    if kind == "closure":
        k = w.fresh("k")
        w.emit(scope, f"{k} = {w.atom(scope)}.detach()")
        return k
    if kind == "object":
        return f"{_state(w, scope)}.k"
    return "HOP_SCALE" if kind == "global" else "(n * 0.25)"


def _function(w: StatementWriter, scope: Scope, name: str, params: str, body: str) -> None:
    """``def name(params): return body`` or ``name = lambda params: body``."""
    if w.chance(60):
        w.emit(scope, f"{name} = lambda {params}: {body}")
    else:
        w.emit(scope, f"def {name}({params}):")
        w.emit(scope, f"return {body}", 1)


def _state(w: StatementWriter, scope: Scope) -> str:
    """A fresh HopState whose k is a small Python int; returns its name. (Not a
    float: eager torch.cond and while_loop compile their functions, and once a
    recompile makes a closed-over float a SymFloat, their check of the
    functions' inputs refuses it, torch 2.15.0.)"""
    w.need(_STATE)
    state = w.fresh("state")
    w.emit(scope, f"{state} = HopState({w.pick((1, 2, -1))})")
    return state


@construct("hop-cond", weight=2, features={
    "hop-cond": "torch.cond with def/lambda branches that read closures, globals, object attributes and n; "
                "maybe a cond nested in a branch",
})
def hop_cond(w: StatementWriter, scope: Scope) -> None:
    """``torch.cond(pred, true_fn, false_fn, (x,))`` with branches written in ``f``."""
    w.features.update({"hop-cond", "closure"})
    read = _reads(w, scope)
    a, x = w.fresh("a"), w.fresh("x")
    yes, no = w.fresh("true_fn"), w.fresh("false_fn")
    _function(w, scope, yes, a, w.pick(_BODIES).format(a=a, r=read))
    if w.chance(30):
        inner = w.pick(("n % 2 == 0", f"{a}.shape[0] > 1"))
        _function(w, scope, no, a, f"torch.cond({inner}, {yes}, torch.cos, ({a},))")
    else:
        _function(w, scope, no, a, f"torch.cos({a}) * HOP_SCALE")
    w.emit(scope, f"{x} = {_operand(w, scope)}")
    predicate = w.tensor_condition(scope) if w.chance(60) else w.python_condition(scope)
    w.put(scope, f"torch.cond({predicate}, {yes}, {no}, ({x},))", 1.0)
    w.maybe_break(scope, 0, 25)


@construct("hop-while-loop", weight=2, features={
    "hop-while-loop": "while_loop whose condition reads n and whose body reads a closure, a global or an object",
})
def hop_while_loop(w: StatementWriter, scope: Scope) -> None:
    """``i, x = while_loop(cond_fn, body_fn, (torch.tensor(0), x))``, at most n iterations."""
    w.features.update({"hop-while-loop", "closure"})
    w.need(_WHILE_LOOP)
    read = _reads(w, scope)
    i, a, x = w.fresh("i"), w.fresh("a"), w.fresh("x")
    cond_fn, body_fn = w.fresh("cond_fn"), w.fresh("body_fn")
    limit = w.pick(("n", "2", "n - 1"))
    _function(w, scope, cond_fn, f"{i}, {a}", f"{i} < {limit}")
    body = w.pick(_BODIES).format(a=a, r=read)
    w.emit(scope, f"def {body_fn}({i}, {a}):")
    w.emit(scope, f"return {i} + 1, {body}", 1)
    w.emit(scope, f"{x} = {_operand(w, scope)}")
    w.emit(scope, f"{i}, {x} = while_loop({cond_fn}, {body_fn}, (torch.tensor(0), {x}))")
    w.put(scope, f"{x} * ({i} + 1) * 0.25", 1.5)
    w.features.add("print")
    w.emit(scope, f"print(int({i}))")


@construct("hop-map", weight=2, features={
    "hop-map": "the map higher-order operator over t0's leading dim, with an extra operand and a closure",
})
def hop_map(w: StatementWriter, scope: Scope) -> None:
    """``hop_map(fn, x, extra)``: fn over each row of a t0-shaped value."""
    w.features.update({"hop-map", "closure"})
    w.need(_MAP)
    # not a tensor: one row's result would broadcast out of the row's shape
    read = _reads(w, scope, ("global", "object", "int"))
    row, extra, fn = w.fresh("row"), w.fresh("c"), w.fresh("row_fn")
    _function(w, scope, fn, f"{row}, {extra}", f"torch.tanh({row} * {extra} + {read})")
    w.put(scope, f"hop_map({fn}, {_operand(w, scope)}, {w.pick(('0.5', '-0.25', 'HOP_SCALE'))})", 1.0)


@construct("nested-compile-region", weight=2, features={
    "nested-compile-region": "a torch.compiler.nested_compile_region function that reads a global and an object, "
                             "called two or three times; maybe a list append inside it",
})
def nested_compile_region(w: StatementWriter, scope: Scope) -> None:
    """Calls of one nested_compile_region helper, with the same shapes and others."""
    w.features.add("nested-compile-region")
    form = w.pick(tuple(_REGIONS))
    w.need(_REGIONS[form])
    first = w.fresh("r")
    if form == "pure":
        state = _state(w, scope)
        x, y = _operand(w, scope), w.squashed(scope, 1)
        w.emit(scope, f"{first} = region({x}, torch.tanh(t0 * 0.0 + {y}), {state})")
        second = f"region({first}, {first}, {state})"
    else:
        log = w.fresh("log")
        w.emit(scope, f"{log} = []")
        w.emit(scope, f"{first} = region_logged({_operand(w, scope)}, {log})")
        second = f"region_logged({first} * 2.0, {log}) + len({log})"
    if w.chance(40):
        # another shape: a region of its own (the leading row of t0)
        w.emit(scope, f"{first} = {first} + {second.replace(first, first + '[:1]', 1)}")
    w.put(scope, f"{first} + {second}", 12.0)


@construct("checkpoint-python", weight=2, features={
    "checkpoint-python": "torch.utils.checkpoint.checkpoint (non-reentrant) over a function that reads a closure "
                         "and maybe appends to a list, counts on an object or breaks the graph",
})
def checkpoint_python(w: StatementWriter, scope: Scope) -> None:
    """``checkpoint(fn, x, use_reentrant=False)`` with Python side effects in fn."""
    w.features.update({"checkpoint-python", "closure"})
    w.need(_CHECKPOINT)
    read = _reads(w, scope)
    a, fn = w.fresh("a"), w.fresh("ck")
    effect = w.pick(("none", "append", "count", "break"))
    log = w.fresh("log")
    if effect == "append":
        w.emit(scope, f"{log} = []")
    state = _state(w, scope) if effect == "count" else ""
    w.emit(scope, f"def {fn}({a}):")
    if effect == "append":
        w.emit(scope, f"{log}.append({a}.ndim)", 1)
    elif effect == "count":
        w.emit(scope, f"{state}.calls += 1", 1)
    elif effect == "break":
        w.features.add("graph-break")
        w.emit(scope, "torch._dynamo.graph_break()", 1)
    w.emit(scope, f"return {w.pick(_BODIES).format(a=a, r=read)}", 1)
    w.put(scope, f"torch.utils.checkpoint.checkpoint({fn}, {w.pick(scope.tensors)}, use_reentrant=False)", 1.0)
    if effect in ("append", "count"):
        w.features.add("print")
        shown = f"len({log})" if effect == "append" else f"{state}.calls"
        w.emit(scope, f"print({shown})")


@construct("functorch-python", weight=2, features={
    "functorch-python": "torch.vmap over a function that reads an object or n and maybe counts its calls; "
                        "torch.func.grad of a closure's sum; torch.func.vjp and jvp",
})
def functorch_python(w: StatementWriter, scope: Scope) -> None:
    """``torch.vmap(fn)(x)``, ``torch.func.grad(fn)(x)``, ``vjp`` or ``jvp`` of a function written in ``f``."""
    w.features.update({"functorch-python", "closure"})
    form = w.pick(("vmap", "grad", "vjp", "jvp"))
    vmap = form == "vmap"
    read = _reads(w, scope, ("global", "object", "int") if vmap else ("closure", "global", "object", "int"))
    a, fn = w.fresh("a"), w.fresh("fn")
    x = _operand(w, scope)
    if vmap:
        counted = w.chance(40)
        state = _state(w, scope) if counted else ""
        w.emit(scope, f"def {fn}({a}):")
        if counted:
            w.emit(scope, f"{state}.calls += 1", 1)
        w.emit(scope, f"return {w.pick(_BODIES).format(a=a, r=read)}", 1)
        dim = w.pick(("0", "-1"))
        w.put(scope, f"torch.vmap({fn}, in_dims={dim}, out_dims={dim})({x})", 1.0)
        if counted:
            w.features.add("print")
            w.emit(scope, f"print({state}.calls)")
    elif form == "grad":
        w.features.add("reduction")
        body = w.pick(("torch.sin({a} * {r}).sum()", "torch.tanh({a} + {r}).sum()"))
        _function(w, scope, fn, a, body.format(a=a, r=read))
        # d/da of sin(a * r) is r * cos(a * r): |value| <= |r| <= 4
        w.put(scope, f"torch.func.grad({fn})({x})", 4.0)
    else:
        _function(w, scope, fn, a, w.pick(_BODIES).format(a=a, r=read))
        out, other = w.fresh("out"), w.fresh("g")
        if form == "vjp":
            w.emit(scope, f"{out}, {other} = torch.func.vjp({fn}, {x})")
            w.emit(scope, f"({other},) = {other}(torch.ones_like({out}))")
        else:
            w.emit(scope, f"{out}, {other} = torch.func.jvp({fn}, ({x},), (torch.ones_like({x}),))")
        # a body's derivative is at most 4 (|r| <= 4) times 1
        w.put(scope, f"{out} + {other} * 0.25", 2.0)


@construct("autograd-function", weight=2, features={
    "autograd-function": "a user torch.autograd.Function (ctx attributes, saved tensors, the setup_context form) "
                         "applied in f, its backward run by torch.autograd.grad",
})
def autograd_function(w: StatementWriter, scope: Scope) -> None:
    """``y = ScaledTanh.apply(x, k)`` (or ``ClipGrad.apply(x)``), maybe with its gradient."""
    w.features.add("autograd-function")
    w.need(_AUTOGRAD)
    y = w.fresh("y")
    leaf = w.fresh("leaf")
    w.emit(scope, f"{leaf} = {_operand(w, scope)}.requires_grad_(True)")
    call = w.pick((f"ScaledTanh.apply({leaf}, {w.pick(('n', '0.5', '-1'))})", f"ClipGrad.apply({leaf})"))
    if w.chance(60):
        w.features.add("reduction")
        g = w.fresh("g")
        # grad mode on: the construct may be drawn inside a no_grad block
        w.emit(scope, "with torch.enable_grad():")
        w.emit(scope, f"{y} = {call}", 1)
        w.maybe_break(scope, 1, 25)
        w.emit(scope, f"({g},) = torch.autograd.grad({y}.sum(), {leaf})", 1)
        # ScaledTanh's gradient is at most |k| <= 4; ClipGrad's 0.5
        w.put(scope, f"{y}.detach() + {g} * 0.25", 3.0)
    else:
        w.emit(scope, f"{y} = {call}")
        w.put(scope, f"{y}.detach()", 2.0)
