"""What a campaign runs: ``CampaignConfig`` and its ``--share`` parser.

A config is stored in the campaign database (meta ``config``, JSON) so that
``tcfuzz run --resume DIR`` continues the campaign with it. The JSON is
derived from the dataclass's fields (``to_meta``/``from_meta``), so a field
added here is stored and resumed without more code; ``from_meta`` ignores
keys it does not know (a newer tcfuzz wrote them) and gives fields the meta
lacks their defaults (an older tcfuzz).
"""

from __future__ import annotations

import dataclasses
import random
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness import settings as compile_settings
from harness.backends import ladder_rank
from harness.program import Program
from harness.settings import CompileSettings
from fuzz.campaign import interpreters as interpreter_specs
from fuzz.campaign.interpreters import Interpreter
from fuzz.campaign.schedule import Policy
from fuzz.campaign.workers import RSS_GROWTH_LIMIT_MIB, RSS_LIMIT_MIB
from fuzz.errors import UsageError
from fuzz.generate.sources import DEFAULT_MIX, SourceMix

# Fields that are not stored in the meta: where the campaign is (the folder
# the meta is in) and whether this run continues it.
_NOT_STORED = ("out_dir", "resume")
# The cell policy of campaigns `tcfuzz run` starts (fuzz.campaign.schedule).
DEFAULT_SCHEDULE = Policy.YIELD


@dataclasses.dataclass
class CampaignConfig:
    """What to run. ``budget_s`` in seconds (None: until ``programs`` ran);
    ``shard`` is (index, count), 0-based index."""

    interpreters: list[Interpreter]
    backends: list[str]
    out_dir: Path
    corpus_dir: Path
    device: str = "cpu"
    fullgraph: bool = False
    budget_s: float | None = 600.0
    programs: int | None = None
    seed: int = 0
    jobs: int = 1
    # Runs executing at once over all workers (0: no limit); see
    # fuzz.campaign.workers.WorkerPool.
    running: int = 0
    shard: tuple[int, int] = (0, 1)
    minimise_budget_s: float = 300.0
    minimise: bool = True
    # Kinds of new bucket to minimise and file (None: every kind).
    minimise_kinds: tuple[str, ...] | None = None
    name: str = ""
    # Where programs come from (fuzz.generate.sources) and whether feedback
    # steers our generator (fuzz.generate.feedback).
    sources: SourceMix = DEFAULT_MIX
    feedback: bool = True
    # Workers report the compiler lines each run reached (harness.reach); with
    # ``feedback`` the programs that reach new ones seed mutants
    # (fuzz.campaign.guidance). Recorded with feedback off too, so guided and
    # blind campaigns compare on the same measure.
    coverage: bool = True
    # With ``coverage`` and ``feedback``: later seeds run mutants of the pool's
    # programs (False: coverage recorded, every program drawn as usual).
    guided: bool = True
    # Share of programs run on each backend (missing: 1.0); the lowest selected
    # backend on the ladder runs every program. See ``runs_on``.
    share: dict[str, float] = dataclasses.field(default_factory=dict)
    # K >= 2: also the concurrency run with K threads on free-threaded interpreters.
    threads: int = 0
    # Resident MiB after a program above which a worker is replaced.
    worker_rss_mib: float = RSS_LIMIT_MIB
    # MiB a worker may grow past its warm size before it is replaced (0: no limit).
    worker_rss_growth_mib: float = RSS_GROWTH_LIMIT_MIB
    # Continue the campaign already in out_dir (tcfuzz run --resume).
    resume: bool = False
    # The named matrix of (interpreter, torch) cells (fuzz.campaign.cells) and
    # the torch release pinned on every interpreter (None: the matrix's).
    matrix: str = "newest"
    torch: str | None = None
    # Interpreters of the matrix this campaign cannot run, name -> why
    # (not provisioned here, no wheel of its torch, torch.compile refuses it).
    unavailable: dict[str, str] = dataclasses.field(default_factory=dict)
    # Draw each program's compile settings from its seed (harness.settings.draw:
    # mostly torch.compile's defaults); False: the defaults for every program.
    vary_compile: bool = True
    # How each program's cells are chosen (fuzz.campaign.schedule.Policy:
    # "full", "share", "yield"). The field's default is the product, what a
    # campaign stored before the scheduler ran; `tcfuzz run` starts new
    # campaigns with "yield" (DEFAULT_SCHEDULE). A non-empty ``share`` makes it "share".
    schedule: str = "full"
    # Interpreters each slower backend runs a program on under "yield".
    picks: int = 1
    # Seconds of filing at least that a campaign without ``budget_s`` gets
    # (None: fuzz.campaign.loop.FILING_FLOOR_S); it gets at most the larger
    # of this and the time its programs took.
    filing_floor_s: float | None = None

    def policy(self) -> Policy:
        """The cell policy: ``share`` when shares are given, else ``schedule``.
        Raises UsageError for an unknown schedule name."""
        if self.share:
            return Policy.SHARE
        try:
            return Policy(self.schedule)
        except ValueError:
            raise UsageError(f"Expected --schedule {', '.join(p.value for p in Policy)} "
                             f"but got {self.schedule!r}") from None

    def seeds(self) -> Iterator[int]:
        """Seeds of this shard, in order: seed + index, index = shard, shard + count, ..."""
        k = 0
        while True:
            yield self.seed_of(k)
            k += 1

    def seed_of(self, k: int) -> int:
        """The seed of this shard's k-th program (0-based)."""
        index, count = self.shard
        return self.seed + index + k * count

    def shard_programs(self) -> int | None:
        """Programs this shard runs: its part of seeds seed .. seed + programs - 1
        (so the shards of ``--programs N`` together run exactly the N seeds
        one unsharded run would); None without ``programs``."""
        if self.programs is None:
            return None
        index, count = self.shard
        return max(0, -(-(self.programs - index) // count))

    def runs_on(self, seed: int, backend: str) -> bool:
        """Whether the program of ``seed`` runs on ``backend``: always for the
        lowest selected backend on the ladder (eager by default), else with
        probability ``share[backend]``, decided by the seed alone, so every
        shard and a resumed run agree."""
        if backend == min(self.backends, key=lambda b: (ladder_rank(b), self.backends.index(b))):
            return True
        share = self.share.get(backend, 1.0)
        return share >= 1.0 or random.Random(f"share-{seed}-{backend}").random() < share

    def compile_settings(self, program: Program, backend: str) -> CompileSettings:
        """How ``program`` is compiled on ``backend``: drawn from its seed and
        features (harness.settings.draw) unless ``vary_compile`` is off."""
        if not self.vary_compile:
            return CompileSettings()
        return compile_settings.draw(program.seed, backend, program.features)

    def to_meta(self) -> dict[str, Any]:
        """What ``from_meta`` needs to resume this campaign (JSON): every field
        but ``out_dir`` and ``resume``; paths as strings, tuples as lists, the
        source mix as a dict, and the interpreters as their names
        (``interpreters``) plus each one's python (``pythons``)."""
        meta: dict[str, Any] = {}
        for field in dataclasses.fields(self):
            if field.name in _NOT_STORED:
                continue
            value = getattr(self, field.name)
            if field.name == "interpreters":
                meta["interpreters"] = [i.name for i in value]
                meta["pythons"] = {i.name: str(i.python) for i in value}
            else:
                meta[field.name] = _to_json(value)
        return meta

    @classmethod
    def from_meta(cls, meta: dict[str, Any], out_dir: Path) -> CampaignConfig:
        """The config a campaign in ``out_dir`` was started with (``to_meta``):
        keys it does not know are ignored, fields it lacks keep their defaults.

        Raises UsageError if the meta predates resumable campaigns (no
        ``budget_s``), and HarnessError (interpreters.resolve) if an
        interpreter's env is gone.
        """
        if "budget_s" not in meta:
            raise UsageError(f"{out_dir} was made by a tcfuzz without --resume support: start a new campaign")
        hints = typing.get_type_hints(cls)
        values: dict[str, Any] = {"out_dir": out_dir}
        for field in dataclasses.fields(cls):
            if field.name in _NOT_STORED or field.name not in meta:
                continue
            if field.name == "interpreters":
                # each interpreter's own env: a pinned cell's is not its tox env
                pythons = meta.get("pythons", {})
                values["interpreters"] = [
                    interpreter_specs.resolve(pythons[name] if name in pythons and Path(pythons[name]).exists()
                                              or not interpreter_specs.NAME.match(name) else name)
                    for name in meta["interpreters"]]
            else:
                values[field.name] = _from_json(hints[field.name], meta[field.name])
        missing = [f.name for f in dataclasses.fields(cls)
                   if f.name not in values and f.default is dataclasses.MISSING
                   and f.default_factory is dataclasses.MISSING]
        if missing:
            raise UsageError(f"{out_dir}: the campaign's stored config lacks {', '.join(missing)}: "
                             "start a new campaign")
        return cls(**values)


def _to_json(value: Any) -> Any:
    """A field's value as JSON: a Path as its string, a tuple as a list, a
    dataclass as its dict."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        return [_to_json(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def _from_json(hint: Any, value: Any) -> Any:
    """``value`` (from ``_to_json``) as the field type ``hint``: Path,
    tuple, a dataclass (its known keys only), or as it is."""
    if value is None:
        return None
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    if hint is Path:
        return Path(value)
    if typing.get_origin(hint) is tuple:
        return tuple(value)
    if dataclasses.is_dataclass(hint):
        known = {f.name for f in dataclasses.fields(hint)}
        return hint(**{k: v for k, v in value.items() if k in known})
    return value


def parse_share(text: str | None) -> dict[str, float]:
    """``"aot_eager=0.5,inductor=0.25"`` -> {backend: share}; raises UsageError
    for a malformed part or a share outside [0, 1]."""
    shares: dict[str, float] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        name, _, value = part.partition("=")
        try:
            share = float(value)
        except ValueError:
            share = -1.0
        if not name.strip() or not 0.0 <= share <= 1.0:
            raise UsageError(f"Expected --share like aot_eager=0.5,inductor=0.25 (shares 0..1) but got {part!r}")
        shares[name.strip()] = share
    return shares
