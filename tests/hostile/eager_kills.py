# expect: invalid
import os
import signal

import torch


def f(x):
    os.kill(os.getpid(), signal.SIGKILL)


def inputs():
    return (torch.ones(2),)
