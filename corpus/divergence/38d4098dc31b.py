# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.12.0"]
# [tool.tcfuzz]
# signature = "divergence|dynamo|exception:None->AttributeError {.abs, .clamp, .send, .values, AnnAssign, ClassDef, Compare, Dict, DictComp, Div, Eq, ExceptHandler, For, Gt, If, Is, Match, MatchAs, MatchClass, ...#221d83f4}|3.11,3.12,3.13,3.13t"
# kind = "divergence"
# stage = "dynamo"
# interpreters = ["3.11", "3.12", "3.13", "3.13t"]
# backend = "eager"
# device = "cpu"
# torch = "2.12.0+cu130"
# first-seen = "2026-11-30"
# last-seen = "2026-11-30"
# count = 1
# status = "open"
# generator = "tcfuzz.v2"
# seed = 3000008
# replay = {"3.11/2.12.0" = "reproduces", "3.12/2.12.0" = "reproduces", "3.13/2.12.0" = "reproduces", "3.13t/2.12.0" = "reproduces"}
# ///


import torch
import dataclasses

@dataclasses.dataclass
class Pair:
    w: torch.Tensor
    k: int = 1

def f(t0, t1, n):
    t2 = torch.sigmoid(torch.minimum(t0[0], t0) * 0.5)
    t3 = torch.atan(torch.where(t0 > 0, t0, t0))
    t4 = torch.cos(t1)
    match Pair(t3, n):
        case Pair(k=1):
            torch._dynamo.graph_break()
        case Pair(w=a, k=2):
            t4 = torch.tanh(a * 0.5)
        case _:
            torch._dynamo.graph_break()
    match (t0[0], n, t0):
        case [a, 1, b]:
            t3 = torch.tanh(a * 0.5)
        case [a, *rest] if len(rest) == 2:
            t3 = torch.tanh(a * 0.5)

            def gen1(v):
                total = v
                while True:
                    got = (yield torch.tanh(total))
                    if got is None:
                        return total
                    total = torch.tanh(total + got)
            it2 = gen1(torch.atan(t4 * 2.0))
            y3 = next(it2)
            y4 = it2.send(torch.tanh(t1 / (1.0 + t1.abs())))
            try:
                it2.send(None)
            except StopIteration as stop:
                y4 = torch.tanh(stop.value + y4)
            t4 = torch.tanh(y3 + y4)
        case _:

            def gen5(x6):
                u7 = torch.sin(t4)
                for i8 in range(3):
                    xs9 = list({k: torch.tanh(u7) for k, u7 in enumerate((t0, t3))}.values())
                    u7 = (u7 + xs9[0]) / (1.0 + (u7 + xs9[0]).abs())
                    m10 = {'w': t1, 'k': n}
                    m11 = {**m10, 'k': 2, **{'b': t0}}
                    torch._dynamo.graph_break()
                    u7 = (m11['w'] * m11['k'] * 0.5 + m11['b']).clamp(-3.0, 3.0)
                    yield torch.sigmoid(t3)
            t2 = next(gen5(torch.sin(torch.relu(t2))))
    t2 = t4.clamp(-3.0, 3.0)
    return (torch.atan(t4), t2, t3, t4)

def inputs():
    g = torch.Generator().manual_seed(112735765)
    return (torch.randn(3, 17, generator=g), torch.randn(3, 17, generator=g), 3)


BACKEND = "eager"
FULLGRAPH = False


CALLS = ["fresh", "cached"]

if __name__ == "__main__":  # eager vs compiled, each in a fresh copy of this module; exit 1 while they differ
    import contextlib, io, re, runpy, sys
    from torch._dynamo.utils import same
    def attributes(ns):
        owners = [ns] + [v for v in ns.values() if isinstance(v, type) and v.__module__ == "case"]
        return [(o, k, v) for o in owners for k, v in list(o.items() if o is ns else vars(o).items())
                if not k.startswith("_") and k not in ("BACKEND", "FULLGRAPH", "CALLS")
                and not callable(v) and not isinstance(v, (type(sys), property, classmethod, staticmethod))]
    def scalars(ns):
        return [(o, k) for o, k, v in attributes(ns) if isinstance(v, (bool, int, float))]
    def state(ns):  # after the calls
        return [[k, dict(vars(v)) if type(v).__module__ == "case" else v] for _, k, v in attributes(ns)]
    def grow(args):
        n = max([s for a in args if isinstance(a, torch.Tensor) for s in a.shape if s >= 2], default=0)
        def g(t):
            for d, s in enumerate(t.shape if isinstance(t, torch.Tensor) else ()):
                if n and s == n: t = torch.cat([t.detach(), t.detach().narrow(d, s - 1, 1)], d).requires_grad_(t.requires_grad)
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
        return out + [state(ns)]
    eager, compiled = run(False), run(True)
    print(f"eager:    {eager}\ncompiled: {compiled}")
    try: ok = same(eager, compiled, equal_nan=True)
    except Exception: ok = repr(eager) == repr(compiled)  # a value same() does not know
    sys.exit(0 if ok else 1)
