# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.12.0"]
# [tool.tcfuzz]
# signature = "compile-error|dynamo|InternalTorchDynamoError@torch/_dynamo/source.py:make_guard|3.11,3.12,3.13,3.13t,3.14,3.15"
# kind = "compile-error"
# stage = "dynamo"
# interpreters = ["3.11", "3.12", "3.13", "3.13t", "3.14", "3.15"]
# backend = "eager"
# device = "cpu"
# torch = "2.12.0+cu130"
# first-seen = "2026-12-07"
# last-seen = "2026-12-07"
# generator = "tcfuzz.v9"
# seed = 2079400001
# count = 1
# status = "open"
# replay = {"3.11/2.15.0" = "reproduces", "3.12/2.15.0" = "reproduces", "3.13/2.15.0" = "reproduces", "3.13t/2.12.0" = "reproduces", "3.14/2.15.0" = "reproduces", "3.15/2.15.0" = "reproduces"}
# ///


import torch

@torch._dynamo.nonstrict_trace
def nonstrict_scale(x, k):
    pass

@torch._dynamo.assume_constant_result
def constant_scale():
    pass

def f(x2):
    nonstrict_scale(0, constant_scale())
    return x2

def inputs():
    return (torch.randn(0),)


BACKEND = "eager"
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
