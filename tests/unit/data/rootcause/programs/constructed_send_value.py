import torch

def f(t1):
    t4 = torch.cos(t1)
    def gen1(v):
        total = v
        yield torch.tanh(total)
        return 0
    it2 = gen1(t4)
    next(it2)
    try:
        it2.send(None)
    except StopIteration as stop:
        return stop.value + t4

def inputs():
    return (torch.randn(3),)
