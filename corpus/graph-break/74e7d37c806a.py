# /// script
# requires-python = ">=3.14"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "graph-break|dynamo|Attempt to trace generator|3.14,3.15"
# kind = "graph-break"
# stage = "dynamo"
# interpreters = ["3.14", "3.15"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-01"
# last-seen = "2026-12-01"
# generator = "tcfuzz.v3"
# seed = 314150001
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


def f(t0, t1, n, a0, grow2, p3, p4, p20, p26, p33, p34, p39, p40):
    t2 = torch.sin(t0[-1])
    t3 = torch.sin(t0)
    t4 = torch.sin((t0[-1] * 2.0))
    a0.append(t0 * 0.5)
    t5 = torch.tanh(sum(a0))
    torch._dynamo.graph_break()
    t5 = torch.atan(sum([torch.sigmoid(torch.sin(t5)) for x1 in (t4, t5,)]))
    try:
        v5 = torch.special.scaled_modified_bessel_k0((p3.abs() + 0.25)).clamp(-16.0, 16.0)
        v6 = torch.cummin(p3, dim=0).values
        v7 = v6.view(-1, v6.shape[2])
        v8 = v6.index_select(2, torch.arange(2).flip(0))
        v9 = torch.all(p3, dim=1)
        v10 = torch.einsum('bij,bjk->bik', v8.clamp(-3.0, 3.0), torch.linspace(-1.0, 1.0, 4, dtype=torch.float32).reshape(1, 2, 2))
        v11 = torch.nn.functional.interpolate(v5, scale_factor=2.0, mode='nearest')
        v12 = v6.unsqueeze(3)
        v13 = torch.addmv(torch.linspace(-1.0, 1.0, 5, dtype=torch.float32).reshape(5), v7.clamp(-3.0, 3.0), torch.linspace(-1.0, 1.0, 5, dtype=torch.float32).reshape(5), alpha=0.5)
        v14 = torch.mean(v8)
        v15 = torch.nn.functional.layer_norm(v7, (5, 5))
        t3 = torch.tanh(t3 + 0.1 * (v9.float().clamp(-32.0, 32.0).mean() + v10.float().clamp(-32.0, 32.0).mean() + v11.float().clamp(-32.0, 32.0).mean() + v12.float().clamp(-32.0, 32.0).mean() + v13.float().clamp(-32.0, 32.0).mean() + v14.float().clamp(-32.0, 32.0).mean() + v15.float().clamp(-32.0, 32.0).mean()))
        def gen16(v):
            total = v
            while True:
                got = yield torch.tanh(total)
                if got is None:
                    return total
                total = torch.tanh(total + got)
        it17 = gen16(torch.sigmoid(torch.logsumexp(t3, dim=-1, keepdim=True)))
        y18 = next(it17)
        y19 = it17.send(torch.sin(torch.sin(t5)))
        try:
            it17.send(None)
        except StopIteration as stop:
            y19 = torch.tanh(stop.value + y19)
        t2 = ((y18 + y19)).clamp(-3.0, 3.0)
        if n % 2 == 0:
            raise IndexError("i19")
        try:
            if n > 3:
                raise ValueError("v19")
            if n < t0.shape[-1] <= 17:
                v21 = torch.take_along_dim(p20, (torch.arange(1).reshape(1) * 7 % 1), dim=0)
                v22 = torch.sin(v21.clamp(-3.0, 3.0))
                v23 = torch.log1p((v22.abs() + -0.75)).clamp(-16.0, 16.0)
                v24 = torch.count_nonzero(p20)
                t2 = torch.tanh(t2 + 0.1 * (v23.float().clamp(-32.0, 32.0).mean() + v24.float().clamp(-32.0, 32.0).mean()))
        except Exception as e25:
            print("e25", type(e25).__name__)
            t2.mul_(0.5)
        else:
            v32 = sum((torch.split(x27, 1, dim=2)[1] for x27 in p26.unbind(0)), torch.zeros((), dtype=torch.float64))
            t5 = torch.tanh(t5 + 0.1 * (v32.float().clamp(-32.0, 32.0).mean()))
    except IndexError:
        try:
            if t0.shape[-1] > 4:
                raise IndexError("i32")
            v35 = torch.argmin(p34, dim=-1, keepdim=True)
            v36 = v35.clone()
            v37 = torch.xlogy((v35.abs() + 1), v36).clamp(-16.0, 16.0)
            t5 = torch.tanh(t5 + 0.1 * (v37.float().clamp(-32.0, 32.0).mean()))
        except IndexError:
            block38 = Block(t0.shape[-1])
            t2 = torch.sigmoid((block38(torch.sigmoid((t4 * 2.0)))))
            print(sorted(k for k, _ in block38.named_parameters()), len(list(block38.buffers())))
        finally:
            t1.abs_()
            v41 = torch.nn.functional.hardtanh(p39, -0.5, 0.5)
            v42 = torch.gather(p39, 1, (torch.arange(20).reshape(4, 5, 1) * 7 % 5))
            t3 = torch.tanh(t3 + 0.1 * (v41.float().clamp(-32.0, 32.0).mean() + v42.float().clamp(-32.0, 32.0).mean()))
    finally:
        try:
            raise ValueError("u7")
        except ValueError, IndexError:
            d43 = {"a": (t0[-1].mean() / (1.0 + t0[-1].mean().abs())), "b": (torch.relu(t3) / (1.0 + torch.relu(t3).abs()))}
            d43.setdefault("b", t2)
            d43["b"] = torch.cos(t2)
            fns44 = []
            for i45 in range(n):
                fns44.append(lambda v: v * (i45 + 1) * 0.25)
                torch._dynamo.graph_break()
            t3 = (sum(fn(t5) for fn in fns44)).clamp(-3.0, 3.0)
    return t5.softmax(dim=-1).mean(), t2, t3, t4, t5


def inputs():
    g = torch.Generator().manual_seed(1022104)
    return (torch.randn(2, 5, generator=g), torch.randn(2, 5, generator=g), 1, [torch.randn(2, 5, generator=g), torch.randn(2, 5, generator=g)], torch.randn(7, generator=g), torch.randn(1, 5, 5, generator=g, dtype=torch.float32), torch.randint(-8, 9, (5,), generator=g, dtype=torch.int64), torch.randn(1, generator=g, dtype=torch.float32), torch.randn(5, 1, 6, 12, generator=g, dtype=torch.float64)[..., ::2], ((torch.randperm(1, generator=g).reshape(1) - 0) * 0.25).to(torch.float32), torch.randn(1, generator=g, dtype=torch.float32), ((torch.randperm(20, generator=g).reshape(4, 5, 1) - 10) * 0.25).to(torch.float32), torch.randn(5, 1, generator=g, dtype=torch.bfloat16))


GB_TYPE = "Attempt to trace generator"

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
