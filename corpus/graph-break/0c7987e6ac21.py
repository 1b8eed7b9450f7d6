# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "graph-break|dynamo|Dynamic shape operator|3.14,3.15"
# kind = "graph-break"
# stage = "dynamo"
# interpreters = ["3.14", "3.15"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-01"
# last-seen = "2026-12-01"
# generator = "tcfuzz.v3"
# seed = 314150012
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

class Net44(torch.nn.Module):

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.linspace(-1.0, 1.0, 6, dtype=torch.float32).reshape(1, 6))
        self.register_buffer('shift', torch.linspace(-1.5, 1.5, 6, dtype=torch.float32).reshape(1, 6))

    def forward(self, x):
        p46 = self.weight
        p47 = self.shift
        v48 = p46.clone()
        v49 = torch.nn.functional.embedding(torch.arange(3).reshape(3) * 3 % 1, v48)
        v50 = torch.mv(v48, torch.linspace(-1.0, 1.0, 6, dtype=torch.float32).reshape(6))
        v51 = p46[x > 0].sum()
        v52 = v49.select(0, 0)
        v53 = torch.argmax(x)
        v54 = torch.argmax(x, dim=0)
        v55 = torch.gcd(v54, v53)
        v56 = torch.ne(v54, v54)
        return (v50, v51, v52, v55, v56)
net45 = Net44()

def f(t0, t1, n, grow1, p2, p3, p4, p43, p58, p59):
    t2 = torch.tanh(torch.sigmoid(t0))
    with torch.enable_grad():
        v5 = torch.log_softmax(p4, dim=-2)
        v6 = torch.addcmul(p2, p2, p4, value=0.5)
        v7 = p3.unflatten(0, (3, -1))
        v8 = torch.special.entr(v5.abs() + 0.25).clamp(-16.0, 16.0)
        v9 = torch.cat([p4, p2, p3], dim=0)
        v10 = torch.stack([v8, v6, v8], dim=1)
        v11 = torch.mode(v7, dim=1).values
        v12 = torch.var(v9.clamp(-3.0, 3.0), dim=1)
        v13 = p2.clone()
        v13.transpose(0, 1)[0].mul_(-1)
        v14 = torch.amax(v11, dim=(1, -2))
        v15 = torch.amax(v9)
        v16 = torch.nn.functional.adaptive_avg_pool1d(v10, 3)
        v17 = torch.stack([v5, v6, v13], dim=0)
        v18 = p2.unflatten(1, (2, -1))
        v19 = torch.lcm(p3.clamp(-6, 6), v14.clamp(-6, 6))
        v20 = torch.bitwise_right_shift(p3, v19.abs().clamp(0, 3))
        v21 = torch.prod(v7.clamp(-2, 2), dim=2)
        v22 = torch.nn.functional.batch_norm(v17, torch.linspace(-0.5, 0.5, 3, dtype=torch.float32), torch.linspace(0.5, 1.5, 3, dtype=torch.float32), training=False)
        v23 = v22.roll(-1, 0)
        v24 = torch.cumsum(v6, dim=1)
        v25 = torch.kthvalue(v21, 2, dim=0).values
        v26 = torch.nn.functional.relu(v5)
        v27 = torch.mean(v13, dim=0)
        v28 = torch.nn.functional.embedding(torch.arange(4).reshape(2, 2) * 3 % 3, v24)
        v29 = torch.amin(v11, dim=0)
        v30 = torch.le(v21.clamp(-6, 6), v21.clamp(-6, 6))
        v31 = torch.unbind(v24, dim=1)[4]
        v32 = v8.to(torch.float16)
        v33 = torch.fmin(v20.clamp(-32, 32), p2)
        v34 = torch.isinf(v20.clamp(-3, 3))
        v35 = torch.var(v9.clamp(-3.0, 3.0), dim=1)
        v36 = torch.nn.functional.pad(v23, (1, 1), mode='reflect')
        v37 = torch.sigmoid(v8.clamp(-3.0, 3.0))
        loss38 = (v12.tanh() * 0.5).sum() + (v15.tanh() * 0.5).sum() + (v16.tanh() * 0.5).sum() + (v18.tanh() * 0.5).sum() + (v27.tanh() * 0.5).sum() + (v28.tanh() * 0.5).sum() + (v31.tanh() * 0.5).sum() + (v33.tanh() * 0.5).sum() + (v35.tanh() * 0.5).sum() + (v36.tanh() * 0.5).sum()
        gr39, = torch.autograd.grad(loss38, [p2], allow_unused=True, materialize_grads=True)

    async def co40(v):
        total = await Ready(v * 0.5)
        async for i in Countdown(2):
            total = torch.tanh(total + i * 0.25)
        return total
    torch._dynamo.graph_break()
    t2 = torch.atan(drive(co40(torch.cos(t2))))

    def g41():
        nonlocal t2
        u42 = torch.sigmoid(t0)
        v57 = net45(p43)
        t2 = torch.tanh(t2 + 0.1 * (v57[0].float().clamp(-32.0, 32.0).mean() + v57[1].float().clamp(-32.0, 32.0).mean() + v57[2].float().clamp(-32.0, 32.0).mean() + v57[3].float().clamp(-32.0, 32.0).mean() + v57[4].float().clamp(-32.0, 32.0).mean()))
        if t0.shape[-1] > 4:
            v60 = torch.mode(p59, dim=0).values
            v61 = torch.std(v60, dim=0, keepdim=True)
            v62 = torch.nn.functional.hardshrink(p59.clamp(-3.0, 3.0))
            v63 = torch.bmm(p58.clamp(-3.0, 3.0), torch.linspace(-1.0, 1.0, 125, dtype=torch.float32).reshape(5, 5, 5))
            v64 = torch.square(v60.clamp(-3.0, 3.0)).clamp(-16.0, 16.0)
            t2 = torch.tanh(t2 + 0.1 * (v61.float().clamp(-32.0, 32.0).mean() + v62.float().clamp(-32.0, 32.0).mean() + v63.float().clamp(-32.0, 32.0).mean() + v64.float().clamp(-32.0, 32.0).mean()))
            xs67 = [torch.tanh(torch.maximum(t0, t1) * (i66 + 1) * 0.25) for i66 in range(3)]
            print('p67', int((t0 > 0).sum()))
        import math
        u42 = torch.atan(u42) * math.pi / 4 / (1.0 + (torch.atan(u42) * math.pi / 4).abs())
        return t1.norm() * torch.tanh(t1) / (1.0 + (t1.norm() * torch.tanh(t1)).abs())
    t2 = torch.atan(g41())
    for x69 in (t2,):
        i70 = 0
        while i70 < 3 and (t1 > -1.0).all():
            i70 += 1
            t2 = t1
        m71 = {'w': t0, 'k': n}
        m72 = {**m71, 'k': 2, **{'b': t2}}
        t2 = torch.tanh(m72['w'] * m72['k'] * 0.5 + m72['b'])
    s73 = {int((t1 > 0).sum()) for _ in range(2)}
    s74 = {*s73, *{n, 1}, t1.ndim}
    t2 = torch.tanh(t1 / (1.0 + t1.abs()) * len(s74) * 0.25)
    return (torch.sin(t1), t2, v12, v15, v16, v18, v25, v26, v27, v28, v29, v30, v31, v32, v33, v34, v35, v36, v37, gr39)

def inputs():
    g = torch.Generator().manual_seed(74010962)
    return (torch.randn(2, 1, 5, generator=g), torch.randn(2, 1, 5, generator=g, dtype=torch.float64), 4, torch.randn(7, generator=g), torch.randn(3, 6, generator=g, dtype=torch.float32, requires_grad=True), torch.randint(-8, 9, (3, 6), generator=g, dtype=torch.int64), torch.randn(3, 6, generator=g, dtype=torch.float32), torch.randn(1, 6, generator=g, dtype=torch.float32), ((torch.randperm(100, generator=g).reshape(5, 4, 5) - 50) * 0.25).to(torch.float32), ((torch.randperm(100, generator=g).reshape(5, 4, 5) - 50) * 0.25).to(torch.float16))


GB_TYPE = "Dynamic shape operator"

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
