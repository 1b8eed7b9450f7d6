# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "graph-break|dynamo|Shape mismatch with out= tensor variant|3.12"
# kind = "graph-break"
# stage = "dynamo"
# interpreters = ["3.12"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-02"
# last-seen = "2026-12-02"
# generator = "tcfuzz.graphs.v3"
# seed = 8200004
# compile = {"dynamic" = true}
# count = 1
# status = "open"
# replay = {"3.12/2.15.0" = "reproduces"}
# ///


import torch

def f(grow, y, z, w):

    def g(y, z, w):
        t2 = torch.gt(y, w)
        t3 = torch.special.scaled_modified_bessel_k1(y.abs() + 0.25).clamp(-16.0, 16.0)
        t4 = z.unsqueeze(0).expand(4, -1)
        t5 = torch.chunk(t2, 2, dim=1)[0]
        t6 = torch.logaddexp(t4, t4)
        t7 = t5[::2]
        t8 = torch.cat([t6, t2, w], dim=0)
        t9 = torch.float_power(t6.clamp(-6.0, 6.0).abs() + 0.5, t4.clamp(-2.0, 2.0)).clamp(-16.0, 16.0)
        t10 = torch.positive(t8)
        t11 = torch.histc(y, bins=4, min=-2.05, max=2.05)
        t12 = torch.nn.functional.embedding(torch.arange(2).reshape(2) * 3 % 8, t8)
        t13 = torch.softmax(t8.clamp(-8.0, 8.0), dim=1, dtype=torch.float32)
        t14 = torch.argmin(t11, dim=0, keepdim=True)
        t15 = torch.special.ndtri(0.0 + 1.0 * (0.05 + 0.9 * torch.sigmoid(t14))).clamp(-16.0, 16.0)
        t16 = torch.var(t10.clamp(-3.0, 3.0), dim=0)
        t17 = torch.amin(t16.clamp(-32.0, 32.0), dim=0)
        t18 = torch.exp2(t16.clamp(-3.0, 3.0)).clamp(-16.0, 16.0)
        return (0, 0, 0, 0, 0, 0, 0, t18, 0)
    t3, t7, t9, t12, t13, t15, t17, t18, v21 = g(y, z, w)
    t = torch.empty(0)
    torch.cumsum(t18.detach().float().flatten(), 0, out=t)
    return grow

def inputs():
    return (torch.randn(0), torch.randn(1), torch.randn(1), torch.randn(1, 1))


if __name__ == "__main__":  # compile as the harness did: these compile settings (tcfuzz harness/settings.py)
    import torch._dynamo, torch._inductor.config
    def _compile(fn, *, _compile=torch.compile, **options):
        options.setdefault("dynamic", True)
        compiled = _compile(fn, **options)
        return compiled
    torch.compile = _compile


GB_TYPE = "Shape mismatch with out= tensor variant"

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
