# /// script
# requires-python = ">=3.15"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "graph-break|dynamo|Uninitialized nn.Module|3.15"
# kind = "graph-break"
# stage = "dynamo"
# interpreters = ["3.15"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-01"
# last-seen = "2026-12-01"
# generator = "tcfuzz.v3"
# seed = 314150011
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


def f(t0, t1, n, grow5, p6, p7, p8, p38, p44, p45, p56, p57):
    t2 = t1.clamp(-3.0, 3.0)
    t3 = torch.tanh(t2)
    try:
        groups1 = [[t1, t1], [t1 * n], []]
        flat3 = [*g2 for g2 in groups1]
        t3 = flat3[0] + flat3[-1] * len(flat3)
        block4 = Block(t0.shape[-1])
        torch._dynamo.graph_break()
        t3 = ((block4(((t0 - t3) / (1.0 + (t0 - t3).abs())))) / (1.0 + (block4(((t0 - t3) / (1.0 + (t0 - t3).abs())))).abs()))
        print(sorted(k for k, _ in block4.named_parameters()), len(list(block4.buffers())))
        if "x" in "ab":
            v9 = torch.nn.functional.group_norm(p8, 1, torch.linspace(-1.0, 1.0, 2, dtype=torch.float64).reshape(2), torch.linspace(-1.0, 1.0, 2, dtype=torch.float64).reshape(2))
            v10 = p8.unflatten(0, (2, -1))
            v11 = torch.isfinite(p6.clamp(-3.0, 3.0))
            torch._dynamo.graph_break()
            v12 = torch.nn.functional.gelu(p6, approximate='tanh')
            v13 = torch.special.modified_bessel_i1(v9.clamp(-3.0, 3.0)).clamp(-16.0, 16.0)
            v14 = torch.count_nonzero(v10, dim=2)
            v15 = torch.sort(v13, dim=2, descending=True).values
            v16 = torch.stack([p8, v13], dim=2)
            v17 = torch.nonzero((p6 > 0)).sum(dim=0)
            v18 = torch.le(v10, v10)
            v19 = v15.clone()
            v19.narrow(0, 0, 1).sub_(1.0)
            v20 = torch.logical_not(v17.clamp(-3, 3))
            v21 = v13.unflatten(2, (2, -1))
            v22 = torch.nn.functional.conv_transpose2d(v16.clamp(-3.0, 3.0), torch.linspace(-1.0, 1.0, 54, dtype=torch.float64).reshape(2, 3, 3, 3), stride=2, padding=1)
            v23 = torch.fmin(v10, v16)
            v24 = torch.nn.functional.group_norm(v19.clamp(-32.0, 32.0), 2)
            v25 = torch.nn.functional.scaled_dot_product_attention(v21.clamp(-3.0, 3.0), v21.clamp(-3.0, 3.0), v21.clamp(-3.0, 3.0))
            v26 = torch.prod(torch.tanh(v24))
            v27 = v26.clone()
            v28 = torch.rsqrt((v17.abs() + 0.25)).clamp(-16.0, 16.0)
            v29 = torch.argmax(v10, dim=2)
            v30 = v28.unsqueeze(0).expand(2, -1)
            v31 = torch.nonzero((v10 > 0)).sum(dim=0)
            v32 = torch.split(v11, 1, dim=2)[1]
            v33 = torch.einsum('bij,bjk->bik', v24.clamp(-3.0, 3.0), torch.linspace(-1.0, 1.0, 8, dtype=torch.float64).reshape(2, 2, 2))
            v34 = torch.bitwise_left_shift(v29, v14.abs().clamp(0, 3))
            torch._dynamo.graph_break()
            v35 = torch.nn.functional.silu(v27)
            v36 = torch.nn.functional.batch_norm(v23, torch.linspace(-0.5, 0.5, 2, dtype=torch.float64), torch.linspace(0.5, 1.5, 2, dtype=torch.float64), training=False)
            v37 = torch.erf(p8)
            t3 = torch.tanh(t3 + 0.1 * (v12.float().clamp(-32.0, 32.0).mean() + v18.float().clamp(-32.0, 32.0).mean() + v20.float().clamp(-32.0, 32.0).mean() + v22.float().clamp(-32.0, 32.0).mean() + v25.float().clamp(-32.0, 32.0).mean() + v30.float().clamp(-32.0, 32.0).mean() + v31.float().clamp(-32.0, 32.0).mean() + v32.float().clamp(-32.0, 32.0).mean() + v33.float().clamp(-32.0, 32.0).mean() + v34.float().clamp(-32.0, 32.0).mean() + v35.float().clamp(-32.0, 32.0).mean() + v36.float().clamp(-32.0, 32.0).mean() + v37.float().clamp(-32.0, 32.0).mean()))
    finally:
        if n % 2 == 0:
            v43 = torch.stack([torch.xlogy(((x39.clamp(-2.0, 1.5)).abs() + 0.5), x39.clamp(-2.0, 2.0)).clamp(-16.0, 16.0) for x39 in p38.unbind(0)])
            t3 = torch.tanh(t3 + 0.1 * (v43.float().clamp(-32.0, 32.0).mean()))
            v46 = torch.median(p45, dim=0).values
            v47 = p45.unflatten(0, (2, -1))
            v48 = torch.diag_embed(p45)
            v49 = p45[-2]
            v50 = torch.any(p45, dim=-1, keepdim=True)
            v51 = p45.clone()
            v51[::2].mul_(2)
            t2 = torch.tanh(t2 + 0.1 * (v46.float().clamp(-32.0, 32.0).mean() + v47.float().clamp(-32.0, 32.0).mean() + v48.float().clamp(-32.0, 32.0).mean() + v49.float().clamp(-32.0, 32.0).mean() + v50.float().clamp(-32.0, 32.0).mean() + v51.float().clamp(-32.0, 32.0).mean()))
            t1.abs_()
        else:
            d52 = {"a": torch.tanh(torch.logsumexp(t2, dim=-1, keepdim=True)), "b": torch.relu(t1).clamp(-3.0, 3.0)}
            d52["e"] = (-torch.minimum(t0, t0)).clamp(-3.0, 3.0)
            del d52["a"]
            if n < t0.shape[-1] <= 17:
                torch._dynamo.graph_break()
    groups53 = [[t1, t1], [t1 * n], []]
    flat55 = list((*g54 for g54 in groups53))
    torch._dynamo.graph_break()
    t3 = flat55[0] + flat55[-1] * len(flat55)
    torch._dynamo.graph_break()
    v58 = torch.nn.functional.softplus(p56)
    v59 = torch.nn.functional.relu(p57)
    try:
        with torch.autograd.grad_mode.no_grad():
            xs60 = [torch.atan(torch.where(t0 > 0, t0, t2)), (t0 / (1.0 + t0.abs()))]
            xs60.insert(0, torch.sin(t0))
            t3 = torch.cos(t3)
        groups61 = [{"a": t2}, {"b": t3 * n}, {"a": t3}]
        merged63 = {**g62 for g62 in groups61}
        t2 = merged63["a"] + merged63["b"]
        t2 = torch.tanh(t0)
    finally:
        print("p63", n, t0.ndim)
        d65 = {"a": torch.where(t2 > 0, t2, t3).clamp(-3.0, 3.0), "b": torch.sin(torch.minimum(t3, t2))}
        del d65["a"]
    return torch.sigmoid((t3 * 0.5)), t2, t3, v58, v59


def inputs():
    g = torch.Generator().manual_seed(78581)
    return (torch.randn(17, generator=g), torch.randn(17, generator=g), 4, torch.randn(7, generator=g), torch.randn(2, 2, 2, generator=g, dtype=torch.float32), torch.randint(-8, 9, (2, 5), generator=g, dtype=torch.int32), ((torch.randperm(8, generator=g).reshape(2, 2, 2) - 4) * 0.25).to(torch.float64), torch.randn(4, generator=g, dtype=torch.float32)[..., ::2].requires_grad_(), torch.randn(2, generator=g, dtype=torch.float32)[..., ::2], torch.randn(2, generator=g, dtype=torch.float32), torch.randn(4, generator=g, dtype=torch.float32), torch.randn(1, generator=g, dtype=torch.float32))


GB_TYPE = "Uninitialized nn.Module"

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
