import torch
import dataclasses

@dataclasses.dataclass
class Pair:
    w: torch.Tensor
    k: int = 1

def f(t0, t1, n):
    t2 = torch.sigmoid(torch.minimum(t0[0], t0) * 0.5)
    t3 = torch.atan(torch.where(t0 > 0, t0, t0))
    t4 = torch.cos(t1)
    match Pair(t3, n):
        case Pair(k=1):
            torch._dynamo.graph_break()
        case Pair(w=a, k=2):
            t4 = torch.tanh(a * 0.5)
        case _:
            torch._dynamo.graph_break()
    match (t0[0], n, t0):
        case [a, 1, b]:
            t3 = torch.tanh(a * 0.5)
        case [a, *rest] if len(rest) == 2:
            t3 = torch.tanh(a * 0.5)

            def gen1(v):
                total = v
                while True:
                    got = (yield torch.tanh(total))
                    if got is None:
                        return total
                    total = torch.tanh(total + got)
            it2 = gen1(torch.atan(t4 * 2.0))
            y3 = next(it2)
            y4 = it2.send(torch.tanh(t1 / (1.0 + t1.abs())))
            try:
                it2.send(None)
            except StopIteration as stop:
                y4 = torch.tanh(stop.value + y4)
            t4 = torch.tanh(y3 + y4)
        case _:

            def gen5(x6):
                u7 = torch.sin(t4)
                for i8 in range(3):
                    xs9 = list({k: torch.tanh(u7) for k, u7 in enumerate((t0, t3))}.values())
                    u7 = (u7 + xs9[0]) / (1.0 + (u7 + xs9[0]).abs())
                    m10 = {'w': t1, 'k': n}
                    m11 = {**m10, 'k': 2, **{'b': t0}}
                    torch._dynamo.graph_break()
                    u7 = (m11['w'] * m11['k'] * 0.5 + m11['b']).clamp(-3.0, 3.0)
                    yield torch.sigmoid(t3)
            t2 = next(gen5(torch.sin(torch.relu(t2))))
    t2 = t4.clamp(-3.0, 3.0)
    return (torch.atan(t4), t2, t3, t4)

def inputs():
    g = torch.Generator().manual_seed(112735765)
    return (torch.randn(3, 17, generator=g), torch.randn(3, 17, generator=g), 3)
