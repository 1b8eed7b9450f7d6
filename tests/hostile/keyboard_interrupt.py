# expect: match
import torch


def f(x):
    if x.sum() > 0:
        raise KeyboardInterrupt("from the program")
    return x


def inputs():
    return (torch.ones(2),)
