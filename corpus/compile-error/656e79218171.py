# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.12.0"]
# [tool.tcfuzz]
# signature = "compile-error|inductor|InductorError(AssertionError)@torch/_inductor/ir.py:indexer|3.13t"
# kind = "compile-error"
# stage = "inductor"
# interpreters = ["3.13t"]
# backend = "inductor"
# device = "cpu"
# torch = "2.12.0+cu130"
# first-seen = "2026-12-02"
# last-seen = "2026-12-02"
# generator = "tcfuzz.v5"
# seed = 2078900011
# compile = {"dynamic" = false, "mode" = "max-autotune-no-cudagraphs"}
# count = 1
# status = "open"
# replay = {"3.13t/2.12.0" = "reproduces", "3.12/2.15.0" = "does not reproduce"}
# ///


import torch

def f(u, s):
    t = torch.nn.functional.scaled_dot_product_attention(s.clamp(3.0), torch.linspace(0, 0, 90).reshape(5, 3, 6), torch.linspace(0, 0, 90).reshape(5, 3, 6))
    t2 = torch.nn.functional.hardswish(t)
    return (t, t2)

def inputs():
    return (torch.randn(7), torch.randperm(90).reshape(5, 3, 6))


if __name__ == "__main__":  # compile as the harness did: these compile settings (tcfuzz harness/settings.py)
    import torch._dynamo, torch._inductor.config
    def _compile(fn, *, _compile=torch.compile, **options):
        options.setdefault("dynamic", False)
        if options.get("backend") == "inductor": options.setdefault("mode", 'max-autotune-no-cudagraphs')
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
