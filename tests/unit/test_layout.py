"""The layout rules of docs/design.md, checked on the source: the process
boundary is the package boundary (``harness`` never imports ``fuzz``), no
import cycle among the modules of ``fuzz`` and ``harness`` (function-level
imports included), no module over 800 lines, and nothing read from outside
the repo."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

# Lines a module of fuzz/ or harness/ may have (docs/design.md, "Layout").
MAX_MODULE_LINES = 800
PACKAGES = ("fuzz", "harness")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def imports_of(path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``path`` imports anywhere in its body."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        else:
            continue
        for name in names:
            # "from fuzz.corpus import render" names a module; "from fuzz.corpus.render
            # import code_lines" names a function of one: keep the longest module
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: imports_of(path, known) - {name} for name, path in mods.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_cycle_finder_finds_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_among_the_modules_of_fuzz_and_harness():
    graph = import_graph()
    assert len(graph) > 40  # the walk saw the packages
    assert cycles(graph) == []


def test_harness_never_imports_fuzz():
    graph = import_graph()
    crossing = {m: sorted(i for i in deps if i.startswith("fuzz")) for m, deps in graph.items()
                if m.startswith("harness")}
    assert {m: d for m, d in crossing.items() if d} == {}


@pytest.mark.parametrize("name", sorted(modules()))
def test_module_is_at_most_800_lines(name):
    lines = len(modules()[name].read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, f"{name} has {lines} lines: split it by what its parts do"


def test_no_file_of_the_repo_reads_from_beside_the_checkout():
    outside = "../" + "shared"  # spelled apart so that this file does not name it
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    naming = [f for f in tracked if (ROOT / f).is_file() and outside in (ROOT / f).read_text(errors="replace")]
    assert naming == []
