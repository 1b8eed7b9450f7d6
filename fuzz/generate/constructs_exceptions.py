"""Constructs around exceptions: ``raise ... from``, re-raise, ``except*``, tensor ops that raise.

Registered constructs (see ``fuzz.generate.registry``). Every exception
raised is caught in the same function; handlers hold ordinary statements,
so graph breaks land in them. Opcodes they reach: ``CALL_INTRINSIC_2``
(``except*``), ``RERAISE``, ``PUSH_EXC_INFO``/``POP_EXCEPT``.
"""

from __future__ import annotations

from fuzz.generate.registry import StatementWriter, construct
from fuzz.generate.scope import Scope


def _handler_body(w: StatementWriter, scope: Scope, extra_indent: int) -> Scope:
    body = scope.block(catches=(), loop=False)
    body.indent = scope.indent + extra_indent
    w.body(body, (1, 2))
    return body


@construct("raise-from", weight=2, compound=True, features={"raise-from": "raise X from e, caught"})
def raise_from(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"raise-from", "raise", "try-except", "print"})
    e = w.fresh("e")
    w.emit(scope, "try:")
    w.emit(scope, "try:", 1)
    inner = scope.block(catches=("ValueError",), loop=False)
    inner.indent = scope.indent + 2
    w.body(inner, (0, 2))
    w.emit(scope, f'raise ValueError("inner{w.index(9)}")', 2)
    w.emit(scope, f"except ValueError as {e}:", 1)
    w.maybe_break(scope, 2, 25)
    w.emit(scope, f'raise KeyError("outer") from {e}', 2)
    w.emit(scope, f"except KeyError as {e}:")
    w.emit(scope, f"print(type({e}.__cause__).__name__, {e}.__suppress_context__)", 1)
    _handler_body(w, scope, 1)


@construct("reraise", weight=2, compound=True, features={
    "reraise": "bare raise in a handler, caught outside",
})
def reraise(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"reraise", "raise", "try-except"})
    w.emit(scope, "try:")
    w.emit(scope, "try:", 1)
    w.emit(scope, f'raise IndexError("again{w.index(9)}")', 2)
    w.emit(scope, "except IndexError:", 1)
    body = scope.block(catches=(), loop=False)
    body.indent = scope.indent + 2
    w.body(body, (1, 2))
    w.emit(scope, "raise", 2)
    w.emit(scope, "except (IndexError, KeyError):")
    _handler_body(w, scope, 1)


@construct("except-star", weight=2, compound=True, features={
    "exception-group": "raise ExceptionGroup ... except*",
})
def except_star(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"exception-group", "raise"})
    members = w.pick((("ValueError",), ("ValueError", "KeyError"), ("KeyError", "ValueError")))
    listed = ", ".join(f'{m}("m{i}")' for i, m in enumerate(members))
    w.emit(scope, "try:")
    body = scope.block(catches=(), loop=False)
    body.indent = scope.indent + 1
    w.body(body, (0, 1))
    w.emit(scope, f'raise ExceptionGroup("group", [{listed}])', 1)
    for kind in ("ValueError", "KeyError"):
        group = w.fresh("eg")
        w.emit(scope, f"except* {kind} as {group}:")
        w.emit(scope, f'print("{kind}", len({group}.exceptions))', 1)
        w.features.add("print")
        handler = scope.block(catches=(), loop=False)
        handler.indent = scope.indent + 1
        w.body(handler, (0, 1))


@construct("tensor-exception", weight=2, features={
    "tensor-exception": "a tensor op that raises RuntimeError, caught",
})
def tensor_exception(w: StatementWriter, scope: Scope) -> None:
    w.features.update({"tensor-exception", "try-except"})
    t = w.target(scope)
    bad = w.pick((
        f"{t} = torch.tanh({w.atom(scope)} @ torch.ones(7, 3))",
        f"{t} = torch.tanh({w.atom(scope)}.reshape(7, 11))",
        f"{t} = torch.tanh({w.atom(scope)}.view(-1, 7, 11))",
    ))
    w.emit_block(scope, f"""
        try:
            {bad}
        except RuntimeError as {w.fresh('e')}:
            {t} = {t} * 0.5
    """)
    w.maybe_break(scope, 1, 25)
