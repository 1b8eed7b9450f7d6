# /// script
# requires-python = ">=3.15"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "divergence|dynamo|global-state {wrong-result: import torch ; class n0 ( torch . nn . Module ) : ; { def __init__ ( n1 , n2 ) : ; { super ( ) . __init__ ( ) ; n1 . register_buffer ( '' , torch . li... #6ecc428a}|3.15"
# kind = "divergence"
# stage = "dynamo"
# interpreters = ["3.15"]
# backend = "eager"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-01"
# last-seen = "2026-12-01"
# generator = "tcfuzz.v3"
# seed = 314150133
# count = 1
# status = "open"
# replay = {"3.14/2.15.0" = "reproduces", "3.15/2.15.0" = "reproduces"}
# ///


import torch


class Block(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.register_buffer('shift', torch.linspace(-0.5, 0.5, width))
        self.weight = torch.nn.Parameter(torch.linspace(-1.0, 1.0, width))

    def forward(self, x):
        return torch.tanh(x * self.weight + self.shift)


def f(t0, t1, n, a0, a1, grow7, p8, p9, p10):
    t2 = torch.sigmoid(t0.amax(dim=-1, keepdim=True))
    t3 = t1.clamp(-3.0, 3.0)
    a0.append(t0 * 0.5)
    t4 = torch.tanh(sum(a0))
    t5 = torch.tanh(t0 * a1)
    groups1 = [[t3, t0], [t0 * n], []]
    flat3 = [*g2 for g2 in groups1]
    t3 = flat3[0] + flat3[-1] * len(flat3)
    if (torch.tanh(t4) > -1.0).all():
        ctx4 = torch.no_grad()
        torch._dynamo.graph_break()
        with ctx4:
            t2 = torch.minimum(torch.minimum(t3, t4), t0).clamp(-3.0, 3.0)
            block5 = Block(t0.shape[-1])
            t4 = torch.cos((block5((t5.mean(dim=-1, keepdim=True) / (1.0 + t5.mean(dim=-1, keepdim=True).abs())))))
            print(sorted(k for k, _ in block5.named_parameters()), len(list(block5.buffers())))
        t2 = torch.atan(sum([torch.cos((t3 - t4)) for x6 in (t0, t1, t4,)]))
        torch._dynamo.graph_break()
    try:
        v11 = torch.einsum('ij,ij->i', p10.clamp(-3.0, 3.0), p10.clamp(-3.0, 3.0))
        v12 = torch.lt(p10, p10)
        v13 = p8.contiguous()
        v14 = (p9.clamp(-3.0, 3.0) @ torch.linspace(-1.0, 1.0, 3, dtype=torch.float32).reshape(1, 3))
        v15 = v11.unsqueeze(0).expand(4, -1)
        v16 = v11.unsqueeze(0)
        v17 = torch.nn.functional.normalize(v11, dim=0)
        v18 = v12[::2]
        v19 = torch.mv(p8.clamp(-3.0, 3.0), torch.linspace(-1.0, 1.0, 1, dtype=torch.float32).reshape(1))
        v20 = torch.nn.functional.layer_norm(p10, (2, 1))
        v21 = torch.nn.functional.kl_div(torch.log_softmax(v13.clamp(-3.0, 3.0), dim=-1), torch.softmax(torch.linspace(-1.0, 1.0, 2, dtype=torch.float32).reshape(2, 1), dim=-1), reduction='batchmean')
        t5 = torch.tanh(t5 + 0.1 * (v14.float().clamp(-32.0, 32.0).mean() + v15.float().clamp(-32.0, 32.0).mean() + v16.float().clamp(-32.0, 32.0).mean() + v17.float().clamp(-32.0, 32.0).mean() + v18.float().clamp(-32.0, 32.0).mean() + v19.float().clamp(-32.0, 32.0).mean() + v20.float().clamp(-32.0, 32.0).mean() + v21.float().clamp(-32.0, 32.0).mean()))
        raise ExceptionGroup("group", [KeyError("m0"), ValueError("m1")])
    except* ValueError as eg22:
        print("ValueError", len(eg22.exceptions))
        fns23 = []
        for i24 in range(3):
            fns23.append(lambda v: v * (i24 + 1) * 0.25)
            torch._dynamo.graph_break()
        t4 = torch.sigmoid((sum(fn(t0[0]) for fn in fns23)))
    except* KeyError as eg25:
        print("KeyError", len(eg25.exceptions))
        t4 = torch.cos((t2 * t4))
    with torch.enable_grad():
        s26 = {int((t4 > 0).sum()) for _ in range(2)}
        s27 = {*s26, *{n, 1}, t1.ndim}
        t3 = torch.tanh(torch.sigmoid((t3 * (n + 1) * 0.25)) * len(s27) * 0.25)
    return torch.tanh((t2.mean() * 2.0)), t2, t3, t4, t5


def inputs():
    g = torch.Generator().manual_seed(700)
    return (torch.randn(2, 3, 4, generator=g), torch.randn(2, 3, 4, generator=g), 2, [torch.randn(2, 3, 4, generator=g), torch.randn(2, 3, 4, generator=g)], 2, torch.randn(7, generator=g), torch.randn(2, 1, generator=g, dtype=torch.float32), torch.randn(2, 1, generator=g, dtype=torch.float32), torch.randn(2, 1, generator=g, dtype=torch.float32))


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
                with contextlib.redirect_stdout(buf):
                    value = fn(*args)
                    value = list(value) if hasattr(value, "__next__") else value  # a generator runs when drained
            except BaseException as e: value = f"raised {type(e).__name__}: " + re.sub(r" at 0x\w+", "", str(e).split(chr(10))[0])
            out.append([value, list(args), buf.getvalue(), torch.is_grad_enabled()])
        return PLAN, out + [state(module)]
    calls, eager = run(False)
    compiled = run(True, calls)[1]
    print(f"calls:    {', '.join(calls)}\neager:    {eager}\ncompiled: {compiled}")
    try: ok = same(eager, compiled, equal_nan=True)
    except Exception: ok = repr(eager) == repr(compiled)  # a value same() does not know
    sys.exit(0 if ok else 1)
