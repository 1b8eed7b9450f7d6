# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.12.0"]
# [tool.tcfuzz]
# signature = "graph-break-regression|dynamo|Failed to trace builtin operator [absent on 3.12, 3.13, 3.13t]|3.11"
# kind = "graph-break-regression"
# stage = "dynamo"
# interpreters = ["3.11"]
# backend = "eager"
# device = "cpu"
# torch = "2.12.0"
# first-seen = "2026-11-30"
# last-seen = "2026-11-30"
# count = 1
# status = "open"
# replay = {"3.12/2.15.0" = "does not reproduce", "3.14/2.15.0" = "does not reproduce", "3.15/2.15.0" = "does not reproduce", "3.11/2.15.0" = "reproduces"}
# ///


import torch

def f(t0, t1, n):
    t2 = torch.sin(t1)
    i1 = 0
    while i1 < 3 and (t1 > 0).any():
        i1 += 1
        if i1 % 2 == 0:
            print('p1', t2.shape)

def inputs():
    return (0, torch.randn(4), 0)


GB_TYPE = "Failed to trace builtin operator"

if __name__ == "__main__":  # exit 1 while Dynamo still breaks the graph for this reason
    import sys
    from torch._dynamo.utils import counters
    compiled = torch.compile(f, backend="eager")
    for _ in range(2):
        try: args = inputs(); compiled(*(args if isinstance(args, tuple) else (args,)))  # one value: one argument
        except BaseException as e: print(f"raised {type(e).__name__}: {e}")
    breaks = [m.splitlines()[0] for c in ("graph_break", "unimplemented") for m in counters[c]]
    print("graph breaks:", breaks)
    sys.exit(GB_TYPE in breaks)
