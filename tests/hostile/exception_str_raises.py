# expect: match
import torch


class Broken(Exception):
    def __str__(self):
        raise RuntimeError("no str")

    def __repr__(self):
        raise RuntimeError("no repr")


def f(x):
    raise Broken()


def inputs():
    return (torch.ones(2),)
