"""Which interpreters a program can run on: the version gates of its constructs.

A construct registered with ``min_python`` (``fuzz.generate.constructs_newest``)
uses grammar or bytecode that older interpreters lack. Its features mark the
programs that use it; ``min_python`` of a program is the newest gate among
them, and ``runs_on`` tells the campaign which of its interpreters get the
program (the others would only report a SyntaxError). ``gated_weights`` lets
the generator draw gated kinds only up to the newest interpreter a campaign
has.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from fuzz.campaign.interpreters import NAME
from fuzz.generate.program import STATEMENTS

# Feature -> the oldest Python that has it, for the features of gated kinds.
FEATURE_MIN_PYTHON: dict[str, tuple[int, int]] = {
    feature: entry.min_python for entry in STATEMENTS if entry.min_python
    for feature in (*entry.features, *entry.also)
}
# Gated kind -> its gate.
KIND_MIN_PYTHON: dict[str, tuple[int, int]] = {e.kind: e.min_python for e in STATEMENTS if e.min_python}


def version_of(name: str) -> tuple[int, int] | None:
    """(3, 14) for "3.14" or "3.14t"; None for a name that is not a version (a path)."""
    found = NAME.match(name)
    return (3, int(found.group(1))) if found else None


def min_python(features: Iterable[str]) -> tuple[int, int] | None:
    """The oldest Python a program with ``features`` runs on (None: any)."""
    gates = [FEATURE_MIN_PYTHON[f] for f in features if f in FEATURE_MIN_PYTHON]
    return max(gates) if gates else None


def runs_on(features: Iterable[str], interpreter: str) -> bool:
    """Whether a program with ``features`` can run on ``interpreter`` ("3.13t")."""
    gate = min_python(features)
    version = version_of(interpreter)
    return gate is None or version is None or version >= gate


def newest(interpreters: Iterable[str]) -> tuple[int, int] | None:
    """The newest version among interpreter names (None: none is a version)."""
    versions = [v for v in map(version_of, interpreters) if v]
    return max(versions) if versions else None


def gated_weights(weights: Mapping[str, float] | None, newest_python: tuple[int, int] | None) -> dict[str, float]:
    """``weights`` with every gated kind that ``newest_python`` has enabled (its
    weight, or 1.0) and every newer one off (0.0); the generator draws a gated
    kind only when its weight is positive (``StatementWriter.statement``)."""
    out = dict(weights or {})
    for kind, gate in KIND_MIN_PYTHON.items():
        out[kind] = out.get(kind, 1.0) if newest_python is not None and newest_python >= gate else 0.0
    return out
