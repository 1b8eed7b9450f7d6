# /// script
# requires-python = ">=3.15"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "graph-break|dynamo|Unsupported method call|3.15"
# kind = "graph-break"
# stage = "dynamo"
# interpreters = ["3.15"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-01"
# last-seen = "2026-12-01"
# generator = "tcfuzz.v3"
# seed = 314150205
# count = 1
# status = "open"
# replay = {"3.14/2.15.0" = "reproduces", "3.15/2.15.0" = "reproduces"}
# ///


import torch
import collections.abc
import typing


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
    """Run a coroutine that never really suspends; its return value."""
    try:
        while True:
            coroutine.send(None)
    except StopIteration as stop:
        return stop.value


def f(t0, t1, n, grow1, p2, p3, p4, p5):
    t2 = torch.atan(t1)
    t3 = torch.atan(t1.sum(dim=0))
    v6 = p4.reshape(-1, p4.shape[1])
    v7 = torch.cummax(p2, dim=1).values
    v8 = torch.mode(p5, dim=2).values
    v9 = torch.rot90(p3, 1, dims=(-2, -1))
    v10 = torch.max(v8, 1).indices
    v11 = v10.unsqueeze(0)
    v12 = torch.fmax(p4, v6)
    v13 = torch.true_divide(v12, (v10.abs() + 1))
    v14 = torch.mul(v6, v11)
    v15 = torch.stack([v9, v9], dim=2)
    v16 = torch.log_softmax(v9, dim=-3)
    v17 = torch.addr(v13.clamp(-3.0, 3.0), torch.linspace(-1.0, 1.0, 4, dtype=torch.float32).reshape(4), torch.linspace(-1.0, 1.0, 3, dtype=torch.float32).reshape(3), beta=0.5)
    v18 = v7.index_copy(0, torch.arange(3).flip(0), v7 * 2)
    async def co19(v):
        total = await Ready(v * 0.5)
        async with Gate() as k:
            total = torch.tanh(total * k)
        async for i in Countdown(2):
            total = torch.tanh(total + i * 0.25)
        return total
    torch._dynamo.graph_break()
    t3 = ((drive(co19(((t2 - t0) / (1.0 + (t2 - t0).abs()))))) / (1.0 + (drive(co19(((t2 - t0) / (1.0 + (t2 - t0).abs()))))).abs()))
    if isinstance((t1,), collections.abc.Sequence):
        m20 = (+n) * (~n) % 3 + (not n)
        t2 = torch.atan((torch.where(~(t2 > 0), t0, +t1) * (m20 + 1) * 0.2))
    else:
        for i21 in range(n + 1):
            try:
                tm22 = t"s{t3.shape}/{n}"
                tm22 = tm22 + t"+{n + 1}"
                print("tm", tm22.strings, [i.expression for i in tm22.interpolations], tm22.interpolations[1].conversion, tm22.interpolations[1].format_spec)
                t3 = t3 * len(tm22.interpolations) + len(tm22.strings[0])
                fns23 = []
                for i24 in range(3):
                    fns23.append(lambda v: v * (i24 + 1) * 0.25)
                t2 = torch.tanh((sum(fn(t2) for fn in fns23)))
            finally:
                if i21 >= 1:
                    break
                continue
    d25 = {"a": torch.sigmoid((t0 * (n + 1) * 0.25))}
    d25["d"] = t1.softmax(dim=-1)
    d25["d"] = (t0 * 2.0).clamp(-3.0, 3.0)
    groups26 = [{"a": t2}, {"b": t0 * n}, {"a": t0}]
    merged28 = {**g27 for g27 in groups26}
    t2 = merged28["a"] + merged28["b"]
    t1.tanh_()
    return torch.atan(t1), t2, t3, v14, v15, v16, v17, v18


def inputs():
    g = torch.Generator().manual_seed(9809407)
    return (torch.randn(2, 1, 5, generator=g), torch.randn(2, 1, 5, 2, generator=g)[..., 0], 2, torch.randn(7, generator=g), torch.randn(3, 4, 1, generator=g, dtype=torch.float32), ((torch.randperm(12, generator=g).reshape(3, 4, 1) - 6) * 0.25).to(torch.float32), torch.randn(4, 2, generator=g, dtype=torch.float32)[..., ::2], torch.randn(3, 4, 1, generator=g, dtype=torch.float32))


GB_TYPE = "Unsupported method call"

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
