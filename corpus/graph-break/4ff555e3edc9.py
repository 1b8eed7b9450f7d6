# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "graph-break|dynamo|Unsupported Tensor.backward() call|3.12"
# kind = "graph-break"
# stage = "dynamo"
# interpreters = ["3.12"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-02"
# last-seen = "2026-12-02"
# generator = "tcfuzz.v4"
# seed = 8200187
# compile = {"mark_dynamic" = [[1, 1], [2, 1]]}
# count = 1
# status = "open"
# replay = {"3.12/2.15.0" = "reproduces"}
# ///


import torch

class Box:

    def __init__(self, w, k):
        self.w = w

def f(x, w2, u):
    t = u.w
    t2 = (w2 * t).sum()
    t2.backward()
    return x

def inputs():
    return (torch.randn(0), torch.randn(1, requires_grad=True), Box(torch.randn(1), 0))


if __name__ == "__main__":  # compile as the harness did: these compile settings (tcfuzz harness/settings.py)
    import functools
    import torch._dynamo, torch._inductor.config
    def _compile(fn, *, _compile=torch.compile, **options):
        compiled = _compile(fn, **options)
        @functools.wraps(fn)
        def call(*args):
            for i, dim in [[1, 1], [2, 1]]:
                if i < len(args) and isinstance(args[i], torch.Tensor) and dim < args[i].dim():
                    torch._dynamo.maybe_mark_dynamic(args[i], dim)
            return compiled(*args)
        return call
    torch.compile = _compile


GB_TYPE = "Unsupported Tensor.backward() call"

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
