# /// script
# requires-python = ">=3.15"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "graph-break|dynamo|Invalid call to __build_class__|3.15"
# kind = "graph-break"
# stage = "dynamo"
# interpreters = ["3.15"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-01"
# last-seen = "2026-12-01"
# generator = "tcfuzz.v3"
# seed = 314150065
# count = 1
# status = "open"
# replay = {"3.14/2.15.0" = "reproduces", "3.15/2.15.0" = "reproduces"}
# ///


import torch


class Box:
    def __init__(self, w, k):
        self.w = w
        self.k = k


def f(t0, t1, n, a0, a1):
    t2 = torch.sin(torch.relu(t0))
    a0.append(t0 * 0.5)
    t3 = torch.tanh(sum(a0))
    a1.k += 1
    t4 = torch.tanh(a1.w * a1.k * 0.25)
    t1.mul_(0.5)
    t4 = (t1 / (1.0 + t1.abs()))
    try:
        groups1 = [[t2, t1], [t1 * n], []]
        flat3 = [*g2 for g2 in groups1]
        t2 = flat3[0] + flat3[-1] * len(flat3)
    except IndexError:
        try:
            s4 = f"{t2.ndim:02d} {str(t2.dtype)!s:>14}"
            print(s4)
            print("p4", t4.shape)
            groups6 = [{"a": t2}, {"b": t3 * n}, {"a": t3}]
            merged8 = {**g7 for g7 in groups6}
            t3 = merged8["a"] + merged8["b"]
        finally:
            d9 = {"a": torch.cos(t0[-1]), "b": torch.minimum(t2, t3).clamp(-3.0, 3.0), "c": torch.where(t3 > 0, t0, t0).clamp(-3.0, 3.0)}
            del d9["b"]
    class Base10:
        def __init__(self, w):
            self.w = w
        def apply(self, v):
            return torch.tanh(v * self.w)
    class Child11(Base10):
        scale: float = 0.5
        def apply(self, v):
            return super().apply(v) * self.scale
        @property
        def doubled(self):
            return self.w * 2
        def __getattr__(self, name):
            return 0.25
    obj12 = Child11(torch.sigmoid((t4 * t3)))
    t3 = torch.atan(((obj12.apply(t3) + obj12.doubled * obj12.missing)))
    d13 = {"a": torch.atan((t4 * (n + 1) * 0.25)), "b": torch.tanh(t0.sum())}
    d13.setdefault("e", t2)
    return t4.clamp(-3.0, 3.0), t2, t3, t4


def inputs():
    g = torch.Generator().manual_seed(7320166)
    return (torch.randn(2, 1, 5, generator=g), torch.randn(1, 1, 5, generator=g), 1, [torch.randn(2, 1, 5, generator=g), torch.randn(2, 1, 5, generator=g)], Box(torch.randn(2, 1, 5, generator=g), 2))


GB_TYPE = "Invalid call to __build_class__"

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
