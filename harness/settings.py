"""``CompileSettings``: how ``torch.compile`` is called for one program, an axis of the fuzzing.

Stdlib only (torch is passed in or imported where a setting is applied), so
the host draws settings and reads them from outcomes and corpus cases, and
the worker applies them. Four things vary:

- ``dynamic``: ``torch.compile(dynamic=...)``, True, False or None (automatic:
  static first, dynamic on the recompile a new shape causes);
- ``mark_dynamic``: (input index, dim) pairs marked dynamic on each call's
  arguments before the compiled function sees them, with
  ``torch._dynamo.maybe_mark_dynamic`` (not ``mark_dynamic``, which raises a
  ConstraintViolationError when the program specialises the dim: the
  program's doing, not a compiler bug); a pair whose input is not a tensor or
  lacks the dim is skipped;
- ``mode``: None or "max-autotune-no-cudagraphs" (Inductor only);
- ``inductor`` and ``dynamo``: config keys patched while the compiled calls
  run (``torch._inductor.config.patch``, ``torch._dynamo.config.patch``).

``draw(seed, backend, features)`` chooses them from the program's seed with a
``random.Random`` of its own (never the generator's draws, so the program's
text does not depend on them): mostly the defaults. The Inductor-only parts
(``mode``, ``inductor``) are drawn only for the ``inductor`` backend (the
others ignore Inductor's config); the rest is drawn alike for every backend,
so one program compiles with the same ``dynamic``, ``mark_dynamic`` and
``dynamo`` keys on each rung of the backend ladder. A ``dynamo`` key is drawn
only for programs with its feature (``DYNAMO_KEYS``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any

# The one mode drawn: max-autotune without CUDA graphs (CUDA graphs need a
# GPU and change when memory is reused, not what is computed).
MAX_AUTOTUNE = "max-autotune-no-cudagraphs"
MODES = (None, MAX_AUTOTUNE)
# Shares of the programs, in percent, that get each non-default setting.
DYNAMIC_TRUE_PERCENT = 10
DYNAMIC_FALSE_PERCENT = 10
MARK_DYNAMIC_PERCENT = 10
MODE_PERCENT = 5  # inductor only: max-autotune benchmarks GEMM templates, slow on CPU
# Share (percent) of the programs drawn ``freezing`` and not max-autotune
# that get max-autotune too: Inductor's C++ GEMM templates (and their
# benchmarking) apply only to constant weights, which freezing makes; the two
# together are the CPU inference setting PyTorch's CPU tutorials recommend.
FREEZING_AUTOTUNE_PERCENT = 50
# Inductor config keys that change the code it generates and keep what it
# computes, each with its value there and the share of inductor programs
# (percent) that get it (torch/_inductor/config.py; every key exists in
# torch 2.12.0 and 2.15.0, tests/harness/test_settings.py). ``freezing`` only acts on
# graphs compiled with grad disabled (compile_fx: ``config.freezing and not
# torch.is_grad_enabled()``), so a program drawn it is called under no_grad
# (``CompileSettings.calling``); it inlines parameters as constants, which is
# only sound while nobody updates them: never drawn for programs with the
# features of ``FREEZING_EXCLUDED``.
PRE_GRAD_FUSION_OPTIONS: dict[str, dict[str, Any]] = {name: {} for name in (
    "normalization_pass", "merge_splits_pass", "split_cat_pass", "unbind_stack_pass", "merge_getitem_cat_pass",
    "mutate_cat_pass", "split_cat_to_slices_pass", "unbind_cat_to_view_pass", "split_stack_to_cats_pass",
    "unbind_stack_to_slices_pass", "move_reshape_out_of_split_stack_pass", "remove_split_with_size_one_pass",
    "merge_stack_tahn_unbind_pass", "einsum_to_pointwise_pass", "batch_relu", "batch_sigmoid", "batch_tanh",
    "batch_clamp", "batch_layernorm", "batch_nan_to_num", "batch_detach", "batch_dropout",
)}
# A tuple of values is a choice, drawn from the same rng. Appended keys keep
# every earlier key's draw for a seed.
INDUCTOR_KEYS: tuple[tuple[str, Any, int], ...] = (
    ("cpp_wrapper", True, 5),  # the C++ wrapper instead of the Python one
    ("aggressive_fusion", True, 5),  # fuse nodes without shared reads
    ("freezing", True, 5),
    ("memory_planning", True, 1),  # one pooled allocation planned for the graph's buffers
    ("epilogue_fusion", False, 1),  # pointwise epilogues in kernels of their own
    ("loop_ordering_after_fusion", False, 1),
    ("max_fusion_size", 4, 1),  # small fused groups: more, smaller kernels
    ("split_reductions", False, 1),  # one pass over a large reduction instead of two
    ("inplace_buffers", False, 1),  # no kernel writes over its input's buffer
    ("cpp.dynamic_threads", True, 1),  # the thread count read at run time
    ("cpp.simdlen", (1, 256), 2),  # scalar C++ (no vector ISA), or AVX2 where the host picks AVX-512
    ("emulate_precision_casts", True, 1),  # half-precision rounding where eager rounds
    ("efficient_conv_bn_eval_fx_passes", True, 1),  # conv + eval batch_norm folded at run time
    ("permute_fusion", True, 1),  # permute + matmul patterns rewritten
    # the opt-in pre-grad passes: split/cat/stack/unbind rewrites and batch
    # fusions of pointwise ops (fx_passes/split_cat.py, group_batch_fusion.py;
    # the names of torch 2.12.0 and 2.15.0 that act on CPU graphs)
    ("pre_grad_fusion_options", PRE_GRAD_FUSION_OPTIONS, 2),
    # Code generation the generator's small tensors never reach with the
    # defaults: a reduction of at most 8 elements is unrolled into pointwise
    # code, and a kernel of fewer than 512 elements per thread is not
    # parallelised (cpp.min_chunk_size), so both are lowered here for a share.
    ("unroll_reductions_threshold", 1, 2),  # every reduction a reduction loop
    ("cpp.min_chunk_size", 1, 2),  # OpenMP-parallel kernels for small tensors
    ("cpp.enable_loop_tail_vec", False, 1),  # scalar loop tails instead of masked vector ones
    ("cpp.enable_tiling_heuristics", False, 1),  # 2-D tiling (transposes) always tried
    ("cpp.fallback_scatter_reduce_sum", False, 1),  # scatter_add generated with atomic adds
    ("pattern_matcher", False, 1),  # no pattern rewrites: plain lowerings
    ("force_layout_optimization", True, 1),  # channels-last convolutions
    ("max_pointwise_cat_inputs", 1, 1),  # cat by copy kernels, not one pointwise kernel
    ("allow_buffer_reuse", False, 1),  # every buffer freshly allocated
)
# Dynamo config keys, each with the share (percent) of the programs with its
# feature that get it, and its value: ``capture_scalar_outputs`` traces
# ``.item()``/``.tolist()`` into the graph as unbacked symbols instead of
# breaking it (drawn for programs that read scalars back, feature "tensor-item").
DYNAMO_KEYS: tuple[tuple[str, Any, int, str], ...] = (
    ("capture_scalar_outputs", True, 50, "tensor-item"),
)
# (a module-level ``nn.Module`` whose forward reads its parameter, feature
# ``tensor-module``, is what freezing is for: its calls run under no_grad,
# ``CompileSettings.calling``; ``nn-module`` builds one in ``f`` and may add
# to its buffer)
FREEZING_EXCLUDED = frozenset({"nn-module", "tensor-backward", "requires-grad"})
# Most (input index, dim) pairs marked, and the range of each.
MAX_MARKS = 2
MARK_INPUTS = 3
MARK_DIMS = 2
# Backends that read Inductor's config and modes.
INDUCTOR_BACKENDS = frozenset({"inductor"})


@dataclasses.dataclass(frozen=True)
class CompileSettings:
    """How one program is compiled (see the module docstring).

    ``mark_dynamic``: ((input index, dim), ...); ``inductor``/``dynamo``:
    ((config key, value), ...), applied with ``config.patch``. The default
    instance is ``torch.compile``'s own defaults.
    """

    dynamic: bool | None = None
    mark_dynamic: tuple[tuple[int, int], ...] = ()
    mode: str | None = None
    inductor: tuple[tuple[str, Any], ...] = ()
    dynamo: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        """Accept lists (JSON, TOML) for the tuples. Raises ValueError for a
        mode not in MODES or a malformed pair."""
        if self.mode not in MODES:
            raise ValueError(f"Expected mode in {MODES} but got mode={self.mode!r}")
        if self.dynamic not in (None, True, False):
            raise ValueError(f"Expected dynamic True, False or None but got dynamic={self.dynamic!r}")
        try:
            object.__setattr__(self, "mark_dynamic", tuple((int(i), int(d)) for i, d in self.mark_dynamic))
            for name in ("inductor", "dynamo"):
                pairs = getattr(self, name)
                items = pairs.items() if isinstance(pairs, dict) else pairs
                object.__setattr__(self, name, tuple((str(k), v) for k, v in items))
        except (TypeError, ValueError):
            raise ValueError(f"Expected (index, dim) and (key, value) pairs but got {self!r}") from None

    @property
    def is_default(self) -> bool:
        return self == CompileSettings()

    def to_json(self) -> dict[str, Any]:
        """The non-default fields as JSON ({} for the defaults): the
        ``[tool.tcfuzz]`` table's ``compile`` entry and the worker request's."""
        out: dict[str, Any] = {}
        if self.dynamic is not None:
            out["dynamic"] = self.dynamic
        if self.mark_dynamic:
            out["mark_dynamic"] = [list(pair) for pair in self.mark_dynamic]
        if self.mode is not None:
            out["mode"] = self.mode
        for name in ("inductor", "dynamo"):
            if getattr(self, name):
                out[name] = dict(getattr(self, name))
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> CompileSettings:
        """The settings of ``to_json``'s dict (None or {}: the defaults).
        Raises ValueError for unknown keys or values."""
        data = dict(data or {})
        known = {f.name for f in dataclasses.fields(cls)}
        if set(data) - known:
            raise ValueError(f"Expected compile settings with keys from {sorted(known)} but got {sorted(data)}")
        return cls(**data)

    def describe(self) -> str:
        """One line: "default", or the settings that differ from it."""
        if self.is_default:
            return "default"
        return ", ".join(f"{k}={v}" for k, v in self.to_json().items())

    # ------------------------------------------------------------ applying

    def mark(self, args: Sequence[Any]) -> None:
        """Mark ``mark_dynamic``'s dims of the tensors in ``args`` dynamic
        (``torch._dynamo.maybe_mark_dynamic``); pairs whose input is not a
        tensor or has no such dim are skipped."""
        if not self.mark_dynamic:
            return
        import torch
        import torch._dynamo

        for index, dim in self.mark_dynamic:
            if index < len(args) and isinstance(args[index], torch.Tensor) and dim < args[index].dim():
                torch._dynamo.maybe_mark_dynamic(args[index], dim)

    def compile(self, fn: Callable[..., Any], *, backend: Any, fullgraph: bool) -> Callable[..., Any]:
        """``torch.compile(fn, backend=backend, fullgraph=fullgraph, dynamic=...)``,
        called through ``mark`` where dims are marked. ``mode`` and the
        config keys are not applied here (``backend`` may be a callable,
        which takes no mode): run the calls under ``patched``."""
        import torch

        compiled = torch.compile(fn, backend=backend, fullgraph=fullgraph, dynamic=self.dynamic)
        if not self.mark_dynamic:
            return compiled

        def marked(*args: Any) -> Any:
            self.mark(args)
            return compiled(*args)

        return marked

    def config_patches(self) -> dict[str, Any]:
        """Inductor config keys to patch: ``mode``'s options
        (``torch._inductor.list_mode_options``, as ``torch.compile`` applies
        them) and ``inductor``'s keys."""
        patches: dict[str, Any] = {}
        if self.mode is not None:
            import torch._inductor

            patches.update(torch._inductor.list_mode_options(self.mode, self.dynamic))
        patches.update(dict(self.inductor))
        return patches

    @contextlib.contextmanager
    def patched(self) -> Iterator[None]:
        """Inductor's and Dynamo's config patched (``config_patches``,
        ``dynamo``) for the block; nothing for the defaults."""
        with contextlib.ExitStack() as stack:
            patches = self.config_patches()
            if patches:
                import torch._inductor.config as inductor_config

                stack.enter_context(inductor_config.patch(patches))
            if self.dynamo:
                import torch._dynamo.config as dynamo_config

                stack.enter_context(dynamo_config.patch(dict(self.dynamo)))
            yield

    @property
    def no_grad_calls(self) -> bool:
        """True if the program's calls run under ``torch.no_grad()``, eager
        and compiled alike: with ``freezing``, which Inductor applies only to
        a graph compiled while grad is disabled (compile_fx: ``config.freezing
        and not torch.is_grad_enabled()``), the way inference code calls it."""
        return ("freezing", True) in self.inductor

    def calling(self) -> contextlib.AbstractContextManager[Any]:
        """The context every call of the program runs in, eager and compiled
        (``torch.no_grad()`` where ``no_grad_calls``, else nothing)."""
        if not self.no_grad_calls:
            return contextlib.nullcontext()
        import torch

        return torch.no_grad()

    def runner_block(self) -> str:
        """The ``__main__`` block a corpus case with these settings has
        before its runner: ``torch.compile`` rebound to a function that
        compiles as the harness did (``dynamic``, ``mode`` where the backend
        is "inductor", the config keys patched around each call, the dims
        marked before it; grad disabled for both runs where ``no_grad_calls``);
        keyword arguments the runner passes win. "" for the defaults."""
        if self.is_default:
            return ""
        lines = [
            'if __name__ == "__main__":  # compile as the harness did: these compile settings (tcfuzz harness/settings.py)',
            "    import functools" if self.mark_dynamic else "",
            "    import torch._dynamo, torch._inductor.config",
            ("    torch.set_grad_enabled(False)  # eager and compiled called under no_grad: freezing acts only then"
             if self.no_grad_calls else ""),
            "    def _compile(fn, *, _compile=torch.compile, **options):",
        ]
        if self.dynamic is not None:
            lines.append(f'        options.setdefault("dynamic", {self.dynamic!r})')
        if self.mode is not None:
            lines.append(f'        if options.get("backend") == "inductor": options.setdefault("mode", {self.mode!r})')
        lines.append("        compiled = _compile(fn, **options)")
        if self.inductor:
            lines.append(f"        compiled = torch._inductor.config.patch({dict(self.inductor)!r})(compiled)")
        if self.dynamo:
            lines.append(f"        compiled = torch._dynamo.config.patch({dict(self.dynamo)!r})(compiled)")
        if self.mark_dynamic:
            lines += [
                "        @functools.wraps(fn)",
                "        def call(*args):",
                f"            for i, dim in {[list(p) for p in self.mark_dynamic]!r}:",
                "                if i < len(args) and isinstance(args[i], torch.Tensor) and dim < args[i].dim():",
                "                    torch._dynamo.maybe_mark_dynamic(args[i], dim)",
                "            return compiled(*args)",
                "        return call",
            ]
        else:
            lines.append("        return compiled")
        lines.append("    torch.compile = _compile")
        return "\n".join(line for line in lines if line) + "\n"


def draw(seed: int | None, backend: str, features: Sequence[str] = ()) -> CompileSettings:
    """The settings for the program of ``seed`` on ``backend`` (None: the
    defaults): ``dynamic`` and ``mark_dynamic`` from ``random.Random`` keyed
    by the seed alone, the same on every backend; ``mode`` and ``inductor``
    keys only for INDUCTOR_BACKENDS, from a second one; ``freezing`` never for
    a program with a feature in FREEZING_EXCLUDED, and with max-autotune for
    FREEZING_AUTOTUNE_PERCENT of the others (from a third); DYNAMO_KEYS for programs
    with their feature, from a third. Shares: the ``*_PERCENT`` constants and
    the key tables."""
    if seed is None:
        return CompileSettings()
    rng = random.Random(f"compile-{seed}")
    point = rng.randrange(100)
    dynamic = True if point < DYNAMIC_TRUE_PERCENT else (
        False if point < DYNAMIC_TRUE_PERCENT + DYNAMIC_FALSE_PERCENT else None)
    marks: tuple[tuple[int, int], ...] = ()
    if rng.randrange(100) < MARK_DYNAMIC_PERCENT and dynamic is not False:
        marks = tuple(sorted({(rng.randrange(MARK_INPUTS), rng.randrange(MARK_DIMS))
                              for _ in range(1 + rng.randrange(MAX_MARKS))}))
    dynamo_rng = random.Random(f"compile-dynamo-{seed}")
    dynamo = tuple((key, value) for key, value, percent, feature in DYNAMO_KEYS
                   if dynamo_rng.randrange(100) < percent and feature in features)
    if backend not in INDUCTOR_BACKENDS:
        return CompileSettings(dynamic=dynamic, mark_dynamic=marks, dynamo=dynamo)
    rng = random.Random(f"compile-inductor-{seed}")
    mode = MAX_AUTOTUNE if rng.randrange(100) < MODE_PERCENT else None
    keys = []
    for key, value, percent in INDUCTOR_KEYS:
        drawn = rng.randrange(100) < percent
        if drawn and isinstance(value, tuple):
            value = rng.choice(value)
        if drawn and not (key == "freezing" and FREEZING_EXCLUDED & set(features)):
            keys.append((key, value))
    if mode is None and ("freezing", True) in keys and (
            random.Random(f"compile-freezing-{seed}").randrange(100) < FREEZING_AUTOTUNE_PERCENT):
        mode = MAX_AUTOTUNE
    return CompileSettings(dynamic=dynamic, mark_dynamic=marks, mode=mode, inductor=tuple(keys), dynamo=dynamo)
