import torch

class Block(torch.nn.Module):

    def __init__(self, width):
        super().__init__()
        self.register_buffer('shift', torch.linspace(-0.5, 0.5, width))
        self.weight = torch.nn.Parameter(torch.linspace(-1.0, 1.0, width))

    def forward(self, x):
        return torch.tanh(x * self.weight + self.shift)

def f(t0, t1):
    block6 = Block(t0.shape[-1])
    t2 = block6(t1 / (1.0 + t1.abs())).clamp(-3.0, 3.0)
    if t0.shape[-1] > 4:
        ctx7 = torch.no_grad()
        torch._dynamo.graph_break()
        with ctx7:
            pass

def inputs():
    return (torch.randn(4), torch.randn(1))
