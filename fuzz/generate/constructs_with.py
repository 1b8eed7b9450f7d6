"""Constructs around ``with``: grad modes, grad-mode objects, context managers.

Registered constructs (see ``fuzz.generate.registry``): nested and
conditional grad modes, a grad-mode object created before a graph break and
entered after it, a ``@contextlib.contextmanager`` generator and a user
context-manager class that swallows a ``ValueError``. Their bodies hold
ordinary statements.
"""

from __future__ import annotations

from fuzz.generate.registry import StatementWriter, construct
from fuzz.generate.scope import Scope


def _with_body(w: StatementWriter, scope: Scope, **changes: object) -> None:
    body = scope.block(**changes)
    w.body(body, (1, 2))


@construct("grad-mode", weight=2, compound=True, features={
    "grad-mode": "with enable_grad / set_grad_enabled / nested grad modes",
})
def grad_mode(w: StatementWriter, scope: Scope) -> None:
    w.features.add("grad-mode")
    manager = w.pick((
        "torch.enable_grad()",
        "torch.set_grad_enabled(False)",
        "torch.set_grad_enabled(n > 2)",
        "torch.no_grad(), torch.enable_grad()",
        "torch.autograd.grad_mode.no_grad()",
    ))
    if manager.startswith("torch.no_grad()"):
        w.features.add("no-grad")
    w.emit(scope, f"with {manager}:")
    _with_body(w, scope)
    if w.chance(40):
        w.emit(scope, "print(torch.is_grad_enabled())")
        w.features.add("print")


@construct("grad-ctx-object", weight=1, compound=True, features={
    "grad-ctx-object": "grad-mode object created, graph break, then entered",
})
def grad_ctx_object(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"grad-ctx-object", "graph-break"})
    ctx = w.fresh("ctx")
    w.emit(scope, f"{ctx} = {w.pick(('torch.no_grad()', 'torch.enable_grad()', 'torch.set_grad_enabled(False)'))}")
    w.emit(scope, "torch._dynamo.graph_break()")
    w.emit(scope, f"with {ctx}:")
    _with_body(w, scope)


@construct("contextmanager", weight=2, compound=True, features={
    "contextmanager": "with over a @contextlib.contextmanager generator",
})
def contextmanager(w: StatementWriter, scope: Scope) -> None:
    w.features.add("contextmanager")
    w.need("scaled")
    log, k = w.fresh("log"), w.fresh("k")
    w.emit(scope, f"{log} = []")
    w.emit(scope, f"with scaled({log}, {w.pick(('1.0', 'n'))}) as {k}:")
    body = scope.block()
    w.emit(body, f"{w.target(scope)} = torch.tanh({w.atom(scope)} * {k})")
    w.body(body, (0, 2))
    w.emit(scope, f"print({log})")
    w.features.add("print")


@construct("user-cm", weight=2, compound=True, features={
    "user-cm": "with over a user context-manager class (__enter__/__exit__)",
})
def user_cm(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"user-cm", "try-except"})
    w.need("Suppress")
    cm, k = w.fresh("cm"), w.fresh("k")
    w.emit(scope, f"{cm} = Suppress({w.pick(('0.5', '0.25'))})")
    # the try is a safety net: Suppress swallows the ValueError itself
    w.emit(scope, "try:")
    w.emit(scope, f"with {cm} as {k}:", 1)
    body = scope.block(catches=(), loop=False)
    body.indent = scope.indent + 2
    w.emit(body, f"{w.target(scope)} = torch.tanh({w.atom(scope)} * {k})")
    w.body(body, (0, 1))
    if w.chance(60):
        w.features.add("raise")
        w.emit(body, 'raise ValueError("swallowed")')
    w.emit_block(scope, f"""
        except ValueError:
            pass
        print({cm}.entered)
    """)
    w.features.add("print")
