"""The canonical skeleton of a minimised program: what a wrong result is keyed by.

A wrong result leaves no stack, so its bucket is keyed by the program that
remains after minimisation, reduced further to what the bug needs and what
any re-minimisation of it would keep:

- only code under test: the ``inputs`` factory, a ``__main__`` runner, the
  runner's settings, an ``EXPECT`` table, docstrings and imports are left out,
  and so are module-level definitions that the entry function never reaches;
- observation statements are removed, since how the bug was seen (the
  observation channel: return value, printed text, global state, a later
  ``backward()``) is a label of the bucket, not part of its key: ``return``
  values, ``print(...)``, ``.backward()``, ``torch.autograd.grad(...)``,
  statements without effect (``pass``, a bare name or constant, a pure
  expression);
- dead stores are removed: an assignment to names nothing reads, whose value
  has no effect (see ``effectful``: a container's mutation such as
  ``move_to_end`` has one, so does a call with ``out=``, and so does any expression naming a class of the
  program with ``__torch_function__`` or ``__torch_dispatch__``, whose
  operators run its code), goes; one with an effect keeps its value
  as a statement (``list(it)`` consumes ``it``); repeated to a fixed point,
  together with unread functions and classes and unused arguments;
- an ``if`` without ``else`` whose test only looks at shapes
  (``x.shape[-1] > 4``, ``len(xs)``) is replaced by its body: such a test only
  selects which call of the plan shows the bug;
- ``object`` leaves a class's bases, and a program class used only as the
  single base of one class is merged into it (an attribute found through a
  base is the bug of the same attribute on the class);
- when these removals would leave the entry function empty (its bug is in the
  value it observes, such as ``return format(n, "b")``), the observed values
  are kept instead, bound to one name (``observed = ...``): an empty
  ``def f():`` would be the key of every such bug;
- names become ``v1``, ``v2``, ... in order of appearance (the entry stays
  ``f``), constants other than None/True/False become ``C``, torch's grad-mode
  functions one family ``torch.GRAD_MODE()`` (their arguments dropped), and
  at the ``dynamo`` stage every tensor computation (arithmetic, ``torch.*``
  ops, tensor methods) one token ``E``: a Dynamo bug is about the Python
  around the tensors, an Inductor bug about the ops, so at the other stages
  op names are kept.

Host-side and torch-free: the skeleton is computed from source text alone.
The rules are heuristics of our own; ``tests/unit/test_rootcause.py`` holds
the corpus families (one bug seen through several channels) they must merge
and the different bugs they must keep apart.
"""

from __future__ import annotations

import ast
import builtins
import copy
import hashlib
import io
import keyword
import tokenize

# torch functions that create or set a grad mode: one family in a skeleton
# (the bug is the grad-mode object, whichever constructor made it).
GRAD_MODE_FUNCTIONS = frozenset({
    "torch.no_grad", "torch.enable_grad", "torch.set_grad_enabled", "torch.inference_mode",
    "torch.autograd.no_grad", "torch.autograd.enable_grad", "torch.autograd.set_grad_enabled",
    "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.enable_grad",
    "torch.autograd.grad_mode.set_grad_enabled", "torch.autograd.grad_mode.inference_mode",
})
# torch functions that are kept by name at every stage: they are about the
# program's control flow or process state, not tensor arithmetic.
KEPT_TORCH_FUNCTIONS = frozenset({
    "torch._dynamo.graph_break", "torch.compiler.disable", "torch._dynamo.disable",
    "torch.set_default_dtype", "torch.get_default_dtype", "torch.manual_seed",
    "torch.is_grad_enabled", "torch.is_inference_mode_enabled", "torch.nn.Module", "torch.nn.Parameter",
})
# torch functions with an effect on process state (never dead code).
EFFECTFUL_TORCH_FUNCTIONS = GRAD_MODE_FUNCTIONS | {
    "torch._dynamo.graph_break", "torch.set_default_dtype", "torch.manual_seed", "torch.set_grad_enabled",
}
# Builtins that consume an iterator argument or read mutable state: a call is
# an effect (``list(it)`` leaves ``it`` exhausted).
CONSUMING_BUILTINS = frozenset({
    "next", "list", "tuple", "set", "frozenset", "dict", "sorted", "sum", "any", "all", "min", "max",
    "setattr", "delattr", "exec", "eval", "print", "input", "open", "globals", "vars", "locals",
})
# Methods that are Python protocol or container operations (kept by name and
# effectful), not tensor ops.
PROTOCOL_METHODS = frozenset({
    "send", "throw", "close", "__next__", "__enter__", "__exit__", "__iter__", "__aenter__", "__aexit__",
    "append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault", "add",
    "discard", "sort", "reverse", "register_buffer", "register_parameter", "add_module",
    # OrderedDict and deque mutations: a lost reorder is its own bug (pytorch#198189)
    "move_to_end", "appendleft", "extendleft", "popleft", "rotate",
})
# Methods that make a class a tensor subclass whose operators run the
# program's own code: an expression naming such a class is never dead.
TORCH_HOOK_METHODS = frozenset({"__torch_function__", "__torch_dispatch__"})
# Methods kept by name but without an effect.
PURE_PROTOCOL_METHODS = frozenset({"values", "keys", "items", "get", "copy", "index", "count", "format", "join"})
# Observation calls: how a result is seen, never part of a key.
OBSERVATION_CALLS = frozenset({"print", "torch.autograd.grad", "torch.autograd.backward"})
OBSERVATION_METHODS = frozenset({"backward", "retain_grad"})
# Shape reads: an ``if`` that only tests these selects a call of the plan.
SHAPE_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "device", "is_cuda"})
SHAPE_CALLS = frozenset({"len", "isinstance", "size", "dim", "numel"})
# Top-level names that belong to a case's runner or a known-bug file.
SCAFFOLD_NAMES = frozenset({"BACKEND", "FULLGRAPH", "GB_TYPE", "LAST_CALL", "HANG_S", "CALLS", "EXPECT"})
# The abstract names of a skeleton.
TENSOR_TOKEN = "E"
CONSTANT_TOKEN = "C"
GRAD_MODE_TOKEN = "torch.GRAD_MODE"
# Stages whose skeletons abstract tensor computations (fuzz.triage.signature's stages).
PYTHON_STAGES = ("dynamo",)
# Most characters of a skeleton's one-line form in a signature detail.
MAX_LINE_CHARS = 150

_BUILTINS = frozenset(dir(builtins))


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for an attribute chain on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _is_main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "__name__" in ast.unparse(node.test)


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _assigned_names(node: ast.stmt) -> set[str]:
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _defined(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    return _assigned_names(node)


def _live(nodes: list[ast.AST]) -> set[str]:
    """Names read other than by their own updates (``acc = acc * 2`` alone does
    not keep ``acc`` alive): loads counted over ``nodes``, less those inside
    the value of an assignment to the same name."""
    total: dict[str, int] = {}
    own: dict[str, int] = {}
    for top in nodes:
        for n in ast.walk(top):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                total[n.id] = total.get(n.id, 0) + 1
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                for name in n.names:
                    total[name] = total.get(name, 0) + 1
            elif isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and n.value is not None:
                targets = _assigned_names(n)
                for m in ast.walk(n.value):
                    if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Load) and m.id in targets:
                        own[m.id] = own.get(m.id, 0) + 1
    return {name for name, count in total.items() if count > own.get(name, 0)}


def _loads(nodes: list[ast.AST]) -> set[str]:
    found = set()
    for top in nodes:
        for n in ast.walk(top):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                found.add(n.id)
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                found.update(n.names)
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                found.add(n.target.id)
    return found


class _Purity:
    """Which calls have an effect: the tables above, and user functions whose
    bodies have one (method calls on ``self``/``super()`` inside a class are
    object construction, not effects); an expression that names a tensor
    subclass of the program with ``__torch_function__`` or
    ``__torch_dispatch__`` has one too (its operators run that code)."""

    def __init__(self, tree: ast.Module):
        self.functions = {n.name: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        self.hooked = {name for name, cls in self.classes.items()
                       if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in TORCH_HOOK_METHODS
                              for n in cls.body)}
        self.effectful_functions: set[str] = set()
        changed = True
        while changed:  # a fixed point over user functions calling each other
            changed = False
            for name, fn in list(self.functions.items()) + list(self.classes.items()):
                if name not in self.effectful_functions and self._body_has_effect(fn):
                    self.effectful_functions.add(name)
                    changed = True

    def _body_has_effect(self, fn: ast.AST) -> bool:
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(fn)):
            return False  # calling a generator function only creates the generator
        for n in ast.walk(fn):
            if isinstance(n, (ast.Global, ast.Nonlocal)):
                return True
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    if isinstance(t, (ast.Attribute, ast.Subscript)) and not _on_self(t):
                        return True
            if isinstance(n, ast.Call) and self.call_has_effect(n, in_class=True):
                return True
        return False

    def call_has_effect(self, call: ast.Call, *, in_class: bool = False) -> bool:
        name = dotted(call.func)
        if name in EFFECTFUL_TORCH_FUNCTIONS or name in OBSERVATION_CALLS:
            return True
        if any(k.arg == "out" for k in call.keywords):  # torch.clamp(x, 0, out=y) writes y
            return True
        if isinstance(call.func, ast.Name):
            if call.func.id in CONSUMING_BUILTINS:
                return True
            return call.func.id in self.effectful_functions
        if isinstance(call.func, ast.Attribute):
            attr = call.func.attr
            if in_class and _on_self(call.func):
                return False
            return attr in PROTOCOL_METHODS or attr in OBSERVATION_METHODS or (
                attr.endswith("_") and not attr.startswith("_"))  # in-place tensor ops
        return True  # a call of a call's result: unknown, kept

    def has_effect(self, node: ast.AST) -> bool:
        return any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr))
                   or (isinstance(n, ast.Call) and self.call_has_effect(n))
                   or (isinstance(n, ast.Name) and n.id in self.hooked) for n in ast.walk(node))


def _on_self(node: ast.AST) -> bool:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.value if not isinstance(node, ast.Call) else node.func
    return isinstance(node, ast.Name) and node.id in ("self", "super", "cls")


def _is_observation(stmt: ast.stmt, purity: _Purity) -> bool:
    """A statement that only shows a result: print, backward, a pure expression."""
    if isinstance(stmt, ast.Pass):
        return True
    if not isinstance(stmt, ast.Expr):
        return False
    value = stmt.value
    if isinstance(value, ast.Call):
        name = dotted(value.func)
        if name in OBSERVATION_CALLS or (isinstance(value.func, ast.Attribute)
                                         and value.func.attr in OBSERVATION_METHODS):
            inner = [a for a in value.args if purity.has_effect(a)]
            return not inner
    return not purity.has_effect(value)


def _closes_over(fn: ast.stmt) -> bool:
    """Does nested function or class ``fn`` read a name it does not bind
    itself (a cell of the enclosing function: defining it changes that
    variable's kind, even if it is never called)?"""
    bound = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {a.arg for a in ast.walk(fn) if isinstance(a, ast.arg)}
    return bool(_loads([fn]) - bound - _BUILTINS - {"torch"})


def _plain_range(node: ast.expr) -> bool:
    """``range(...)`` of constants and names: iterating it does nothing else
    (an iterator builtin such as ``reversed`` may be the bug)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and all(
        isinstance(a, (ast.Constant, ast.Name)) for a in node.args)


def _shape_only(test: ast.expr) -> bool:
    """Does ``test`` read only shapes, lengths and constants?"""
    reads_shape = False
    for n in ast.walk(test):
        if isinstance(n, ast.Call):
            name = n.func.id if isinstance(n.func, ast.Name) else getattr(n.func, "attr", "")
            if name not in SHAPE_CALLS:
                return False
            reads_shape = True
        elif isinstance(n, ast.Attribute) and n.attr in SHAPE_ATTRIBUTES:
            reads_shape = True
    return reads_shape


_BLOCK_FIELDS = ("body", "orelse", "finalbody")


class _Simplifier:
    """One pass of the removals of the module docstring over every block."""

    def __init__(self, purity: _Purity, loaded: set[str]):
        self.purity, self.loaded = purity, loaded
        self.changed = False
        self.in_class = False
        self.nested = False  # inside a function: a nested def may make cells

    def block(self, stmts: list[ast.stmt], *, function_body: bool = False) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in stmts:
            for sub in self.statement(stmt):
                out.append(sub)
        if function_body and out and isinstance(out[-1], ast.Return):
            out.pop()  # the value it returned is an observation
            self.changed = True
        return out

    def statement(self, stmt: ast.stmt) -> list[ast.stmt]:
        purity = self.purity
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            self.changed = True
            keep = [ast.Expr(stmt.value)] if purity.has_effect(stmt.value) else []
            return keep + [ast.Return(None)]
        if _is_observation(stmt, purity):
            self.changed = True
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                return [ast.Expr(a) for a in stmt.value.args if purity.has_effect(a)]
            return []
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and _assigned_names(stmt) \
                and not (_assigned_names(stmt) & self.loaded) and all(
                    isinstance(t, (ast.Name, ast.Tuple, ast.List, ast.Starred))
                    for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])):
            self.changed = True
            value = stmt.value
            return [ast.Expr(value)] if value is not None and purity.has_effect(value) else []
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and stmt.name not in self.loaded \
                and not self.in_class and not (self.nested and _closes_over(stmt)):
            self.changed = True
            return []
        if isinstance(stmt, ast.ClassDef):  # a class body is its attributes: only its methods are simplified
            self.in_class, saved = True, self.in_class
            stmt.body = [s for part in stmt.body for s in (self.statement(part) if isinstance(
                part, (ast.FunctionDef, ast.AsyncFunctionDef)) else [part])] or [ast.Expr(ast.Constant(...))]
            self.in_class = saved
            return [stmt]
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) \
                and stmt.target.id not in self.loaded:
            self.changed = True
            return [ast.Expr(stmt.value)] if purity.has_effect(stmt.value) else []
        if isinstance(stmt, ast.For) and not stmt.orelse and _plain_range(stmt.iter) and all(
                isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) for s in stmt.body):
            self.changed = True  # a loop that does nothing
            return []
        if isinstance(stmt, ast.If) and not stmt.orelse and _shape_only(stmt.test):
            self.changed = True
            return self.block(stmt.body)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            saved, self.in_class = self.in_class, False
            nested, self.nested = self.nested, True
            stmt.body = self.block(stmt.body, function_body=True)
            self.in_class, self.nested = saved, nested
            self._drop_unused_arguments(stmt)
            return [stmt]
        for field in _BLOCK_FIELDS:
            block = getattr(stmt, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                new = self.block(block)
                setattr(stmt, field, new or ([] if field in ("orelse", "finalbody") else [ast.Expr(ast.Constant(...))]))
        for handler in getattr(stmt, "handlers", []):
            handler.body = self.block(handler.body) or [ast.Expr(ast.Constant(...))]
        for case in getattr(stmt, "cases", []):
            case.body = self.block(case.body) or [ast.Expr(ast.Constant(...))]
        return [stmt]

    def _drop_unused_arguments(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        read = _loads(fn.body)
        args = fn.args
        if args.defaults or args.kw_defaults or args.vararg or args.kwarg or args.posonlyargs or args.kwonlyargs:
            return
        kept = [a for a in args.args if a.arg in read or a.arg in ("self", "cls")]
        if len(kept) != len(args.args):
            args.args = kept
            self.changed = True


class _Abstracter(ast.NodeTransformer):
    """Names, constants, grad-mode functions and (at a Python stage) tensor
    computations replaced by their abstract tokens."""

    def __init__(self, entry: str, abstract_tensors: bool, tree: ast.Module):
        self.entry, self.abstract_tensors = entry, abstract_tensors
        self.names: dict[str, str] = {}
        self.user: set[str] = set()  # names the program binds (a builtin's name rebound is the program's)
        for n in ast.walk(tree):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                self.user.add(n.id)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.user.add(n.name)
            elif isinstance(n, ast.arg):
                self.user.add(n.arg)
            elif isinstance(n, ast.ExceptHandler) and n.name:
                self.user.add(n.name)
            elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
                self.user.add(n.name)

    def name(self, name: str) -> str:
        if name == self.entry:
            return "f"
        if name in ("self", "cls", "torch") or (name.startswith("__") and name.endswith("__")) or (name in _BUILTINS and name not in self.user):
            return name
        return self.names.setdefault(name, f"v{len(self.names) + 1}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.copy_location(ast.Name(self.name(node.id), node.ctx), node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return ast.arg(self.name(node.arg))

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = self.name(node.name)
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.returns = None
        node.args = self.visit(node.args)
        node.body = [self.visit(s) for s in node.body]
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = self.name(node.name)
        self.generic_visit(node)
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.AST:
        if node.name:
            node.name = self.name(node.name)
        self.generic_visit(node)
        return node

    def visit_MatchAs(self, node: ast.MatchAs) -> ast.AST:
        if node.name:
            node.name = self.name(node.name)
        self.generic_visit(node)
        return node

    def visit_MatchStar(self, node: ast.MatchStar) -> ast.AST:
        if node.name:
            node.name = self.name(node.name)
        return node

    def visit_Global(self, node: ast.Global) -> ast.AST:
        return type(node)([self.name(n) for n in node.names])

    visit_Nonlocal = visit_Global  # type: ignore[assignment]

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        node.annotation = ast.Name("T", ast.Load())
        node.target = self.visit(node.target)
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if node.value is None or node.value is Ellipsis or isinstance(node.value, bool):
            return node
        return ast.Name(CONSTANT_TOKEN, ast.Load())

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        return ast.Name(CONSTANT_TOKEN, ast.Load())

    def _tensor(self, node: ast.AST) -> bool:
        if not self.abstract_tensors:
            return False
        if isinstance(node, ast.BinOp) or (isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not)):
            return True
        if isinstance(node, ast.Call):
            name = dotted(node.func)
            if name and name.startswith("torch.") and name not in KEPT_TORCH_FUNCTIONS \
                    and name not in GRAD_MODE_FUNCTIONS:
                return True
            if isinstance(node.func, ast.Attribute) and not (name or "").startswith("torch."):
                attr = node.func.attr
                return attr not in PROTOCOL_METHODS | PURE_PROTOCOL_METHODS | OBSERVATION_METHODS \
                    and not attr.startswith("__") and not _on_self(node.func)
        return False

    def visit_Call(self, node: ast.Call) -> ast.AST:
        name = dotted(node.func)
        if name in GRAD_MODE_FUNCTIONS:
            return ast.Call(ast.Name(GRAD_MODE_TOKEN, ast.Load()), [], [])
        if self._tensor(node):
            return ast.Name(TENSOR_TOKEN, ast.Load())
        if name and name.startswith("torch."):
            node.func = ast.Name(name, ast.Load())  # kept by name, not renamed
            node.args = [self.visit(a) for a in node.args]
            node.keywords = [self.visit(k) for k in node.keywords]
            return node
        self.generic_visit(node)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        name = dotted(node)
        if name and name.startswith("torch."):
            return ast.Name(name, node.ctx)
        self.generic_visit(node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        return ast.Name(TENSOR_TOKEN, ast.Load()) if self._tensor(node) else self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        return ast.Name(TENSOR_TOKEN, ast.Load()) if self._tensor(node) else self.generic_visit(node)


def _is_filler(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Pass) or _is_docstring(stmt) or (
        isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and stmt.value.value is Ellipsis)


def _flatten_bases(tree: ast.Module) -> None:
    """Class hierarchies reduced to what the methods see: ``object`` leaves
    the bases, and a program class used only as the single base of one class
    is merged into that class (its body first, so the subclass's definitions
    still win), since an attribute found through a base or on the class
    itself is one bug seen in two programs."""
    for cls in ast.walk(tree):
        if isinstance(cls, ast.ClassDef):
            cls.bases = [b for b in cls.bases if not (isinstance(b, ast.Name) and b.id == "object")]
    loads: dict[str, int] = {}
    binds: dict[str, int] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            counts = loads if isinstance(n.ctx, ast.Load) else binds
            counts[n.id] = counts.get(n.id, 0) + 1
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            binds[n.name] = binds.get(n.name, 0) + 1
    blocks: dict[int, list[ast.stmt]] = {}  # id of a class statement -> the block that holds it
    for node in ast.walk(tree):
        for field in _BLOCK_FIELDS:
            block = getattr(node, field, None)
            if isinstance(block, list):
                for stmt in block:
                    if isinstance(stmt, ast.ClassDef):
                        blocks[id(stmt)] = block
    classes = {c.name: c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)}
    for sub in [c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)]:
        if not (len(sub.bases) == 1 and not sub.keywords and isinstance(sub.bases[0], ast.Name)):
            continue
        base = classes.get(sub.bases[0].id)
        if base is None or base is sub or base.keywords or base.decorator_list \
                or loads.get(base.name) != 1 or binds.get(base.name) != 1:
            continue
        home = blocks[id(base)]
        if home is blocks[id(sub)] and home.index(base) > home.index(sub):
            continue
        inherited = [s for s in base.body if not _is_filler(s)]
        own = [s for s in sub.body if not _is_filler(s)]
        sub.bases, sub.body = base.bases, (inherited + own) or [ast.Pass()]
        home.remove(base)
        loads[base.name] = 0


def _reachable(tree: ast.Module, entry: str, inputs: str) -> list[ast.stmt]:
    """The module's statements that the entry function reaches (by the names it reads)."""
    body = [n for n in tree.body if not _is_main_guard(n) and not _is_docstring(n)
            and not isinstance(n, (ast.Import, ast.ImportFrom))
            and not (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == inputs)
            and not (_defined(n) and _defined(n) <= SCAFFOLD_NAMES)]
    wanted, kept = {entry}, set()
    changed = True
    while changed:
        changed = False
        for i, node in enumerate(body):
            if i not in kept and (_defined(node) & wanted or not _defined(node)):
                kept.add(i)
                wanted |= _loads([node])
                changed = True
    return [n for i, n in enumerate(body) if i in kept]


def skeleton(source: str, *, stage: str = "dynamo", entry: str = "f", inputs: str = "inputs") -> str:
    """The canonical skeleton of ``source`` (a minimised program) as Python
    text (rules in the module docstring). ``stage``: the signature's stage
    ("dynamo" abstracts tensor computations). Raises SyntaxError if
    ``source`` does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        if not _tokenizes(source):
            raise
        # grammar newer than the host's Python (3.14 t-strings, PEP 758, PEP
        # 798 on a 3.11 host): a token-level skeleton, names and constants
        # abstracted, stable under renaming though not under deletions
        return token_skeleton(source)
    tree = ast.Module(body=_reachable(tree, entry, inputs), type_ignores=[])
    _flatten_bases(tree)
    kept = copy.deepcopy(tree)
    _simplify(tree, entry)
    if _empty_function(tree, entry):
        # Every statement was an observation or fed one: the bug is in what f
        # computed for its output (format(n, "b") returned), so that stays.
        tree = kept
        _keep_observed(tree, entry)
        _simplify(tree, entry, extra_live={OBSERVED})
    for node in ast.walk(tree):  # docstrings of nested functions and classes
        for field in _BLOCK_FIELDS:
            block = getattr(node, field, None)
            if isinstance(block, list) and len(block) > 1 and _is_docstring(block[0]):
                setattr(node, field, block[1:])
    abstract = _Abstracter(entry, stage.split("@", 1)[0] in PYTHON_STAGES, tree)
    tree = abstract.visit(copy.deepcopy(tree))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


# The name an entry function's observed values are bound to when nothing else
# of it would stay (``_keep_observed``).
OBSERVED = "observed"


def _simplify(tree: ast.Module, entry: str, extra_live: set[str] = frozenset()) -> None:
    """The removals of the module docstring, repeated to a fixed point (at most 50 rounds)."""
    for _ in range(50):  # each round removes something, or stops
        purity = _Purity(tree)
        loaded = _live(tree.body) | {entry} | set(extra_live)
        simplifier = _Simplifier(purity, loaded)
        tree.body = simplifier.block(tree.body)
        if not simplifier.changed:
            break


def _empty_function(tree: ast.Module, entry: str) -> bool:
    """Is the entry function left with no statement at all (or is it gone)?"""
    fn = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == entry),
              None)
    return fn is None or all(isinstance(s, ast.Pass) or _is_docstring(s) for s in fn.body)


def _keep_observed(tree: ast.Module, entry: str) -> None:
    """In the entry function, bind what each ``return`` returns and what each
    ``print`` prints to ``OBSERVED`` (a name the simplifier keeps): the skeleton
    of a program whose bug is in the value it observes (a builtin's result
    returned) keeps that value's computation rather than collapsing to
    ``def f():``, the key every such bug would share."""
    for fn in tree.body:
        if not (isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name == entry):
            continue
        for node in ast.walk(fn):
            for field in _BLOCK_FIELDS + ("handlers",):
                block = getattr(node, field, None)
                if not isinstance(block, list) or field == "handlers":
                    continue
                rewritten: list[ast.stmt] = []
                for stmt in block:
                    value = None
                    if isinstance(stmt, ast.Return) and stmt.value is not None:
                        value = stmt.value
                    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                            and dotted(stmt.value.func) == "print" and stmt.value.args:
                        value = ast.Tuple(elts=list(stmt.value.args), ctx=ast.Load())
                    if value is None:
                        rewritten.append(stmt)
                        continue
                    rewritten.append(ast.Assign(targets=[ast.Name(OBSERVED, ast.Store())], value=value, lineno=0))
                    if isinstance(stmt, ast.Return):
                        rewritten.append(ast.Return(None))
                setattr(node, field, rewritten)


def one_line(text: str) -> str:
    """A skeleton's text on one line for a signature detail: statements joined
    by "; ", a block's depth shown by its colon, at most MAX_LINE_CHARS
    characters before the digest of the whole text (always appended: the
    digest is what makes the key exact). ``|`` becomes ``/`` (keys split on it)."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    parts = []
    for line in text.splitlines():
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip())) // 4
        parts.append(("." * depth) + line.strip())
    joined = "; ".join(parts).replace("|", "/")
    if len(joined) > MAX_LINE_CHARS:
        joined = joined[:MAX_LINE_CHARS].rstrip() + "..."
    return f"{joined} #{digest}"


def _tokenizes(source: str) -> bool:
    try:
        list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return False
    return True


def token_skeleton(source: str) -> str:
    """``source`` as tokens with the program's own names numbered in order of
    first appearance (``n0``, ``n1``, ...), numbers as ``0`` and strings as
    ``''``; keywords, builtins and attribute names (``torch.relu``) kept.
    For sources the host's ``ast`` cannot parse."""
    names: dict[str, str] = {}
    out: list[str] = []
    previous = ""
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.ENCODING):
            continue
        if tok.type == tokenize.NAME:
            text = tok.string
            if not (keyword.iskeyword(text) or keyword.issoftkeyword(text) or hasattr(builtins, text)
                    or text == "torch" or previous == "."):
                text = names.setdefault(text, f"n{len(names)}")
        elif tok.type == tokenize.NUMBER:
            text = "0"
        elif tok.type == tokenize.STRING:
            text = "''"
        elif tok.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            text = {tokenize.NEWLINE: ";", tokenize.INDENT: "{", tokenize.DEDENT: "}"}[tok.type]
        else:
            text = tok.string
        if text:
            out.append(text)
        previous = tok.string
    return " ".join(out)
