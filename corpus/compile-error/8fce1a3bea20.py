# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.12.0"]
# [tool.tcfuzz]
# signature = "compile-error|dynamo|TorchRuntimeError@torch/_dynamo/eval_frame.py:_fn|3.11,3.12,3.13,3.13t"
# kind = "compile-error"
# stage = "dynamo"
# interpreters = ["3.11", "3.12", "3.13", "3.13t"]
# backend = "eager"
# device = "cpu"
# torch = "2.12.0+cu130"
# first-seen = "2026-11-30"
# last-seen = "2026-11-30"
# generator = "tcfuzz.v2"
# seed = 3000002
# count = 1
# status = "open"
# replay = {"3.11/2.12.0" = "reproduces", "3.12/2.12.0" = "reproduces", "3.13/2.12.0" = "reproduces", "3.13t/2.12.0" = "reproduces"}
# ///


import torch
import collections.abc
import typing


class State:
    scale = 0.5

    def __init__(self, w):
        self.w = w
        self.calls = 0


def f(t0, t1, n, a0):
    t2 = torch.sigmoid(t1)
    t3 = torch.sigmoid(t2)
    if isinstance(t3, collections.abc.Iterable) and not isinstance(t3, list):
        def gen1(x2):
            nonlocal t3
            u3 = torch.sigmoid(t0[0])
            for i4 in range(2):
                if n not in [2, 4]:
                    xs5 = [torch.sigmoid((t1 + x2)), torch.cos(u3.clamp(-1.0, 1.0))]
                def h6(first, *rest, scale=0.5, **named):
                    total = first * scale
                    for item in rest:
                        total = total + torch.tanh(item)
                    for key in sorted(named):
                        total = total * named[key]
                    return torch.tanh(total)
                x2 = (h6(x2, t3, scale=0.25))
                yield torch.tanh(x2.sum(dim=0))
        xs7 = list(gen1(torch.sin((t2 * (n + 1) * 0.25))))
        t3 = (xs7[0] + xs7[-1]).clamp(-3.0, 3.0)
    else:
        t2 = torch.tanh(t0)
    if 1 <= t2.ndim < 3:
        if (t0[0] > -0.5).sum() > 1:
            st8 = State(torch.sin((t2 + t3)))
            st8.calls += n
            st8.w = torch.tanh(st8.w * State.scale)
            State.scale = State.scale * 0.5
            st8.extra = st8.calls
            del st8.extra
            t3 = (((st8.w * st8.calls * 0.25)) / (1.0 + ((st8.w * st8.calls * 0.25)).abs()))
            class Base9:
                def __init__(self, w):
                    self.w = w
                def apply(self, v):
                    return torch.tanh(v * self.w)
            class Child10(Base9):
                scale: float = 0.5
                def apply(self, v):
                    return super().apply(v) * self.scale
                @property
                def doubled(self):
                    return self.w * 2
                def __getattr__(self, name):
                    return 0.25
            obj11 = Child10((torch.sin(t3) / (1.0 + torch.sin(t3).abs())))
            t2 = torch.sigmoid(((obj11.apply(t0[0]) + obj11.doubled * obj11.missing)))
            Child10.scale = 0.75
            t2 = torch.cos((obj11.apply(t1)))
            torch._dynamo.graph_break()
    try:
        t3 = torch.tanh(t1.reshape(7, 11))
    except RuntimeError as e12:
        t3 = t3 * 0.5
    loss13 = (torch.tanh(a0 * t0) * torch.sigmoid(t0[-1].clamp(-1.0, 1.0))).sum()
    (grad0,) = torch.autograd.grad(loss13, [a0])
    return t0[-1].softmax(dim=-1), t2, t3, grad0


def inputs():
    g = torch.Generator().manual_seed(10904)
    return (torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g), 3, torch.randn(3, 4, generator=g, requires_grad=True))


BACKEND = "eager"
FULLGRAPH = False


if __name__ == "__main__":  # eager vs compiled, twice each; exit 1 while they differ
    import sys
    from torch._dynamo.utils import same
    def run(fn):
        try: return [fn(*inputs()) for _ in range(2)]
        except Exception as e: return f"raised {type(e).__name__}: {e}"
    eager, compiled = run(f), run(torch.compile(f, backend=BACKEND, fullgraph=FULLGRAPH))
    print(f"eager:    {eager}\ncompiled: {compiled}")
    sys.exit(0 if type(eager) is type(compiled) and same(eager, compiled, equal_nan=True) else 1)
