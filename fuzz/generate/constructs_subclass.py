"""Constructs over tensor subclasses and torch function modes.

Registered constructs (see ``fuzz.generate.registry``): a ``__torch_function__``
subclass made by ``as_subclass`` or ``torch.Tensor._make_subclass``, whose
type must survive operators, methods, indexing and in-place ops (the type's
name is printed, the value turned back into a plain tensor before it joins
f's other tensors); a subclass whose ``__torch_function__`` changes what an
operator does; and a ``TorchFunctionMode`` that counts and rewrites calls,
entered around a graph break. Dynamo models them in
``torch/_dynamo/variables/torch_function.py`` and ``tensor.py``.
"""

from __future__ import annotations

from fuzz.generate.prelude import helper
from fuzz.generate.registry import StatementWriter, construct
from fuzz.generate.scope import Scope

_TAGGED = helper("Tagged", '''
    class Tagged(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs or {})


    class Halving(torch.Tensor):
        """torch.add on a Halving halves its result; everything else as torch.Tensor."""

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            out = super().__torch_function__(func, types, args, kwargs or {})
            if func is torch.add or func is torch.Tensor.add or func is torch.Tensor.__add__:
                out = out * 0.5
            return out
''')
_MODES = helper("SinCounter", '''
    class SinCounter(torch.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.sins = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func is torch.sin:
                self.sins += 1
            return func(*args, **(kwargs or {}))


    class CosToSin(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func is torch.cos:
                func = torch.sin
            return func(*args, **(kwargs or {}))
''')

# Operations on a subclass value `{u}` (|u| <= 3) that keep its type: template,
# whether |result| may exceed 3 (then it is squashed by tanh), and the dims it
# needs and drops.
_SUBCLASS_OPS: tuple[tuple[str, bool, int, int], ...] = (
    ("{u} + 1", True, 0, 0),
    ("{u} * {u}", True, 0, 0),
    ("{u}.tanh()", False, 0, 0),
    ("torch.sigmoid({u})", False, 0, 0),
    ("{u}[0]", False, 1, 1),
    ("{u}[..., :1]", False, 1, 0),
    ("{u}.clone().mul_(0.5)", False, 0, 0),
    ("{u}.abs().neg()", False, 0, 0),
    ("torch.where({u} > 0, {u}, 0.5 * {u})", False, 0, 0),
    ("{u}.sum(dim=-1, keepdim=True)", True, 1, 0),
)


@construct("torch-function-subclass", weight=3, features={
    "torch-function-subclass": "a __torch_function__ subclass via as_subclass/_make_subclass through ops, "
                               "methods, indexing and in-place ops; its type printed",
})
def torch_function_subclass(w: StatementWriter, scope: Scope) -> None:
    """A subclass value through a few ops, its type name printed, back to a plain tensor."""
    w.features.update({"torch-function-subclass", "print"})
    w.need(_TAGGED)
    u = w.fresh("sub")
    cls = w.pick(("Tagged", "Halving"))
    # t0's shape, so that indexing has the dims it needs
    source = f"(t0 * 0.0 + {w.squashed(scope, 1)})"
    make = w.pick(("as", "make", "detach"))
    if make == "as":
        w.emit(scope, f"{u} = {source}.as_subclass({cls})")
    elif make == "make":
        w.emit(scope, f"{u} = torch.Tensor._make_subclass({cls}, {source}.detach())")
    else:
        w.emit(scope, f"{u} = {source}.as_subclass({cls}).detach()")
    ndim = len(w.shape)
    for _ in range(w.count((1, 3))):
        template, large, needs, drops = w.pick(_SUBCLASS_OPS)
        if ndim < needs:
            template, large, drops = "{u}.tanh()", False, 0
        ndim -= drops
        if "sum" in template:
            w.features.add("reduction")
        text = template.format(u=u)
        w.emit(scope, f"{u} = torch.tanh({text})" if large else f"{u} = {text}")
        w.maybe_break(scope, 0, 25)
    bound = 3.0
    if w.chance(40):
        w.emit(scope, f"{u} = {u} + {w.atom(scope)}")
        bound += 4.0
    kind = w.fresh("kind")
    w.emit(scope, f"{kind} = type({u}).__name__")
    w.emit(scope, f"print({kind}, isinstance({u}, torch.Tensor) and {u}.ndim >= 0)")
    w.put(scope, f"{u}.as_subclass(torch.Tensor)", bound)


@construct("torch-function-mode", weight=2, compound=True, features={
    "torch-function-mode": "a TorchFunctionMode that counts or rewrites calls, entered around ops and a graph break",
})
def torch_function_mode(w: StatementWriter, scope: Scope) -> None:
    """``with SinCounter() as mode:`` (or ``CosToSin()``) around a few ops and maybe a break."""
    w.features.add("torch-function-mode")
    w.need(_MODES)
    m = w.fresh("mode")
    t = w.target(scope)
    if w.chance(50):
        w.features.add("print")
        w.emit(scope, f"with SinCounter() as {m}:")
        w.emit(scope, f"{t} = torch.sin({w.atom(scope)}.clamp(-3.0, 3.0)) + torch.tanh({w.atom(scope)})", 1)
        w.maybe_break(scope, 1, 40)
        w.emit(scope, f"{t} = torch.sin({t}) * 0.5", 1)
        w.emit(scope, f"print({m}.sins)")
    else:
        w.emit(scope, "with CosToSin():")
        w.emit(scope, f"{t} = torch.cos({w.atom(scope)}.clamp(-3.0, 3.0))", 1)
        w.maybe_break(scope, 1, 40)
        w.body(scope.block(), (0, 1))
        w.emit(scope, f"{t} = {t} + torch.cos({w.atom(scope)}.clamp(-3.0, 3.0)) * 0.5", 1)
