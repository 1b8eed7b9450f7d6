# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.12.0"]
# [tool.tcfuzz]
# signature = "divergence|dynamo|exception:None->AssertionError {.abs, .clamp, .float, .mean, .sum, AsyncFor, AsyncFunctionDef, Await, ClassDef, Compare, Dict, Div, ExceptHandler, ExceptionGroup(), For, Gt, If, ...#c0485143}|3.12,3.13,3.13t"
# kind = "divergence"
# stage = "dynamo"
# interpreters = ["3.12", "3.13", "3.13t"]
# backend = "eager"
# device = "cpu"
# torch = "2.12.0+cu130"
# first-seen = "2026-11-30"
# last-seen = "2026-11-30"
# generator = "tcfuzz.v2"
# seed = 4000008
# count = 1
# status = "open"
# replay = {"3.11/2.12.0" = "does not reproduce", "3.12/2.12.0" = "reproduces", "3.13/2.12.0" = "reproduces", "3.13t/2.12.0" = "reproduces"}
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


BACKEND = "eager"
FULLGRAPH = False


CALLS = ["fresh", "cached"]

if __name__ == "__main__":  # eager vs compiled, each in a fresh copy of this module; exit 1 while they differ
    import contextlib, io, re, runpy, sys
    from torch._dynamo.utils import same
    def scalars(ns):
        owners = [ns] + [v for v in ns.values() if isinstance(v, type) and v.__module__ == "case"]
        return [(o, k) for o in owners for k, v in list(o.items() if o is ns else vars(o).items())
                if not k.startswith("_") and isinstance(v, (bool, int, float))]
    def grow(args):
        n = max([s for a in args if isinstance(a, torch.Tensor) for s in a.shape if s >= 2], default=0)
        def g(t):
            for d, s in enumerate(t.shape if isinstance(t, torch.Tensor) else ()):
                if s == n: t = torch.cat([t.detach(), t.detach().narrow(d, s - 1, 1)], d).requires_grad_(t.requires_grad)
            return t
        return tuple(g(a) for a in args)
    def run(compiled):
        ns = runpy.run_path(__file__, run_name="case")
        fn, out = torch.compile(ns["f"], backend=BACKEND, fullgraph=FULLGRAPH) if compiled else ns["f"], []
        for call in CALLS:
            for o, k in scalars(ns) if call == "guard" else []:
                v = o[k] if o is ns else getattr(o, k)
                v = (not v) if isinstance(v, bool) else v + (1 if isinstance(v, int) else 0.5)
                o.__setitem__(k, v) if o is ns else setattr(o, k, v)
            torch.manual_seed(0)
            args = ns["inputs"]()
            args = grow(args if isinstance(args, tuple) else (args,)) if call == "shape" else args
            buf = io.StringIO()
            try:
                with contextlib.redirect_stdout(buf):
                    value = fn(*args)
                    value = list(value) if hasattr(value, "__next__") else value  # a generator runs when drained
            except Exception as e: value = f"raised {type(e).__name__}: " + re.sub(r" at 0x\w+", "", str(e).split(chr(10))[0])
            out.append([value, list(args), buf.getvalue(), torch.is_grad_enabled()])
            torch.set_grad_enabled(True)
        return out
    eager, compiled = run(False), run(True)
    print(f"eager:    {eager}\ncompiled: {compiled}")
    try: ok = same(eager, compiled, equal_nan=True)
    except Exception: ok = repr(eager) == repr(compiled)  # a value same() does not know
    sys.exit(0 if ok else 1)
