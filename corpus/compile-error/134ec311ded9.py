# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.12.0"]
# [tool.tcfuzz]
# signature = "compile-error|dynamo|AssertionError@torch/_dynamo/bytecode_transformation.py:compute_exception_table|3.11"
# kind = "compile-error"
# stage = "dynamo"
# interpreters = ["3.11"]
# backend = "eager"
# device = "cpu"
# torch = "2.12.0"
# first-seen = "2026-11-30"
# last-seen = "2026-11-30"
# count = 1
# status = "open"
# replay = {"3.12/2.15.0" = "does not reproduce", "3.14/2.15.0" = "does not reproduce", "3.15/2.15.0" = "does not reproduce", "3.11/2.15.0" = "reproduces"}
# ///


import torch
def f(t0, t1, n):
    print()
    for unique_name_0 in range(0):
        try:
            pass
        except unique_name_1 as e5:
            [0 .sin(unique_name_2 + 0), 0 .where(unique_name_3 > 0, 0[0], unique_name_4).clamp(), 0(0 - unique_name_6)]
            if unique_name_7:
                break
        finally:
            {0: 0 .cos(unique_name_8.mean(dim=0)), 0: 0 .atan(unique_name_9)}
            unique_name_10(unique_name_11).clamp()

def inputs():
    return (0, 0, 0)


BACKEND = "eager"
FULLGRAPH = False


if __name__ == "__main__":  # eager vs compiled, twice each; exit 1 while they differ
    import sys
    from torch._dynamo.utils import same
    def run(fn):
        try: return [fn(*inputs()) for _ in range(2)]
        except BaseException as e: return f"raised {type(e).__name__}: {e}"
    eager, compiled = run(f), run(torch.compile(f, backend=BACKEND, fullgraph=FULLGRAPH))
    print(f"eager:    {eager}\ncompiled: {compiled}")
    sys.exit(0 if type(eager) is type(compiled) and same(eager, compiled, equal_nan=True) else 1)
