# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "graph-break|dynamo|Attempted to read undefined local variable|3.14,3.15"
# kind = "graph-break"
# stage = "dynamo"
# interpreters = ["3.14", "3.15"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-01"
# last-seen = "2026-12-01"
# generator = "tcfuzz.mutate"
# seed = 314150040
# count = 1
# status = "open"
# replay = {"3.14/2.15.0" = "reproduces", "3.15/2.15.0" = "reproduces"}
# ///


import torch
import contextlib

@contextlib.contextmanager
def scaled(log, factor):
    try:
        yield (factor * 0.5)
    finally:
        log.append(2)

def f(x, y, n, w, u, s, v, v2, v3):
    t = (y * (n + 1) * 0.25 * 2.0).clamp(-3.0, 3.0)
    t2 = torch.cos(x.mean())
    t3 = torch.nn.functional.celu(u, alpha=2.0)
    t4 = torch.nn.functional.gelu(u)
    t5 = torch.logaddexp(t4, u)
    t6 = t5.reshape(-1)
    t7 = torch.diag_embed(u)
    torch._dynamo.graph_break()
    t8 = torch.nn.functional.pad(t7, (2, 2), mode='replicate')
    t9 = torch.nn.functional.scaled_dot_product_attention(t7, torch.linspace(-1.0, 1.0, 5, dtype=torch.float32).reshape(5, 1, 1), torch.linspace(-2.0, 2.0, 5, dtype=torch.float32).reshape(5, 1, 1), is_causal=True)
    if n % 2 == 0:
        x.tanh_()
    else:
        global COUNT29
        COUNT29 += 1
        LOG30.append(COUNT29 * 1)
        t = torch.sin(-t2) * (COUNT29 % 3 + 1) * 0.25
    t10 = torch.stack([torch.addcdiv(i, i.view(i.shape[0], i.shape[1], -1), i.view(i.shape[0], i.shape[1], -1).abs() + 0.5, value=0.5) for i in v2.unbind(0)])

    def gen_fn(t18):
        nonlocal t
        t11 = torch.sin(t)
        yield torch.minimum(y, y).clamp(-3.0, 3.0)
        t12 = v3.unsqueeze(0)
        t13 = torch.cat([v3, v3, v3], dim=0)
        t14 = v3.squeeze(0)
        t15 = torch.expm1(v3.clamp(-3.0, 3.0)).clamp(-16.0, 16.0)
        t16 = torch.linalg.vector_norm(t15, dim=0)
        t17 = torch.nn.functional.logsigmoid(t12)
        t18 = torch.tanh(t18 + 0.1 * (t13.float().clamp(-32.0, 32.0).mean() + t14.float().clamp(-32.0, 32.0).mean() + t16.float().clamp(-32.0, 32.0).mean() + t17.float().clamp(-32.0, 32.0).mean()))
        yield t11.clamp(-3.0, 3.0)
        yield t2.softmax(dim=-1).clamp(-3.0, 3.0)
    t2 = torch.cos(sum(gen_fn(torch.sin(x * x[0]))))
    return (t.clamp(-3.0, 3.0), t, t2, t3, t6, v11, v12, v14, v15, t10)

def inputs():
    g = torch.Generator().manual_seed(4956)
    return (torch.randn(3, 17, generator=g), torch.randn(17, generator=g, dtype=torch.float64), 2, torch.randn(7, generator=g), ((torch.randperm(5, generator=g).reshape(5, 1) - 2) * 0.25).to(torch.float32), torch.randint(-8, 9, (5, 1), generator=g, dtype=torch.int64), ((torch.randperm(8, generator=g).reshape(4, 2) - 4) * 0.25).to(torch.float32), torch.randn(6, 5, 2, 4, generator=g, dtype=torch.float32), torch.randn(1, generator=g, dtype=torch.float32))


GB_TYPE = "Attempted to read undefined local variable"

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
