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
# compile = {"dynamic" = true}
# count = 1
# status = "open"
# ///


import torch

def f(z, w):
    t = torch.nextafter(w, z)
    t2 = torch.nn.functional.group_norm(t, 1)
    return t2

def inputs():
    return (torch.randn(1, dtype=torch.float64), torch.randn(3, 2, 4, 5, dtype=torch.float16))


if __name__ == "__main__":  # compile as the harness did: these compile settings (tcfuzz harness/settings.py)
    import torch._dynamo, torch._inductor.config
    def _compile(fn, *, _compile=torch.compile, **options):
        options.setdefault("dynamic", True)
        compiled = _compile(fn, **options)
        return compiled
    torch.compile = _compile


BACKEND = "inductor"
FULLGRAPH = False


if __name__ == "__main__":  # eager vs compiled, twice each; exit 1 while they differ
    import random, sys
    from torch._dynamo.utils import same
    def call(fn):  # seeded as the harness seeds: inputs() and the call each draw from seed 0
        torch.manual_seed(0); random.seed(0); args = inputs(); torch.manual_seed(0); random.seed(0)
        return fn(*(args if isinstance(args, tuple) else (args,)))  # one value is one argument, as in the harness
    def run(fn):
        try: return [call(fn) for _ in range(2)]
        except BaseException as e: return f"raised {type(e).__name__}: {e}"
    with torch.compiler.set_stance("force_eager"):  # eager never passes through Dynamo (torch.cond compiles itself)
        eager = run(f)
    compiled = run(torch.compile(f, backend=BACKEND, fullgraph=FULLGRAPH))
    print(f"eager:    {eager}\ncompiled: {compiled}")
    sys.exit(0 if type(eager) is type(compiled) and same(eager, compiled, equal_nan=True) else 1)
