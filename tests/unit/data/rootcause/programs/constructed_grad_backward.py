import torch

def f(w):
    ctx = torch.set_grad_enabled(False)
    torch._dynamo.graph_break()
    with ctx:
        w.detach()
    loss = (w * 3).sum()
    loss.backward()
    return w.grad

def inputs():
    return (torch.randn(3, requires_grad=True),)
