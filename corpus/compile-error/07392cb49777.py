# /// script
# requires-python = ">=3.14"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "compile-error|dynamo|IndexError@torch/_dynamo/utils.py:run_node|3.14,3.15"
# kind = "compile-error"
# stage = "dynamo"
# interpreters = ["3.14", "3.15"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-01"
# last-seen = "2026-12-01"
# generator = "tcfuzz.v3"
# seed = 314150169
# count = 1
# status = "open"
# replay = {"3.14/2.15.0" = "reproduces", "3.15/2.15.0" = "reproduces"}
# ///


import torch


class Block(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.register_buffer('shift', torch.linspace(-0.5, 0.5, width))
        self.weight = torch.nn.Parameter(torch.linspace(-1.0, 1.0, width))

    def forward(self, x):
        return torch.tanh(x * self.weight + self.shift)


class Net27(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.linspace(-1.0, 1.0, 108, dtype=torch.float32).reshape(3, 3, 3, 4))
        self.register_buffer('shift', torch.linspace(-1.5, 1.5, 108, dtype=torch.float32).reshape(3, 3, 3, 4))

    def forward(self, x):
        p29 = self.weight
        p30 = self.shift
        v31 = torch.tril(p29, -1)
        v32 = torch.log_softmax(v31, dim=-1)
        v33 = (torch.softmax((v32.clamp(-3.0, 3.0) @ torch.linspace(-1.0, 1.0, 108, dtype=torch.float32).reshape(3, 3, 3, 4).transpose(-2, -1)) * 0.5, dim=-1) @ v32.clamp(-3.0, 3.0))
        v34 = torch.cosh(v32.clamp(-3.0, 3.0)).clamp(-16.0, 16.0)
        v35 = torch.nn.functional.scaled_dot_product_attention(x.clamp(-3.0, 3.0), x.clamp(-3.0, 3.0), x.clamp(-3.0, 3.0))
        v36 = torch.round(x)
        v37 = torch.logical_and(x, v36.clamp(-6.0, 6.0))
        v38 = torch.i0(p29).clamp(-16.0, 16.0)
        v39 = torch.eq(v36.clamp(-6.0, 6.0), v37)
        v40 = torch.asin((-1.0 + 2.0 * (0.05 + 0.9 * torch.sigmoid(v38)))).clamp(-16.0, 16.0)
        return (v33, v34, v35, v39, v40,)


net28 = Net27()


def f(t0, t1, n, grow1, p2, p3, p4, p17, p26):
    t2 = torch.atan(t0[-1])
    v5 = torch.floor_divide(p4, (p4.abs() + 0.5))
    v6 = torch.sum(p3)
    v7 = v5.select(1, 4)
    v8 = torch.ne(p3, p4)
    v9 = torch.nn.functional.cross_entropy(v5.clamp(-8.0, 8.0), (torch.arange(2) * 5 % 5), weight=torch.linspace(0.5, 1.5, 5, dtype=torch.bfloat16).reshape(5), reduction='sum')
    v10 = torch.logical_and(p4, v8)
    v11 = p4.flip(0)
    v12 = torch.logical_xor(v8, v11)
    v13 = torch.copysign(v10, v12)
    v14 = v5.index_select(1, torch.arange(3).flip(0))
    v15 = torch.amax(v14, dim=1, keepdim=True)
    v16 = torch.log_softmax(v11, dim=0)
    try:
        try:
            t2 = torch.tanh(t0[4])
            v18 = torch.abs(p17)
            v19 = torch.sum(p17, dim=-3)
            v20 = torch.nn.functional.group_norm(p17, 3)
            v21 = torch.nn.functional.interpolate(v20, scale_factor=2.0, mode='bilinear', align_corners=False)
            v22 = p17.clone()
            v22.unsqueeze(0).tanh_()
            v23 = torch.nn.functional.conv_transpose2d(v18.clamp(-3.0, 3.0), torch.linspace(-1.0, 1.0, 6, dtype=torch.float32).reshape(3, 2, 1, 1), stride=2, padding=0)
            t2 = torch.tanh(t2 + 0.1 * (v19.float().clamp(-32.0, 32.0).mean() + v21.float().clamp(-32.0, 32.0).mean() + v22.float().clamp(-32.0, 32.0).mean() + v23.float().clamp(-32.0, 32.0).mean()))
            torch._dynamo.graph_break()
            block24 = Block(t0.shape[-1])
            block24.shift.add_(0.5)
            t2 = (block24(torch.sigmoid((t0[-1] * t2))))
        except IndexError:
            torch._dynamo.graph_break()
            assert t2.ndim >= 0, "rank"
        raise IndexError("u7")
    except ValueError, IndexError:
        it25 = iter([t0[-1], t1])
        try:
            while True:
                t2 = torch.tanh(t2 + next(it25))
                torch._dynamo.graph_break()
        except StopIteration:
            t2 = t2 * 0.5
        t2 = torch.tanh(next(it25, t2) + 1.0)
        v41 = net28(p26)
        t2 = torch.tanh(t2 + 0.1 * (v41[0].float().clamp(-32.0, 32.0).mean() + v41[1].float().clamp(-32.0, 32.0).mean() + v41[2].float().clamp(-32.0, 32.0).mean() + v41[3].float().clamp(-32.0, 32.0).mean() + v41[4].float().clamp(-32.0, 32.0).mean()))
    def gen42(v):
        total = v
        while True:
            got = yield torch.tanh(total)
            if got is None:
                return total
            total = torch.tanh(total + got)
    it43 = gen42(torch.atan(t0[0].sum(dim=0)))
    y44 = next(it43)
    y45 = it43.send((t1 * t2).clamp(-3.0, 3.0))
    try:
        it43.send(None)
    except StopIteration as stop:
        y45 = torch.tanh(stop.value + y45)
    t2 = ((y44 + y45))
    block46 = Block(t0.shape[-1])
    t2 = (block46(torch.sin(torch.sin(t2))))
    it47 = iter((t2, t0[0]))
    t2 = torch.tanh(next(it47))
    t2 = torch.cos((next(it47, t0[0])))
    t0.mul_(0.5)
    return torch.cos(t0), t2, v6, v7, v9, v13, v15, v16


def inputs():
    g = torch.Generator().manual_seed(655)
    return (torch.randn(2, 3, 4, generator=g), torch.randn(2, 3, 4, 2, generator=g, dtype=torch.float64)[..., 0], 2, torch.randn(7, generator=g), torch.randn(2, 5, generator=g, dtype=torch.float32, requires_grad=True), ((torch.randperm(5, generator=g).reshape(1, 5) - 2) * 0.25).to(torch.float32), torch.randn(2, 5, generator=g, dtype=torch.bfloat16), torch.randn(6, 3, 1, 4, generator=g, dtype=torch.float32), torch.randn(3, 3, 3, 4, generator=g, dtype=torch.float32))


BACKEND = "eager"
FULLGRAPH = False


if __name__ == "__main__":  # eager vs compiled, twice each; exit 1 while they differ
    import random, sys
    from torch._dynamo.utils import same
    def call(fn):  # seeded as the harness seeds: inputs() and the call each draw from seed 0
        torch.manual_seed(0); random.seed(0); args = inputs(); torch.manual_seed(0); random.seed(0)
        return fn(*args)
    def run(fn):
        try: return [call(fn) for _ in range(2)]
        except BaseException as e: return f"raised {type(e).__name__}: {e}"
    eager, compiled = run(f), run(torch.compile(f, backend=BACKEND, fullgraph=FULLGRAPH))
    print(f"eager:    {eager}\ncompiled: {compiled}")
    sys.exit(0 if type(eager) is type(compiled) and same(eager, compiled, equal_nan=True) else 1)
