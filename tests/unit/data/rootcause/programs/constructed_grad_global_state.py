import torch

SCALE = 2

def f(x):
    g = torch.no_grad()
    torch._dynamo.graph_break()
    with g:
        z = x.cos() * SCALE

def inputs():
    return (torch.randn(2, 2, requires_grad=True),)
