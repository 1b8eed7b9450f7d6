"""What the program writer knows at one point of ``f``: its names and its expressions.

``Scope`` lists the names code written at that point may read or rebind (and
what may be done with them); ``Expr`` is a tensor expression with an upper
bound on its magnitude. Both are plain data: the writer (``fuzz.generate.writer``)
and every construct take a ``Scope`` and build ``Expr``s.
"""

from __future__ import annotations

import dataclasses

__all__ = ["Expr", "Scope"]


@dataclasses.dataclass
class Scope:
    """The names that code written at one point of the program may use.

    Blocks get a copy (``block``), so containers defined inside a block are
    never read after it, where they might not exist.
    """

    tensors: tuple[str, ...]  # readable tensor variables
    writable: tuple[str, ...]  # tensor variables this function may rebind
    ints: tuple[str, ...]  # small ints (<= MAX_SMALL_INT): arithmetic, conditions
    printables: tuple[str, ...]  # ints and strings that print() may show
    lists: dict[str, int]  # list-of-tensor variables -> guaranteed length
    dicts: dict[str, tuple[str, ...]]  # dict-of-tensor variables -> guaranteed keys
    frozen: frozenset[str] = frozenset()  # containers being iterated: no mutation
    catches: tuple[str, ...] = ()  # exception types an enclosing try here catches
    enclosing: tuple[str, ...] = ()  # names a nested function may declare nonlocal
    loop: bool = False  # inside a loop of this function: break/continue allowed
    depth: int = 0  # compound statements around this point
    indent: int = 1  # indentation level, in 4-space steps

    def block(self, **changes: object) -> Scope:
        """A copy for a nested block, one level deeper (``changes`` override fields)."""
        fields = {
            "lists": dict(self.lists),
            "dicts": dict(self.dicts),
            "depth": self.depth + 1,
            "indent": self.indent + 1,
        }
        fields.update(changes)
        return dataclasses.replace(self, **fields)


@dataclasses.dataclass(frozen=True)
class Expr:
    """A tensor-valued expression and an upper bound on its |value| (units of randn's std)."""

    text: str
    magnitude: float
