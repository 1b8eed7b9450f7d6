import torch
import collections.abc
import typing

def f(t0, t1, n, a0):
    t2 = t0 / (1.0 + t0.abs())
    t4 = torch.tanh(t0 * a0)
    d1 = {'a': torch.cos(torch.cos(t1)), 'b': t2 / (1.0 + t2.abs())}
    try:
        try:
            raise IndexError('again7')
        except IndexError:
            i3 = 0
            while i3 < 3 and (t4 > -1.0).all():
                i3 += 1
                t3 = torch.tanh(torch.maximum(t2 * d1['a'], t1 * (i3 + 1) * 0.25))
            raise
    except (IndexError, KeyError):

        def g8(x9):
            xs13 = [(y14 := torch.tanh(v)) * 0.5 for v in (x9, t3)]

            def gen15(v):
                yield torch.tanh(v)
                yield torch.sin(v)
                return v * 0.5

            def gen16(v):
                r = (yield from gen15(v))
                yield torch.tanh(r)
            for x17 in gen16(torch.tanh(torch.where(xs13[1] > 0, x9, x9))):
                x9 = torch.tanh(x9 + x17)
            return torch.sin(x9)
        t4 = torch.cos(g8((t4 * t4).clamp(-3.0, 3.0)))

def inputs():
    g = torch.Generator().manual_seed(666)
    return (torch.randn(17, generator=g), torch.randn(17, generator=g), 2, torch.randn(1, generator=g))
