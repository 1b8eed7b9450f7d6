# /// script
# requires-python = ">=3.15"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "graph-break|dynamo|using `torch.autograd.grad` with `torch._dynamo.config.trace_autograd_ops=False`|3.15"
# kind = "graph-break"
# stage = "dynamo"
# interpreters = ["3.15"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-01"
# last-seen = "2026-12-01"
# generator = "tcfuzz.v3"
# seed = 314150005
# count = 1
# status = "open"
# replay = {"3.14/2.15.0" = "reproduces", "3.15/2.15.0" = "reproduces"}
# ///


import torch


def f(t0, t1, n, a0, a1, grow13, p14):
    t2 = torch.cos(t1)
    t3 = torch.tanh(t0 + a1.to(t0.dtype) * 0.25)
    groups1 = [[t3, t2], [t2 * n], []]
    flat3 = [*g2 for g2 in groups1]
    t3 = flat3[0] + flat3[-1] * len(flat3)
    for i4 in range(n):
        def gen5(x6):
            nonlocal t2
            u7 = torch.tanh((torch.where(t2 > 0, t1, t3) - (t0 + 1.0)))
            for i8 in range(3):
                yield (t0[-1] / (1.0 + t0[-1].abs()))
        xs9 = list(gen5(torch.atan((t0 * (n + 1) * 0.25))))
        t2 = torch.sin((xs9[0] + xs9[-1]))
    def g10(x11):
        u12 = torch.cos((t2 * (n + 1) * 0.25))
        from operator import mul, add
        x11 = torch.sigmoid((add(mul(torch.sin(torch.maximum(u12, t2)), 0.5), x11)))
        u12 = t1.clamp(-3.0, 3.0)
        return torch.tanh((t2 * (t0[0] + t2)))
    t3 = torch.sigmoid(g10(torch.atan((t0[-1] * t2))))
    v15 = torch.special.scaled_modified_bessel_k1((p14.abs() + 0.25)).clamp(-16.0, 16.0)
    v16 = v15[0:]
    v17 = torch.nanmean(p14, dim=0, keepdim=True)
    v18 = torch.nn.functional.relu6(p14.clamp(-3.0, 3.0))
    v19 = torch.nn.functional.l1_loss(v18.clamp(-3.0, 3.0), v16.clamp(-3.0, 3.0), reduction='sum')
    xs20 = list(torch.sin(t3) for t3 in (t1, t0))
    t3 = torch.sigmoid(((t3 + xs20[0])))
    loss21 = (torch.tanh(a0 * t0) * torch.sin((t1 * (n + 1) * 0.25))).sum()
    (grad0,) = torch.autograd.grad(loss21, [a0])
    return torch.sigmoid(torch.maximum(t3.softmax(dim=-1), t2)), t2, t3, grad0, v17, v19


def inputs():
    g = torch.Generator().manual_seed(4069596)
    return (torch.randn(2, 1, 5, generator=g), torch.randn(2, 1, 5, generator=g), 4, torch.randn(2, 1, 5, generator=g, requires_grad=True), torch.randint(-3, 4, (2, 1, 5,), generator=g), torch.randn(7, generator=g), torch.randn(6, generator=g, dtype=torch.float32))


GB_TYPE = "using `torch.autograd.grad` with `torch._dynamo.config.trace_autograd_ops=False`"

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
