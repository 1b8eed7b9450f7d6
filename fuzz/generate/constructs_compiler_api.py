"""Constructs over the ``torch._dynamo`` / ``torch.compiler`` API called from user code.

Registered construct (see ``fuzz.generate.registry``): ``compiler-api``, one
of the decorators and contexts a user puts around part of a compiled
function to steer Dynamo: ``torch._dynamo.disable`` on a function written in
``f`` that appends to a list (``recursive`` or not) or on a lambda;
module-level ``nonstrict_trace``, ``assume_constant_result`` and
``allow_in_graph`` functions; ``dont_skip_tracing``; and
``torch._dynamo.patch_dynamo_config`` as a context or a decorator, setting
one of the options it allows inside a compiled frame
(``capture_scalar_outputs``, ``nested_graph_breaks``, ``verbose``,
``rewrite_assert_with_torch_assert``) around a call, a ``.item()`` or an
``assert``. Dynamo models them in ``torch/_dynamo/decorators.py``,
``variables/functions.py`` (``UserFunctionVariable.call_function``'s checks
for each wrapper) and ``variables/ctx_manager.py``
(``DynamoConfigPatchVariable``); the options allowed are those of
``torch/_dynamo/decorators.py``'s ``patch_dynamo_config`` (torch 2.15.0).

Every function here runs in eager code too and returns what it would
uncompiled: ``assume_constant_result``'s function returns a module-level
constant, and an ``assert`` only states what the generator guarantees (|x| <= 3).
"""

from __future__ import annotations

from fuzz.generate.prelude import helper
from fuzz.generate.registry import StatementWriter, construct
from fuzz.generate.scope import Scope

# Module-level functions wrapped by the decorators Dynamo reads where it meets the call.
_WRAPPED = helper("nonstrict_scale", '''
    CONSTANT_SCALE = 0.5


    @torch._dynamo.nonstrict_trace
    def nonstrict_scale(x, k):
        return torch.tanh(x * k)


    @torch._dynamo.assume_constant_result
    def constant_scale():
        return CONSTANT_SCALE


    @torch._dynamo.allow_in_graph
    def in_graph_sin(x):
        return torch.sin(x) * CONSTANT_SCALE


    def breaking_sin(x):
        y = torch.sin(x)
        torch._dynamo.graph_break()
        return y * CONSTANT_SCALE
''')

# patch_dynamo_config options a compiled frame may set (the rest are refused by design).
_OPTIONS = ("capture_scalar_outputs=True", "nested_graph_breaks=True", "verbose=True",
            "rewrite_assert_with_torch_assert=False")


def _operand(w: StatementWriter, scope: Scope) -> str:
    """A t0-shaped float32 value, |value| <= 3."""
    return f"(t0 * 0.0 + {w.squashed(scope, 1)})"


@construct("compiler-api", weight=2, features={
    "compiler-api": "torch._dynamo.disable (a logging function, recursive or not, a lambda), nonstrict_trace, "
                    "assume_constant_result, allow_in_graph and dont_skip_tracing functions, and "
                    "patch_dynamo_config as a context or decorator around a call, an .item() or an assert",
})
def compiler_api(w: StatementWriter, scope: Scope) -> None:
    """One call through a torch._dynamo decorator or inside a patch_dynamo_config context."""
    w.features.add("compiler-api")
    form = w.pick(("disable", "disable-lambda", "wrapped", "dont-skip", "patch-context", "patch-decorator"))
    x = w.fresh("x")
    w.emit(scope, f"{x} = {_operand(w, scope)}")
    if form == "disable":
        w.features.update({"print", "closure"})
        log, fn, a = w.fresh("log"), w.fresh("eager_fn"), w.fresh("a")
        w.emit(scope, f"{log} = []")
        w.emit(scope, f"def {fn}({a}):")
        w.emit(scope, f"{log}.append({a}.shape[0])", 1)
        w.emit(scope, f"return torch.sin({a}) * 0.5", 1)
        recursive = w.pick(("", ", recursive=False", ', reason="tcfuzz"'))
        w.emit(scope, f"{fn} = torch._dynamo.disable({fn}{recursive})")
        w.put(scope, f"{fn}({x}) + {fn}({x} * 0.5)", 1.0)
        w.emit(scope, f"print(len({log}))")
    elif form == "disable-lambda":
        w.features.add("closure")
        fn = w.fresh("eager_fn")
        w.emit(scope, f"{fn} = torch._dynamo.disable(lambda a: torch.tanh(a + n * 0.25))")
        w.put(scope, f"{fn}({x})", 1.0)
    elif form == "wrapped":
        w.need(_WRAPPED)
        call = w.pick((f"nonstrict_scale({x}, {w.pick(('n', '0.5', 'constant_scale()'))})",
                       f"{x} * constant_scale()", f"in_graph_sin({x})"))
        w.put(scope, call, 3.0)
    elif form == "dont-skip":
        w.features.add("closure")
        fn, a = w.fresh("traced_fn"), w.fresh("a")
        w.emit(scope, "@torch._dynamo.dont_skip_tracing")
        w.emit(scope, f"def {fn}({a}):")
        w.emit(scope, f"return torch.cos({a}) * n * 0.25", 1)
        w.put(scope, f"{fn}({x})", 4.0)
    else:
        w.need(_WRAPPED)
        option = w.pick(_OPTIONS)
        if form == "patch-decorator":
            w.features.add("closure")
            fn, a = w.fresh("patched_fn"), w.fresh("a")
            w.emit(scope, f"@torch._dynamo.patch_dynamo_config({option})")
            w.emit(scope, f"def {fn}({a}):")
            w.emit(scope, f"return breaking_sin({a}) + {a}.abs().max().item() * 0.25", 1)
            w.put(scope, f"{fn}({x})", 2.0)
            return
        y = w.fresh("y")
        w.emit(scope, f"with torch._dynamo.patch_dynamo_config({option}):")
        body = w.pick(("call", "item", "assert"))
        if body == "call":
            w.features.add("graph-break")
            # the argument an expression or the name itself: Dynamo resumes differently
            w.emit(scope, f"{y} = breaking_sin({w.pick((x, f'{x} * 2.0'))})", 1)
        elif body == "item":
            w.emit(scope, f"{y} = {x} * ({x}.abs().max().item() * 0.25)", 1)
        else:
            w.emit(scope, f"assert ({x}.abs() <= 3.5).all(), {x}.shape", 1)
            w.emit(scope, f"{y} = {x} * 0.5", 1)
        w.put(scope, y, 3.0)
