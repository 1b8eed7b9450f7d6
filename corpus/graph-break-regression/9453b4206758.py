# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.12.0"]
# [tool.tcfuzz]
# signature = "graph-break-regression|dynamo|Unsupported Tensor.item() call with capture_scalar_outputs=False [absent on 3.12, 3.13, 3.13t]|3.11"
# kind = "graph-break-regression"
# stage = "dynamo"
# interpreters = ["3.11"]
# backend = "eager"
# device = "cpu"
# torch = "2.12.0+cu130"
# first-seen = "2026-11-30"
# last-seen = "2026-11-30"
# generator = "tcfuzz.v2"
# seed = 2078700000
# count = 1
# status = "open"
# replay = {"3.11/2.12.0" = "reproduces", "3.12/2.12.0" = "does not reproduce", "3.13/2.12.0" = "does not reproduce", "3.13t/2.12.0" = "does not reproduce", "3.12/2.15.0" = "does not reproduce", "3.14/2.15.0" = "does not reproduce", "3.15/2.15.0" = "does not reproduce", "3.11/2.15.0" = "reproduces", "3.13/2.15.0" = "does not reproduce"}
# ///


import torch
import dataclasses

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

@dataclasses.dataclass
class Pair:
    w: torch.Tensor
    k: int = 1
    tags: list = dataclasses.field(default_factory=list)

def f(t0, t1, n):
    t2 = torch.tanh(t0[0] + torch.maximum(t0[0], t0))
    torch._dynamo.graph_break()

    async def co1(v):
        total = await Ready(v * 0.5)
        async with Gate() as k:
            total = torch.tanh(total * k)
        return total
    t2 = drive(co1(torch.tanh(torch.maximum(t2, t0[0])))) / (1.0 + drive(co1(torch.tanh(torch.maximum(t2, t0[0])))).abs())
    with torch.no_grad():
        with torch.no_grad():
            it2 = iter((t1, t1))
            t2 = torch.tanh(next(it2))
            torch._dynamo.graph_break()
            t2 = torch.tanh(next(it2, t0))
            p3 = Pair((t2 * (n + 1) * 0.25).clamp(-3.0, 3.0), k=n)
            p3.k += 1
            p3.tags.append(p3.k)
            t2 = p3.w * p3.k * 0.2
            print(p3.k, p3.tags, p3 == Pair(p3.w, p3.k, [p3.k]))
        try:
            raise ValueError('v3')
            t2 = torch.cos(t1.softmax(dim=-1) * 2.0)
            t2 = torch.sigmoid(t2)
        except Exception as e4:
            print('e4', type(e4).__name__)
            torch._dynamo.graph_break()
        finally:
            s5 = {int((t1 > 0).sum()) for _ in range(2)}
            s6 = {*s5, *{n, 1}, t0.ndim}
            t2 = torch.tanh(torch.where(t2 > 0, t0[0], t0[0]).clamp(-3.0, 3.0) * len(s6) * 0.25)
        torch._dynamo.graph_break()
    return (torch.atan(t0 * 0.5), t2)

def inputs():
    g = torch.Generator().manual_seed(1921)
    return (torch.randn(3, 4, generator=g), torch.randn(3, 1, generator=g), 2)


GB_TYPE = "Unsupported Tensor.item() call with capture_scalar_outputs=False"

if __name__ == "__main__":  # exit 1 while Dynamo still breaks the graph for this reason
    import sys
    from torch._dynamo.utils import counters
    compiled = torch.compile(f, backend="eager")
    for _ in range(2):
        try: compiled(*inputs())
        except BaseException as e: print(f"raised {type(e).__name__}: {e}")
    breaks = [m.splitlines()[0] for c in ("graph_break", "unimplemented") for m in counters[c]]
    print("graph breaks:", breaks)
    sys.exit(GB_TYPE in breaks)
