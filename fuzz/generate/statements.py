"""The ordinary statements of ``f``: assignments, containers, control flow, nested defs.

One registered construct (``fuzz.generate.registry.construct``) per kind, in
the order of the statement table: assignments and in-place ops, ``print``,
graph breaks, list and dict building and mutation, comprehensions, raises
(caught by an enclosing ``try``), ``break``/``continue``, ``if``, ``for``,
``while``, ``try``, ``with torch.no_grad()``, closures and generators. Python
control flow depends only on ints, shapes or counts of ``x > c``, never on a
float value; every exception raised is caught in the same function.
"""

from __future__ import annotations

from fuzz.generate.registry import StatementWriter, construct
from fuzz.generate.scope import Expr, Scope
from fuzz.generate.writer import (
    BLOCK_STATEMENTS,
    MAX_MAGNITUDE,
    SQUASHED_MAGNITUDE,
    VAR_MAGNITUDE,
)

# Share of raising statements (under an `except IndexError`) that index a
# tensor out of range instead of raising explicitly, in percent.
TENSOR_INDEX_ERROR_PERCENT = 20

# In-place ops on a tensor variable (scalar operands only, so shapes never
# matter): template.
_INPLACE: tuple[str, ...] = (
    "{0}.add_(1)",
    "{0}.mul_(0.5)",
    "{0}.clamp_(-1.0, 1.0)",
    "{0}.tanh_()",
    "{0}.sub_(0.5)",
    "{0}.relu_()",
    "{0}.abs_()",
    "{0}.sin_()",
)

_DICT_KEYS: tuple[str, ...] = ("a", "b", "c", "d", "e")
_EXCEPTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # handler text, exception types it catches
    ("ValueError", ("ValueError",)),
    ("IndexError", ("IndexError",)),
    ("(ValueError, IndexError)", ("IndexError", "ValueError")),
    ("Exception", ("IndexError", "ValueError")),
)


# -- values and containers -------------------------------------------------
@construct("assign", weight=22, features={})
def assign(w: StatementWriter, scope: Scope) -> None:
    """Rebind a writable tensor to a squashed expression (or, rarely, alias another tensor)."""
    target = w.pick(scope.writable)
    if w.chance(8):
        # an alias (or a view, for t0[0]): later in-place ops write through it
        w.emit(scope, f"{target} = {w.atom(scope)}")
    else:
        w.emit(scope, f"{target} = {w.squashed(scope)}")


@construct("inplace", weight=6, features={
    "inplace-arg": "in-place op on an argument tensor: t0.add_(1)",
    "inplace-local": "in-place op on a local tensor or closure variable",
})
def inplace(w: StatementWriter, scope: Scope) -> None:
    """An in-place op with a scalar operand on a readable tensor."""
    target = w.pick(scope.tensors)
    w.features.add("inplace-arg" if target in ("t0", "t1") else "inplace-local")
    w.emit(scope, w.pick(_INPLACE).format(target))


@construct("print", weight=5, features={"print": "print() of shapes, ints and strings, never a float"})
def print_(w: StatementWriter, scope: Scope) -> None:
    """print() of a tag and a shape, dtype, int, length or printable name."""
    w.features.add("print")
    tag = f'"p{w.counter}"'
    w.counter += 1
    tensor = w.pick(scope.tensors)
    options = [
        f"{tensor}.shape",
        f"n, {tensor}.ndim",
        f"{tensor}.dtype",
        f"int(({tensor} > 0).sum())",
    ]
    options += [f"len({name})" for name in sorted(scope.lists)]
    options += [f"sorted({name})" for name in sorted(scope.dicts)]
    options += list(scope.printables)
    w.emit(scope, f"print({tag}, {w.pick(options)})")


@construct("graph-break", weight=9, features={"graph-break": "torch._dynamo.graph_break()"})
def graph_break(w: StatementWriter, scope: Scope) -> None:
    """``torch._dynamo.graph_break()``."""
    w.features.add("graph-break")
    w.emit(scope, "torch._dynamo.graph_break()")


@construct("list", weight=6, features={
    "list-mutation": "append, insert, extend, +=, x[i] = v, pop, del on a list",
})
def list_(w: StatementWriter, scope: Scope) -> None:
    """A new list of tensors and a few mutations of it, or an op on an existing list."""
    existing = sorted(name for name in scope.lists if name not in scope.frozen)
    if existing and w.chance(55):
        _list_op(w, scope, w.pick(existing))
        return
    name = w.fresh("xs")
    length = w.count((2, 3))
    items = ", ".join(w.squashed(scope, 1) for _ in range(length))
    w.emit(scope, f"{name} = [{items}]")
    for _ in range(w.index(3)):
        op = w.pick(("append", "setitem", "pop", "insert", "del"))
        if op in ("pop", "del") and length <= 1:
            op = "append"
        w.features.add("list-mutation")
        if op == "append":
            w.emit(scope, f"{name}.append({w.squashed(scope, 1)})")
            length += 1
        elif op == "setitem":
            index = w.pick((0, -1, *range(1, length)))
            w.emit(scope, f"{name}[{index}] = {w.squashed(scope)}")
        elif op == "insert":
            w.emit(scope, f"{name}.insert(0, {w.squashed(scope, 1)})")
            length += 1
        elif op == "pop":
            # popped into the target first: a squash template may repeat its operand
            target = w.pick(scope.writable)
            w.emit(scope, f"{target} = {name}.pop()")
            w.store(scope, target, Expr(target, VAR_MAGNITUDE))
            length -= 1
        else:
            w.emit(scope, f"del {name}[{w.pick((0, -1))}]")
            length -= 1
    scope.lists[name] = length


def _list_op(w: StatementWriter, scope: Scope, name: str) -> None:
    op = w.pick(("append", "setitem", "extend", "iadd", "pop", "read"))
    length = scope.lists[name]
    if op == "setitem" and length == 0:
        op = "append"
    if op == "iadd" and scope.enclosing:
        # `xs += ...` would make an outer list local to this nested function
        op = "extend"
    if op == "read":
        target = w.pick(scope.writable)
        read = f"{name}[-1]" if length else f"({name}[-1] if {name} else t0)"
        total = Expr(f"({read} + {w.atom(scope)})", 2 * VAR_MAGNITUDE)
        w.emit(scope, f"{target} = {w.squash(total)}")
        return
    w.features.add("list-mutation")
    if op == "append":
        w.emit(scope, f"{name}.append({w.squashed(scope, 1)})")
    elif op == "setitem":
        index = w.pick((0, -1, *range(1, length)))
        w.emit(scope, f"{name}[{index}] = {w.squashed(scope)}")
    elif op == "extend":
        w.emit(scope, f"{name}.extend([{w.squashed(scope, 1)}, {w.atom(scope)}])")
    elif op == "iadd":
        w.emit(scope, f"{name} += [{w.squashed(scope, 1)}]")
    else:
        w.emit(scope, f"{name}.append({w.squashed(scope, 1)})")
        target = w.pick(scope.writable)
        w.emit(scope, f"{target} = {name}.pop()")
        w.store(scope, target, Expr(target, VAR_MAGNITUDE))


@construct("dict", weight=5, features={
    "dict-mutation": "d[k] = v, update, setdefault, pop, del on a dict",
})
def dict_(w: StatementWriter, scope: Scope) -> None:
    """A new dict of tensors and a few mutations of it, or an op on an existing dict."""
    existing = sorted(name for name in scope.dicts if name not in scope.frozen)
    if existing and w.chance(55):
        _dict_op(w, scope, w.pick(existing))
        return
    name = w.fresh("d")
    keys = list(_DICT_KEYS[: w.count((1, 3))])
    items = ", ".join(f'"{key}": {w.squashed(scope, 1)}' for key in keys)
    w.emit(scope, f"{name} = {{{items}}}")
    for _ in range(w.index(3)):
        op = w.pick(("setitem", "update", "del", "setdefault"))
        if op == "del" and len(keys) <= 1:
            op = "setitem"
        w.features.add("dict-mutation")
        key = w.pick(_DICT_KEYS)
        if op == "setitem":
            w.emit(scope, f'{name}["{key}"] = {w.squashed(scope)}')
            if key not in keys:
                keys.append(key)
        elif op == "update":
            w.emit(scope, f"{name}.update({key}={w.squashed(scope, 1)})")
            if key not in keys:
                keys.append(key)
        elif op == "setdefault":
            w.emit(scope, f'{name}.setdefault("{key}", {w.atom(scope)})')
            if key not in keys:
                keys.append(key)
        else:
            key = w.pick(keys)
            w.emit(scope, f'del {name}["{key}"]')
            keys.remove(key)
    scope.dicts[name] = tuple(keys)


def _dict_op(w: StatementWriter, scope: Scope, name: str) -> None:
    op = w.pick(("setitem", "update", "pop", "read"))
    keys = scope.dicts[name]
    if op == "read":
        target = w.pick(scope.writable)
        key = w.pick(keys) if keys else "a"
        read = f'{name}["{key}"]' if keys else f'{name}.get("a", t1)'
        w.store(scope, target, Expr(f"({read} + {w.atom(scope)})", 2 * VAR_MAGNITUDE))
        return
    w.features.add("dict-mutation")
    if op == "setitem":
        w.emit(scope, f'{name}["{w.pick(_DICT_KEYS)}"] = {w.squashed(scope)}')
    elif op == "update":
        w.emit(scope, f"{name}.update({w.pick(_DICT_KEYS)}={w.squashed(scope, 1)})")
    else:
        # only keys the dict may lack are popped, so guaranteed keys stay
        spare = [key for key in _DICT_KEYS if key not in keys] or ["z"]
        w.emit(scope, f'{name}.pop("{w.pick(spare)}", None)')


@construct("comprehension", weight=5, features={
    "comprehension": "list/dict comprehension or generator expression",
})
def comprehension(w: StatementWriter, scope: Scope) -> None:
    """A list, dict or generator comprehension over tensors, lists, dicts or a range."""
    w.features.add("comprehension")
    forms = ["sum-tuple", "list-range", "dict-range"]
    lists = sorted(scope.lists)
    if lists:
        forms += ["sum-list", "list-map"]
    if scope.dicts:
        forms.append("dict-map")
    form = w.pick(forms)
    var = w.fresh("x")
    inner = scope.block(tensors=scope.tensors + (var,), indent=scope.indent, depth=scope.depth)
    if form == "sum-tuple":
        sources = ", ".join(sorted({w.pick(scope.tensors) for _ in range(3)}))
        body = w.squashed(inner, 1)
        total = Expr(f"sum([{body} for {var} in ({sources},)])", 3 * SQUASHED_MAGNITUDE)
        w.emit(scope, f"{w.pick(scope.writable)} = {w.squash(total)}")
    elif form == "sum-list":
        source = w.pick(lists)
        body = w.squashed(inner, 1)
        # the start value keeps the sum a tensor when the list is empty
        total = Expr(
            f"sum(({body} for {var} in {source}), {w.pick(scope.tensors)})", MAX_MAGNITUDE
        )
        w.emit(scope, f"{w.pick(scope.writable)} = {w.squash(total)}")
    elif form == "list-range":
        index, name = w.fresh("i"), w.fresh("xs")
        w.emit(scope, f"{name} = [{_indexed(w, scope, index)} for {index} in range(3)]")
        scope.lists[name] = 3
    elif form == "list-map":
        source = w.pick(lists)
        name = w.fresh("xs")
        body = w.squashed(inner, 1)
        if w.chance(30):
            w.emit(scope, f"{name} = [{body} for {var} in {source} if ({var} > 0).any()]")
            scope.lists[name] = 0
        else:
            w.emit(scope, f"{name} = [{body} for {var} in {source}]")
            scope.lists[name] = scope.lists[source]
    elif form == "dict-range":
        index, name = w.fresh("i"), w.fresh("d")
        body = _indexed(w, scope, index)
        w.emit(scope, f'{name} = {{f"k{{{index}}}": {body} for {index} in range(3)}}')
        scope.dicts[name] = ("k0", "k1", "k2")
    else:
        source = w.pick(sorted(scope.dicts))
        key = w.fresh("k")
        name = w.fresh("d")
        body = w.squashed(inner, 1)
        w.emit(scope, f"{name} = {{{key}: {body} for {key}, {var} in {source}.items()}}")
        scope.dicts[name] = scope.dicts[source]


def _indexed(w: StatementWriter, scope: Scope, index: str) -> str:
    """A squashed expression scaled by ``index`` (an int in [0, 2])."""
    inner = w.expr(scope, 1)
    return w.squash(Expr(f"({inner.text} * ({index} + 1) * 0.25)", inner.magnitude))


# -- control flow ------------------------------------------------------------
@construct(
    "raise", weight=8, allowed=lambda scope: bool(scope.catches),
    features={"raise": "explicit raise ValueError / IndexError, caught"},
    also={"tensor-index-error": "out-of-range tensor indexing, caught as IndexError"},
)
def raise_(w: StatementWriter, scope: Scope) -> None:
    """Raise an exception that an enclosing ``try`` of this function catches."""
    exception = w.pick(scope.catches)
    # Indexing out of range is rarer than a raise: in torch 2.12 Dynamo lets
    # that IndexError escape the user's handler (pytorch/pytorch#198192),
    # so every such program lands in that one bucket.
    by_indexing = exception == "IndexError" and w.chance(TENSOR_INDEX_ERROR_PERCENT)
    extra = 0
    if w.chance(40):
        condition, tensor = w.any_condition(scope)
        w.if_header(scope, condition, tensor)
        extra = 1
    if by_indexing:
        w.features.add("tensor-index-error")
        dim = w.index(len(w.shape))
        index = w.shape[dim] + w.index(3)
        subscript = ", ".join([":"] * dim + [str(index)])
        target = w.pick(scope.writable)
        w.emit(scope, f"{target} = torch.tanh(t0[{subscript}])", extra)
    else:
        w.features.add("raise")
        message = f"{exception[0].lower()}{w.counter}"
        w.emit(scope, f'raise {exception}("{message}")', extra)


@construct("break", weight=4, allowed=lambda scope: scope.loop, features={
    "break-continue": "`break` / `continue` under an `if` in a loop",
})
def break_(w: StatementWriter, scope: Scope) -> None:
    """``break`` or ``continue`` under an ``if`` (only drawn inside a loop)."""
    w.features.add("break-continue")
    condition, tensor = w.any_condition(scope)
    w.if_header(scope, condition, tensor)
    w.emit(scope, w.pick(("break", "continue")), 1)


@construct(
    "if", weight=8, compound=True, features={"if": "if statement, maybe with else"},
    also={"if-tensor-cond": "`if` whose condition reads tensor data: (x > 0).any()"},
)
def if_(w: StatementWriter, scope: Scope) -> None:
    """``if`` on a tensor or Python condition, maybe with ``else``."""
    condition, tensor = w.any_condition(scope)
    w.if_header(scope, condition, tensor)
    w.body(scope.block(), BLOCK_STATEMENTS)
    if w.chance(40):
        w.emit(scope, "else:")
        w.body(scope.block(), BLOCK_STATEMENTS)


@construct("for", weight=7, compound=True, features={
    "for": "for loop over a range, a tuple, a list (maybe enumerated) or a dict's items",
})
def for_(w: StatementWriter, scope: Scope) -> None:
    """``for`` over a range, a tuple of tensors, a list (maybe enumerated) or a dict's items."""
    w.features.add("for")
    forms = ["range", "tuple"]
    lists = sorted(scope.lists)
    if lists:
        forms += ["list", "enumerate"]
    if scope.dicts:
        forms.append("items")
    form = w.pick(forms)
    body = scope.block(loop=True)
    if form == "range":
        index = w.fresh("i")
        bounds = w.pick(("n", "2", "1, n", "n - 1"))
        w.emit(scope, f"for {index} in range({bounds}):")
        body.ints = scope.ints + (index,)
        body.printables = scope.printables + (index,)
    elif form == "tuple":
        var = w.fresh("x")
        sources = ", ".join(sorted({w.pick(scope.tensors) for _ in range(2)}))
        w.emit(scope, f"for {var} in ({sources},):")
        body.tensors = scope.tensors + (var,)
    elif form in ("list", "enumerate"):
        source = w.pick(lists)
        var = w.fresh("x")
        body.tensors = scope.tensors + (var,)
        body.frozen = scope.frozen | {source}
        if form == "list":
            w.emit(scope, f"for {var} in {source}:")
        else:
            index = w.fresh("i")
            w.emit(scope, f"for {index}, {var} in enumerate({source}):")
            body.printables = scope.printables + (index,)
    else:
        source = w.pick(sorted(scope.dicts))
        key, var = w.fresh("k"), w.fresh("x")
        w.emit(scope, f"for {key}, {var} in {source}.items():")
        body.tensors = scope.tensors + (var,)
        body.printables = scope.printables + (key,)
        body.frozen = scope.frozen | {source}
    w.body(body, BLOCK_STATEMENTS)


@construct(
    "while", weight=4, compound=True, features={"while": "while loop with a counter"},
    also={"while-tensor-cond": "`while` whose condition reads tensor data"},
)
def while_(w: StatementWriter, scope: Scope) -> None:
    """``while`` with a counter that moves first, maybe also on a tensor condition."""
    w.features.add("while")
    counter = w.fresh("i")
    w.emit(scope, f"{counter} = 0")
    if w.chance(40):
        w.features.add("while-tensor-cond")
        w.emit(scope, f"while {counter} < 3 and {w.tensor_condition(scope)}:")
    else:
        # `not` makes 3.11 test at the loop's bottom with POP_JUMP_BACKWARD_IF_FALSE
        w.emit(scope, f"while {w.pick((f'{counter} < n', f'not {counter} >= n'))}:")
    # the counter moves first, so a `continue` below cannot loop forever
    w.emit(scope, f"{counter} += 1", 1)
    body = scope.block(loop=True)
    body.ints = scope.ints + (counter,)
    body.printables = scope.printables + (counter,)
    w.body(body, BLOCK_STATEMENTS)


@construct("try", weight=8, compound=True, features={
    "try-except": "try with except (and maybe else), the body may raise",
    "try-finally": "try with finally",
})
def try_(w: StatementWriter, scope: Scope) -> None:
    """``try`` with except/finally/else; the body raises what the handler catches (75%)."""
    form = w.pick(("except", "finally", "except-finally", "except-else"))
    w.emit(scope, "try:")
    if form == "finally":
        w.features.add("try-finally")
        w.body(scope.block(), BLOCK_STATEMENTS)
    else:
        w.features.add("try-except")
        handler, caught = w.pick(_EXCEPTIONS)
        body = scope.block(catches=tuple(sorted(set(scope.catches) | set(caught))))
        count = w.count(BLOCK_STATEMENTS)
        raise_at = w.index(count + 1) if w.chance(75) else -1
        for position in range(count + 1):
            if position == raise_at:
                raise_(w, body)
            if position < count:
                w.statement(body)
        if handler == "Exception":
            name = w.fresh("e")
            w.emit_block(scope, f"""
                except Exception as {name}:
                    print("{name}", type({name}).__name__)
            """)
            w.features.add("print")
        else:
            w.emit(scope, f"except {handler}:")
        w.body(scope.block(), (1, 2))
        if form == "except-else":
            w.emit(scope, "else:")
            w.body(scope.block(), (1, 2))
        if form == "except-finally":
            w.features.add("try-finally")
    if form in ("finally", "except-finally"):
        w.emit(scope, "finally:")
        # no break/continue in finally: they would swallow exceptions
        w.body(scope.block(loop=False), (1, 2))


@construct("no-grad", weight=4, compound=True, features={"no-grad": "with torch.no_grad():"})
def no_grad(w: StatementWriter, scope: Scope) -> None:
    """``with torch.no_grad():`` around a body."""
    w.features.add("no-grad")
    w.emit(scope, "with torch.no_grad():")
    w.body(scope.block(), BLOCK_STATEMENTS)


# -- nested functions --------------------------------------------------------
def _function_scope(w: StatementWriter, scope: Scope, params: tuple[str, ...]) -> Scope:
    """Scope inside a nested def: may read outer names, rebinds only its own."""
    function = scope.block(
        catches=(),
        loop=False,
        enclosing=scope.enclosing + scope.writable,
        tensors=scope.tensors + params,
        writable=params,
    )
    if function.enclosing and w.chance(35):
        target = w.pick(function.enclosing)
        w.features.add("nonlocal")
        w.emit(function, f"nonlocal {target}")
        function.writable = function.writable + (target,)
    local = w.fresh("u")
    w.emit(function, f"{local} = {w.squashed(function)}")
    function.tensors = function.tensors + (local,)
    function.writable = function.writable + (local,)
    return function


@construct(
    "closure", weight=6, compound=True,
    features={"closure": "nested def (not a generator) or lambda reading outer names"},
    also={"nonlocal": "nonlocal declaration in a nested def"},
)
def closure(w: StatementWriter, scope: Scope) -> None:
    """A lambda or nested def reading outer names (maybe ``nonlocal``), called once or twice."""
    w.features.add("closure")
    name = w.fresh("g")
    if w.chance(25):
        param = w.fresh("x")
        inner = scope.block(tensors=scope.tensors + (param,), indent=scope.indent)
        w.emit(scope, f"{name} = lambda {param}: {w.squashed(inner, 2)}")
    else:
        params = (w.fresh("x"),) if w.chance(75) else ()
        w.emit(scope, f"def {name}({', '.join(params)}):")
        function = _function_scope(w, scope, params)
        w.body(function, BLOCK_STATEMENTS)
        w.emit(function, f"return {w.squashed(function)}")
        if not params:
            call = Expr(f"{name}()", SQUASHED_MAGNITUDE)
            if w.chance(40):
                w.emit(scope, call.text)
            else:
                w.emit(scope, f"{w.pick(scope.writable)} = {w.squash(call)}")
            return
    one = f"{name}({w.squashed(scope, 1)})"
    if w.chance(30):
        two = f"{name}({w.atom(scope)})"
        call = Expr(f"({one} + {two})", 2 * SQUASHED_MAGNITUDE)
    else:
        call = Expr(one, SQUASHED_MAGNITUDE)
    w.emit(scope, f"{w.pick(scope.writable)} = {w.squash(call)}")


@construct("generator", weight=5, compound=True, features={
    "generator": "nested def with `yield`, consumed by sum/list/next",
})
def generator(w: StatementWriter, scope: Scope) -> None:
    """A nested generator consumed by ``sum``, ``next`` or ``list``."""
    w.features.add("generator")
    name, param = w.fresh("gen"), w.fresh("x")
    w.emit(scope, f"def {name}({param}):")
    function = _function_scope(w, scope, (param,))
    yields = w.count((2, 3))
    if w.chance(50):
        index = w.fresh("i")
        w.features.add("for")
        w.emit(function, f"for {index} in range({yields}):")
        body = function.block()
        body.ints = function.ints + (index,)
        body.printables = function.printables + (index,)
        w.body(body, (0, 2))
        w.emit(body, f"yield {w.squashed(body)}")
    else:
        for _ in range(yields):
            w.body(function, (0, 1))
            w.emit(function, f"yield {w.squashed(function)}")
    call = f"{name}({w.squashed(scope, 1)})"
    consumer = w.pick(("sum", "next", "list"))
    if consumer == "list":
        items = w.fresh("xs")
        w.emit(scope, f"{items} = list({call})")
        scope.lists[items] = yields
        target = w.pick(scope.writable)
        pair = Expr(f"({items}[0] + {items}[-1])", 2 * SQUASHED_MAGNITUDE)
        w.store(scope, target, pair)
    elif consumer == "sum":
        total = Expr(f"sum({call})", yields * SQUASHED_MAGNITUDE)
        w.emit(scope, f"{w.pick(scope.writable)} = {w.squash(total)}")
    else:
        w.emit(scope, f"{w.pick(scope.writable)} = next({call})")
