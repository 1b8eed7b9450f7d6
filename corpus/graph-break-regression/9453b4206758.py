# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "graph-break-regression|dynamo|Unsupported Tensor.item() call with capture_scalar_outputs=False [absent on 3.12, 3.13, 3.13t]|3.11"
# kind = "graph-break-regression"
# stage = "dynamo"
# interpreters = ["3.11"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-11-30"
# last-seen = "2026-11-30"
# generator = "tcfuzz.v2"
# seed = 2078700000
# count = 1
# status = "open"
# replay = {"3.11/2.12.0" = "reproduces", "3.12/2.12.0" = "does not reproduce", "3.13/2.12.0" = "does not reproduce", "3.13t/2.12.0" = "does not reproduce", "3.12/2.15.0" = "does not reproduce", "3.14/2.15.0" = "does not reproduce", "3.15/2.15.0" = "does not reproduce", "3.11/2.15.0" = "reproduces", "3.13/2.15.0" = "does not reproduce"}
# ///


import torch

class Ready:

    def __init__(self, value):
        self.value = value

    def __await__(self):
        yield from ()
        return self.value

def drive(coroutine):
    try:
        while True:
            coroutine.send(None)
    except StopIteration as stop:
        return stop.value

def f(x, y):
    try:
        raise ValueError('v3')
    except Exception as e:
        torch._dynamo.graph_break()
    finally:
        t = {int((y > 0).sum()) for _ in range(2)}
    return x

def inputs():
    return (torch.randn(1), torch.randn(0))


GB_TYPE = "Unsupported Tensor.item() call with capture_scalar_outputs=False"

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
