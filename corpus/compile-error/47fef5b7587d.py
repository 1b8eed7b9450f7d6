# /// script
# requires-python = ">=3.15"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "compile-error|dynamo|InternalTorchDynamoError@torch/_dynamo/bytecode_transformation.py:devirtualize_jumps|3.15"
# kind = "compile-error"
# stage = "dynamo"
# interpreters = ["3.15"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-01"
# last-seen = "2026-12-01"
# generator = "tcfuzz.v3"
# seed = 314150123
# count = 1
# status = "open"
# replay = {"3.14/2.15.0" = "reproduces", "3.15/2.15.0" = "reproduces"}
# ///


import torch


class Box:
    def __init__(self, w, k):
        self.w = w
        self.k = k


def f(t0, t1, n, a0, a1, grow4, p5, p6, p7, p22):
    t2 = torch.cos(t0[0])
    t3 = (t2 / (1.0 + t2.abs()))
    t4 = t2.clamp(-3.0, 3.0)
    t5 = torch.tanh(a0[0] * a0[1] * 0.25)
    a1.k += 1
    t6 = torch.tanh(a1.w * a1.k * 0.25)
    groups1 = [[t2, t0], [t0 * n], []]
    flat3 = list((*g2 for g2 in groups1))
    t5 = flat3[0] + flat3[-1] * len(flat3)
    try:
        try:
            v8 = torch.nn.functional.logsigmoid(p5)
            v9 = torch.logical_and(p7, p5)
            v10 = torch.argsort(p5, dim=2, stable=True)
            v11 = torch.mv(p6, torch.linspace(-1.0, 1.0, 3, dtype=torch.float32).reshape(3))
            v12 = v11.unflatten(0, (2, -1))
            v13 = torch.cat([v8, p7], dim=-2)
            v14 = torch.nn.functional.softplus(v11)
            v15 = torch.nn.functional.conv_transpose1d(p5.clamp(-3.0, 3.0), torch.linspace(-1.0, 1.0, 16, dtype=torch.float32).reshape(4, 2, 2), stride=2, padding=1)
            v16 = p6.unsqueeze(1)
            v17 = torch.argmax(p5)
            v18 = torch.square(v16).clamp(-16.0, 16.0)
            v19 = torch.nn.functional.l1_loss(v16, v18.clamp(-3.0, 3.0), reduction='none')
            v20 = (v12.clamp(-3.0, 3.0) @ torch.linspace(-1.0, 1.0, 4, dtype=torch.float32).reshape(2, 2))
            v21 = v9.unsqueeze(2)
            t5 = torch.tanh(t5 + 0.1 * (v10.float().clamp(-32.0, 32.0).mean() + v13.float().clamp(-32.0, 32.0).mean() + v14.float().clamp(-32.0, 32.0).mean() + v15.float().clamp(-32.0, 32.0).mean() + v17.float().clamp(-32.0, 32.0).mean() + v19.float().clamp(-32.0, 32.0).mean() + v20.float().clamp(-32.0, 32.0).mean() + v21.float().clamp(-32.0, 32.0).mean()))
            raise IndexError("i21")
            t6 = torch.cos(torch.minimum(t2, t6))
            if n > 1:
                raise IndexError("i21")
        except IndexError:
            v23 = torch.chunk(p22, 4, dim=0)[2]
            v24 = torch.softmax(p22, dim=0)
            v25 = torch.quantile(p22, 0.25, dim=0)
            v26 = torch.chunk(p22, 2, dim=0)[1]
            t2 = torch.tanh(t2 + 0.1 * (v23.float().clamp(-32.0, 32.0).mean() + v24.float().clamp(-32.0, 32.0).mean() + v25.float().clamp(-32.0, 32.0).mean() + v26.float().clamp(-32.0, 32.0).mean()))
        finally:
            t2 = torch.atan(sum([torch.tanh(t3) for x27 in (t2, t5, t6,)]))
            def g29(a: Later28, k: int = 2) -> Later28:
                return a * k
            Later28 = torch.Tensor
            torch._dynamo.graph_break()
            print("ann", sorted(g29.__annotations__), g29.__annotations__["return"].__name__)
            t5 = g29(t2)
        raise IndexError("u2")
    except* ValueError, IndexError:
        g30 = lambda x31: torch.sin(t1)
        t2 = g30(torch.sigmoid(torch.where(t4 > 0, t0, t5))).clamp(-3.0, 3.0)
        t5 = torch.sigmoid(torch.atan(t1))
    return (t6.sum(dim=0).clamp(-1.0, 1.0) / (1.0 + t6.sum(dim=0).clamp(-1.0, 1.0).abs())), t2, t3, t4, t5, t6


def inputs():
    g = torch.Generator().manual_seed(5129)
    return (torch.randn(2, 1, 5, generator=g), torch.randn(2, 1, 5, generator=g), 2, (torch.randn(2, 1, 5, generator=g), 2), Box(torch.randn(2, 1, 5, generator=g), 2), torch.randn(7, generator=g), torch.randn(3, 4, 6, generator=g, dtype=torch.float32)[..., ::2], ((torch.randperm(12, generator=g).reshape(4, 3) - 6) * 0.25).to(torch.float32), torch.randn(3, 4, 3, generator=g) > 0, torch.randn(4, 5, 2, 3, generator=g, dtype=torch.float32))


BACKEND = "eager"
FULLGRAPH = False


if __name__ == "__main__":  # eager vs compiled, twice each; exit 1 while they differ
    import random, sys
    from torch._dynamo.utils import same
    def call(fn):  # seeded as the harness seeds: inputs() and the call each draw from seed 0
        torch.manual_seed(0); random.seed(0); args = inputs(); torch.manual_seed(0); random.seed(0)
        return fn(*args)
    def run(fn):
        try: return [call(fn) for _ in range(2)]
        except BaseException as e: return f"raised {type(e).__name__}: {e}"
    eager, compiled = run(f), run(torch.compile(f, backend=BACKEND, fullgraph=FULLGRAPH))
    print(f"eager:    {eager}\ncompiled: {compiled}")
    sys.exit(0 if type(eager) is type(compiled) and same(eager, compiled, equal_nan=True) else 1)
