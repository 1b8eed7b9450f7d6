"""Minimisation: reduce a program while it keeps its exact signature.

The interestingness test is the full signature (kind, stage, detail and the
set of interpreters), evaluated on the persistent workers, never "eager !=
compiled": a reducer whose check drifts produces confident nonsense. Source
reduction is pysource-minimize's (AST-level, every candidate parses and
compiles); a candidate is first tried on one interpreter of the signature and
only then on the others, so most rejections cost one run.
"""

from __future__ import annotations

import ast
import dataclasses
import logging
import time
from collections.abc import Callable

import pysource_minimize

from harness.program import Program
from fuzz.corpus import code_lines, program_body
from fuzz.errors import CouldNotMinimize
from fuzz.signature import Signature, causes, findings
from fuzz.workers import Task, WorkerPool

log = logging.getLogger(__name__)

# Default time budget per case, in seconds (CPU backends).
DEFAULT_BUDGET_S = 300.0


class _OutOfTime(Exception):
    pass


@dataclasses.dataclass
class MinimizeResult:
    """The smallest accepted source and the reducer's statistics (times in seconds)."""

    source: str
    lines_before: int
    lines_after: int
    checks: int = 0
    accepted: int = 0
    elapsed_s: float = 0.0
    complete: bool = True


class SignatureCheck:
    """Callable ``check(source) -> bool``: does the program still show exactly
    ``signature`` when run with ``backend`` on ``interpreters`` (all that the
    campaign covers, so the interpreter set is checked both ways)?"""

    def __init__(self, pool: WorkerPool, program: Program, signature: Signature, backend: str,
                 interpreters: list[str], *, fullgraph: bool = False, device: str = "cpu"):
        self.pool, self.program, self.signature, self.backend = pool, program, signature, backend
        self.fullgraph, self.device = fullgraph, device
        inside = [i for i in interpreters if i in signature.interpreters]
        outside = [i for i in interpreters if i not in signature.interpreters]
        self.first, self.rest = inside[:1], inside[1:] + outside
        self.calls = 0

    def _tasks(self, program: Program, names: list[str]) -> list[Task]:
        return [Task(program, n, self.backend, self.device, self.fullgraph) for n in names]

    def __call__(self, source: str) -> bool:
        self.calls += 1
        program = self.program.with_source(source)
        first = self.pool.run_all(self._tasks(program, self.first))
        if not all(self.signature.cause in causes(o) for o in first):
            return False
        rest = self.pool.run_all(self._tasks(program, self.rest))
        return any(f.signature == self.signature for f in findings(first + rest))


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


def minimize_source(source: str, check: Callable[[str], bool], *, budget_s: float = DEFAULT_BUDGET_S,
                    progress: Callable[[int, int], None] | None = None) -> MinimizeResult:
    """Reduce ``source`` (the program body) while ``check`` holds.

    Raises CouldNotMinimize if ``check`` does not hold on the input. Stops after
    ``budget_s`` seconds with the smallest source accepted so far; the result is
    never larger than the input.
    """
    started = time.monotonic()
    body = program_body(source)
    if not check(body):
        raise CouldNotMinimize("the case does not show its signature before minimisation; nothing to minimise")
    best = [body]
    counters = {"checks": 1, "accepted": 0}

    def checker(candidate: str) -> bool:
        if time.monotonic() - started > budget_s:
            raise _OutOfTime
        counters["checks"] += 1
        ok = check(candidate)
        if ok and code_lines(candidate) <= code_lines(best[0]) and len(candidate) < len(best[0]):
            best[0] = candidate
            counters["accepted"] += 1
            if progress:
                progress(code_lines(candidate), counters["checks"])
        return ok

    complete = True
    try:
        reduced = pysource_minimize.minimize(body, checker, compilable=True)
        if code_lines(reduced) <= code_lines(best[0]) and check(reduced):
            best[0] = reduced
    except _OutOfTime:
        complete = False
        log.info("minimisation stopped after its budget of %.0f s", budget_s)
    tidied = tidy(best[0])
    if tidied != best[0] and code_lines(tidied) < code_lines(best[0]):
        counters["checks"] += 1
        if check(tidied):
            best[0] = tidied
    result = best[0] if code_lines(best[0]) <= code_lines(body) else body
    return MinimizeResult(source=result, lines_before=code_lines(body), lines_after=code_lines(result),
                          checks=counters["checks"], accepted=counters["accepted"],
                          elapsed_s=time.monotonic() - started, complete=complete)
