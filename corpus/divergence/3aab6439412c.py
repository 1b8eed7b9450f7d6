# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.15.0"]
# [tool.tcfuzz]
# signature = "divergence|inductor|value {wrong-result: def f(): #142c9148}|3.12"
# kind = "divergence"
# stage = "inductor"
# interpreters = ["3.12"]
# backend = "inductor"
# device = "cpu"
# torch = "2.15.0+cu132"
# first-seen = "2026-12-01"
# last-seen = "2026-12-01"
# generator = "tcfuzz.graphs.v1"
# seed = 7400277
# compile = {"inductor" = {"pre_grad_fusion_options" = {"normalization_pass" = {}, "merge_splits_pass" = {}, "split_cat_pass" = {}, "unbind_stack_pass" = {}, "merge_getitem_cat_pass" = {}, "mutate_cat_pass" = {}, "split_cat_to_slices_pass" = {}, "unbind_cat_to_view_pass" = {}, "split_stack_to_cats_pass" = {}, "unbind_stack_to_slices_pass" = {}, "move_reshape_out_of_split_stack_pass" = {}, "remove_split_with_size_one_pass" = {}, "merge_stack_tahn_unbind_pass" = {}, "einsum_to_pointwise_pass" = {}, "batch_relu" = {}, "batch_sigmoid" = {}, "batch_tanh" = {}, "batch_clamp" = {}, "batch_layernorm" = {}, "batch_nan_to_num" = {}, "batch_detach" = {}, "batch_dropout" = {}}}, "dynamo" = {"capture_scalar_outputs" = true}}
# count = 1
# status = "open"
# replay = {"3.12/2.15.0" = "reproduces", "3.11/2.15.0" = "reproduces", "3.13/2.15.0" = "reproduces", "3.13t/2.12.0" = "reproduces", "3.14/2.15.0" = "reproduces", "3.15/2.15.0" = "reproduces"}
# ///


import torch

def f(s, v2, v3):

    def g(s, v, v2, v3):
        t2 = s
        return (0, 0, t2, 0)
    v1, v2, t2, v3 = g(s, 0, 0, 0)
    t = t2
    torch.clamp(t2.detach().float(), 0, out=t)
    return t

def inputs():
    return (torch.randn(2), 0, 0)


if __name__ == "__main__":  # compile as the harness did: these compile settings (tcfuzz harness/settings.py)
    import torch._dynamo, torch._inductor.config
    def _compile(fn, *, _compile=torch.compile, **options):
        compiled = _compile(fn, **options)
        compiled = torch._inductor.config.patch({'pre_grad_fusion_options': {'normalization_pass': {}, 'merge_splits_pass': {}, 'split_cat_pass': {}, 'unbind_stack_pass': {}, 'merge_getitem_cat_pass': {}, 'mutate_cat_pass': {}, 'split_cat_to_slices_pass': {}, 'unbind_cat_to_view_pass': {}, 'split_stack_to_cats_pass': {}, 'unbind_stack_to_slices_pass': {}, 'move_reshape_out_of_split_stack_pass': {}, 'remove_split_with_size_one_pass': {}, 'merge_stack_tahn_unbind_pass': {}, 'einsum_to_pointwise_pass': {}, 'batch_relu': {}, 'batch_sigmoid': {}, 'batch_tanh': {}, 'batch_clamp': {}, 'batch_layernorm': {}, 'batch_nan_to_num': {}, 'batch_detach': {}, 'batch_dropout': {}}})(compiled)
        compiled = torch._dynamo.config.patch({'capture_scalar_outputs': True})(compiled)
        return compiled
    torch.compile = _compile


BACKEND = "inductor"
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
