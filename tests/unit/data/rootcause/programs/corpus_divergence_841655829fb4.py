import torch

def f(x):
    ctx = torch.no_grad()
    torch._dynamo.graph_break()
    with ctx:
        print("inside")
        y = x * 2
    return y

def inputs():
    return (torch.ones(3, requires_grad=True),)
