"""Tidy passes that make a minimised program read like one a person wrote:
unused imports dropped, and the generator's numbered names (``t2``,
``it6``, ``ctx7``, pysource-minimize's ``v1``) replaced by names for what
they hold (``x``, ``gen``, ``ctx``, ``it``). Each returns a candidate that the
minimiser's check still has to accept (fuzz.reduce.pipeline.tidy_passes).
"""

from __future__ import annotations

import ast
import builtins
import re

# A name the generator or a reducer made up: letters, then a number.
NUMBERED = re.compile(r"^[a-z]+_?\d+$")
# Argument names of the entry function, in order.
ARGUMENT_NAMES = ("x", "y", "z", "w", "u", "s")
# Calls whose result is an iterator (its name: "it").
ITERATOR_CALLS = frozenset({"iter", "reversed", "zip", "enumerate", "map", "filter"})
# torch functions whose result is a context manager (its name: "ctx").
CONTEXT_CALLS = frozenset({"no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "autocast"})
_KEEP = frozenset(dir(builtins)) | {"torch", "self", "cls"}


def drop_unused_imports(source: str) -> str:
    """``source`` without the module-level imports whose names nothing reads
    (``torch`` is kept: every case imports it). Raises SyntaxError if
    ``source`` does not parse."""
    tree = ast.parse(source)
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
    body = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            node.names = [a for a in node.names if (a.asname or a.name).split(".")[0] in read | {"torch"}]
            if not node.names:
                continue
        body.append(node)
    tree.body = body
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _generator_functions(tree: ast.Module) -> set[str]:
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and any(isinstance(m, (ast.Yield, ast.YieldFrom)) for m in ast.walk(n))}


def _role(value: ast.expr | None, generators: set[str]) -> str:
    """A readable base name for what ``value`` makes."""
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else (func.attr if isinstance(func, ast.Attribute) else "")
        if name in generators:
            return "gen"
        if name in ITERATOR_CALLS:
            return "it"
        if name in CONTEXT_CALLS:
            return "ctx"
        if name in ("list", "sorted"):
            return "xs"
        if name == "dict":
            return "d"
        if name and name[:1].isupper():
            return "obj"
    if isinstance(value, (ast.List, ast.ListComp, ast.Tuple)):
        return "xs"
    if isinstance(value, (ast.Dict, ast.DictComp)):
        return "d"
    if isinstance(value, (ast.GeneratorExp,)):
        return "gen"
    return "t"


def readable_names(source: str, entry: str = "f", inputs: str = "inputs") -> str:
    """``source`` with numbered names renamed by role: the entry's arguments
    ``x``, ``y``, ...; a generator ``gen``, an iterator ``it``, a grad-mode
    object ``ctx``, a list ``xs``, a dict ``d``, an instance ``obj``, another
    value ``t``; generator functions ``gen_fn``, other nested functions ``g``,
    exception names ``e``, loop variables ``i`` (a second of a kind gets 2,
    3, ...). Names already in use, builtins and non-numbered names are kept.
    Raises SyntaxError if ``source`` does not parse."""
    tree = ast.parse(source)
    generators = _generator_functions(tree)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)} | {
        n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    mapping: dict[str, str] = {}
    taken = {n for n in used if not NUMBERED.match(n)} | _KEEP | {entry, inputs}

    def give(old: str, base: str) -> None:
        if old in mapping or not NUMBERED.match(old) or old in (entry, inputs):
            return
        candidate, k = base, 1
        while candidate in taken:
            k += 1
            candidate = f"{base}{k}"
        mapping[old] = candidate
        taken.add(candidate)

    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry), None)
    if fn is not None:
        for arg, name in zip(fn.args.args, ARGUMENT_NAMES):
            give(arg.arg, name)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node is not fn and node.name != inputs:
            give(node.name, "gen_fn" if node.name in generators else "g")
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    give(target.id, _role(node.value, generators))
        elif isinstance(node, ast.withitem) and isinstance(node.optional_vars, ast.Name):
            give(node.optional_vars.id, "ctx")
        elif isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name):
            give(node.target.id, "i")
        elif isinstance(node, ast.ExceptHandler) and node.name:
            give(node.name, "e")
        elif isinstance(node, ast.arg):
            give(node.arg, "v")
    if not mapping:
        return source

    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in mapping:
            node.id = mapping[node.id]
        elif isinstance(node, ast.arg) and node.arg in mapping:
            node.arg = mapping[node.arg]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in mapping:
            node.name = mapping[node.name]
        elif isinstance(node, ast.ExceptHandler) and node.name in mapping:
            node.name = mapping[node.name]
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            node.names = [mapping.get(n, n) for n in node.names]
        elif isinstance(node, ast.keyword) and node.arg in mapping:
            node.arg = mapping[node.arg]
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"
