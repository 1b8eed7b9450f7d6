# expect: match
import torch


def make(k):
    def scale(t):
        return t * k
    return scale


helper = make(3)


def offset(t, by=1):
    return t + by


def f(x, items, table):
    return offset(helper(x)) + items[0] + len(table) + table[list(table)[0]]


def inputs():
    return (torch.ones(3), [1, 2], {"a": 1, "b": 2})
