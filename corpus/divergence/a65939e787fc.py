# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.12.0"]
# [tool.tcfuzz]
# signature = "divergence|inductor|globals {ClassDef, Mult}|3.11,3.12,3.13,3.13t"
# kind = "divergence"
# stage = "inductor"
# interpreters = ["3.11", "3.12", "3.13", "3.13t"]
# backend = "inductor"
# device = "cpu"
# torch = "2.12.0"
# first-seen = "2026-11-30"
# last-seen = "2026-11-30"
# count = 1
# status = "open"
# ///


import torch

class State:
    scale = 0

    def __init__(self, w):
        self.w = w

def f(t1, t2):
    t3 = t1
    st1 = State(t3)
    st1 = st1.w * State.scale
    State.scale = State.scale * 0.5
    st1

def inputs():
    return (torch.randn(0), torch.ones(2))


BACKEND = "inductor"
FULLGRAPH = False


LAST_CALL = None  # the plan's calls are made up to this one (None: all)

if __name__ == "__main__":  # eager vs compiled, each in a fresh copy of this module; exit 1 while they differ
    # The harness's call plan: tcfuzz's harness/plan.py but for its docstring, so that
    # this case makes the calls the harness made.
    import enum
    import random
    import types
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any


    class Call(str, enum.Enum):
        """One call of the plan, in plan order; the value is its label in outcomes and signatures."""

        FRESH = "fresh"
        CACHED = "cached"
        GUARD = "guard"
        SHAPE = "shape"

        def describe(self) -> str:
            return {
                "fresh": "the first call: compiles",
                "cached": "the same inputs again: the compiled code's cached path",
                "guard": "after the module's scalar globals and class attributes changed: a guard must fire",
                "shape": "with the largest dimension grown by one: a recompile, then dynamic shapes",
            }[self.value]


    # Containers deeper than this are not searched for tensors.
    MAX_DEPTH = 6


    def map_tensors(value: Any, fn: Callable[[Any], Any], depth: int = 0) -> Any:
        """``value`` with ``fn`` applied to every ``torch.Tensor`` inside tuples,
        lists and dicts (same container types; other values as they are)."""
        import torch

        if isinstance(value, torch.Tensor):
            return fn(value)
        if depth > MAX_DEPTH:
            return value
        if type(value) in (tuple, list):
            return type(value)(map_tensors(v, fn, depth + 1) for v in value)
        if type(value) is dict:
            return {k: map_tensors(v, fn, depth + 1) for k, v in value.items()}
        return value


    def tensors_in(value: Any, depth: int = 0) -> list[Any]:
        """Every ``torch.Tensor`` inside tuples, lists and dicts of ``value``, in order."""
        import torch

        if isinstance(value, torch.Tensor):
            return [value]
        if depth > MAX_DEPTH:
            return []
        if type(value) in (tuple, list):
            return [t for v in value for t in tensors_in(v, depth + 1)]
        if type(value) is dict:
            return [t for v in value.values() for t in tensors_in(v, depth + 1)]
        return []


    def rebuild_leaf(original: Any, data: Any) -> Any:
        """Tensor ``data`` as a leaf that requires grad where tensor ``original`` did."""
        if original.requires_grad and data.is_floating_point():
            return data.detach().requires_grad_()
        return data.detach()


    def grow_shapes(args: tuple) -> tuple | None:
        """``args`` with every dimension equal to the largest size S >= 2 among
        all tensor arguments (at any depth, ``tensors_in``) grown to S + 1, or
        None when no tensor has such a dimension.

        Growing the same size everywhere keeps tensors that broadcast or multiply
        together compatible. The new slice repeats the last one, so values stay in
        the distribution ``inputs()`` chose and no random numbers are drawn.
        """
        import torch

        sizes = [s for t in tensors_in(args) for s in t.shape if s >= 2]
        if not sizes:
            return None
        largest = max(sizes)

        def grow(t: Any) -> Any:
            data = t.detach()
            for dim, size in enumerate(t.shape):
                if size == largest:
                    data = torch.cat([data, data.narrow(dim, size - 1, 1)], dim=dim)
            return rebuild_leaf(t, data) if data is not t else t

        return map_tensors(args, grow)


    def is_program_class(value: Any, module: types.ModuleType) -> bool:
        """Is ``value`` a class defined by ``module`` itself (not imported)?"""
        return isinstance(value, type) and value.__module__ == module.__name__


    def guard_targets(module: types.ModuleType) -> list[tuple[Any, str]]:
        """(owner, name) of every public int, float or bool module global and
        class attribute of ``module``'s own classes: what the ``guard`` call mutates."""
        targets: list[tuple[Any, str]] = []
        for k, v in list(module.__dict__.items()):
            if k.startswith("_"):
                continue
            if isinstance(v, (bool, int, float)):
                targets.append((module, k))
            elif is_program_class(v, module):
                targets += [(v, a) for a, x in vars(v).items()
                            if not a.startswith("_") and isinstance(x, (bool, int, float))]
        return targets


    def mutate_for_guard(module: types.ModuleType) -> None:
        """Change every guard target (``guard_targets``): int + 1, float + 0.5, bool negated."""
        for owner, name in guard_targets(module):
            value = getattr(owner, name)
            setattr(owner, name, (not value) if isinstance(value, bool) else value + (1 if isinstance(value, int) else 0.5))


    def decide(has_guard_targets: bool, first_args: tuple, *, limit: int | None = None,
               last: str | None = None) -> tuple[Call, ...]:
        """The plan of a module with or without guard targets whose first call
        gets ``first_args``: fresh, cached, then guard and shape where they apply;
        only up to call ``last`` where the plan has it, at most ``limit`` calls
        (None or 0: all)."""
        plan = [Call.FRESH, Call.CACHED]
        if has_guard_targets:
            plan.append(Call.GUARD)
        if grow_shapes(first_args) is not None:
            plan.append(Call.SHAPE)
        if last is not None and last in plan:
            plan = plan[:plan.index(Call(last)) + 1]
        return tuple(plan[:limit] if limit else plan)


    def reset_global_state() -> None:
        """Grad mode on, default dtype float32: torch's process-wide state at the start of each call."""
        import torch

        torch.set_grad_enabled(True)
        torch.set_default_dtype(torch.float32)


    def seed_rngs() -> None:
        """Seed torch's RNGs (every device) and ``random``'s with 0."""
        import torch

        torch.manual_seed(0)
        random.seed(0)


    class CallPlan:
        """The calls one run makes on a freshly loaded ``module``, as an iterable
        of ``(call, args)``: ``args`` is the argument tuple for the entry function,
        to be called right away (moving its tensors is fine; drawing random
        numbers is not: the RNGs were just seeded).

        ``make_inputs()`` returns the program's inputs (a tuple, or one value that
        becomes a 1-tuple); it is called once per call, so an ``inputs()`` that
        counts its calls sees what the harness made. With ``calls`` None the plan
        is decided (``decide``, with ``limit`` and ``last``) from the module
        before the first call and from that call's inputs before the call can
        change them; ``calls`` holds it from then on. Module state is changed only
        as the plan says: the guard mutation before the ``guard`` call, grad mode
        and default dtype reset before each call and after the last.
        """

        def __init__(self, module: types.ModuleType, make_inputs: Callable[[], Any],
                     calls: Sequence[str] | None = None, *, limit: int | None = None, last: str | None = None):
            self.module, self.make_inputs = module, make_inputs
            self.calls = None if calls is None else tuple(Call(c) for c in calls)
            self.limit, self.last = limit, last

        def __iter__(self) -> Iterator[tuple[Call, tuple]]:
            has_guard_targets = self.calls is None and bool(guard_targets(self.module))
            todo = list(self.calls if self.calls is not None else (Call.FRESH,))
            while todo:
                call = todo.pop(0)
                reset_global_state()
                if call is Call.GUARD:
                    mutate_for_guard(self.module)
                seed_rngs()
                args = self.make_inputs()
                args = args if isinstance(args, tuple) else (args,)
                if self.calls is None:
                    self.calls = decide(has_guard_targets, args, limit=self.limit, last=self.last)
                    todo = list(self.calls[1:])
                if call is Call.SHAPE:
                    args = grow_shapes(args) or args
                seed_rngs()
                yield call, args
            reset_global_state()
    # The runs.
    import contextlib, io, re, sys, types
    SETTINGS = ('BACKEND', 'FULLGRAPH', 'GB_TYPE', 'LAST_CALL', 'HANG_S')  # names the copies drop
    from torch._dynamo.utils import same
    def load():  # a fresh copy of this module without the runner's settings: the program as the harness ran it
        module = types.ModuleType("case")
        module.__file__ = __file__
        sys.modules["case"] = module
        with open(__file__) as fh:
            exec(compile(fh.read(), __file__, "exec"), vars(module))
        for name in SETTINGS:
            vars(module).pop(name, None)
        return module
    def attributes(module):
        owners = [module] + [v for v in vars(module).values() if is_program_class(v, module)]
        return [(o, k, v) for o in owners for k, v in list(vars(o).items()) if not k.startswith("_")
                and not callable(v) and not isinstance(v, (types.ModuleType, property, classmethod, staticmethod))]
    def state(module):  # after the calls
        return [[k, dict(vars(v)) if type(v).__module__ == "case" else v] for _, k, v in attributes(module)]
    def run(compiled, calls=None):
        module = load()
        fn = torch.compile(module.f, backend=BACKEND, fullgraph=FULLGRAPH) if compiled else module.f
        plan, out = CallPlan(module, module.inputs, calls, last=LAST_CALL), []
        for call, args in plan:
            buf = io.StringIO()
            try:
                with contextlib.redirect_stdout(buf):
                    value = fn(*args)
                    value = list(value) if hasattr(value, "__next__") else value  # a generator runs when drained
            except Exception as e: value = f"raised {type(e).__name__}: " + re.sub(r" at 0x\w+", "", str(e).split(chr(10))[0])
            out.append([value, list(args), buf.getvalue(), torch.is_grad_enabled()])
        return plan.calls, out + [state(module)]
    calls, eager = run(False)
    compiled = run(True, calls)[1]
    print(f"calls:    {', '.join(calls)}\neager:    {eager}\ncompiled: {compiled}")
    try: ok = same(eager, compiled, equal_nan=True)
    except Exception: ok = repr(eager) == repr(compiled)  # a value same() does not know
    sys.exit(0 if ok else 1)
