# /// script
# requires-python = ">=3.11"
# dependencies = ["torch==2.12.0"]
# [tool.tcfuzz]
# signature = "divergence|dynamo|stdout@shape {wrong-result: v1 = E; def f():; .v1.append(C); .print(list(v1)) #af640e40}|3.11,3.12,3.13,3.13t,3.14,3.15"
# kind = "divergence"
# stage = "dynamo"
# interpreters = ["3.11", "3.12", "3.13", "3.13t", "3.14", "3.15"]
# backend = "eager"
# device = "cpu"
# torch = "2.12.0+cu130"
# first-seen = "2026-12-04"
# last-seen = "2026-12-04"
# generator = "tcfuzz.pool"
# seed = 8100008
# count = 1
# status = "open"
# replay = {"3.11/2.15.0" = "reproduces", "3.12/2.15.0" = "reproduces", "3.13/2.15.0" = "reproduces", "3.13t/2.12.0" = "reproduces", "3.14/2.15.0" = "reproduces", "3.15/2.15.0" = "reproduces"}
# ///


import torch
import collections
HISTORY = collections.deque([0], maxlen=3)

def f(x):
    HISTORY.append(0)
    print(list(HISTORY))

def inputs():
    return (torch.randn(2),)


BACKEND = "eager"
FULLGRAPH = False


LAST_CALL = "shape"  # the plan's calls are made up to this one (None: all)

if __name__ == "__main__":  # eager vs compiled, each in a fresh copy of this module; exit 1 while they differ
    # The harness's call plan: tcfuzz's harness/plan.py CallPlan and what it uses, so that
    # this case makes the calls the harness made.
    import ast, copy, enum, functools, random, types
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any
    class Call(str, enum.Enum):
        FRESH = "fresh"
        CACHED = "cached"
        GUARD = "guard"
        SHAPE = "shape"
        CARRIED = "carried"
        def describe(self) -> str:
            return {
                "fresh": "the first call: compiles",
                "cached": "the same inputs again: the compiled code's cached path",
                "guard": "after the state the compiled code read changed (globals, objects, functions): a guard must fire",
                "shape": "with the largest dimension grown by one: a recompile, then dynamic shapes",
                "carried": "the previous call's argument objects again, as it left them and the module: carried state",
            }[self.value]
    MAX_DEPTH = 6
    def map_tensors(value: Any, fn: Callable[[Any], Any], depth: int = 0) -> Any:
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
        if original.requires_grad and data.is_floating_point():
            return data.detach().requires_grad_()
        return data.detach()
    def grow_shapes(args: tuple) -> tuple | None:
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
        return isinstance(value, type) and value.__module__ == module.__name__
    def guard_targets(module: types.ModuleType) -> list[tuple[Any, str]]:
        targets: list[tuple[Any, str]] = []
        for k, v in list(module.__dict__.items()):
            if k.startswith("_"):
                continue
            if isinstance(v, (bool, int, float)):
                targets.append((module, k))
            elif is_program_class(v, module):
                targets += [(v, a) for a, x in vars(v).items()
                            if not a.startswith("_") and isinstance(x, (bool, int, float))]
        return [(owner, name) for owner, name in targets if bumped(getattr(owner, name)) is not None]
    def bumped(value: Any) -> Any:
        if type(value) is bool:
            return not value
        if type(value) in (int, float):
            return value + (1 if type(value) is int else 0.5)
        return None
    def program_functions(module: types.ModuleType) -> list[tuple[Any, str, Any]]:
        found = []
        for k, v in list(vars(module).items()):
            if isinstance(v, types.FunctionType) and v.__module__ == module.__name__:
                found.append((module, k, v))
            elif is_program_class(v, module):
                found += [(v, a, m) for a, m in list(vars(v).items()) if isinstance(m, types.FunctionType)]
        return found
    def _changed_function_state(function: Any) -> bool:
        changed = False
        if function.__defaults__:
            new = tuple(bumped(d) if bumped(d) is not None else d for d in function.__defaults__)
            changed, function.__defaults__ = new != function.__defaults__, new
        if function.__kwdefaults__:
            for k, d in list(function.__kwdefaults__.items()):
                if bumped(d) is not None:
                    function.__kwdefaults__[k], changed = bumped(d), True
        for cell in function.__closure__ or ():
            try:
                contents = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if bumped(contents) is not None:
                cell.cell_contents, changed = bumped(contents), True
        return changed
    def copy_function(function: Any) -> Any:
        new = types.FunctionType(function.__code__.replace(), function.__globals__, function.__name__,
                                 function.__defaults__, function.__closure__)
        new.__kwdefaults__, new.__qualname__ = function.__kwdefaults__, function.__qualname__
        new.__dict__.update(function.__dict__)
        return new
    def tested_names(module: types.ModuleType) -> set[str]:
        try:
            with open(module.__file__) as fh:
                return set(_tested_names_in(fh.read()))
        except Exception:
            return set()
    @functools.lru_cache(maxsize=32)
    def _tested_names_in(source: str) -> frozenset[str]:
        tree = ast.parse(source)
        names = set()
        for top in tree.body:
            if isinstance(top, ast.If) and "__name__" in ast.dump(top.test):
                continue
            for node in ast.walk(top):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and (node.func.id, len(node.args)) in (("hasattr", 2), ("getattr", 3))
                        and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
                        and node.args[1].value.isidentifier() and not node.args[1].value.startswith("_")):
                    names.add(node.args[1].value)
        return frozenset(names)
    def mutate_object(obj: Any, names: set[str]) -> bool:
        attrs = vars(obj)
        changed = False
        for k, v in list(attrs.items()):
            if isinstance(k, str) and not k.startswith("_") and bumped(v) is not None:
                setattr(obj, k, bumped(v))
                changed = True
        for name in sorted(names):
            if name in attrs:
                delattr(obj, name)
                changed = True
            elif not hasattr(type(obj), name):
                setattr(obj, name, 1)
                changed = True
        return changed
    def _is_program_object(value: Any, module: types.ModuleType) -> bool:
        return is_program_class(type(value), module) and isinstance(getattr(value, "__dict__", None), dict)
    def mutate_inputs(module: types.ModuleType, value: Any, names: set[str] | None = None, depth: int = 0) -> bool:
        names = tested_names(module) if names is None else names
        if depth > MAX_DEPTH:
            return False
        changed = False
        try:
            if _is_program_object(value, module):
                return mutate_object(value, names)
            if type(value) is list:
                i = next((i for i, v in enumerate(value) if type(v) is int), None)
                if i is not None:
                    value[i], changed = float(value[i]), True
            if type(value) is dict and len(value) > 1:
                items = list(value.items())[::-1]
                value.clear()
                value.update(items)
                changed = True
        except Exception:  # a program's object that refuses: left as it is
            return changed
        children = list(value.values()) if type(value) is dict else value if type(value) in (tuple, list) else ()
        for child in children:
            changed = mutate_inputs(module, child, names, depth + 1) or changed
        return changed
    def changeable_inputs(module: types.ModuleType, value: Any, depth: int = 0) -> bool:
        if depth > MAX_DEPTH:
            return False
        if _is_program_object(value, module) or (type(value) is list and any(type(v) is int for v in value)):
            return True
        if type(value) is dict:
            return len(value) > 1 or any(changeable_inputs(module, v, depth + 1) for v in value.values())
        return type(value) in (tuple, list) and any(changeable_inputs(module, v, depth + 1) for v in value)
    def has_guard_targets(module: types.ModuleType) -> bool:
        if guard_targets(module):
            return True
        for _, _, function in program_functions(module):
            defaults = list(function.__defaults__ or ()) + list((function.__kwdefaults__ or {}).values())
            cells = []
            for cell in function.__closure__ or ():
                try:
                    cells.append(cell.cell_contents)
                except ValueError:
                    pass
            if any(bumped(v) is not None for v in defaults + cells):
                return True
        return any(_is_program_object(v, module) for v in list(vars(module).values()))
    def mutate_for_guard(module: types.ModuleType) -> None:
        for owner, name in guard_targets(module):
            try:
                setattr(owner, name, bumped(getattr(owner, name)))
            except Exception:
                pass
        names = tested_names(module)
        for k, v in list(vars(module).items()):
            if _is_program_object(v, module):
                try:
                    other = copy.copy(v)
                    mutate_object(other, names)
                    setattr(module, k, other)
                except Exception:
                    pass
        for owner, name, function in program_functions(module):
            try:
                _changed_function_state(function)
                setattr(owner, name, copy_function(function))
            except Exception:
                pass
    def decide(guard: bool, first_args: tuple, *, limit: int | None = None,
               last: str | None = None) -> tuple[Call, ...]:
        plan = [Call.FRESH, Call.CACHED]
        if guard:
            plan.append(Call.GUARD)
        try:
            grows = grow_shapes(first_args) is not None
        except Exception:  # tensors whose subclass refuses torch.cat: no shape call
            grows = False
        if grows:
            plan.append(Call.SHAPE)
        plan.append(Call.CARRIED)
        if last is not None and last in plan:
            plan = plan[:plan.index(Call(last)) + 1]
        return tuple(plan[:limit] if limit else plan)
    def reset_global_state(grad_enabled: bool = True) -> None:
        import torch
        torch.set_grad_enabled(grad_enabled)
        torch.set_default_dtype(torch.float32)
    def seed_rngs() -> None:
        import torch
        torch.manual_seed(0)
        random.seed(0)
    class CallPlan:
        def __init__(self, module: types.ModuleType, make_inputs: Callable[[], Any],
                     calls: Sequence[str] | None = None, *, limit: int | None = None, last: str | None = None,
                     carried: tuple | None = None):
            import torch
            self.grad_enabled = torch.is_grad_enabled()
            self.module, self.make_inputs = module, make_inputs
            self.calls = None if calls is None else tuple(Call(c) for c in calls)
            self.limit, self.last, self.carried = limit, last, carried
        def __iter__(self) -> Iterator[tuple[Call, tuple]]:
            try:
                module_targets = self.calls is None and has_guard_targets(self.module)
            except Exception:  # a program's object or descriptor that refuses to be looked at
                module_targets = False
            todo = list(self.calls if self.calls is not None else (Call.FRESH,))
            previous = self.carried  # the arguments of the call before: the carried call's
            while todo:
                call = todo.pop(0)
                reset_global_state(self.grad_enabled)
                if call is Call.GUARD:
                    mutate_for_guard(self.module)
                seed_rngs()
                if call is Call.CARRIED and previous is not None:
                    args = previous
                else:
                    args = self.make_inputs()
                    args = args if isinstance(args, tuple) else (args,)
                if self.calls is None:
                    try:
                        guard = module_targets or changeable_inputs(self.module, args)
                    except Exception:  # a program's object that refuses to be looked at
                        guard = module_targets
                    self.calls = decide(guard, args, limit=self.limit, last=self.last)
                    todo = list(self.calls[1:])
                if call is Call.GUARD:
                    mutate_inputs(self.module, args)
                if call is Call.SHAPE:
                    try:
                        args = grow_shapes(args) or args
                    except Exception:  # as decide(): the inputs as they are
                        pass
                seed_rngs()
                previous = args
                yield call, args
            reset_global_state(self.grad_enabled)
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
        plan, out = CallPlan(module, module.inputs, calls, last=LAST_CALL), []
        for call, args in plan:
            buf = io.StringIO()
            try:
                with contextlib.redirect_stdout(buf), contextlib.nullcontext() if compiled else torch.compiler.set_stance(
                        "force_eager"):  # eager never passes through Dynamo (torch.cond compiles itself)
                    value = fn(*args)
                    value = list(value) if hasattr(value, "__next__") else value  # a generator runs when drained
            except BaseException as e: value = f"raised {type(e).__name__}: " + re.sub(r" at 0x\w+", "", str(e).split(chr(10))[0])
            out.append([value, list(args), buf.getvalue(), torch.is_grad_enabled()])
        return plan.calls, out + [state(module)]
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
