# /// script
# requires-python = ">=3.15"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "graph-break|dynamo|Missing bytecode handler|3.15"
# kind = "graph-break"
# stage = "dynamo"
# interpreters = ["3.15"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-01"
# last-seen = "2026-12-01"
# generator = "tcfuzz.v3"
# seed = 314150057
# count = 1
# status = "open"
# replay = {"3.14/2.15.0" = "reproduces", "3.15/2.15.0" = "reproduces"}
# ///


import torch


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


def f(t0, t1, n, a0, grow1, p2, p3):
    t2 = torch.sigmoid(t0)
    t3 = torch.tanh(t2)
    t4 = torch.tanh(torch.cos(t1))
    t5 = torch.tanh(t0 + a0.to(t0.dtype) * 0.25)
    v4 = torch.bucketize(p2, torch.tensor([-1.3, -0.1, 0.6, 1.9], dtype=torch.float32), right=True)
    v5 = torch.median(p2, dim=1).values
    v6 = torch.nn.functional.leaky_relu(p3, 0.1)
    v7 = p3.repeat(1, 3, 1)
    v8 = torch.log_softmax(v7, dim=2)
    v9 = torch.nn.functional.hardtanh(v6.clamp(-3.0, 3.0))
    v10 = torch.fmax(v7, v7)
    torch._dynamo.graph_break()
    v11 = torch.chunk(v5, 2, dim=0)[0]
    v12 = torch.lerp(p3, p3, 0.5)
    v13 = torch.amin(v9, dim=(2, 1))
    v14 = torch.addr(v11.clamp(-3.0, 3.0), torch.linspace(-1.0, 1.0, 1, dtype=torch.float32).reshape(1), torch.linspace(-1.0, 1.0, 4, dtype=torch.float32).reshape(4), beta=0.5)
    torch._dynamo.graph_break()
    v15 = torch.prod(torch.tanh(p3), dim=0)
    v16 = v15.clone()
    v16.narrow(0, 0, 1).sub_(1.0)
    v17 = torch.nn.functional.pad(v14, (2, 1), mode='replicate')
    v18 = torch.nn.functional.huber_loss(p3.clamp(-3.0, 3.0), torch.linspace(-1.0, 1.0, 10, dtype=torch.bfloat16).reshape(2, 5, 1), reduction='none')
    v19 = torch.heaviside(v10, v10)
    v20 = torch.diag_embed(v12)
    v21 = torch.sum(p3)
    torch._dynamo.graph_break()
    v22 = (torch.softmax((v10.clamp(-3.0, 3.0) @ torch.linspace(-1.0, 1.0, 30, dtype=torch.bfloat16).reshape(2, 15, 1).transpose(-2, -1)) * 1.0, dim=-1) @ v10.clamp(-3.0, 3.0))
    v23 = torch.gt(v19.clamp(-6.0, 6.0), v19.clamp(-6.0, 6.0))
    v24 = torch.remainder(p3, (p3.abs() + 0.5))
    v25 = torch.xlogy((v18.abs() + 0.5), v24.clamp(-2.0, 2.0)).clamp(-16.0, 16.0)
    v26 = torch.erfinv((-1.0 + 2.0 * (0.05 + 0.9 * torch.sigmoid(v7)))).clamp(-16.0, 16.0)
    v27 = torch.nn.functional.adaptive_avg_pool1d(p2, 2)
    v28 = v17.permute(0, 1)
    torch._dynamo.graph_break()
    groups29 = [[t3, t5], [t5 * n], []]
    flat31 = [*g30 for g30 in groups29]
    t2 = flat31[0] + flat31[-1] * len(flat31)
    def gen32(x33):
        u34 = torch.atan((t3 * (-t1)))
        for i35 in range(3):
            yield torch.sin((t2 * x33))
    xs36 = list(gen32(torch.cos(torch.minimum(t0, t4))))
    t5 = (xs36[0] + xs36[-1]).clamp(-3.0, 3.0)
    async def co37(v):
        total = await Ready(v * 0.5)
        async with Gate() as k:
            total = torch.tanh(total * k)
        async for i in Countdown(2):
            total = torch.tanh(total + i * 0.25)
        return total
    t3 = (drive(co37((xs36[0] / (1.0 + xs36[0].abs())))))
    return torch.sin((torch.logsumexp(t0, dim=-1, keepdim=True) + (t4 / (1.0 + t4.abs())))), t2, t3, t4, t5, v4, v8, v13, v16, v20, v21, v22, v23, v25, v26, v27, v28


def inputs():
    g = torch.Generator().manual_seed(268)
    return (torch.randn(17, generator=g), torch.randn(1, generator=g), 3, torch.randint(-3, 4, (17,), generator=g), torch.randn(7, generator=g), torch.randn(2, 5, 4, generator=g, dtype=torch.float32), torch.randn(2, 5, 1, generator=g, dtype=torch.bfloat16))


GB_TYPE = "Missing bytecode handler"

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
