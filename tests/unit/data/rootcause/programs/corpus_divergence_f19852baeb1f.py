"""A set_grad_enabled(False) object created before a graph break and entered after it
leaves grad mode disabled once the `with` block (and the call) is over."""
import torch


def f(x):
    ctx = torch.set_grad_enabled(False)
    torch._dynamo.graph_break()
    with ctx:
        y = x * 2
    return y.requires_grad, torch.is_grad_enabled()


def inputs():
    return (torch.ones(2, requires_grad=True),)


EXPECT = {
    "backend": "eager",
    "fullgraph": False,
    "calls": 1,
    "reproduces_on": ["3.11", "3.12", "3.13"],
    "symptom": "wrong-result",
    "observe": "grad-mode-after-call",
    "note": "f also returns the grad mode seen after the with block; restore grad mode after each run",
    "issue": "https://github.com/pytorch/pytorch/issues/124900",
}
