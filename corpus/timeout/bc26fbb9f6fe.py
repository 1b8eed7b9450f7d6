# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.12.0"]
# [tool.tcfuzz]
# signature = "timeout|dynamo|timeout|3.11,3.12,3.13,3.13t"
# kind = "timeout"
# stage = "dynamo"
# interpreters = ["3.11", "3.12", "3.13", "3.13t"]
# backend = "eager"
# device = "cpu"
# torch = "2.12.0+cu130"
# first-seen = "2026-11-30"
# last-seen = "2026-11-30"
# generator = "tcfuzz.v2"
# seed = 4000019
# count = 1
# status = "open"
# replay = {"3.11/2.12.0" = "reproduces", "3.12/2.12.0" = "reproduces", "3.13/2.12.0" = "reproduces", "3.13t/2.12.0" = "reproduces"}
# ///


import torch


class Block(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.register_buffer('shift', torch.linspace(-0.5, 0.5, width))
        self.weight = torch.nn.Parameter(torch.linspace(-1.0, 1.0, width))

    def forward(self, x):
        return torch.tanh(x * self.weight + self.shift)


class Suppress:
    def __init__(self, scale):
        self.scale = scale
        self.entered = 0

    def __enter__(self):
        self.entered += 1
        return self.scale

    def __exit__(self, exc_type, exc, tb):
        return exc_type is not None and issubclass(exc_type, ValueError)


def f(t0, t1, n):
    t2 = torch.atan(((t1 * 2.0) * torch.logsumexp(t0, dim=-1, keepdim=True)))
    with torch.no_grad():
        if t1.ndim == 2:
            it1 = reversed([t1, t1])
            try:
                while True:
                    t2 = torch.tanh(t2 + next(it1))
            except StopIteration:
                t2 = t2 * 0.5
            block2 = Block(t0.shape[-1])
            torch._dynamo.graph_break()
            t2 = torch.cos((block2(torch.sigmoid(t0))))
            print(sorted(k for k, _ in block2.named_parameters()), len(list(block2.buffers())))
        fns3 = []
        for i4 in range(n):
            fns3.append(lambda v: v * (i4 + 1) * 0.25)
        t2 = torch.tanh((sum(fn(t0[-1]) for fn in fns3)))
    cm5 = Suppress(0.25)
    try:
        with cm5 as k6:
            t2 = torch.tanh(t1 * k6)
            raise ValueError("swallowed")
    except ValueError:
        pass
    print(cm5.entered)
    t2 = torch.tanh(torch.logsumexp((t0 * (n + 1) * 0.25), dim=-1, keepdim=True))
    return t1.clamp(-3.0, 3.0), t2


def inputs():
    g = torch.Generator().manual_seed(1423)
    return (torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g), 4)


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
