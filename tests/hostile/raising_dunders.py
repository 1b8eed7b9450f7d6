# expect: match
import torch


class Hostile:
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        raise ValueError("no eq")

    def __repr__(self):
        raise ValueError("no repr")

    __hash__ = object.__hash__


def f(x):
    h = Hostile(1)
    return [h, {h: x}, {h}], 10 ** 5000


def inputs():
    return (torch.ones(2),)
