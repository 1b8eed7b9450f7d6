"""What torch reports while a program runs compiled: graph breaks and graphs.

The set of graph breaks is read from ``torch._dynamo.utils.counters``
("graph_break": breaks Dynamo resumed after; "unimplemented": frames it
skipped), whose keys are ``Unsupported`` messages: their first line is the
``gb_type`` (``torch._dynamo.exc.format_graph_break_message``). A corpus case's
``__main__`` block reads the same counters, so the harness and ``python CASE``
agree by construction. Dynamo's ``log_graph_break`` (wrapped once per process)
adds the user line of each break where it gives one.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any, Callable

from harness.outcome import GraphBreak

log = logging.getLogger(__name__)

_active: list[GraphBreak] | None = None
_installed = False

# Longest reason text kept, in characters.
MAX_REASON_CHARS = 300


def _first_line(text: str) -> str:
    for line in str(text).splitlines():
        line = line.strip()
        if line and not line.endswith(":"):
            return line[:MAX_REASON_CHARS]
    return str(text).strip()[:MAX_REASON_CHARS]


def install() -> None:
    """Wrap Dynamo's graph-break logger so breaks are recorded (idempotent)."""
    global _installed
    if _installed:
        return
    from torch._dynamo import symbolic_convert

    cls = symbolic_convert.InstructionTranslatorBase
    original = getattr(cls, "log_graph_break", None)
    if original is None:  # an older or newer torch: fall back on counters only
        log.warning("torch has no InstructionTranslatorBase.log_graph_break; graph-break lines unavailable")
        _installed = True
        return

    def log_graph_break(self: Any, code_options: Any, reason: str = "", *args: Any, **kwargs: Any) -> Any:
        # torch >= 2.11 passes the Unsupported exception (exc=); 2.10 and
        # earlier pass the user stack (user_stack=) and only the reason text.
        exc = kwargs.get("exc", args[0] if args else None)
        if not isinstance(exc, BaseException):
            exc = None
        if _active is not None and not getattr(exc, "logged", False):
            stack = (getattr(exc, "real_stack", None) if exc is not None
                     else kwargs.get("user_stack", args[0] if args else None)) or []
            frame = stack[-1] if stack else None
            msg = getattr(exc, "msg", str(exc)) if exc is not None else reason
            _active.append(
                GraphBreak(
                    gb_type=getattr(exc, "gb_type", "") or _first_line(msg),
                    reason=_first_line(msg),
                    filename=getattr(frame, "filename", "") or "",
                    lineno=getattr(frame, "lineno", 0) or 0,
                )
            )
        return original(self, code_options, reason, *args, **kwargs)

    cls.log_graph_break = log_graph_break
    _installed = True


def _explanation(msg: str) -> str:
    for line in msg.splitlines()[1:]:
        if line.strip().startswith("Explanation:"):
            return line.strip()[len("Explanation:"):].strip()[:MAX_REASON_CHARS]
    return ""


@contextlib.contextmanager
def record_graph_breaks() -> Iterator[list[GraphBreak]]:
    """Collect the graph breaks and skipped frames of the code run inside,
    one ``GraphBreak`` per occurrence."""
    global _active
    from torch._dynamo.utils import counters

    install()
    categories = ("graph_break", "unimplemented")
    before = {c: dict(counters[c]) for c in categories}
    logged: list[GraphBreak] = []
    breaks: list[GraphBreak] = []
    _active = logged
    try:
        yield breaks
    finally:
        _active = None
        for category in categories:
            for msg, count in list(counters[category].items()):
                for _ in range(count - before[category].get(msg, 0)):
                    gb_type = _first_line(msg)
                    where = next((g for g in logged if g.gb_type == gb_type), None)
                    if where is not None:
                        logged.remove(where)
                    breaks.append(GraphBreak(
                        gb_type=gb_type,
                        reason=_explanation(msg) or ("frame skipped" if category == "unimplemented" else gb_type),
                        filename=where.filename if where else "",
                        lineno=where.lineno if where else 0,
                    ))


class GraphCounter:
    """Wraps a backend to count the FX graphs it is given, per call index."""

    def __init__(self, backend: str | Callable[..., Any]):
        import torch._dynamo

        self.inner = torch._dynamo.lookup_backend(backend) if isinstance(backend, str) else backend
        self.graphs = 0
        self.call_index = 0
        self.recompiles = 0

    def __call__(self, gm: Any, example_inputs: Any) -> Any:
        self.graphs += 1
        if self.call_index > 0:
            self.recompiles += 1
        return self.inner(gm, example_inputs)
