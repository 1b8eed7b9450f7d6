import torch

def f(t0, t1, n):
    try:
        with torch.no_grad():
            0
            [0 for i9 in range(0)]
            torch._dynamo.graph_break()
    except ValueError:
        pass

def inputs():
    0
    return (torch.randn(5), torch.randn(5), 0)
