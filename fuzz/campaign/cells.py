"""The (interpreter, torch) cells a campaign runs: a named matrix or a pin.

Default (``Matrix.NEWEST``): every interpreter's own worker env, which holds
the newest torch release with a wheel for it (fuzz.campaign.torch_releases),
so 3.11-3.15t run torch 2.15.0 and 3.13t runs 2.12.0, its last. ``--matrix
mission`` is the mission's comparison, one compiler on four interpreters
(3.11, 3.12, 3.13 and 3.13t on torch 2.12.0); ``--torch X.Y.Z`` pins one
release on every interpreter chosen. Pinned cells live in uv-made envs under
``~/.cache/tcfuzz/envs`` (fuzz.campaign.torch_envs); a cell whose release
has no wheel for its interpreter is unavailable, with uv's reason, never an
error.
"""

from __future__ import annotations

import dataclasses
import logging

from fuzz.campaign import interpreters as interpreter_specs
from fuzz.campaign import torch_envs
from fuzz.campaign.interpreters import Interpreter
from fuzz.campaign.torch_releases import MATRIX_PYTHONS, MATRIX_TORCH, Matrix
from fuzz.errors import UsageError

log = logging.getLogger(__name__)


@dataclasses.dataclass
class Cells:
    """The interpreters a campaign runs (each in the env of its cell's torch)
    and the cells it cannot run, name -> one-line reason."""

    interpreters: list[Interpreter]
    unavailable: dict[str, str] = dataclasses.field(default_factory=dict)


def parse_matrix(text: str | None) -> Matrix:
    """"mission" -> Matrix.MISSION (None: Matrix.NEWEST). Raises UsageError."""
    if not text:
        return Matrix.NEWEST
    try:
        return Matrix(text.strip().lower())
    except ValueError:
        names = ", ".join(m.value for m in Matrix)
        raise UsageError(f"Expected --matrix {names} but got --matrix {text}") from None


def choose(python: str | None, matrix: Matrix = Matrix.NEWEST, torch: str | None = None) -> Cells:
    """The cells of ``--python``/``--matrix``/``--torch``: ``python`` (None:
    the matrix's interpreters) on ``torch`` (None: the matrix's release, or
    each env's own). Raises UsageError for a malformed value or a --python
    outside a named matrix, HarnessError for a missing required env or a
    failed env install."""
    if torch is not None:
        torch_envs.parse_releases(torch)
    names = MATRIX_PYTHONS[matrix]
    if python in (None, "", "all") and matrix is not Matrix.NEWEST:
        python = ",".join(names)
    elif matrix is not Matrix.NEWEST:
        outside = [n for n in interpreter_specs.parse_specs(python) if n not in names]
        if outside:
            raise UsageError(f"--matrix {matrix.value} has {', '.join(names)}, not {', '.join(outside)}: "
                             "drop --python or --matrix")
    found, unavailable = interpreter_specs.select(python)
    release = torch or MATRIX_TORCH[matrix]
    if release is None:
        return Cells(found, unavailable)
    pinned: list[Interpreter] = []
    for base in found:
        env = torch_envs.ensure_env(base, release)
        if env.interpreter is None:
            unavailable[base.name] = f"torch {release} has no wheel for Python {base.name}: {env.reason}"
            log.warning("Python %s: %s", base.name, unavailable[base.name])
        else:
            pinned.append(env.interpreter)
    if not pinned:
        raise UsageError(f"torch {release} runs on none of {', '.join(b.name for b in found)}: "
                         + "; ".join(unavailable.values()))
    return Cells(pinned, unavailable)
