# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.12.0"]
# [tool.tcfuzz]
# signature = "timeout|dynamo|timeout|3.11,3.12,3.13,3.13t"
# kind = "timeout"
# stage = "dynamo"
# interpreters = ["3.11", "3.12", "3.13", "3.13t"]
# backend = "eager"
# device = "cpu"
# torch = "2.12.0+cu130"
# first-seen = "2026-11-30"
# last-seen = "2026-11-30"
# count = 2
# status = "open"
# replay = {"3.11/2.12.0" = "reproduces", "3.12/2.12.0" = "reproduces", "3.13/2.12.0" = "reproduces", "3.13t/2.12.0" = "reproduces", "3.12/2.15.0" = "does not reproduce", "3.14/2.15.0" = "does not reproduce", "3.15/2.15.0" = "does not reproduce", "3.11/2.15.0" = "does not reproduce"}
# ///


import torch

def f(a, b):
    t = a * 2
    it = reversed([a, b])
    try:
        while True:
            t = torch.tanh(t + next(it))
    except StopIteration:
        t = t * 0.5

def inputs():
    return (torch.ones(3), torch.ones(3))


BACKEND = "eager"
FULLGRAPH = False


HANG_S = 60  # seconds the compiled calls may take before the case counts as hanging

if __name__ == "__main__":  # exit 1, with the stack of the hang, while the compiled calls still do not return
    import faulthandler, os, random, sys, threading
    from torch._dynamo.utils import same
    def call(fn):  # seeded as the harness seeds: inputs() and the call each draw from seed 0
        torch.manual_seed(0); random.seed(0); args = inputs(); torch.manual_seed(0); random.seed(0)
        return fn(*(args if isinstance(args, tuple) else (args,)))  # one value is one argument, as in the harness
    def run(fn):
        try: return [call(fn) for _ in range(2)]
        except BaseException as e: return f"raised {type(e).__name__}: {e}"
    def hung():
        print(f"compiled: no return within {HANG_S} s", flush=True)
        faulthandler.dump_traceback(all_threads=True)
        os._exit(1)
    with torch.compiler.set_stance("force_eager"):  # eager never passes through Dynamo (torch.cond compiles itself)
        eager = run(f)
    print(f"eager:    {eager}", flush=True)
    timer = threading.Timer(HANG_S, hung)
    timer.daemon = True
    timer.start()
    compiled = run(torch.compile(f, backend=BACKEND, fullgraph=FULLGRAPH))
    timer.cancel()
    print(f"compiled: {compiled}")
    sys.exit(0 if type(eager) is type(compiled) and same(eager, compiled, equal_nan=True) else 1)
