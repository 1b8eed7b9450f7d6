# expect: match
import torch


class Config:
    def __init__(self):
        self.scale = 2
        self.bias = 0.5


def f(cfg, x):
    if cfg.scale > 2:
        x = x * cfg.scale
    if hasattr(cfg, "bias"):
        x = x + cfg.bias
    return x


def inputs():
    return (Config(), torch.ones(3))
