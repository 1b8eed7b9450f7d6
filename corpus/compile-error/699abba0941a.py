# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.12.0"]
# [tool.tcfuzz]
# signature = "compile-error|dynamo|AssertionError@torch/_dynamo/symbolic_convert.py:POP_EXCEPT|3.12,3.13,3.13t"
# kind = "compile-error"
# stage = "dynamo"
# interpreters = ["3.12", "3.13", "3.13t"]
# backend = "eager"
# device = "cpu"
# torch = "2.12.0"
# first-seen = "2026-11-30"
# last-seen = "2026-11-30"
# generator = "tcfuzz.v2"
# seed = 4000008
# count = 1
# status = "open"
# ///


import torch

class State:
    scale = 0.5

    def __init__(self, w):
        self.w = w
        self.calls = 0

def f(t0, t1, n, a0, a1):
    t2 = torch.tanh(t1.mean() + (t1 + t1))
    t3 = torch.tanh(t0)
    t4 = torch.tanh(t0)
    t5 = torch.tanh(t0 + (a0 * 2).float())
    t6 = torch.tanh(t0 * a1)
    try:
        try:
            try:
                raise IndexError('again7')
            except IndexError:
                xs3 = [(t0 * (i2 + 1) * 0.25).clamp(-3.0, 3.0) for i2 in range(3)]
                raise
        except (IndexError, KeyError):
            s4 = {int((t1 > 0).sum()) for _ in range(2)}
            s5 = {*s4, *{n, 1}, t5.ndim}
            t5 = torch.tanh((t3 + t6) / (1.0 + (t3 + t6).abs()) * len(s5) * 0.25)
        raise ValueError('v5')
        if t0.shape[-1] > 4:

            async def co6(v):
                total = await Ready(v * 0.5)
                async for i in Countdown(2):
                    total = torch.tanh(total + i * 0.25)
                return total
            torch._dynamo.graph_break()
            t5 = torch.cos(drive(co6(torch.cos(t3 * 2.0))))

        def gen7(x8):
            u9 = torch.atan(t3)
            for i10 in range(3):
                yield ((u9 - t2) / (1.0 + (u9 - t2).abs()))
        xs11 = list(gen7((t3 * t1).clamp(-3.0, 3.0)))
        t2 = torch.atan(xs11[0] + xs11[-1])
    except (ValueError, IndexError):
        t6 = (t2 * 0.5 + 1.0).clamp(-3.0, 3.0)
    else:

        def g12():
            nonlocal t2
            u13 = torch.tanh(t0)
            torch._dynamo.graph_break()
            print('p13', t3.dtype)
            m15 = {'w': t6, 'k': n}
            m16 = {**m15, 'k': 2, **{'b': t5}}
            t2 = torch.atan(m16['w'] * m16['k'] * 0.5 + m16['b'])
            return torch.sigmoid(t2)
        g12()
        try:
            xs17 = list(reversed([t6, t4]))
            t4 = torch.atan(xs17[0] - xs17[-1])
            raise ExceptionGroup('group', [ValueError('m0'), KeyError('m1')])
        except* ValueError as eg18:
            print('ValueError', len(eg18.exceptions))
            xs19 = [torch.sin(t4 * t3), torch.sigmoid(t5 * 0.5), t3.sum() / (1.0 + t3.sum().abs())]
            xs19[-1] = torch.cos(t5)
        except* KeyError as eg20:
            print('KeyError', len(eg20.exceptions))
            ys22 = (*[t1, t6, t4], t5)
            t6 = torch.cos(ys22[0] + ys22[-1])
    return ((t6 * 2.0 * t0.mean()).clamp(-3.0, 3.0), t2, t3, t4, t5, t6)

def inputs():
    g = torch.Generator().manual_seed(528)
    return (torch.randn(1, generator=g), torch.randn(1, 1, generator=g, dtype=torch.float64)[..., 0], 3, torch.randn(1, generator=g).to(torch.bfloat16), -1.5)


FULLGRAPH = False


CALLS = ["fresh", "cached"]


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
