# expect: match
import torch


def f(x):
    a = [x]
    a.append(a)
    d = {"x": x}
    d["self"] = d
    return a, d, list(range(100_000))


def inputs():
    return (torch.ones(2),)
