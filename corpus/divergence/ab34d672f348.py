# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "divergence|dynamo|value {wrong-result: def f(v1):; .v2 = E; .v3 = (E, v2.args) #8cbd8627}|3.11,3.12,3.13,3.13t,3.14,3.15"
# kind = "divergence"
# stage = "dynamo"
# interpreters = ["3.11", "3.12", "3.13", "3.13t", "3.14", "3.15"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-07"
# last-seen = "2026-12-07"
# count = 1
# status = "open"
# replay = {"3.11/2.15.0" = "reproduces", "3.12/2.15.0" = "reproduces", "3.13/2.15.0" = "reproduces", "3.13t/2.12.0" = "reproduces", "3.14/2.15.0" = "reproduces", "3.15/2.15.0" = "reproduces"}
# ///


import torch
import functools


def f(x):
    p = functools.partial(functools.partial(max, 1), 2)
    return x + 1, p.args  # eager (1, 2): partial() flattens a partial; compiled (2,)


def inputs():
    return (torch.ones(1),)


BACKEND = "eager"
FULLGRAPH = False


LAST_CALL = "cached"  # the plan's calls are made up to this one (None: all)

if __name__ == "__main__":  # eager vs compiled, each in a fresh copy of this module; exit 1 while they differ
    # The harness's calls up to LAST_CALL "cached", with what they use of tcfuzz's harness/plan.py.
    import random, types
    from typing import Any
    def is_program_class(value: Any, module: types.ModuleType) -> bool:
        return isinstance(value, type) and value.__module__ == module.__name__
    def reset_global_state(grad_enabled: bool = True) -> None:
        import torch
        torch.set_grad_enabled(grad_enabled)
        torch.set_default_dtype(torch.float32)
    def seed_rngs() -> None:
        import torch
        torch.manual_seed(0)
        random.seed(0)
    PLAN = ("fresh", "cached")  # harness.plan.decide(..., last="cached"), whatever the module and its inputs
    def fresh_and_cached(make_inputs):  # the (call, args) of harness.plan.CallPlan(module, make_inputs, last="cached")
        grad_enabled = torch.is_grad_enabled()
        for call in PLAN:
            reset_global_state(grad_enabled)
            seed_rngs()
            args = make_inputs()
            args = args if isinstance(args, tuple) else (args,)
            seed_rngs()
            yield call, args
        reset_global_state(grad_enabled)
    # The runs.
    import contextlib, io, re, sys, types
    from torch._dynamo.utils import same
    def load():  # a fresh copy of this module without the runner's settings: the program as the harness ran it
        module = sys.modules["case"] = types.ModuleType("case")
        module.__file__ = __file__
        with open(__file__) as fh: exec(compile(fh.read(), __file__, "exec"), vars(module))
        for name in ('BACKEND', 'FULLGRAPH', 'GB_TYPE', 'LAST_CALL', 'HANG_S'): vars(module).pop(name, None)
        return module
    def state(module):  # after the calls: data globals and the public attributes of its classes, their objects' too
        owners = [module] + [v for v in vars(module).values() if is_program_class(v, module)]
        return [[k, dict(vars(v)) if type(v).__module__ == "case" else v] for o in owners for k, v in list(vars(o).items())
                if not k.startswith("_") and not callable(v) and not isinstance(v, (types.ModuleType, property, classmethod, staticmethod))]
    def run(compiled, calls=None):
        module = load()
        fn = torch.compile(module.f, backend=BACKEND, fullgraph=FULLGRAPH) if compiled else module.f
        plan, out = fresh_and_cached(module.inputs), []
        for call, args in plan:
            buf = io.StringIO()
            try:
                with contextlib.redirect_stdout(buf), contextlib.nullcontext() if compiled else torch.compiler.set_stance(
                        "force_eager"):  # eager never passes through Dynamo (torch.cond compiles itself)
                    value = fn(*args)
                    value = list(value) if hasattr(value, "__next__") else value  # a generator runs when drained
            except BaseException as e: value = f"raised {type(e).__name__}: " + re.sub(r" at 0x\w+", "", str(e).split(chr(10))[0])
            out.append([value, list(args), buf.getvalue(), torch.is_grad_enabled()])
        return PLAN, out + [state(module)]
    def order(v):  # dicts' key orders and deques' maxlen, which same() does not compare (harness/compare.py does)
        if isinstance(v, dict): return [list(v)] + [o for x in v.values() for o in order(x)]
        if isinstance(v, (list, tuple)): return [o for x in v for o in order(x)]
        return [v.maxlen] + order(list(v)) if type(v).__name__ == "deque" else []
    calls, eager = run(False)
    compiled = run(True, calls)[1]
    print(f"calls:    {', '.join(calls)}\neager:    {eager}\ncompiled: {compiled}")
    try: ok = same(eager, compiled, equal_nan=True) and repr(order(eager)) == repr(order(compiled))
    except Exception: ok = repr(eager) == repr(compiled)  # a value same() does not know
    sys.exit(0 if ok else 1)
