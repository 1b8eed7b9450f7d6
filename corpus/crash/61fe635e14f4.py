# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.12.0"]
# [tool.tcfuzz]
# signature = "crash|inductor|SIGSEGV@torch/_inductor/output_code.py:__call__|3.13t"
# kind = "crash"
# stage = "inductor"
# interpreters = ["3.13t"]
# backend = "inductor"
# device = "cpu"
# torch = "2.12.0+cu130"
# first-seen = "2026-12-02"
# last-seen = "2026-12-02"
# count = 1
# status = "open"
# replay = {"3.13t/2.12.0" = "reproduces", "3.12/2.15.0" = "does not reproduce", "3.15/2.15.0" = "does not reproduce"}
# ///


# CPU Inductor on torch 2.12.0: index_put(accumulate=True) whose values are read through a 2-D tile
# (a buffer stored channels-last beside a conv_transpose2d input) writes out of bounds when the kernel
# runs on more than one thread: heap corruption (glibc abort or SIGSEGV).
import torch
import torch.nn.functional as F


def f(x, b):
    c = F.conv_transpose2d(x.clamp(-3.0, 3.0), torch.ones(2, 3, 2, 2))
    v = torch.addcmul(F.layer_norm(b, (5,)), torch.softmax(b, dim=0), x, value=0.5)
    z = torch.triu(v, 1).squeeze(2)
    return c, z.index_put((torch.tensor([0, 1, 0]),), z[0] * 0.5, accumulate=True), torch.linalg.vector_norm(v, dim=-2)


def inputs():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(2, 2, 1, 5, generator=g), torch.randn(5, generator=g))


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
