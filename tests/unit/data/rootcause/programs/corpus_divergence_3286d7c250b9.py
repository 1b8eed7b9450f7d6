import torch
def f():

    class Base1:
        pass

    def g1():
        t4
    t4 = t4

def inputs():
    return ()
