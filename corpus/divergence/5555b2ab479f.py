# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.12.0"]
# [tool.tcfuzz]
# signature = "divergence|dynamo|exception:None->AttributeError {.send, ExceptHandler, StopIteration(), Try, Yield, next(), torch.cos, torch.tanh}|3.11,3.12,3.13,3.13t"
# kind = "divergence"
# stage = "dynamo"
# interpreters = ["3.11", "3.12", "3.13", "3.13t"]
# backend = "eager"
# device = "cpu"
# torch = "2.12.0"
# first-seen = "2026-11-30"
# last-seen = "2026-11-30"
# count = 1
# status = "open"
# ///


import torch

def f(t1):
    t4 = torch.cos(t1)

    def gen1(v):
        total = v
        yield torch.tanh(total)
        return 0
    it2 = gen1(t4)
    next(it2)
    try:
        it2.send(None)
    except StopIteration as stop:
        stop.value + 0

def inputs():
    return (torch.randn(0),)


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
