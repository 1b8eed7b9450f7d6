"""The minimiser's ``settings/drop`` pass: compile settings are part of what
is minimised.

A finding compiled with non-default settings (harness.settings
``CompileSettings``: ``dynamic``, marked dims, ``mode``, Inductor and Dynamo
config keys) is filed with only those it needs. The settings are cut into
items (``setting_items``): ``dynamic``, each marked (input, dim) pair,
``mode``, each config key, and each entry of a nested option dict such as
``pre_grad_fusion_options`` (its key goes with its last entry: the default of
such a dict in torch's config is ``{}``). Delta debugging over the items keeps
those without which the signature no longer holds: every item dropped (the
defaults) first, then chunks of n/2, n/4, ... 1 items. A case whose bug shows
with ``torch.compile``'s defaults ends with none.

The pass runs right after the first check, before any source pass: every
setting it drops (``mode`` max-autotune, ``freezing``, a pre-grad pass) makes
every later check cheaper, and the source passes then keep the bug under the
settings the case is filed with.

A check takes part when it has a ``settings`` attribute (a CompileSettings;
fuzz.reduce.pipeline.SignatureCheck has one) that its calls compile with:
the pass assigns it, through the oracle's ``check_settings``. A fast
(two-phase) check's answer is confirmed on every interpreter at the end
(``confirm``); if that fails the case keeps the settings it came with.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
from collections.abc import Sequence
from typing import Any

from harness.settings import CompileSettings

log = logging.getLogger(__name__)

# fuzz.reduce.pipeline._Oracle (that module imports this one)
_Oracle = Any


class SettingKind(enum.Enum):
    """What part of CompileSettings an item is."""

    DYNAMIC = "dynamic"
    MARK = "mark_dynamic"
    MODE = "mode"
    INDUCTOR = "inductor"
    DYNAMO = "dynamo"

    def describe(self) -> str:
        return {SettingKind.DYNAMIC: "torch.compile's dynamic=", SettingKind.MARK: "a dim marked dynamic",
                SettingKind.MODE: "torch.compile's mode=", SettingKind.INDUCTOR: "an Inductor config key",
                SettingKind.DYNAMO: "a Dynamo config key"}[self]


@dataclasses.dataclass(frozen=True)
class SettingItem:
    """One droppable part of a CompileSettings: ``kind``; ``key``: the
    config key or the marked (input index, dim) pair (None for ``dynamic``
    and ``mode``); ``entry``: the entry of a nested option dict
    (``pre_grad_fusion_options``' ``normalization_pass``), else None."""

    kind: SettingKind
    key: Any = None
    entry: str | None = None

    def describe(self) -> str:
        where = f"{self.key}" + (f"[{self.entry!r}]" if self.entry is not None else "")
        return f"{self.kind.value} {where}" if self.key is not None else self.kind.value


def setting_items(settings: CompileSettings) -> list[SettingItem]:
    """The items of ``settings`` in the order the pass tries them: ``mode``,
    ``dynamic``, the marks, the Inductor keys (a non-empty dict value: one
    item per entry), the Dynamo keys. [] for the defaults."""
    items: list[SettingItem] = []
    if settings.mode is not None:
        items.append(SettingItem(SettingKind.MODE))
    if settings.dynamic is not None:
        items.append(SettingItem(SettingKind.DYNAMIC))
    items += [SettingItem(SettingKind.MARK, pair) for pair in settings.mark_dynamic]
    for kind, pairs in ((SettingKind.INDUCTOR, settings.inductor), (SettingKind.DYNAMO, settings.dynamo)):
        for key, value in pairs:
            if isinstance(value, dict) and value:
                items += [SettingItem(kind, key, str(entry)) for entry in value]
            else:
                items.append(SettingItem(kind, key))
    return items


def settings_with(settings: CompileSettings, kept: Sequence[SettingItem]) -> CompileSettings:
    """``settings`` with only the items ``kept`` (of ``setting_items(settings)``);
    every other part at torch.compile's default. A nested dict keeps its kept
    entries in their order; one with none kept loses its key."""
    keep = set(kept)

    def pairs(kind: SettingKind, source: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...]:
        out = []
        for key, value in source:
            if isinstance(value, dict) and value:
                entries = {k: v for k, v in value.items() if SettingItem(kind, key, str(k)) in keep}
                if entries:
                    out.append((key, entries))
            elif SettingItem(kind, key) in keep:
                out.append((key, value))
        return tuple(out)

    return CompileSettings(
        dynamic=settings.dynamic if SettingItem(SettingKind.DYNAMIC) in keep else None,
        mark_dynamic=tuple(p for p in settings.mark_dynamic if SettingItem(SettingKind.MARK, p) in keep),
        mode=settings.mode if SettingItem(SettingKind.MODE) in keep else None,
        inductor=pairs(SettingKind.INDUCTOR, settings.inductor),
        dynamo=pairs(SettingKind.DYNAMO, settings.dynamo))


def reduce_settings(oracle: _Oracle) -> None:
    """Drop the compile settings of ``oracle.check`` the signature does not
    need (delta debugging over ``setting_items``, the best source fixed):
    all of them first, then chunks of n/2, ... 1 items, a chunk size
    repeated while one of its chunks goes. Leaves ``oracle.check.settings``
    at the smallest settings that hold (confirmed in full when the check is
    fast, else back to the settings it started with). Nothing for a check
    without settings or with the defaults. Raises the oracle's out-of-time
    error past its deadline (with the check's settings at the last ones that
    held)."""
    start = getattr(oracle.check, "settings", None)
    if not isinstance(start, CompileSettings) or start.is_default:
        return
    oracle.current = "settings/drop"
    items = setting_items(start)
    try:
        if oracle.check_settings(settings_with(start, [])):
            items = []
        chunk = max(1, len(items) // 2)
        while items and chunk >= 1:
            for begin in range(0, len(items), chunk):
                candidate = items[:begin] + items[begin + chunk:]
                if oracle.check_settings(settings_with(start, candidate)):
                    items = candidate
                    chunk = min(chunk, max(1, len(items) // 2))
                    break
            else:
                chunk //= 2
    finally:  # out of time too: the last settings that held, confirmed
        kept = oracle.check.settings = settings_with(start, items)
        if kept != start and not oracle.confirm_settings():
            log.warning("the full check rejected the reduced compile settings (%s): the case keeps %s",
                        kept.describe(), start.describe())
            oracle.check.settings = start
        elif kept != start:
            log.info("compile settings %s -> %s", start.describe(), kept.describe())
