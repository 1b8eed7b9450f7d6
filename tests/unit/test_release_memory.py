"""What the worker clears after every program (harness.worker.cache_clearers)."""

from __future__ import annotations

import functools
import json
import linecache
import subprocess
import sys
import types

import pytest

from harness import worker
from tests.conftest import ROOT, env_python, require_env


def test_present_caches_are_cleared_and_missing_ones_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    counters = {"graph_break": {"msg": 1}}
    utils = types.SimpleNamespace(counters=counters)  # no clear_compilation_metrics: skipped

    class ShapeEnv:
        @functools.lru_cache(None)
        def simplify(self, expr):
            return expr

    env = ShapeEnv()
    env.simplify(1)
    monkeypatch.setattr(worker, "PER_PROGRAM_CACHES", (
        ("torch._dynamo.utils", "", "clear_compilation_metrics"),
        ("torch._dynamo.utils", "counters", "clear"),
        ("torch.not_imported", "x.y", "clear"),
    ))
    monkeypatch.setattr(worker, "PER_PROGRAM_METHOD_CACHES", (("fake.symbolic_shapes", "ShapeEnv"),))
    monkeypatch.setitem(sys.modules, "torch._dynamo.utils", utils)
    monkeypatch.setitem(sys.modules, "fake.symbolic_shapes", types.SimpleNamespace(ShapeEnv=ShapeEnv))
    assert len(worker.cache_clearers()) == 2
    worker.release_memory(1)
    assert counters == {}
    assert ShapeEnv.simplify.cache_info().currsize == 0


def test_caches_later_programs_hit_are_cleared_only_every_gc_every_programs(monkeypatch: pytest.MonkeyPatch,
                                                                         tmp_path) -> None:
    @functools.lru_cache(None)
    def mro_lookup(x):
        return x

    monkeypatch.setattr(worker, "PER_PROGRAM_CACHES", ())
    monkeypatch.setattr(worker, "PER_PROGRAM_METHOD_CACHES", ())
    monkeypatch.setattr(worker, "PERIODIC_CACHES", (("fake_inspect", "", "cache_clear"),))
    monkeypatch.setitem(sys.modules, "fake_inspect", types.SimpleNamespace(cache_clear=mro_lookup.cache_clear))
    mro_lookup(1)
    program_file, torch_file = str(tmp_path / "prog_1.py"), worker.__file__
    for name in (program_file, torch_file, "<eval_with_key>.3"):
        linecache.cache[name] = (1, None, ["x = 1\n"], name)
    worker.release_memory(worker.GC_EVERY_PROGRAMS - 1, str(tmp_path))
    assert mro_lookup.cache_info().currsize == 1
    # the program's own lines and generated code go after every program; torch's files stay
    assert program_file not in linecache.cache and "<eval_with_key>.3" not in linecache.cache
    assert torch_file in linecache.cache
    worker.release_memory(worker.GC_EVERY_PROGRAMS, str(tmp_path))
    assert mro_lookup.cache_info().currsize == 0
    assert torch_file not in linecache.cache


@pytest.mark.slow
def test_every_cache_named_exists_in_the_pinned_torch() -> None:
    """A torch upgrade that renames one of them would otherwise skip it silently."""
    require_env("3.12")
    script = (
        "import importlib, json\n"
        "from harness import worker\n"
        "for name in {m for m, *_ in worker.PER_PROGRAM_CACHES + worker.PERIODIC_CACHES\n"
        "             + worker.PER_PROGRAM_METHOD_CACHES}:\n"
        "    importlib.import_module(name)\n"
        "missing = [e for e in worker.PER_PROGRAM_CACHES + worker.PERIODIC_CACHES\n"
        "           if not callable(worker.resolve_cache(*e))]\n"
        "print(json.dumps([missing, len(worker.cache_clearers()) - len(worker.PER_PROGRAM_CACHES)]))\n"
    )
    done = subprocess.run([str(env_python("3.12")), "-c", script], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=True)
    missing, method_caches = json.loads(done.stdout.strip().splitlines()[-1])
    # the env's 3.12.1 has getattr_static's strong MRO cache too (3.12.0-3.12.2)
    assert missing == []
    assert method_caches >= 5  # ShapeEnv's lru_cache'd methods (15 in torch 2.12)
