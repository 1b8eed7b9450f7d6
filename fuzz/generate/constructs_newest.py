"""Constructs of the newest Pythons: grammar and bytecode that only 3.14 or 3.15 have.

Registered constructs (see ``fuzz.generate.registry``), each with
``min_python``: drawn only where the campaign has an interpreter that new
(``fuzz.generate.versions.gated_weights``), and a program that uses one runs
only on those interpreters (its features say so), so programs without them
keep the cross-version comparison. Sources: What's New in Python 3.14 and
3.15.

- PEP 750 template strings (3.14): ``t"..."`` compiles to ``BUILD_TEMPLATE``
  and ``BUILD_INTERPOLATION``, and gives a ``string.templatelib.Template``.
- PEP 758 (3.14): ``except A, B:`` and ``except* A, B:`` without parentheses.
- PEP 649/749 (3.14): annotations are evaluated lazily, through a generated
  ``__annotate__`` function, so they may name what is defined later.
- PEP 765 (3.14): ``break``/``continue`` in ``finally`` compile with a
  ``SyntaxWarning``.
- PEP 798 (3.15): unpacking in comprehensions, ``[*xs for xs in groups]`` and
  ``{**d for d in ds}``.
"""

from __future__ import annotations

from fuzz.generate.registry import StatementWriter, construct
from fuzz.generate.scope import Scope

PY314 = (3, 14)
PY315 = (3, 15)


@construct("template-string", weight=2, min_python=PY314, features={
    "template-string": "PEP 750 t-string (3.14+): BUILD_TEMPLATE, BUILD_INTERPOLATION",
})
def template_string(w: StatementWriter, scope: Scope) -> None:
    """A t-string over a tensor and an int; its parts printed and counted into a tensor."""
    w.features.update({"template-string", "print"})
    tm = w.fresh("tm")
    tensor = w.pick(scope.tensors)
    k = w.pick(scope.ints)
    spec = w.pick(("", "!r", ":>4", "!s:<3"))
    w.emit(scope, f"{tm} = t\"s{{{tensor}.shape}}/{{{k}{spec}}}\"")
    if w.chance(30):
        w.emit(scope, f"{tm} = {tm} + t\"+{{{k} + 1}}\"")
    w.emit(scope, f'print("tm", {tm}.strings, [i.expression for i in {tm}.interpolations], '
                  f'{tm}.interpolations[1].conversion, {tm}.interpolations[1].format_spec)')
    w.maybe_break(scope, 0, 20)
    target = w.target(scope)
    w.emit(scope, f"{target} = {tensor} * len({tm}.interpolations) + len({tm}.strings[0])")


@construct("except-unparenthesised", weight=2, compound=True, min_python=PY314, features={
    "except-unparenthesised": "PEP 758 (3.14+): except A, B: / except* A, B: without parentheses",
})
def except_unparenthesised(w: StatementWriter, scope: Scope) -> None:
    """``try: ... raise X ... except ValueError, IndexError:`` (or its ``except*`` form)."""
    w.features.update({"except-unparenthesised", "try-except", "raise"})
    raised = w.pick(("ValueError", "IndexError"))
    star = w.chance(25)
    w.emit(scope, "try:")
    body = scope.block(catches=(), loop=False)
    w.body(body, (0, 1))
    w.emit(scope, f'raise {raised}("u{w.index(9)}")', 1)
    w.emit(scope, "except* ValueError, IndexError:" if star else "except ValueError, IndexError:")
    handler = scope.block(catches=(), loop=False)
    w.maybe_break(scope, 1, 25)
    w.body(handler, (1, 2))


@construct("deferred-annotations", weight=2, min_python=PY314, features={
    "deferred-annotations": "PEP 649/749 (3.14+): annotations naming what is defined later, read via __annotate__",
})
def deferred_annotations(w: StatementWriter, scope: Scope) -> None:
    """A nested function or class whose annotations name a later binding, called and its annotations read."""
    w.features.update({"deferred-annotations", "closure", "print"})
    later = w.fresh("Later")
    tensor = w.pick(scope.tensors)
    target = w.target(scope)
    if w.chance(50):
        g = w.fresh("g")
        w.emit(scope, f"def {g}(a: {later}, k: int = 2) -> {later}:")
        w.emit(scope, "return a * k", 1)
        w.emit(scope, f"{later} = torch.Tensor")
        w.maybe_break(scope, 0, 20)
        w.emit(scope, f'print("ann", sorted({g}.__annotations__), {g}.__annotations__["return"].__name__)')
        w.emit(scope, f"{target} = {g}({tensor})")
    else:
        cls = w.fresh("Ann")
        w.emit(scope, f"class {cls}:")
        w.emit(scope, f"scale: {later}", 1)
        w.emit(scope, f"def apply(self, a: {later}) -> {later}:", 1)
        w.emit(scope, "return a + 1", 2)
        w.emit(scope, f"{later} = torch.Tensor")
        w.emit(scope, f'print("ann", list({cls}.__annotations__), {cls}.apply.__annotations__["a"].__name__)')
        w.emit(scope, f"{target} = {cls}().apply({tensor})")


@construct("finally-control-flow", weight=2, compound=True, min_python=PY314, features={
    "finally-control-flow": "PEP 765 (3.14+ warns): break/continue inside finally",
})
def finally_control_flow(w: StatementWriter, scope: Scope) -> None:
    """A loop whose ``finally`` breaks or continues, discarding what was raised."""
    w.features.update({"finally-control-flow", "for-loop", "try-except"})
    i = w.fresh("i")
    k = w.pick(scope.ints)
    w.emit(scope, f"for {i} in range({k} + 1):")
    w.emit(scope, "try:", 1)
    body = scope.block(catches=(), loop=False)
    body.indent = scope.indent + 2
    w.body(body, (1, 2))
    if w.chance(50):
        w.emit(scope, f'raise ValueError("f{w.index(9)}")', 2)
    w.emit(scope, "finally:", 1)
    # both paths leave the finally by break or continue, discarding what was raised
    w.emit(scope, f"if {i} >= 1:", 2)
    w.emit(scope, "break", 3)
    w.emit(scope, "continue", 2)


@construct("comprehension-unpacking", weight=2, min_python=PY315, features={
    "comprehension-unpacking": "PEP 798 (3.15+): [*xs for xs in groups], {**d for d in ds}",
})
def comprehension_unpacking(w: StatementWriter, scope: Scope) -> None:
    """Unpacking inside a list, set, generator or dict comprehension."""
    w.features.update({"comprehension-unpacking", "comprehension"})
    groups = w.fresh("groups")
    g = w.fresh("g")
    target = w.target(scope)
    a, b = w.pick(scope.tensors), w.pick(scope.tensors)
    k = w.pick(scope.ints)
    form = w.pick(("list", "generator", "dict"))
    if form == "dict":
        w.emit(scope, f'{groups} = [{{"a": {a}}}, {{"b": {b} * {k}}}, {{"a": {b}}}]')
        merged = w.fresh("merged")
        w.emit(scope, f"{merged} = {{**{g} for {g} in {groups}}}")
        w.maybe_break(scope, 0, 20)
        w.emit(scope, f'{target} = {merged}["a"] + {merged}["b"]')
    else:
        w.emit(scope, f"{groups} = [[{a}, {b}], [{b} * {k}], []]")
        flat = w.fresh("flat")
        inner = f"*{g} for {g} in {groups}"
        w.emit(scope, f"{flat} = [{inner}]" if form == "list" else f"{flat} = list(({inner}))")
        w.maybe_break(scope, 0, 20)
        w.emit(scope, f"{target} = {flat}[0] + {flat}[-1] * len({flat})")
