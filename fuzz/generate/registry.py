"""The construct registry: one decorated function per statement kind.

A construct is a function ``write(w, scope)`` that writes one statement (or a
few) of its kind at the current point of ``f``, registered with ``@construct``,
which declares everything else the generator knows about it::

    @construct("except-star", weight=2, compound=True,
               features={"exception-group": "raise ExceptionGroup ... except*"})
    def except_star(w: StatementWriter, scope: Scope) -> None: ...

``collect(modules)`` returns the registered constructs of those modules in
order (module by module, each in definition order): that is the statement
table ``StatementWriter.statement`` draws from, with weights in proportion to
``weight``, so the order is part of what a seed means (the first construct is
the simplest, which Hypothesis shrinks towards). Everything else about
statements is derived from the table: its kinds (``fuzz.generate.program.STATEMENT_KINDS``),
the feature vocabulary (``FEATURES``) and the features feedback credits each
kind with (``Construct.features``, see ``fuzz.generate.feedback``).

Adding a construct is one decorated function in one of the ``constructs_*``
modules (or ``statements``); a new kind changes every later seed's program,
so bump ``fuzz.generate.program.GENERATOR`` with it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType

from hypothesis import strategies as st

from fuzz.generate.scope import Scope
from fuzz.generate.writer import MAX_DEPTH, Writer

__all__ = ["Construct", "StatementWriter", "collect", "construct"]

# Registered constructs by defining module name, each list in definition order.
_REGISTERED: dict[str, list[Construct]] = {}


@dataclasses.dataclass(frozen=True)
class Construct:
    """One statement kind of the generator.

    ``kind``: its name (a key of feedback weights). ``weight``: its base weight
    in the statement table (a positive int). ``features``: the features it is
    written for, name -> description; feedback credits the kind through these
    (``{}`` for a kind credited with nothing, as plain assignments are).
    ``also``: further features introduced here that it (or a helper shared with
    other kinds) records, not credited to it. ``compound``: drawn only where
    the nesting depth is below ``MAX_DEPTH`` and more than 3 statements are left
    in the budget (kinds with bodies of further statements). ``allowed``: whether
    the kind may be drawn in a scope (None: anywhere). ``write``: writes it.
    """

    kind: str
    weight: int
    features: Mapping[str, str]
    also: Mapping[str, str]
    compound: bool
    allowed: Callable[[Scope], bool] | None
    write: Callable[[StatementWriter, Scope], None]
    # The oldest Python whose grammar or bytecode the kind needs (None: every
    # interpreter under test). Such a kind is drawn only when the weights name
    # it (``gated_weights``), and a program that uses it runs only on
    # interpreters at least that new (``fuzz.generate.versions``).
    min_python: tuple[int, int] | None = None

    def fits(self, scope: Scope, budget: int) -> bool:
        """May this kind be drawn in ``scope`` with ``budget`` statements left?"""
        if self.compound and not (scope.depth < MAX_DEPTH and budget > 3):
            return False
        return self.allowed is None or self.allowed(scope)


def construct(
    kind: str,
    *,
    weight: int,
    features: Mapping[str, str],
    also: Mapping[str, str] | None = None,
    compound: bool = False,
    allowed: Callable[[Scope], bool] | None = None,
    min_python: tuple[int, int] | None = None,
) -> Callable[[Callable[[StatementWriter, Scope], None]], Callable[[StatementWriter, Scope], None]]:
    """Register the decorated ``write(w, scope)`` as statement kind ``kind`` (see ``Construct``).

    Raises ValueError for a weight below 1 or a kind already registered.
    """
    if weight < 1:
        raise ValueError(f"Expected a weight >= 1 but got weight={weight!r} for kind={kind!r}")

    def register(write: Callable[[StatementWriter, Scope], None]) -> Callable[[StatementWriter, Scope], None]:
        if any(c.kind == kind for registered in _REGISTERED.values() for c in registered):
            raise ValueError(f"Expected a new statement kind but got kind={kind!r} twice")
        entry = Construct(kind, weight, dict(features), dict(also or {}), compound, allowed, write, min_python)
        _REGISTERED.setdefault(write.__module__, []).append(entry)
        return write

    return register


def collect(modules: Sequence[ModuleType]) -> tuple[Construct, ...]:
    """The constructs registered in ``modules``: module by module, each in definition order.

    Raises ValueError if two constructs declare the same feature (each
    feature is described where one kind introduces it).
    """
    table = tuple(c for module in modules for c in _REGISTERED.get(module.__name__, ()))
    declared: dict[str, str] = {}
    for entry in table:
        for feature in (*entry.features, *entry.also):
            if feature in declared:
                raise ValueError(f"Expected each feature declared once but got feature={feature!r} "
                                 f"from {declared[feature]!r} and {entry.kind!r}")
            declared[feature] = entry.kind
    return table


class StatementWriter(Writer):
    """A ``Writer`` that writes statements drawn from a table of constructs.

    ``statements`` is the table (``collect``'s result); its first construct is
    the simplest and the only one written once the statement budget is spent.
    """

    def __init__(
        self,
        draw: Callable[[st.SearchStrategy[int]], int],
        statements: Sequence[Construct],
        weights: dict[str, float] | None = None,
    ) -> None:
        super().__init__(draw, weights)
        self.statements = statements
        # parameters f gets for tensor graphs (fuzz.generate.constructs_tensor): (name, inputs() expression)
        self.tensor_inputs: list[tuple[str, str]] = []
        # tensor-graph results at the top level of f, returned by f
        self.tensor_outputs: list[str] = []
        # operator-heavy graphs written so far
        self.tensor_graphs = 0

    def body(self, scope: Scope, bounds: tuple[int, int]) -> None:
        """Between ``bounds[0]`` and ``bounds[1]`` statements (both included) in ``scope``.

        A construct may write nothing (a tensor graph with no input of the rank
        it needs); a body that must have a statement then gets ``pass``.
        """
        start = len(self.lines)
        for _ in range(self.count(bounds)):
            self.statement(scope)
        if bounds[0] > 0 and len(self.lines) == start:
            self.emit(scope, "pass")

    def statement(self, scope: Scope) -> None:
        """One statement: a construct drawn by weight among those that fit ``scope``."""
        if self.budget <= 0:
            self.statements[0].write(self, scope)
            return
        self.budget -= 1
        allowed = [
            (entry, max(1, round(entry.weight * self.weights.get(entry.kind, 1.0))))
            for entry in self.statements
            if entry.fits(scope, self.budget)
            # a version-gated kind only where the weights ask for it
            and (entry.min_python is None or self.weights.get(entry.kind, 0.0) > 0)
        ]
        self.weighted(allowed).write(self, scope)
