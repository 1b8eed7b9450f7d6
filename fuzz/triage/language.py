"""The language features of a program (what a wrong-result signature was made
of before root-cause keys, fuzz.triage.rootcause; kept as the "before" of
the dedup measurement in tests/unit/test_rootcause.py).

A wrong result leaves no stack to bucket by, so after minimisation it is
bucketed by what remains of the program: the AST node kinds, the builtins it
names, the ``torch.*`` functions it calls and the methods it calls, less a
baseline that every program has (a function, a call, an attribute, an
assignment, arithmetic). Two minimised programs that diverge through
different constructs land in different buckets; the same bug minimised twice
lands in one.

Only the code under test counts: the ``inputs`` factory, the ``__main__``
runner and the PEP 723 header are left out. Opcodes are not used: they differ
between interpreters, and a signature must be the same on every one.
"""

from __future__ import annotations

import ast
import builtins
import hashlib

from fuzz.triage.skeleton import dotted

# Node kinds of the baseline program ``import torch; def f(x): y = torch.sin(x) + 1; return y``
# and of the scaffolding every case has, which tell nothing about a bug.
BASELINE_NODES = frozenset({
    "Module", "Import", "ImportFrom", "alias", "FunctionDef", "arguments", "arg", "Assign", "Name", "Load",
    "Store", "BinOp", "Add", "Constant", "Return", "Call", "Attribute", "Expr", "keyword", "Tuple",
})
# Names that are not features of a program: the harness's entry points.
_SCAFFOLD_FUNCTIONS = ("inputs",)
# Longest feature text kept in a signature detail, in characters; a longer set
# is cut and a hash of the whole set keeps keys distinct.
MAX_FEATURES_CHARS = 150


def _is_main_guard(node: ast.stmt) -> bool:
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__")


def _is_expect(node: ast.stmt) -> bool:
    """The ``EXPECT = {...}`` table of a known-bug file (tests/known_bugs)."""
    return isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EXPECT" for t in node.targets)


_dotted = dotted  # ``a.b.c`` for an attribute chain on a name (fuzz.triage.skeleton)


def language_features(source: str, *, entry_inputs: str = "inputs") -> frozenset[str]:
    """Feature names of ``source``: node kinds (``For``, ``ListComp``), builtins
    (``zip()``), torch functions (``torch.relu``) and methods (``.add_``).

    Raises SyntaxError if ``source`` does not parse.
    """
    tree = ast.parse(source)
    body = [n for n in tree.body if not _is_main_guard(n)
            and not (isinstance(n, ast.FunctionDef) and n.name in (entry_inputs, *_SCAFFOLD_FUNCTIONS))
            and not _is_expect(n)]
    found: set[str] = set()
    known_builtins = set(dir(builtins))
    for top in body:
        for node in ast.walk(top):
            kind = type(node).__name__
            if kind not in BASELINE_NODES:
                found.add(kind)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in known_builtins:
                found.add(f"{node.id}()")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                dotted = _dotted(node.func)
                if dotted and dotted.startswith("torch."):
                    found.add(dotted)
                else:
                    found.add(f".{node.func.attr}")
    return frozenset(found)


def features_text(features: frozenset[str]) -> str:
    """The sorted features joined for a signature detail, at most
    MAX_FEATURES_CHARS characters (a cut list ends in the set's hash)."""
    text = ", ".join(sorted(features))
    if len(text) <= MAX_FEATURES_CHARS:
        return text
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    return text[:MAX_FEATURES_CHARS].rsplit(", ", 1)[0] + f", ...#{digest}"
