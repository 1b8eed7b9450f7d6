# /// script
# requires-python = ">=3.15"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "graph-break|dynamo|Unsupported Tensor.backward() call|3.15"
# kind = "graph-break"
# stage = "dynamo"
# interpreters = ["3.15"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-01"
# last-seen = "2026-12-01"
# generator = "tcfuzz.v3"
# seed = 314150203
# count = 1
# status = "open"
# replay = {"3.14/2.15.0" = "reproduces", "3.15/2.15.0" = "reproduces"}
# ///


import torch


def f(t0, t1, n, a0, grow4, p5, p6):
    t2 = torch.cos(t1)
    t0.sub_(0.5)
    groups1 = [[t2, t2], [t2 * n], []]
    flat3 = list((*g2 for g2 in groups1))
    t2 = flat3[0] + flat3[-1] * len(flat3)
    v7 = torch.floor_divide(p5.clamp(-6, 6), (p5.clamp(-6, 6).abs() + 1))
    v8 = torch.nn.functional.gelu(p6)
    v9 = p5.repeat(2)
    v10 = v9.unflatten(0, (2, -1))
    v11 = p6.clone()
    v11.view(-1).add_(1.0)
    v12 = torch.softmax(v11.clamp(-8.0, 8.0), dim=0, dtype=torch.float32)
    v13 = torch.xlogy((v8.abs() + 0.5), p6.clamp(-2.0, 2.0)).clamp(-16.0, 16.0)
    v14 = v9.unflatten(0, (2, -1))
    v15 = torch.logit((0.0 + 1.0 * (0.05 + 0.9 * torch.sigmoid(v11)))).clamp(-16.0, 16.0)
    v16 = torch.sigmoid(v9.clamp(-3, 3))
    v17 = torch.lerp(v8, v8, 0.5)
    v18 = torch.hypot(v11, v11)
    v19 = torch.true_divide(v9.clamp(-6, 6), (v9.clamp(-6, 6).abs() + 1))
    v20 = torch.sqrt((p6.abs() + 0.25)).clamp(-16.0, 16.0)
    v21 = torch.argmin(v7, dim=0)
    v22 = torch.nn.functional.layer_norm(v8, (5,), torch.linspace(-1.0, 1.0, 5, dtype=torch.bfloat16).reshape(5), torch.linspace(-1.0, 1.0, 5, dtype=torch.bfloat16).reshape(5))
    loss23 = (torch.tanh(a0 * t0) * (torch.atan(t2) / (1.0 + torch.atan(t2).abs()))).sum()
    loss23.backward()
    return torch.sigmoid(t2.norm().mean(dim=-1, keepdim=True)), t2, a0.grad, v10, v12, v13, v14, v15, v16, v17, v18, v19, v20, v21, v22


def inputs():
    g = torch.Generator().manual_seed(2051)
    return (torch.randn(17, generator=g), torch.randn(17, generator=g), 2, torch.randn(17, generator=g, requires_grad=True), torch.randn(7, generator=g), torch.randint(-8, 9, (5,), generator=g, dtype=torch.int32), torch.randn(5, generator=g, dtype=torch.bfloat16))


GB_TYPE = "Unsupported Tensor.backward() call"

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
