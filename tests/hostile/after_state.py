# expect: match
# Run after leaves_state.py: sees none of what it left behind.
import builtins
import os
import sys

import torch
import torch._dynamo.config


def f(x):
    return (x.sin(), torch.sin(x), torch.get_default_dtype(), len([1, 2]), "fake_module" in sys.modules,
            sys.getrecursionlimit() > 200, torch._dynamo.config.cache_size_limit, os.environ.get("TCFUZZ_HOSTILE"),
            os.path.basename(os.getcwd()) == "sub", torch.is_autocast_enabled("cpu"), builtins.len is len)


def inputs():
    return (torch.ones(2),)
