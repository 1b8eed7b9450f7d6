"""Reading an exception's tracebacks: its cause chain and where in torch it was raised."""

from __future__ import annotations

import os
import traceback

# Longest cause chain followed (a chain can loop through __context__).
MAX_CHAIN = 10


def cause_chain(exc: BaseException) -> list[BaseException]:
    """``exc``, then its ``__cause__`` (or ``__context__``), outermost first;
    plus a wrapped ``inner_exception`` (BackendCompilerFailed) not already on it."""
    chain = [exc]
    while (nxt := chain[-1].__cause__ or chain[-1].__context__) is not None and len(chain) < MAX_CHAIN:
        chain.append(nxt)
    inner = getattr(exc, "inner_exception", None)
    if isinstance(inner, BaseException) and inner not in chain:
        chain.append(inner)
    return chain


def torch_location(frame: traceback.FrameSummary) -> str:
    """``torch/<path>:<function>`` for a frame in torch's sources, else ""."""
    path = frame.filename.replace(os.sep, "/")
    return "torch/" + path.rsplit("/torch/", 1)[1] + ":" + frame.name if "/torch/" in path else ""
