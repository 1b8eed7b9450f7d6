# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "graph-break|dynamo|tp_repr_impl not implemented|3.12"
# kind = "graph-break"
# stage = "dynamo"
# interpreters = ["3.12"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-02"
# last-seen = "2026-12-02"
# generator = "tcfuzz.v4"
# seed = 8200196
# compile = {"dynamic" = true}
# count = 1
# status = "open"
# replay = {"3.12/2.15.0" = "reproduces"}
# ///


import torch

def f(x):

    def g(v3):
        t = x
        f'{t.shape!r}'
    g(0)
    return x

def inputs():
    return (torch.randn(2),)


if __name__ == "__main__":  # compile as the harness did: these compile settings (tcfuzz harness/settings.py)
    import torch._dynamo, torch._inductor.config
    def _compile(fn, *, _compile=torch.compile, **options):
        options.setdefault("dynamic", True)
        compiled = _compile(fn, **options)
        return compiled
    torch.compile = _compile


GB_TYPE = "tp_repr_impl not implemented"

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
