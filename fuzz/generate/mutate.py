"""Mutation by splicing: statements of a donor program (a corpus case, a
program that filled a bucket, or another generated program) inserted into a
freshly generated one, so that every bug found seeds the next programs.

``mutate(seed, donors)`` is deterministic in its arguments. The splice takes a
run of one to three statements from the body of the donor's ``f`` and puts it
at a statement boundary of the base's ``f`` (its top level, or the top level
of one of its blocks). Names the run reads but the base lacks there are bound
first: tensor-like names to ``t0``, list-like names (``xs3``) to a list of
three tensors, dict-like names (``d5``) to a dict with every key the
generator uses. Module-level helpers of the donor (classes, context
managers, globals, imports) are copied over when the base lacks them. A run
that reads anything else (the donor's extra arguments, a match capture) is
not taken; after ``MUTATION_ATTEMPTS`` failures the base is returned as is.
"""

from __future__ import annotations

import ast
import builtins
import logging
import random
import re
from collections.abc import Sequence
from pathlib import Path

from fuzz.generate.program import generate
from harness.program import Program

__all__ = ["MUTATION", "MUTATION_ATTEMPTS", "load_donors", "mutate", "splice"]

log = logging.getLogger(__name__)

# Program.generator of spliced programs.
MUTATION = "tcfuzz.mutate"
# Donor runs tried before giving up on a splice.
MUTATION_ATTEMPTS = 12
# Longest run of donor statements spliced, in statements.
MAX_RUN = 3

_TENSOR_NAME = re.compile(r"^(t|u|x|y|tmp|acc|v|w|grad)\d*$")
_LIST_NAME = re.compile(r"^xs\d+$")
_DICT_NAME = re.compile(r"^d\d+$")
_BUILTINS = frozenset(dir(builtins))


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _stored(nodes: Sequence[ast.AST]) -> set[str]:
    names: set[str] = set()
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                names.add(sub.id)
            elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(sub.name)
            elif isinstance(sub, ast.alias):
                names.add((sub.asname or sub.name).split(".")[0])
            elif isinstance(sub, ast.arg):
                names.add(sub.arg)
            elif isinstance(sub, ast.ExceptHandler) and sub.name:
                names.add(sub.name)
            elif isinstance(sub, (ast.MatchAs, ast.MatchStar)) and sub.name:
                names.add(sub.name)
            elif isinstance(sub, ast.MatchMapping) and sub.rest:
                names.add(sub.rest)
    return names


def _loaded(nodes: Sequence[ast.AST]) -> set[str]:
    return {
        sub.id
        for node in nodes
        for sub in ast.walk(node)
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)
    }


def _module_names(tree: ast.Module) -> set[str]:
    """Names bound at module level (not inside functions or classes)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Import, ast.ImportFrom)):
            names |= _stored([node])
    return names


def _binding(name: str) -> str | None:
    if _TENSOR_NAME.match(name):
        return f"{name} = t0"
    if _LIST_NAME.match(name):
        return f"{name} = [t0, t1, t0]"
    if _DICT_NAME.match(name):
        return f'{name} = {{k: t0 for k in "abcdez"}}'
    return None


def _blocks(function: ast.FunctionDef) -> list[list[ast.stmt]]:
    """Statement lists of ``function`` where a run may go: its body and the
    bodies of its if/for/while/with/try blocks (not nested defs or handlers)."""
    blocks = [function.body]
    for node in ast.walk(function):
        if isinstance(node, (ast.If, ast.For, ast.While, ast.With)) and node is not function:
            blocks.append(node.body)
        elif isinstance(node, ast.Try):
            blocks.append(node.body)
    return blocks


def splice(base: Program, donor: Program, rng: random.Random) -> Program | None:
    """``base`` with a run of ``donor``'s statements spliced in, or None if no
    run fits after ``MUTATION_ATTEMPTS`` tries (see the module docstring)."""
    try:
        base_tree, donor_tree = ast.parse(base.source), ast.parse(donor.source)
    except SyntaxError:
        return None
    base_f, donor_f = _function(base_tree, base.entry), _function(donor_tree, donor.entry)
    if base_f is None or donor_f is None:
        return None
    statements = [s for s in donor_f.body if not isinstance(s, ast.Return)]
    if not statements:
        return None
    donor_module = [
        n for n in donor_tree.body
        if not isinstance(n, ast.If) and not (isinstance(n, ast.FunctionDef) and n.name in (donor.entry, donor.inputs))
    ]
    known_module = _module_names(base_tree) | _BUILTINS
    for _ in range(MUTATION_ATTEMPTS):
        start = rng.randrange(len(statements))
        run = statements[start : start + 1 + rng.randrange(MAX_RUN)]
        block = rng.choice(_blocks(base_f))
        position = rng.randrange(len(block) + 1)
        if position == len(block) and block and isinstance(block[-1], ast.Return):
            position -= 1
        if block is base_f.body:
            before = base_f.body[:position]
        else:
            # inside a block: names bound at f's top level before the block
            # plus the block's own statements before the position
            top = next(i for i, s in enumerate(base_f.body) if any(n is block[0] for n in ast.walk(s))) if block else 0
            before = base_f.body[:top] + block[:position]
        params = {a.arg for a in base_f.args.args}
        available = params | _stored(before) | known_module | _module_names(donor_tree)
        missing = sorted(_loaded(run) - available - _stored(run))
        bindings = [_binding(name) for name in missing]
        if any(b is None for b in bindings):
            continue
        new_nodes = [ast.parse(b).body[0] for b in bindings if b] + list(run)
        block[position:position] = new_nodes
        helpers = [n for n in donor_module if not (_stored([n]) <= _module_names(base_tree)) or isinstance(n, (ast.Import, ast.ImportFrom))]
        seen_imports = {ast.unparse(n) for n in base_tree.body if isinstance(n, (ast.Import, ast.ImportFrom))}
        helpers = [n for n in helpers if ast.unparse(n) not in seen_imports]
        index = base_tree.body.index(base_f)
        base_tree.body[index:index] = helpers
        source = ast.unparse(ast.fix_missing_locations(base_tree)) + "\n"
        try:
            compile(source, "<spliced>", "exec", dont_inherit=True)
        except SyntaxError:
            return None
        features = tuple(sorted(set(base.features) | set(donor.features)))
        return Program(source=source, generator=MUTATION, seed=base.seed, features=features)
    return None


def mutate(seed: int, donors: Sequence[Program] = (), weights: dict[str, float] | None = None) -> Program:
    """A generated program (``generate(seed, weights)``) with statements of a
    donor spliced in: one of ``donors``, or, with none, another generated
    program. Same arguments, same program. Falls back to the base program
    (``generator`` stays ``tcfuzz.v2``) when no splice fits.
    """
    rng = random.Random(f"mutate-{seed}")
    base = generate(seed, weights)
    donor = rng.choice(list(donors)) if donors else generate(rng.randrange(2**31), weights)
    return splice(base, donor, rng) or base


def load_donors(corpus_dir: Path) -> list[Program]:
    """The corpus cases under ``corpus_dir`` as donors (unreadable ones skipped)."""
    from fuzz.corpus import store
    from fuzz.errors import CorpusError
    from harness.program import ProgramError

    donors = []
    for path in store.list_cases(corpus_dir) if corpus_dir.is_dir() else []:
        try:
            donors.append(store.read_case(path)[0])
        except (CorpusError, ProgramError, OSError):
            log.warning("corpus case %s is not readable as a donor; skipped", path)
    return donors
