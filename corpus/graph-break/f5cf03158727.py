# /// script
# requires-python = ">=3.15"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "graph-break|dynamo|Data-dependent branching|3.15"
# kind = "graph-break"
# stage = "dynamo"
# interpreters = ["3.15"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-01"
# last-seen = "2026-12-01"
# generator = "tcfuzz.v3"
# seed = 314150010
# count = 1
# status = "open"
# replay = {"3.14/2.15.0" = "reproduces", "3.15/2.15.0" = "reproduces"}
# ///


import torch


class State:
    scale = 0.5

    def __init__(self, w):
        self.w = w
        self.calls = 0


def f(t0, t1, n, a0, grow1, p2, p3, p4, p5, p55, p56, p61):
    t2 = torch.tanh((t0 - t1).norm())
    a0.append(t0 * 0.5)
    t3 = torch.tanh(sum(a0))
    v6 = torch.special.scaled_modified_bessel_k0((p4.abs() + 0.25)).clamp(-16.0, 16.0)
    v7 = torch.nn.functional.normalize(p4, dim=0)
    v8 = torch.stack([p4, p3, p2], dim=2)
    v9 = torch.abs(p4)
    v10 = p4.flatten(1, 1)
    v11 = torch.any(p5, dim=0)
    v12 = torch.nn.functional.scaled_dot_product_attention(v9.clamp(-3.0, 3.0), torch.linspace(-1.0, 1.0, 60, dtype=torch.float64).reshape(3, 4, 5), torch.linspace(-2.0, 2.0, 60, dtype=torch.float64).reshape(3, 4, 5))
    v13 = torch.nn.functional.adaptive_avg_pool1d(v12, 2)
    v14 = torch.nn.functional.interpolate(v8, scale_factor=2.0, mode='nearest')
    v15 = v10.to(torch.float16)
    v16 = (torch.softmax((v6.clamp(-3.0, 3.0) @ torch.linspace(-1.0, 1.0, 60, dtype=torch.float64).reshape(3, 4, 5).transpose(-2, -1)) * 0.4472135954999579, dim=-1) @ torch.linspace(-2.0, 2.0, 60, dtype=torch.float64).reshape(3, 4, 5))
    v17 = torch.std(v7, dim=-3)
    v18 = torch.cumprod(torch.tanh(v7), dim=0)
    v19 = torch.gather(p4, 1, (torch.arange(60).reshape(3, 4, 5) * 7 % 4))
    v20 = torch.tril(v19, -1)
    v21 = v7.mT
    v22 = torch.sum(v7, dim=1, keepdim=True)
    v23 = v7[(v10 > 0)].sum()
    v24 = torch.lerp(v14, v14, 0.75)
    v25 = v21.contiguous()
    v26 = torch.rsqrt((v15.abs() + 0.25)).clamp(-16.0, 16.0)
    v27 = torch.sort(p3, dim=0, stable=True).indices
    v28 = torch.acos((-1.0 + 2.0 * (0.05 + 0.9 * torch.sigmoid(p2)))).clamp(-16.0, 16.0)
    v29 = torch.nonzero((v10 > 0)).sum(dim=0)
    v30 = torch.sum(v13, dim=2)
    v31 = torch.log2((v9.abs() + 0.25)).clamp(-16.0, 16.0)
    v32 = torch.softmax(v12, dim=0)
    v33 = torch.ge(v9.clamp(-6.0, 6.0), v20)
    v34 = torch.positive(v22)
    v35 = v19.unflatten(1, (2, -1))
    v36 = torch.digamma((v10.abs() + 0.25)).clamp(-16.0, 16.0)
    v37 = torch.gather(v20, 0, (torch.arange(60).reshape(3, 4, 5) * 3 % 3))
    v38 = v31.index_select(1, (torch.arange(2) // 2 % 4))
    v39 = v25.transpose(1, 0)
    v40 = v39.permute(0, 2, 1)
    v41 = torch.logical_or(v11, v11)
    v42 = v16.roll(-1, 0)
    g43 = lambda x44: torch.cos((x44 + 1.0).abs())
    t2 = torch.atan(g43(torch.cos((t3 + 1.0))))
    d45 = {"a": torch.atan((t2 * t2)), "b": torch.sigmoid((t0 * (n + 1) * 0.25))}
    d45.update(a=torch.cos((t0 + t3)))
    d45.update(b=torch.atan(t0.mean(dim=-1, keepdim=True)))
    if "a" in d45:
        st46 = State((torch.maximum(t0[0], d45["a"]) / (1.0 + torch.maximum(t0[0], d45["a"]).abs())))
        st46.calls += n
        st46.w = torch.tanh(st46.w * State.scale)
        State.scale = State.scale * 0.5
        st46.extra = st46.calls
        del st46.extra
        t2 = torch.cos(((st46.w * st46.calls * 0.25)))
        print("p46", t3.dtype)
        xs48 = [torch.tanh((t0[0] + 1.0)), torch.sin(torch.where(t2 > 0, t0, t3)), torch.tanh(t0)]
    else:
        def gen49(x50):
            u51 = torch.sigmoid(torch.where(t1 > 0, x50, x50))
            for i52 in range(2):
                yield (x50 / (1.0 + x50.abs()))
        t3 = next(gen49(torch.sin((t0 + t2))))
        def g53():
            nonlocal t2
            u54 = torch.tanh(t1)
            torch._dynamo.graph_break()
            v57 = torch.nn.functional.conv_transpose1d(p56.clamp(-3.0, 3.0), torch.linspace(-1.0, 1.0, 8, dtype=torch.float64).reshape(2, 2, 2), stride=2, padding=0)
            v58 = torch.lt(p56, p55.clamp(-6, 6))
            v59 = torch.count_nonzero(v58, dim=0)
            t2 = torch.tanh(t2 + 0.1 * (v57.float().clamp(-32.0, 32.0).mean() + v59.float().clamp(-32.0, 32.0).mean()))
            return torch.cos(((t3 * 0.5) + (t3 * (n + 1) * 0.25)))
        t2 = g53()
    try:
        if n > 1:
            raise ValueError("v59")
        t2 = sum([torch.cos((t0[0] * t3)) for x60 in (t2,)]).clamp(-3.0, 3.0)
    except (ValueError, IndexError):
        if (torch.tanh(t0) > 0).any():
            v62 = p61.unsqueeze(1).expand(-1, 3)
            v63 = v62.clone()
            v63.narrow(0, 0, 1).sub_(1.0)
            v64 = (v62 @ torch.linspace(-1.0, 1.0, 6, dtype=torch.float32).reshape(3, 2))
            v65 = torch.nn.functional.smooth_l1_loss(v64, torch.linspace(-1.0, 1.0, 2, dtype=torch.float32).reshape(1, 2), reduction='sum')
            v66 = torch.cumsum(p61, dim=0)
            t2 = torch.tanh(t2 + 0.1 * (v63.float().clamp(-32.0, 32.0).mean() + v65.float().clamp(-32.0, 32.0).mean() + v66.float().clamp(-32.0, 32.0).mean()))
        if 0 < n <= 3:
            d69 = {f"k{i68}": torch.sigmoid((t1.sum(dim=0) * (i68 + 1) * 0.25)) for i68 in range(3)}
    finally:
        groups70 = [[t2, t3], [t3 * n], []]
        flat72 = list((*g71 for g71 in groups70))
        t3 = flat72[0] + flat72[-1] * len(flat72)
        try:
            try:
                raise IndexError("again2")
            except IndexError:
                print("p72", n, t3.ndim)
                raise
        except (IndexError, KeyError):
            tm74 = t"s{t0.shape}/{n!s:<3}"
            print("tm", tm74.strings, [i.expression for i in tm74.interpolations], tm74.interpolations[1].conversion, tm74.interpolations[1].format_spec)
            t2 = t0 * len(tm74.interpolations) + len(tm74.strings[0])
            d77 = {f"k{i76}": torch.cos((t0 * (i76 + 1) * 0.25)) for i76 in range(3)}
    return torch.tanh((t2.mean(dim=-1, keepdim=True) + (t1 * t2))), t2, t3, v17, v18, v23, v24, v26, v27, v28, v29, v30, v32, v33, v34, v35, v36, v37, v38, v40, v41, v42


def inputs():
    g = torch.Generator().manual_seed(4358)
    return (torch.randn(3, 4, generator=g), torch.randn(3, 4, 2, generator=g)[..., 0], 4, [torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g)], torch.randn(7, generator=g), torch.randn(3, 4, 10, generator=g, dtype=torch.float32)[..., ::2], ((torch.randperm(60, generator=g).reshape(3, 4, 5) - 30) * 0.25).to(torch.float32), torch.randn(3, 4, 5, generator=g, dtype=torch.float64), torch.randn(3, 4, 5, generator=g) > 0, torch.randint(-8, 9, (3, 2, 1), generator=g, dtype=torch.int64), torch.randn(3, 2, 1, generator=g, dtype=torch.float64), ((torch.randperm(1, generator=g).reshape(1) - 0) * 0.25).to(torch.float32))


GB_TYPE = "Data-dependent branching"

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
