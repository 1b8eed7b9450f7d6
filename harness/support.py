"""Whether this interpreter's torch can compile at all, in torch's own words.

An old torch refuses a newer Python when ``torch.compile`` is called (torch
2.3: "Dynamo is not supported on Python 3.12+"; torch 2.15: Python 3.16+),
before anything is traced. Such a cell of the (interpreter, torch) matrix is
``unsupported``, never a finding; the refusal is asked of torch once per
worker, with nothing compiled.
"""

from __future__ import annotations


def compile_refusal() -> str:
    """torch's one-line reason for refusing ``torch.compile`` on this
    interpreter, or "" when it accepts it. Nothing is traced: only the
    ``torch.compile`` call is made, whose version check runs first."""
    import torch

    try:
        torch.compile(lambda x: x, backend="eager")
    except RuntimeError as e:
        lines = [line.strip() for line in str(e).splitlines() if line.strip()]
        return lines[0] if lines else type(e).__name__
    return ""
