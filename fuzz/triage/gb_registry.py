"""What torch's own graph-break registry says is a limitation.

Dynamo documents every graph break it raises in
``torch/_dynamo/graph_break_registry.json`` (torch >= 2.8; the source of
https://pytorch.org/docs/main/compile/programming_model.graph_breaks_index.html):
``{"GB0045": [{"Gb_type": ..., "Context": ..., "Explanation": ...,
"Hints": [...]}], ...}``. A gb_type whose hints include
``torch._dynamo.graph_break_hints.FUNDAMENTAL`` ("This graph break is
fundamental - it is unlikely that Dynamo will ever be able to trace through
your code") is one Dynamo will not trace by design: 13 gb_types of torch
2.15.0, among them "Attempt to trace generator" and "Encountered
tensor.is_inference() during tracing". A campaign counts such a graph break
and never minimises it (fuzz.triage.known.Standing.LIMITATION), as it does
the gb_types listed by hand in ``corpus/known-issues.toml``.

The registry is read as JSON from each worker env's site-packages, so the
host needs no torch.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)

# The opening words of torch._dynamo.graph_break_hints.FUNDAMENTAL.
FUNDAMENTAL_HINT = "This graph break is fundamental"
# Where the registry lies under a venv's root (its python at <root>/bin/python).
REGISTRY_GLOB = "lib/python3*/site-packages/torch/_dynamo/graph_break_registry.json"


def registry_path(executable: str | Path) -> Path | None:
    """The graph-break registry of the torch installed in the venv whose
    python is ``executable`` (not resolved: a venv's python is a link to its
    base interpreter); None when that torch has none (before 2.8) or the
    path is not a venv's."""
    root = Path(executable).parent.parent
    return next(iter(sorted(root.glob(REGISTRY_GLOB))), None)


@functools.lru_cache(maxsize=None)
def _fundamental_in(path: Path) -> frozenset[str]:
    try:
        registry = json.loads(path.read_text())
        return frozenset(str(entry["Gb_type"]) for entries in registry.values() for entry in entries
                         if any(str(h).startswith(FUNDAMENTAL_HINT) for h in entry.get("Hints", [])))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        log.warning("%s: not a graph-break registry torch wrote (%s: %s); its limitations are not known",
                    path, type(e).__name__, e)
        return frozenset()


def fundamental_gb_types(executables: Iterable[str | Path]) -> frozenset[str]:
    """The gb_types that the registry of any of the venvs of ``executables``
    (the worker envs' pythons, InterpreterInfo.executable) marks
    fundamental; empty where none has a registry."""
    found: frozenset[str] = frozenset()
    for executable in executables:
        path = registry_path(executable) if executable else None
        if path is not None:
            found |= _fundamental_in(path)
    return found
