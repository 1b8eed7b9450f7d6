import torch

def f():
    t2 = 0
    try:
        [0 for t2 in (0,)]
        raise 0
    except:
        t2
        torch._dynamo.graph_break()

def inputs():
    return ()
