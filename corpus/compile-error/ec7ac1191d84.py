# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.12.0"]
# [tool.tcfuzz]
# signature = "compile-error|dynamo|AssertionError@torch/_dynamo/exc.py:raise_observed_exception|3.11,3.12,3.13,3.13t"
# kind = "compile-error"
# stage = "dynamo"
# interpreters = ["3.11", "3.12", "3.13", "3.13t"]
# backend = "eager"
# device = "cpu"
# torch = "2.12.0"
# first-seen = "2026-11-30"
# last-seen = "2026-11-30"
# generator = "tcfuzz.v2"
# seed = 4000010
# count = 1
# status = "open"
# ///


import torch
import collections.abc
import typing
import contextlib

@contextlib.contextmanager
def scaled(log, factor):
    try:
        yield (factor * 0.5)
    finally:
        log.append(2)

class Ready:

    def __init__(self, value):
        self.value = value

    def __await__(self):
        yield from ()
        return self.value

class Gate:

    async def __aenter__(self):
        return 0.5

    async def __aexit__(self, exc_type, exc, tb):
        return False

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

def drive(coroutine):
    try:
        while True:
            coroutine.send(None)
    except StopIteration as stop:
        return stop.value

def f(t0, t1, n):
    t2 = torch.minimum(t0, t1) / (1.0 + torch.minimum(t0, t1).abs())
    t3 = t1.clamp(-3.0, 3.0)
    t4 = (t2 * t2 - t3) / (1.0 + (t2 * t2 - t3).abs())
    if isinstance(n, typing.SupportsIndex):

        def gen1(v):
            yield torch.tanh(v)
            yield torch.sin(v)
            return v * 0.5

        def gen2(v):
            r = (yield from gen1(v))
            yield torch.tanh(r)
        for x3 in gen2(torch.atan(t0).clamp(-3.0, 3.0)):
            t3 = torch.tanh(t3 + x3)
    else:
        t2 = torch.atan(t0[0])
    log4 = []
    with scaled(log4, 1.0) as k5:
        t3 = torch.tanh(t0 * k5)

        def outer6(v):
            acc8 = v * 0.5

            def inner7(w, *, scale=0.5):
                nonlocal acc8
                acc8 = torch.tanh(acc8 + w * scale)
                torch._dynamo.graph_break()
                return acc8
            inner7(v)
            inner7(v, scale=0.25)
            return acc8
        t4 = outer6((t4 * (n + 1) * 0.25).clamp(-3.0, 3.0)).clamp(-3.0, 3.0)
        for i9 in range(n):

            async def co10(v):
                total = await Ready(v * 0.5)
                async with Gate() as k:
                    total = torch.tanh(total * k)
                async for i in Countdown(2):
                    total = torch.tanh(total + i * 0.25)
                return total
            t3 = drive(co10(torch.sigmoid(torch.where(t0 > 0, t4, t3))))
    print(log4)
    t2 = torch.atan(sum((p * q for p, q in zip((t0, t1), reversed((t1, t0))))))
    return (torch.cos(t0.clamp(-1.0, 1.0)), t2, t3, t4)

def inputs():
    g = torch.Generator().manual_seed(576)
    return (torch.randn(1, 1, 1, generator=g), torch.randn(1, 1, generator=g), 1)


FULLGRAPH = False


CALLS = ["fresh", "cached"]


BACKEND = "eager"
FULLGRAPH = False


if __name__ == "__main__":  # eager vs compiled, twice each; exit 1 while they differ
    import sys
    from torch._dynamo.utils import same
    def run(fn):
        try: return [fn(*inputs()) for _ in range(2)]
        except Exception as e: return f"raised {type(e).__name__}: {e}"
    eager, compiled = run(f), run(torch.compile(f, backend=BACKEND, fullgraph=FULLGRAPH))
    print(f"eager:    {eager}\ncompiled: {compiled}")
    sys.exit(0 if type(eager) is type(compiled) and same(eager, compiled, equal_nan=True) else 1)
