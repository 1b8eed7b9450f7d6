# expect: any
# Rebinding builtins.len breaks Dynamo's own code: any verdict; what matters is the next program.
import builtins
import os
import signal
import sys
import threading

import torch
import torch._dynamo.config


def f(x):
    torch.set_default_dtype(torch.float64)
    torch.sin = torch.cos
    builtins.len = lambda obj: 7
    sys.modules["fake_module"] = object()
    sys.setrecursionlimit(200)
    signal.signal(signal.SIGUSR2, lambda *a: None)
    torch._dynamo.config.cache_size_limit = 1
    os.environ["TCFUZZ_HOSTILE"] = "1"
    os.makedirs("sub", exist_ok=True)
    os.chdir("sub")
    threading.Thread(target=lambda: None, name="hostile-short").start()
    torch.autocast("cpu").__enter__()
    return x + 1


def inputs():
    return (torch.ones(2),)
