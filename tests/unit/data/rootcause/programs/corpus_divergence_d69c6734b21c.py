"""An exhausted reversed() iterator still yields under torch.compile (fullgraph)."""
import torch


def f(x):
    it = reversed([4, 5, 6])
    drained = list(it)
    try:
        next(it)
        return x + 100
    except StopIteration:
        return x + len(drained)


def inputs():
    return (torch.zeros(1),)


EXPECT = {
    "backend": "eager",
    "fullgraph": True,
    "calls": 1,
    "reproduces_on": ["3.11", "3.12", "3.13"],
    "symptom": "wrong-result",
    "issue": "https://github.com/pytorch/pytorch/issues/152262",
}
