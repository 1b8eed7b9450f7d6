"""Source-level tidy passes of the minimiser (fuzz.reduce.pipeline's tidy
step): constant statements dropped, numbered placeholder names made
readable, unused arguments of ``f`` dropped and the inputs' shapes made
smaller. Each is a pure function of source text; the pipeline checks every
candidate it returns."""

from __future__ import annotations

import ast
import re


class _DropConstantStatements(ast.NodeTransformer):
    """Remove bare constant statements (``0``) that pysource-minimize leaves
    where a block would otherwise be empty, keeping one where it must."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                kept = [s for s in block if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
                setattr(node, name, kept or ([ast.Pass()] if name != "orelse" else []))
        return node


def tidy(source: str) -> str:
    """``source`` without bare constant statements, unparsed (comments dropped)."""
    tree = _DropConstantStatements().visit(ast.parse(source))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


_PLACEHOLDER = re.compile(r"\bunique_name_(\d+)\b")


def rename_placeholders(source: str) -> str:
    """pysource-minimize's ``unique_name_N`` placeholders as ``v1``, ``v2``, ...
    in order of appearance, skipping names the source already uses."""
    used = set(re.findall(r"\b[A-Za-z_]\w*\b", source))
    mapping: dict[str, str] = {}
    counter = 0
    for match in _PLACEHOLDER.finditer(source):
        if match.group(0) not in mapping:
            counter += 1
            while f"v{counter}" in used:
                counter += 1
            mapping[match.group(0)] = f"v{counter}"
    return _PLACEHOLDER.sub(lambda m: mapping[m.group(0)], source)


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def drop_unused_arguments(source: str, entry: str = "f", inputs: str = "inputs") -> list[str]:
    """Candidates without unused positional arguments of ``entry`` (and their
    items in the tuple ``inputs`` returns): all of them; all but the first
    (a generated program's growth input, the one the harness's shape call
    grows: without it another input grows and the behaviour may change); then
    one each."""
    tree = ast.parse(source)
    f, make = _function(tree, entry), _function(tree, inputs)
    if f is None or make is None or f.args.vararg or f.args.kwonlyargs or f.args.posonlyargs:
        return []
    returns = [n for n in ast.walk(make) if isinstance(n, ast.Return) and isinstance(n.value, ast.Tuple)]
    if len(returns) != 1 or len(returns[0].value.elts) != len(f.args.args):
        return []
    # a parameter only stored to (``v1, v2 = g(x)``) is unused too; ``del`` and ``+=`` read it
    read = {n.id for stmt in f.body for n in ast.walk(stmt) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}
    read |= {n.target.id for stmt in f.body for n in ast.walk(stmt)
             if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)}
    unused = [i for i, a in enumerate(f.args.args) if a.arg not in read]
    candidates = []
    groups = [unused] if len(unused) > 1 else []
    if len(unused) > 2 and unused[0] == 0:
        groups.append(unused[1:])
    for drop in groups + [[i] for i in unused]:
        copy = ast.parse(source)
        cf, cm = _function(copy, entry), _function(copy, inputs)
        ret = next(n for n in ast.walk(cm) if isinstance(n, ast.Return) and isinstance(n.value, ast.Tuple))
        cf.args.args = [a for i, a in enumerate(cf.args.args) if i not in drop]
        cf.args.defaults = []
        ret.value.elts = [e for i, e in enumerate(ret.value.elts) if i not in drop]
        candidates.append(ast.unparse(ast.fix_missing_locations(copy)) + "\n")
    return candidates


# Tensor factories whose positional int arguments are sizes.
_FACTORIES = ("randn", "rand", "ones", "zeros", "empty")


def _size_constants(make: ast.FunctionDef) -> list[ast.Constant]:
    """The int size arguments (> 1) of tensor factory calls in ``make``, in walk order."""
    found = []
    for node in ast.walk(make):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _FACTORIES:
            found += [a for a in node.args if isinstance(a, ast.Constant) and type(a.value) is int and a.value > 1]
    return found


def smaller_shapes(source: str, inputs: str = "inputs") -> list[str]:
    """Candidates with the integer sizes of tensor factories in ``inputs``
    (``torch.randn(3, 4, ...)``) made smaller: every size to 1 at once, then
    each size to 1, then each size halved."""
    make = _function(ast.parse(source), inputs)
    if make is None:
        return []
    sizes = [c.value for c in _size_constants(make)]
    edits: list[dict[int, int]] = [{i: 1 for i in range(len(sizes))}] if len(sizes) > 1 else []
    edits += [{i: 1} for i in range(len(sizes))] + [{i: v // 2} for i, v in enumerate(sizes) if v > 2]
    candidates = []
    for edit in edits:
        tree = ast.parse(source)
        for i, node in enumerate(_size_constants(_function(tree, inputs))):
            node.value = edit.get(i, node.value)
        candidates.append(ast.unparse(tree) + "\n")
    return candidates
