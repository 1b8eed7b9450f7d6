# expect: any
# torch 2.12: match; torch 2.15: divergence global-state@fresh (compiled code leaves autocast other than eager does)
import torch


def f(x):
    torch.autocast("cpu", dtype=torch.bfloat16).__enter__()  # never exited: the next call starts under it
    return x @ x


def inputs():
    return (torch.ones(4, 4),)
