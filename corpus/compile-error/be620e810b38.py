# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "compile-error|inductor|InductorError(AssertionError)@torch/_inductor/codegen/cpp.py:reduction|3.12"
# kind = "compile-error"
# stage = "inductor"
# interpreters = ["3.12"]
# backend = "inductor"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-02"
# last-seen = "2026-12-02"
# generator = "tcfuzz.graphs.v4"
# seed = 8401062
# compile = {"dynamic" = true, "dynamo" = {"capture_scalar_outputs" = true}}
# count = 1
# status = "open"
# ///


import torch

def f(grow, y, z, w):

    def g(y, z, w):
        t = torch.nextafter(w, z)
        t2 = torch.nn.functional.group_norm(t, 1, torch.linspace(-1.0, 1.0, 5, dtype=torch.float64).reshape(5), torch.linspace(-1.0, 1.0, 5, dtype=torch.float64).reshape(5))
        t3 = torch.ne(t, w)
        t4 = torch.fmax(t, t2.clamp(-32.0, 32.0))
        t5 = torch.nn.functional.celu(w, alpha=2.0)
        t6 = t2.reshape(t2.shape[0], -1, t2.shape[2], t2.shape[3])
        t7 = torch.sum(w)
        t8 = torch.nn.functional.glu(y.clamp(-32.0, 32.0), dim=0)
        t9 = torch.nansum(y.clamp(-32.0, 32.0), dim=-3)
        t10 = torch.any(z, dim=(-4, 1))
        t11 = torch.nn.functional.batch_norm(w, torch.linspace(-0.5, 0.5, 5, dtype=torch.float16), torch.linspace(0.5, 1.5, 5, dtype=torch.float16), training=False)
        t12 = t6.clamp(-3.0, 3.0) @ torch.linspace(-1.0, 1.0, 450, dtype=torch.float64).reshape(6, 5, 5, 3)
        t13 = torch.gather(t6, 2, torch.arange(600).reshape(6, 5, 4, 5) * 3 % 4)
        t14 = torch.heaviside(t10, t3)
        t15 = torch.mean(t11.clamp(-32.0, 32.0), dim=3)
        t16 = torch.cumsum(t15, dim=1)
        t17 = torch.nn.functional.normalize(z, dim=0)
        t18 = torch.softmax(t9.clamp(-3.0, 3.0) @ torch.linspace(-1.0, 1.0, 120, dtype=torch.float32).reshape(6, 4, 5).transpose(-2, -1) * 0.4472135954999579, dim=-1) @ torch.linspace(-2.0, 2.0, 120, dtype=torch.float32).reshape(6, 4, 5)
        return (t4, t5, t7, t8, t12, t13, t14, t16, t17, t18)
    t4, t5, t7, t8, t12, t13, t14, t16, t17, t18 = g(y, z, w)
    return t13

def inputs():
    return (torch.randn(20), torch.randperm(600).reshape(6, 5, 4, 5).to(), torch.randn(6, 5, 4, 5, dtype=torch.float64), torch.randn(6, 5, 4, 5, dtype=torch.float16))


if __name__ == "__main__":  # compile as the harness did: these compile settings (tcfuzz harness/settings.py)
    import torch._dynamo, torch._inductor.config
    def _compile(fn, *, _compile=torch.compile, **options):
        options.setdefault("dynamic", True)
        compiled = _compile(fn, **options)
        compiled = torch._dynamo.config.patch({'capture_scalar_outputs': True})(compiled)
        return compiled
    torch.compile = _compile


BACKEND = "inductor"
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
