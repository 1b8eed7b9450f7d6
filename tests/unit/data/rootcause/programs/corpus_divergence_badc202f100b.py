import torch

def f():
    ctx1 = torch.set_grad_enabled(False)
    torch._dynamo.graph_break()
    with ctx1:
        pass
    print(torch.is_grad_enabled())

def inputs():
    return ()
