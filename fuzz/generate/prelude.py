"""Module-level helpers of generated programs: imports, classes, context managers.

A construct that needs one calls ``Writer.need(name)``; the program then
gets the helper's lines (and those of the helpers it needs first) once,
above ``f``. Also the one text helper the writer uses for fixed blocks of
source, ``dedented``. Construct modules declare their own helpers where
they use them, with ``helper(name, source, needs)``.
"""

from __future__ import annotations

import textwrap

__all__ = ["PRELUDE", "PRELUDE_NEEDS", "dedented", "helper", "imported"]


def dedented(template: str) -> tuple[str, ...]:
    """The lines of a triple-quoted ``template``, dedented, without its first
    and last line breaks (whitespace-only lines become empty)."""
    return tuple(textwrap.dedent(template).strip("\n").split("\n"))


# Module-level helpers a construct may need, by name: source lines.
PRELUDE: dict[str, tuple[str, ...]] = {
    "contextlib": ("import contextlib",),
    "dataclasses": ("import dataclasses",),
    "collections.abc": ("import collections.abc",),
    "typing": ("import typing",),
    "inductor_config": ("import torch._inductor.config",),
    "flex_attention": ("import torch.nn.attention.flex_attention",),
    "fallback_random": dedented("""
        # random ops: compiled code draws from the same RNG stream as eager
        torch._inductor.config.fallback_random = True
    """),
    "scaled": dedented("""
        @contextlib.contextmanager
        def scaled(log, factor):
            log.append(1)
            try:
                yield factor * 0.5
            finally:
                log.append(2)
    """),
    "Suppress": dedented("""
        class Suppress:
            def __init__(self, scale):
                self.scale = scale
                self.entered = 0

            def __enter__(self):
                self.entered += 1
                return self.scale

            def __exit__(self, exc_type, exc, tb):
                return exc_type is not None and issubclass(exc_type, ValueError)
    """),
    "Pair": dedented("""
        @dataclasses.dataclass
        class Pair:
            w: torch.Tensor
            k: int = 1
            tags: list = dataclasses.field(default_factory=list)
    """),
    "Block": dedented("""
        class Block(torch.nn.Module):
            def __init__(self, width):
                super().__init__()
                self.register_buffer('shift', torch.linspace(-0.5, 0.5, width))
                self.weight = torch.nn.Parameter(torch.linspace(-1.0, 1.0, width))

            def forward(self, x):
                return torch.tanh(x * self.weight + self.shift)
    """),
    "State": dedented("""
        class State:
            scale = 0.5

            def __init__(self, w):
                self.w = w
                self.calls = 0
    """),
    "Ready": dedented("""
        class Ready:
            def __init__(self, value):
                self.value = value

            def __await__(self):
                yield from ()
                return self.value
    """),
    "Gate": dedented("""
        class Gate:
            async def __aenter__(self):
                return 0.5

            async def __aexit__(self, exc_type, exc, tb):
                return False
    """),
    "Countdown": dedented("""
        class Countdown:
            def __init__(self, n):
                self.n = n

            def __aiter__(self):
                return self

            async def __anext__(self):
                if self.n <= 0:
                    raise StopAsyncIteration
                self.n -= 1
                return self.n
    """),
    "drive": dedented('''
        def drive(coroutine):
            """Run a coroutine that never really suspends; its return value."""
            try:
                while True:
                    coroutine.send(None)
            except StopIteration as stop:
                return stop.value
    '''),
    # the extra argument of kind "object-arg" (see fuzz.generate.program)
    "Box": dedented("""
        class Box:
            def __init__(self, w, k):
                self.w = w
                self.k = k
    """),
}
# Helpers that need others first.
PRELUDE_NEEDS: dict[str, tuple[str, ...]] = {
    "scaled": ("contextlib",),
    "Pair": ("dataclasses",),
    "fallback_random": ("inductor_config",),
}


def helper(name: str, source: str, needs: tuple[str, ...] = ()) -> str:
    """Register the module-level helper ``name`` (``source``: a triple-quoted
    template, see ``dedented``; ``needs``: helpers it needs first, such as its
    imports) and return ``name``, for ``Writer.need``. An import line (``name``
    "functools" for ``import functools``) may be registered by several
    modules with the same source. Raises ValueError for a name already
    registered with another source."""
    lines = dedented(source)
    if PRELUDE.get(name, lines) != lines or PRELUDE_NEEDS.get(name, needs) != needs:
        raise ValueError(f"Expected a new prelude helper but got name={name!r} twice")
    PRELUDE[name] = lines
    if needs:
        PRELUDE_NEEDS[name] = needs
    return name


def imported(module: str) -> str:
    """Register ``import <module>`` as the helper named ``module`` (once) and return the name."""
    return helper(module, f"import {module}")
