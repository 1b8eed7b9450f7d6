# /// script
# requires-python = ">=3.15"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "graph-break|dynamo|Unsupported Tensor.item() call with capture_scalar_outputs=False|3.15"
# kind = "graph-break"
# stage = "dynamo"
# interpreters = ["3.15"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-01"
# last-seen = "2026-12-01"
# generator = "tcfuzz.v3"
# seed = 314150025
# count = 1
# status = "open"
# replay = {"3.14/2.15.0" = "reproduces", "3.15/2.15.0" = "reproduces"}
# ///


import torch
import collections.abc
import typing


class Block(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.register_buffer('shift', torch.linspace(-0.5, 0.5, width))
        self.weight = torch.nn.Parameter(torch.linspace(-1.0, 1.0, width))

    def forward(self, x):
        return torch.tanh(x * self.weight + self.shift)


def f(t0, t1, n, grow10, p11, p12, p13):
    t2 = torch.atan(t0)
    with torch.no_grad():
        try:
            raise IndexError("i0")
            if isinstance(n, (int, float)):
                fns1 = []
                for i2 in range(3):
                    fns1.append(lambda v, k=i2: v * (k + 1) * 0.25)
                t2 = torch.tanh((sum(fn(t2) for fn in fns1)))
            else:
                groups3 = [[t0, t1], [t1 * n], []]
                flat5 = [*g4 for g4 in groups3]
                torch._dynamo.graph_break()
                t2 = flat5[0] + flat5[-1] * len(flat5)
            t2 = torch.tanh(torch.minimum(t2, t1))
        except (ValueError, IndexError):
            s6 = {int((t0 > 0).sum()) for _ in range(2)}
            s7 = {*s6, *{n, 1}, t1.ndim}
            t2 = torch.tanh(torch.cos(torch.maximum(t2, t2)) * len(s7) * 0.25)
            block8 = Block(t0.shape[-1])
            block8.shift.add_(0.5)
            torch._dynamo.graph_break()
            t2 = torch.atan((block8(((t0 * 2.0) / (1.0 + (t0 * 2.0).abs())))))
        print("p8", t1.shape)
    v14 = p13.select(0, 1)
    v15 = torch.cos(p12.clamp(-3.0, 3.0))
    v16 = p13.flip(0)
    v17 = p13.contiguous()
    v18 = torch.lerp(v15, v15, 0.25)
    v19 = torch.nn.functional.hardswish(v18)
    v20 = torch.nn.functional.normalize(p12, dim=0)
    v21 = torch.prod(v17.clamp(-2, 2), dim=0)
    v22 = torch.nn.functional.linear(v20, torch.linspace(-1.0, 1.0, 20, dtype=torch.float32).reshape(5, 4), torch.linspace(-1.0, 1.0, 5, dtype=torch.float32).reshape(5))
    v23 = torch.floor_divide(p13.clamp(-6, 6), (p13.clamp(-6, 6).abs() + 1))
    v24 = torch.cumprod(torch.tanh(p12), dim=0)
    v25 = torch.mean(v24, dim=0, keepdim=True)
    v26 = torch.lt(p12, p13.clamp(-6, 6))
    v27 = p13.index_select(0, (torch.arange(4) // 2 % 4))
    v28 = torch.bitwise_right_shift(v27, v23.abs().clamp(0, 3))
    v29 = torch.log((v22.abs() + 0.25)).clamp(-16.0, 16.0)
    v30 = p12.select(0, 2)
    v31 = v23.scatter_reduce(0, (torch.arange(4).reshape(4) % 2), v23, reduce='amin')
    v32 = v22.scatter_add(0, (torch.arange(5).reshape(5) % 2), v22)
    v33 = torch.unbind(v28, dim=0)[2]
    v34 = torch.matmul(v32.clamp(-3.0, 3.0), torch.linspace(-1.0, 1.0, 10, dtype=torch.float32).reshape(5, 2))
    v35 = torch.unbind(v28, dim=0)[3]
    v36 = torch.cumsum(v26, dim=0)
    v37 = v22.masked_fill((v35 > 0), -1.5)
    v38 = torch.sum(p13, dim=0)
    v39 = torch.nn.functional.layer_norm(p12, (4,), torch.linspace(-1.0, 1.0, 4, dtype=torch.float32).reshape(4), torch.linspace(-1.0, 1.0, 4, dtype=torch.float32).reshape(4))
    v40 = torch.clamp_max(v30, v14)
    v41 = torch.nn.functional.mish(v22)
    v42 = torch.mode(v27, dim=0).values
    v43 = torch.unbind(v34, dim=0)[1]
    d44 = {"a": (t0.mean(dim=-1, keepdim=True) / (1.0 + t0.mean(dim=-1, keepdim=True).abs())), "b": torch.tanh(torch.cos(t2))}
    t1.clamp_(-1.0, 1.0)
    d47 = {f"k{i46}": torch.sigmoid((t2.abs() * (i46 + 1) * 0.25)) for i46 in range(3)}
    return t1.clamp(-3.0, 3.0), t2, v16, v19, v21, v25, v29, v31, v33, v36, v37, v38, v39, v40, v41, v42, v43


def inputs():
    g = torch.Generator().manual_seed(132001)
    return (torch.randn(17, generator=g), torch.randn(17, generator=g), 4, torch.randn(7, generator=g), torch.randn(4, generator=g, dtype=torch.float32, requires_grad=True), torch.randn(8, generator=g, dtype=torch.float32)[..., ::2], torch.randint(-8, 9, (4,), generator=g, dtype=torch.int64))


GB_TYPE = "Unsupported Tensor.item() call with capture_scalar_outputs=False"

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
