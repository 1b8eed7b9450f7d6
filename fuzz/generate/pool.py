"""The pool of programs that reached new compiler code, and the programs mutated from it.

A program whose run added lines to the campaign's coverage map
(``fuzz.campaign.reach``) enters the pool as a ``PoolEntry``: its seed, its
Hypothesis choice sequence where our generator drew it, its source, how
many lines it added, and its lineage (the mutation and parents that made
it). ``Pool.next_program(seed)`` then gives, for part of the seeds, a
mutant of an entry instead of a fresh draw:

- choice-sequence mutations of entries our generator drew (``replace`` a
  span of choices with fresh random ones, ``duplicate`` a span, ``splice`` in
  a span of another entry, or ``crossover``: one entry's prefix, the other's
  suffix, as HypoFuzz's ``CrossOverMutator``; spans and cuts start and end
  at decisions of the same kind, ``_signatures``):
  the mutated sequence is replayed through ``PrefixProvider``, which, like
  HypoFuzz's provider, draws a fresh random choice where a recorded one no
  longer fits its draw (Hypothesis' own ``for_choices`` would take the
  simplest one) and past the sequence's end;
- AST-level splices between two entries' sources (``fuzz.generate.mutate.splice``),
  for entries from any source.

Energy (which entry is mutated): a worker reports each line once
(``harness.reach`` turns a line's event off once it fired), so the host has
no per-line hit counts to find rare branches with as FairFuzz does. What it
has is per-file density: an entry's lines count ``1/sqrt(lines covered in
that file)`` each, so lines in thinly covered files (Dynamo's
``variables/user_defined.py`` rather than ``symbolic_convert.py``) weigh
more; that is multiplied by ``2 ** min(finds, 4)`` (children that added
coverage themselves) and divided by ``1 + picks`` (AFL++'s ``fast``
schedule: an entry mutated often without result fades).

The share of fresh draws adapts: the pool keeps the mean new lines per
program of fresh draws and of mutants (exponentially weighted) and draws
fresh with probability ``fresh / (fresh + mutants)``, kept within
[``MIN_FRESH_SHARE``, ``MAX_FRESH_SHARE``] so neither arm starves.

Every choice decided here comes from ``random.Random(f"pool-{seed}")``, and
each mutant records its realised choice sequence (``choices``), from which
``rebuild`` replays it exactly (``ConjectureData.for_choices``); a spliced
mutant records its source. ``fuzz.campaign.guidance`` ties the pool to the
campaign.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import logging
import math
import random
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis.database import choices_from_bytes, choices_to_bytes
from hypothesis.errors import StopTest
from hypothesis.internal.conjecture.choice import choice_permitted
from hypothesis.internal.conjecture.data import ConjectureData, Status

from fuzz.generate.program import _SeededProvider, program_from_data
from harness.program import Program

__all__ = ["POOL", "Draft", "Mutation", "Pool", "PoolEntry", "PrefixProvider", "decode_choices", "draw_with_choices",
           "encode_choices", "rebuild"]

log = logging.getLogger(__name__)

# Program.generator of a program mutated at the choice level: its seed alone
# does not replay it (fuzz.reduce.shrink then reduces its source instead).
POOL = "tcfuzz.pool"
# Bounds of the share of fresh draws while the pool has entries (a share of
# programs; the rest are mutants).
MIN_FRESH_SHARE = 0.2
MAX_FRESH_SHARE = 0.8
# Weight of the newest program in the running means of new lines per
# program of each arm (an exponential moving average).
YIELD_SMOOTHING = 0.05
# Longest span of choices a replace mutation redraws, in choices.
MAX_REPLACE_SPAN = 8
# Tries at a mutant that differs from its parent before giving up (the
# seed is then drawn fresh).
MUTATION_ATTEMPTS = 4
# Longest span a duplicate or splice moves, in choices.
MAX_WINDOW = 64
# Largest choice sequence kept (longer sequences are duplicated less):
# Hypothesis' own buffer holds 8 KiB of choices.
MAX_CHOICES = 4000


class Mutation(str, enum.Enum):
    """How a pool entry was made."""

    FRESH = "fresh"
    REPLACE = "replace"
    DUPLICATE = "duplicate"
    SPLICE = "splice"
    CROSSOVER = "crossover"
    AST_SPLICE = "ast-splice"

    def describe(self) -> str:
        return {
            Mutation.FRESH: "drawn from its seed by the campaign's source mix",
            Mutation.REPLACE: "a span of its parent's choices redrawn at random",
            Mutation.DUPLICATE: "a span of its parent's choices repeated after itself",
            Mutation.SPLICE: "a span of its parent's choices replaced by a span of another entry's",
            Mutation.CROSSOVER: "its parent's choices up to a point, then another entry's after a point",
            Mutation.AST_SPLICE: "statements of another entry spliced into its parent's source (fuzz.generate.mutate)",
        }[self]

    @property
    def uses_choices(self) -> bool:
        return self not in (Mutation.FRESH, Mutation.AST_SPLICE)


def encode_choices(choices: Sequence[Any]) -> str:
    """A choice sequence as text (Hypothesis' database encoding, base64)."""
    return base64.b64encode(choices_to_bytes(choices)).decode()


def decode_choices(text: str) -> tuple[Any, ...]:
    """The choice sequence of ``encode_choices``; raises ValueError for text that is not one."""
    choices = choices_from_bytes(base64.b64decode(text))
    if choices is None:
        raise ValueError(f"Expected an encoded choice sequence but got text={text[:40]!r}...")
    return choices


class PrefixProvider(_SeededProvider):
    """Hypothesis' provider (without constant pools) that first replays ``prefix``:
    each observed draw takes the next recorded choice if it fits the draw's type
    and constraints, else a fresh random one (as HypoFuzz's provider does);
    past the prefix, every draw is random. Draws the provider makes inside its
    own draws (the weighted-integer sampler, string lengths) never consume it."""

    def __init__(self, conjecturedata: ConjectureData | None, /, prefix: Sequence[Any] = ()):
        super().__init__(conjecturedata)
        self._prefix = tuple(prefix)
        self._index = 0
        self._depth = 0

    def _pop(self, choice_type: str, draw: Callable[..., Any], constraints: dict[str, Any]) -> Any:
        if self._depth:
            return draw(**constraints)
        self._depth += 1
        try:
            if self._index < len(self._prefix):
                choice = self._prefix[self._index]
                self._index += 1
                full = _full_constraints(choice_type, constraints)
                if full is not None and _type_name(choice) == choice_type and choice_permitted(choice, full):
                    return choice
            return draw(**constraints)
        finally:
            self._depth -= 1

    def draw_boolean(self, p: float = 0.5) -> bool:
        return self._pop("boolean", super().draw_boolean, {"p": p})

    def draw_integer(self, min_value: int | None = None, max_value: int | None = None, *,
                     weights: dict[int, float] | None = None, shrink_towards: int = 0) -> int:
        return self._pop("integer", super().draw_integer, {"min_value": min_value, "max_value": max_value,
                                                           "weights": weights, "shrink_towards": shrink_towards})

    def draw_float(self, **constraints: Any) -> float:
        return self._pop("float", super().draw_float, constraints)

    def draw_string(self, intervals: Any, **constraints: Any) -> str:
        return self._pop("string", super().draw_string, {"intervals": intervals, **constraints})

    def draw_bytes(self, min_size: int = 0, max_size: int = 8192) -> bytes:
        return self._pop("bytes", super().draw_bytes, {"min_size": min_size, "max_size": max_size})


def _type_name(choice: Any) -> str:
    return {bool: "boolean", int: "integer", float: "float", str: "string", bytes: "bytes"}.get(type(choice), "")


def _full_constraints(choice_type: str, constraints: dict[str, Any]) -> dict[str, Any] | None:
    """``constraints`` with every key ``choice_permitted`` reads (floats and
    strings pass theirs whole; None where a key is missing)."""
    needed = {"boolean": ("p",), "integer": ("min_value", "max_value", "weights", "shrink_towards"),
              "float": ("min_value", "max_value", "allow_nan", "smallest_nonzero_magnitude"),
              "string": ("intervals", "min_size", "max_size"), "bytes": ("min_size", "max_size")}[choice_type]
    return constraints if all(k in constraints for k in needed) else None


def _weights_dict(weights: tuple[tuple[str, float], ...]) -> dict[str, float] | None:
    return dict(weights) if weights else None


def _draw(data: ConjectureData, weights: tuple[tuple[str, float], ...]) -> Program | None:
    try:
        return program_from_data(data, _weights_dict(weights))
    except StopTest:  # an overrun: the choices ran out (for_choices) or past Hypothesis' buffer
        return None


def draw_with_choices(seed: int, weights: dict[str, float] | None = None) -> tuple[Program, tuple[Any, ...]]:
    """``fuzz.generate.program.generate(seed, weights)`` and the choice
    sequence it drew (the same ConjectureData, kept)."""
    data = ConjectureData(random=random.Random(seed), provider=_SeededProvider)
    program = program_from_data(data, weights)
    program = dataclasses.replace(program, seed=seed, weights=tuple(sorted((weights or {}).items())))
    return program, data.choices


def rebuild(choices: Sequence[Any], *, seed: int | None, weights: tuple[tuple[str, float], ...] = ()) -> Program | None:
    """The program our generator draws from exactly ``choices`` (a realised
    sequence, as ``PoolEntry.choices`` records), recorded as a pool program of
    ``seed``; None where the sequence is not a whole program (too short)."""
    data = ConjectureData.for_choices(tuple(choices), provider=_SeededProvider)
    program = _draw(data, weights)
    if program is None:
        return None
    return dataclasses.replace(program, generator=POOL, seed=seed, weights=weights)


@dataclasses.dataclass
class PoolEntry:
    """One program that added coverage: ``entry_id`` its program id; ``seed``
    the campaign seed it ran as; ``program`` it (source and provenance);
    ``choices`` its realised Hypothesis choice sequence (``encode_choices``),
    "" where our generator did not draw it; ``mutation`` and ``parents``
    (entry ids) its lineage; ``new_lines`` the lines it added, by file
    (``{"torch/_dynamo/guards.py": 12}``); ``picks`` how often it was mutated,
    ``finds`` how many of its mutants added coverage."""

    entry_id: str
    seed: int | None
    program: Program
    choices: str = ""
    mutation: Mutation = Mutation.FRESH
    parents: tuple[str, ...] = ()
    new_lines: dict[str, int] = dataclasses.field(default_factory=dict)
    picks: int = 0
    finds: int = 0

    def __post_init__(self) -> None:
        self.mutation = Mutation(self.mutation)
        self.parents = tuple(self.parents)

    def decoded_choices(self) -> tuple[Any, ...]:
        return decode_choices(self.choices) if self.choices else ()

    def rebuild(self) -> Program:
        """The program from what the entry records: its choices replayed when
        it has them, else its recorded program. Raises ValueError when the
        choices do not replay to it (a generator change since: bump GENERATOR)."""
        if not self.choices:
            return self.program
        program = rebuild(self.decoded_choices(), seed=self.seed, weights=self.program.weights)
        if program is None or program.source != self.program.source:
            raise ValueError(f"Expected pool entry {self.entry_id}'s choices to replay its program but got "
                             f"{'none' if program is None else program.program_id}")
        return dataclasses.replace(program, generator=self.program.generator)

    def to_json(self) -> dict[str, Any]:
        return {"entry_id": self.entry_id, "seed": self.seed, "program": self.program.to_json(),
                "choices": self.choices, "mutation": self.mutation.value, "parents": list(self.parents),
                "new_lines": dict(self.new_lines), "picks": self.picks, "finds": self.finds}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PoolEntry:
        data = dict(data)
        data["program"] = Program.from_json(data["program"])
        return cls(**data)


@dataclasses.dataclass
class Draft:
    """A mutant handed out by ``Pool.next_program``, waiting for its outcome:
    the entry it would become if it adds coverage (no ``new_lines`` yet)."""

    entry: PoolEntry

    def to_json(self) -> dict[str, Any]:
        return self.entry.to_json()

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Draft:
        return cls(PoolEntry.from_json(data))


class Pool:
    """The entries, how mutants and fresh draws have done, and the mutator.
    ``density`` gives the lines covered in a file (the coverage map's), for
    the energy; see the module docstring."""

    def __init__(self, density: Callable[[str], int] | None = None):
        self.entries: dict[str, PoolEntry] = {}
        self.density = density or (lambda path: 1)
        # running means of new lines per program: fresh draws, mutants
        self.fresh_yield = 1.0
        self.mutant_yield = 1.0
        self.mutants = 0
        self.fresh = 0

    def __len__(self) -> int:
        return len(self.entries)

    # -- what came back --------------------------------------------------

    def add(self, entry: PoolEntry) -> bool:
        """Add an entry that added coverage (credits its parents' ``finds``);
        False if an entry with its id is already there."""
        if entry.entry_id in self.entries:
            return False
        self.entries[entry.entry_id] = entry
        for parent in entry.parents:
            if parent in self.entries:
                self.entries[parent].finds += 1
        return True

    def observe(self, *, mutant: bool, new_lines: int) -> None:
        """Update the running mean new lines per program of its arm."""
        if mutant:
            self.mutants += 1
            self.mutant_yield += YIELD_SMOOTHING * (new_lines - self.mutant_yield)
        else:
            self.fresh += 1
            self.fresh_yield += YIELD_SMOOTHING * (new_lines - self.fresh_yield)

    def fresh_share(self) -> float:
        """The probability that the next seed is drawn fresh while the pool has entries."""
        total = self.fresh_yield + self.mutant_yield
        share = self.fresh_yield / total if total > 0 else 0.5
        return min(MAX_FRESH_SHARE, max(MIN_FRESH_SHARE, share))

    def energy(self, entry: PoolEntry) -> float:
        """How likely ``entry`` is to be mutated next (see the module docstring)."""
        rarity = sum(count / math.sqrt(max(1, self.density(path))) for path, count in entry.new_lines.items())
        return max(rarity, 1e-3) * 2 ** min(entry.finds, 4) / (1 + entry.picks)

    # -- what goes out ---------------------------------------------------

    def next_program(self, seed: int) -> tuple[Program, Draft] | None:
        """A mutant of a pool entry for ``seed`` and its draft entry, or None:
        draw the seed fresh (an empty pool, the fresh share's turn, or no mutant
        that differs from its parent). A function of the seed and the pool's state."""
        if not self.entries:
            return None
        rng = random.Random(f"pool-{seed}")
        if rng.random() < self.fresh_share():
            return None
        entries = sorted(self.entries.values(), key=lambda e: e.entry_id)
        parent = rng.choices(entries, weights=[self.energy(e) for e in entries])[0]
        parent.picks += 1
        for _ in range(MUTATION_ATTEMPTS):
            made = self._mutate(parent, entries, rng, seed)
            if made is not None and made[0].source != parent.program.source:
                return made
        return None

    def _mutate(self, parent: PoolEntry, entries: list[PoolEntry], rng: random.Random,
                seed: int) -> tuple[Program, Draft] | None:
        with_choices = [e for e in entries if e.choices]
        if not parent.choices or rng.random() < 0.2:
            return self._ast_splice(parent, entries, rng, seed)
        ops = [Mutation.REPLACE, Mutation.DUPLICATE]
        if len(with_choices) > 1:
            ops += [Mutation.SPLICE, Mutation.CROSSOVER]
        op = rng.choice(ops)
        other = rng.choice([e for e in with_choices if e is not parent]) if op in (Mutation.SPLICE,
                                                                                    Mutation.CROSSOVER) else None
        choices = parent.decoded_choices()
        mutated = _mutate_choices(op, choices, other.decoded_choices() if other else (), parent, other, rng)
        if mutated is None:
            return None
        data = ConjectureData(random=random.Random(rng.getrandbits(64)), provider=PrefixProvider,
                              provider_kw={"prefix": mutated[:MAX_CHOICES]})
        program = _draw(data, parent.program.weights)
        if program is None or data.status < Status.VALID:
            return None
        program = dataclasses.replace(program, generator=POOL, seed=seed, weights=parent.program.weights)
        parents = (parent.entry_id,) + ((other.entry_id,) if other else ())
        entry = PoolEntry(program.program_id, seed, program, encode_choices(data.choices), op, parents)
        return program, Draft(entry)

    def _ast_splice(self, parent: PoolEntry, entries: list[PoolEntry], rng: random.Random,
                    seed: int) -> tuple[Program, Draft] | None:
        from fuzz.generate.mutate import splice

        others = [e for e in entries if e is not parent]
        if not others:
            return None
        donor = rng.choice(others)
        try:
            program = splice(parent.program, donor.program, random.Random(rng.getrandbits(64)))
        except (SyntaxError, ValueError):
            return None
        if program is None:
            return None
        program = dataclasses.replace(program, seed=seed)
        entry = PoolEntry(program.program_id, seed, program, "", Mutation.AST_SPLICE,
                          (parent.entry_id, donor.entry_id))
        return program, Draft(entry)

    # -- persistence -----------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {"entries": [e.to_json() for e in self.entries.values()], "fresh_yield": self.fresh_yield,
                "mutant_yield": self.mutant_yield, "fresh": self.fresh, "mutants": self.mutants}

    def restore(self, data: dict[str, Any]) -> None:
        """Take the state of ``to_json`` (entries added to those already here)."""
        for raw in data.get("entries", []):
            entry = PoolEntry.from_json(raw)
            self.entries.setdefault(entry.entry_id, entry)
        self.fresh_yield = float(data.get("fresh_yield", self.fresh_yield))
        self.mutant_yield = float(data.get("mutant_yield", self.mutant_yield))
        self.fresh = int(data.get("fresh", self.fresh))
        self.mutants = int(data.get("mutants", self.mutants))


def _signatures(choices: Sequence[Any], weights: tuple[tuple[str, float], ...]) -> list[tuple[Any, ...]]:
    """What kind of decision each choice of a replay of ``choices`` was: its
    type and bounds. Our writer draws every decision as one bounded integer
    (``fuzz.generate.writer.Writer.index``) inside a single strategy, so
    Hypothesis' spans hold no structure here; two positions with the same
    signature are the same kind of decision (a statement kind out of the same
    table, a shape out of SHAPES), so cutting and joining at such positions
    keeps the choices after the cut aligned with the draws they were made for."""
    data = ConjectureData.for_choices(tuple(choices), provider=_SeededProvider)
    _draw(data, weights)
    return [(node.type, node.constraints.get("min_value"), node.constraints.get("max_value")) for node in data.nodes]


def _window(signatures: list[tuple[Any, ...]], rng: random.Random) -> tuple[int, int] | None:
    """A span [start, end) whose end has its start's signature (a run of whole
    decisions of one kind and what they led to), at most MAX_WINDOW choices long."""
    starts = list(range(len(signatures)))
    rng.shuffle(starts)
    for start in starts[:16]:
        for end in range(start + 1, min(len(signatures), start + MAX_WINDOW)):
            if signatures[end] == signatures[start]:
                return start, end
    return None


def _mutate_choices(op: Mutation, choices: tuple[Any, ...], donor: tuple[Any, ...], parent: PoolEntry,
                    other: PoolEntry | None, rng: random.Random) -> tuple[Any, ...] | None:
    """The mutated choice sequence (to replay through ``PrefixProvider``), None if ``op`` cannot apply."""
    if not choices:
        return None
    if op is Mutation.REPLACE:
        start = rng.randrange(len(choices))
        end = min(len(choices), start + rng.randint(1, MAX_REPLACE_SPAN))
        # a value that fits no draw makes PrefixProvider draw that choice afresh
        return choices[:start] + (_NO_CHOICE,) * (end - start) + choices[end:]
    signatures = _signatures(choices, parent.program.weights)
    if op is Mutation.DUPLICATE:
        window = _window(signatures, rng)
        if window is None or len(choices) + window[1] - window[0] > MAX_CHOICES:
            return None
        start, end = window
        return choices[:end] + choices[start:end] + choices[end:]
    assert other is not None and donor
    theirs = _signatures(donor, other.program.weights)
    at: dict[tuple[Any, ...], list[int]] = {}
    for index, signature in enumerate(theirs):
        at.setdefault(signature, []).append(index)
    if op is Mutation.CROSSOVER:
        cuts = [i for i, signature in enumerate(signatures) if signature in at]
        if not cuts:
            return None
        cut = rng.choice(cuts)
        return choices[:cut] + donor[rng.choice(at[signatures[cut]]):]
    if op is Mutation.SPLICE:
        window = _window(signatures, rng)
        if window is None or signatures[window[0]] not in at:
            return None
        start, end = window
        d_start = rng.choice(at[signatures[start]])
        d_end = next((j for j in range(d_start + 1, min(len(theirs), d_start + MAX_WINDOW))
                      if theirs[j] == signatures[end]), None)
        if d_end is None:
            return None
        return choices[:start] + donor[d_start:d_end] + choices[end:]
    raise ValueError(f"Expected a choice-level mutation but got op={op!r}")


# A value no draw permits (a choice is bool, int, float, str or bytes):
# PrefixProvider draws a fresh random choice in its place.
_NO_CHOICE = None
