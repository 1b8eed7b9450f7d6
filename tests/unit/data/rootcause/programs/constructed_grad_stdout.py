import torch

def f(x):
    acc = x + 1
    for i in range(2):
        acc = acc * 2
    guard = torch.no_grad()
    torch._dynamo.graph_break()
    with guard:
        acc = acc + 1
    print("grad", torch.is_grad_enabled())
    return acc

def inputs():
    return (torch.randn(4),)
