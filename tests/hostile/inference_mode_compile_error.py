# expect: any
# under aot_eager (torch 2.15.0): compile-error "Cannot set version_counter for inference tensor"; the exception's
# reference cycles, once collected, ran C++ guard destructors that left the PythonDispatcher key included, and every
# later operator of the worker raised "Hit PythonDispatcher dispatch key but PythonDispatcherTLS was not set"
import torch


def f(x):
    with torch.inference_mode():
        y = x.view(-1)
        y.add_(1)
    return y * 2


def inputs():
    return (torch.ones(4),)
