"""Where a campaign's programs come from: our generator, corpus mutation, hypothesmith, operator graphs.

``draw_program(seed, source)`` is deterministic in its arguments (and, for
``"mutation"``, in the donor list). ``"graphs"`` is operator-heavy programs:
thin Python around one to three typed operator graphs of 10 to 40 calls in
all (``fuzz.generate.graph_programs``), for runs that aim at AOTAutograd and
Inductor. ``SourceMix`` picks the source of each
program from its seed, so a campaign's program list is a function of (first
seed, mix, feedback weights, donors).

hypothesmith programs are valid syntax but not meant to be run (its README
says not to execute them); they are only ever executed inside the sandboxed
worker processes, never on the host. They are wrapped so that ``f`` runs the
hypothesmith statements as its own body (so Dynamo traces their bytecode),
after binding a few names they commonly read; when the statements cannot be
a function body (``from m import *``, ``nonlocal`` at the top, ...), ``f``
compiles and runs them as module code in a fresh namespace instead.
"""

from __future__ import annotations

import dataclasses
import random
import textwrap
from collections.abc import Sequence

from hypothesis.control import BuildContext
from hypothesis.errors import HypothesisException, StopTest, UnsatisfiedAssumption
from hypothesis.internal.conjecture.data import ConjectureData

from fuzz.generate.program import _SeededProvider, generate
from harness.program import Program

__all__ = ["DEFAULT_MIX", "HYPOTHESMITH", "SOURCES", "SourceMix", "draw_program", "hypothesmith_program"]

# Program.generator of wrapped hypothesmith programs.
HYPOTHESMITH = "hypothesmith"
SOURCES: tuple[str, ...] = ("ours", "mutation", "hypothesmith", "graphs")
# Draws tried per hypothesmith program: about one in three hits a grammar
# dead end (an unsatisfied assume, a depth limit) and is retried.
HYPOTHESMITH_ATTEMPTS = 20
# Largest hypothesmith module kept, in characters (the rest is retried).
MAX_HYPOTHESMITH_CHARS = 4000
# Bytecode size above which a draw counts as real code, in bytes (RESUME,
# LOAD_CONST None and RETURN_VALUE take about 12).
MIN_CODE_BYTES = 16

_WRAPPER = '''import torch


def f(t0, t1, n):
    x, y, z, a, b, c = t0, t1, n, [t0, t1], {{"k": t0}}, (n, t1)
{body}
    return t0 * 2 + t1


def inputs():
    g = torch.Generator().manual_seed({rng_seed})
    return (torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g), 2)
'''

_EXEC_WRAPPER = '''import torch

SOURCE = {source!r}


def f(t0, t1, n):
    namespace = {{"torch": torch, "x": t0, "y": t1, "z": n}}
    exec(compile(SOURCE, "<hypothesmith>", "exec"), namespace)
    return t0 * 2 + t1


def inputs():
    g = torch.Generator().manual_seed({rng_seed})
    return (torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g), 2)
'''


def _hypothesmith_source(seed: int) -> str:
    import hypothesmith

    strategy = hypothesmith.from_grammar()
    rng = random.Random(seed)
    best, best_size = "pass\n", -1
    for _ in range(HYPOTHESMITH_ATTEMPTS):
        data = ConjectureData(random=random.Random(rng.getrandbits(64)), provider=_SeededProvider)
        try:
            with BuildContext(data, is_final=True, wrapped_test=None):
                source = data.draw(strategy)
            size = len(compile(source, "<hypothesmith>", "exec", dont_inherit=True).co_code)
        except (StopTest, UnsatisfiedAssumption, HypothesisException, SyntaxError, ValueError):
            continue
        # most raw draws are blank lines and comments: keep the one with the
        # most bytecode, and stop at the first with real code
        if len(source) <= MAX_HYPOTHESMITH_CHARS and size > best_size:
            best, best_size = source, size
        if best_size > MIN_CODE_BYTES:
            break
    return best


def hypothesmith_program(seed: int) -> Program:
    """A hypothesmith module (``hypothesmith.from_grammar()``) wrapped as a program.

    ``f(t0, t1, n)`` (t0, t1: float32 (3, 4)) runs the module's statements as
    its body and returns ``t0 * 2 + t1``; see the module docstring. Same seed,
    same program.
    """
    source = _hypothesmith_source(seed)
    rng_seed = random.Random(seed).randrange(2**31)
    body = textwrap.indent(source, "    ")
    wrapped = _WRAPPER.format(body=body.rstrip("\n"), rng_seed=rng_seed)
    try:
        compile(wrapped, "<wrapped>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        wrapped = _EXEC_WRAPPER.format(source=source, rng_seed=rng_seed)
    return Program(source=wrapped, generator=HYPOTHESMITH, seed=seed, features=("hypothesmith",))


def draw_program(
    seed: int,
    source: str = "ours",
    *,
    weights: dict[str, float] | None = None,
    donors: Sequence[Program] = (),
) -> Program:
    """The program for ``seed`` from ``source`` ("ours", "mutation", "hypothesmith", "graphs").

    ``weights`` steers our generator (see ``fuzz.generate.feedback``); ``donors`` are
    the programs mutation splices from (with none, "mutation" splices between
    two generated programs). Raises ValueError for an unknown source.
    """
    if source == "ours":
        return generate(seed, weights=weights)
    if source == "hypothesmith":
        return hypothesmith_program(seed)
    if source == "graphs":
        from fuzz.generate.graph_programs import graph_program

        return graph_program(seed)
    if source == "mutation":
        from fuzz.generate.mutate import mutate

        return mutate(seed, donors, weights=weights)
    raise ValueError(f"Expected a source in {SOURCES} but got source={source!r}")


@dataclasses.dataclass(frozen=True)
class SourceMix:
    """Shares of each source in a campaign's programs (they need not sum to 1).

    ``pick(seed)`` is a pure function of the seed. Parse one from the command
    line with ``SourceMix.parse("graphs=0.1,ours=0.7,mutation=0.1,hypothesmith=0.1")``;
    ``--sources graphs=1`` makes every program operator-heavy. The field
    defaults (no ``graphs``) are the mix of campaigns started before the
    ``graphs`` source was in the default, so that their resume (``from_meta``
    of a meta without it) draws the programs they began with; a new
    campaign's default is ``DEFAULT_MIX``.
    """

    ours: float = 0.8
    mutation: float = 0.1
    hypothesmith: float = 0.1
    graphs: float = 0.0

    def pick(self, seed: int) -> str:
        """The source of ``seed``'s program. ``graphs`` takes the bottom of the
        seed's point, so that adding it to a mix moves only the seeds under
        its share off ``ours`` and leaves every other seed's source alone."""
        total = self.ours + self.mutation + self.hypothesmith + self.graphs
        point = random.Random(f"source-{seed}").random() * total
        if point < self.graphs:
            return "graphs"
        point -= self.graphs
        if point < self.ours:
            return "ours"
        if point < self.ours + self.mutation or not self.hypothesmith:
            return "mutation" if self.mutation else "ours"
        return "hypothesmith"

    @classmethod
    def parse(cls, text: str) -> SourceMix:
        """Raises ValueError naming the bad part."""
        shares = {}
        for part in text.split(","):
            name, _, value = part.partition("=")
            name = name.strip()
            if name not in SOURCES:
                raise ValueError(f"Expected sources from {SOURCES} but got {name!r} in {text!r}")
            try:
                shares[name] = float(value)
            except ValueError:
                raise ValueError(f"Expected a share like ours=0.8 but got {part!r}") from None
            if shares[name] < 0:
                raise ValueError(f"Expected a share >= 0 but got {part!r}")
        mix = cls(**{name: shares.get(name, 0.0) for name in SOURCES})
        if mix.ours + mix.mutation + mix.hypothesmith + mix.graphs <= 0:
            raise ValueError(f"Expected some source with a share > 0 but got {text!r}")
        return mix


# A new campaign's mix: a tenth of programs operator-heavy (``graphs``: wide
# and permuted inputs, 10 to 40 calls, for AOTAutograd and Inductor), the
# rest as before the ``graphs`` source existed, in the same proportions.
DEFAULT_MIX = SourceMix(ours=0.7, mutation=0.1, hypothesmith=0.1, graphs=0.1)
