"""Constructs over higher-order operators with Python around their functions.

Registered constructs (see ``fuzz.generate.registry``): ``torch.cond`` with
branch functions written in ``f`` (``def`` or ``lambda``, one maybe a nested
``cond``) that read a closed-over tensor, a global, an object's attribute or
the int ``n``; ``while_loop`` whose condition reads ``n`` and whose body
reads a closure; ``map`` over t0's leading dim with an extra operand;
``scan`` with a carry (leading or last dim, maybe reversed, maybe over a
pair of inputs) and ``associative_scan`` (``generic`` mode); ``torch.switch``
over two or three branches; a module-level
``torch.compiler.nested_compile_region`` function that reads a global and an
object, called two or three times (maybe a list append inside it, or
tensor-only with a pair returned and a same-shape second call; never a graph
break, which torch refuses by design); ``torch.utils.checkpoint.checkpoint`` and
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
_SCAN = helper("scan", "from torch._higher_order_ops.scan import scan")
_ASSOCIATIVE_SCAN = helper("associative_scan", "from torch._higher_order_ops.associative_scan import associative_scan")
# torch.switch is new in torch 2.13; on older torch (2.12.0, the last with a 3.13t wheel)
# the helper indexes the branches in Python, clamping the index as torch.switch does.
_SWITCH = helper("switch", '''
    try:
        from torch._higher_order_ops.switch import switch
    except ImportError:
        def switch(index, branches, operands):
            return branches[max(0, min(int(index), len(branches) - 1))](*operands)
''')
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
    "tensors": helper("region_pair", '''
        @torch.compiler.nested_compile_region
        def region_pair(x, y, scale=HOP_SCALE):
            return torch.tanh(x * scale + y), torch.sin(y - x) * scale
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
    if form == "tensors":
        _region_pairs(w, scope)
        return
    if form == "pure":
        state = _state(w, scope)
        x, y = _operand(w, scope), w.squashed(scope, 1)
        w.emit(scope, f"{first} = region({x}, torch.tanh(t0 * 0.0 + {y}), {state})")
        # not region(first, first, ...): one tensor passed as two inputs is an aliasing
        # graph break torch documents (gb0040), not a finding
        second = f"region({first}, {first} * 0.5, {state})"
    else:
        log = w.fresh("log")
        w.emit(scope, f"{log} = []")
        w.emit(scope, f"{first} = region_logged({_operand(w, scope)}, {log})")
        second = f"region_logged({first} * 2.0, {log}) + len({log})"
    if w.chance(40):
        # another shape: a region of its own (the leading row of t0)
        w.emit(scope, f"{first} = {first} + {second.replace(first, first + '[:1]', 1)}")
    w.put(scope, f"{first} + {second}", 12.0)


def _region_pairs(w: StatementWriter, scope: Scope) -> None:
    """Two (or three) calls of the tensor-only region ``region_pair(x, y)``, the
    second with the same shapes (a reuse of the first call's subgraph), maybe
    with ``scale`` as a keyword, maybe a third on the leading row (a new shape).
    Each call returns two t0-shaped tensors, |value| <= 1."""
    x, y = w.fresh("x"), w.fresh("y")
    a, b = w.fresh("a"), w.fresh("b")
    w.emit(scope, f"{x}, {y} = {_operand(w, scope)}, {_operand(w, scope)}")
    w.emit(scope, f"{a}, {b} = region_pair({x}, {y})")
    scale = w.pick(("", ", scale=0.25", ", 2.0"))
    w.maybe_break(scope, 0, 20)
    w.emit(scope, f"{a}, {b} = region_pair({b}, {a}{scale})")
    if w.chance(40):
        row = w.fresh("row")
        w.emit(scope, f"{row}, _ = region_pair({a}[:1], {b}[:1])")
        w.put(scope, f"{a} + {b} + {row}", 3.0)
    else:
        w.put(scope, f"{a} + {b}", 2.0)


@construct("hop-scan", weight=2, features={
    "hop-scan": "scan with a carry over t0's leading or last dim (maybe reversed, maybe over a pair of xs) whose "
                "combine function reads a global, an object or n; associative_scan (generic) with maximum, "
                "minimum or a product",
})
def hop_scan(w: StatementWriter, scope: Scope) -> None:
    """``last, ys = scan(combine, init, xs, dim=...)`` or ``associative_scan(fn, xs, dim, ...)``."""
    w.features.update({"hop-scan", "closure"})
    # not a closed-over tensor: one slice's result would broadcast out of the carry's shape
    read = _reads(w, scope, ("global", "object", "int"))
    x = w.fresh("x")
    w.emit(scope, f"{x} = {_operand(w, scope)}")
    dim = w.pick(("0", "-1"))
    reverse = ", reverse=True" if w.chance(30) else ""
    if w.chance(65):
        w.need(_SCAN)
        carry, item, nxt, fn = w.fresh("carry"), w.fresh("item"), w.fresh("nxt"), w.fresh("combine")
        # contiguous: scan requires the carry its function returns to match init's strides
        init = f"{x}[0]" if dim == "0" else f"{x}[..., 0].contiguous()"
        pair = w.chance(30)
        w.emit(scope, f"def {fn}({carry}, {item}):")
        step = f"{item}[0] + {item}[1] * 0.5" if pair else item
        w.emit(scope, f"{nxt} = torch.tanh({carry} * 0.5 + {step})", 1)
        w.emit(scope, f"return {nxt}, {nxt} * {read}", 1)
        last, ys = w.fresh("last"), w.fresh("ys")
        xs = f"({x}, torch.cos({x}))" if pair else x
        w.emit(scope, f"{last}, {ys} = scan({fn}, {init}, {xs}, dim={dim}{reverse})")
        # ys has t0's shape (|value| <= 4), last one slice's (|value| <= 1). Over dim -1, torch
        # 2.12.0 stacks ys along dim 0 and 2.15.0 along dim -1: reshaped, both fit t0
        w.put(scope, f"{ys} + {last}" if dim == "0" else f"{ys}.reshape({x}.shape) + {last}.unsqueeze(-1)", 5.0)
        return
    w.need(_ASSOCIATIVE_SCAN)
    # generic only: the pointwise mode compiles with Triton, and fails on CPU in eager too (torch 2.12.0)
    fn = w.fresh("op")
    body = w.pick(("torch.maximum({a}, {b})", "torch.minimum({a}, {b})", "{a} * {b}", "{a} * {b} * " + read))
    a, b = w.fresh("a"), w.fresh("b")
    _function(w, scope, fn, f"{a}, {b}", body.format(a=a, b=b))
    # the operands are in [-1, 1]; a product times read (|read| <= 4) per step can grow, so the
    # result is squashed again
    w.put(scope, f"torch.tanh(associative_scan({fn}, torch.tanh({x}), dim={dim}{reverse}, "
                 f"combine_mode=\"generic\"))", 1.0)


@construct("hop-switch", weight=2, features={
    "hop-switch": "torch.switch over two or three branch functions (def or lambda) that read closures, globals, "
                  "objects and n, indexed by a count tensor, an int or a size, with one or two operands",
})
def hop_switch(w: StatementWriter, scope: Scope) -> None:
    """``switch(index, [fn0, fn1, ...], (x, ...))``; an index out of range is clamped."""
    w.features.update({"hop-switch", "closure"})
    w.need(_SWITCH)
    read = _reads(w, scope)
    pair = w.chance(35)
    params = "a, b" if pair else "a"
    operand = "a + b * 0.5" if pair else "a"
    branches = []
    for _ in range(w.count((2, 3))):
        name = w.fresh("branch")
        branches.append(name)
        _function(w, scope, name, params, w.pick(_BODIES).format(a=f"({operand})", r=read))
    x = w.fresh("x")
    w.emit(scope, f"{x} = {_operand(w, scope)}")
    operands = f"({x}, torch.cos({x}))" if pair else f"({x},)"
    index = w.pick((f"({x} > 0).sum()", "n % 3", "t0.shape[0] - 1", f"torch.tensor(n % {len(branches)})"))
    w.put(scope, f"switch({index}, [{', '.join(branches)}], {operands})", 1.0)
    w.maybe_break(scope, 0, 20)


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
