# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.12.0"]
# [tool.tcfuzz]
# signature = "graph-break|dynamo|RuntimeError when making fake tensor call|3.11,3.12,3.13,3.13t"
# kind = "graph-break"
# stage = "dynamo"
# interpreters = ["3.11", "3.12", "3.13", "3.13t"]
# backend = "eager"
# device = "cpu"
# torch = "2.12.0+cu130"
# first-seen = "2026-11-30"
# last-seen = "2026-11-30"
# count = 1
# status = "open"
# replay = {"3.12/2.15.0" = "does not reproduce", "3.14/2.15.0" = "does not reproduce", "3.15/2.15.0" = "does not reproduce", "3.11/2.15.0" = "does not reproduce", "3.13/2.15.0" = "does not reproduce"}
# ///


import torch

def f(t0, t1, n):
    t0[0]

def inputs():
    return (torch.randn(0), 0, 0)


GB_TYPE = "RuntimeError when making fake tensor call"

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
