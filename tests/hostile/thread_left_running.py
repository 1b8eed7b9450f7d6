# expect: match
import threading
import time

import torch

STOP = []


def spin():
    while not STOP:
        time.sleep(0.01)


def f(x):
    threading.Thread(target=spin, name="hostile-spinner", daemon=True).start()
    return x + 1


def inputs():
    return (torch.ones(2),)
