import torch

def f(a0):
    ctx2 = torch.set_grad_enabled(False)
    torch._dynamo.graph_break()
    with ctx2:
        pass
    loss4 = a0.sum()
    loss4.backward()

def inputs():
    return (torch.randn(0, requires_grad=True),)
