"""Backends by name: torch's registered ones plus tcfuzz's planted ones.

A planted backend is kept as source text so that a corpus case found with it
can carry its definition and run standalone with nothing but torch.
"""

from __future__ import annotations

from typing import Any, Callable

# Planted backends. Each value defines a function with the key's name.
PLANTED_BACKENDS: dict[str, str] = {
    # A deliberately wrong backend: adds 1 to the first floating-point output
    # of every FX graph. Every program whose graph returns a float tensor that
    # reaches the result must diverge under it.
    "tcfuzz_add_one": '''\
def tcfuzz_add_one(gm, example_inputs):
    def run(*args):
        outs = list(gm(*args))
        i = next((i for i, o in enumerate(outs) if isinstance(o, torch.Tensor) and o.is_floating_point()), None)
        if i is not None: outs[i] = outs[i] + 1
        return outs
    return run
''',
    # The identity backend: runs the FX graph as Dynamo captured it. Anything
    # it reports is a Dynamo (bytecode) bug or a false alarm of the oracle.
    "tcfuzz_identity": '''\
def tcfuzz_identity(gm, example_inputs):
    return gm.forward
''',
    # A simulated GPU fault, for machines without a GPU: every compiled graph
    # raises what a Triton kernel that read out of bounds raises, from a
    # launcher shaped like Inductor's (``self.fn`` is the kernel). The harness
    # must record a crash naming that kernel and retire the worker (harness.device).
    "tcfuzz_cuda_fault": '''\
def tcfuzz_cuda_fault(gm, example_inputs):
    def triton_poi_fused_simulated_0(*args): pass
    class Launcher:
        fn = staticmethod(triton_poi_fused_simulated_0)
        def run(self, *args):
            raise torch.AcceleratorError("CUDA error: an illegal memory access was encountered\\n"
                                         "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
    return lambda *args: Launcher().run(*args)
''',
}

# Pseudo-backends that compile with a torch backend under a compiler stance
# (torch.compiler.set_stance): name -> (backend, stance). Under "force_eager"
# the compiled function runs its original code, so anything the oracle reports
# for it is a false alarm.
STANCE_BACKENDS: dict[str, tuple[str, str]] = {
    "tcfuzz_force_eager": ("eager", "force_eager"),
}

# Backend ladder, after torch/_inductor/compiler_bisector.py: the stage that a
# finding is attributed to is the lowest backend on which it shows.
LADDER: tuple[tuple[str, str], ...] = (
    ("eager", "dynamo"),
    ("aot_eager", "aot"),
    ("aot_eager_decomp_partition", "aot"),
    ("inductor", "inductor"),
)


def stage_of(backend: str) -> str:
    """The pipeline stage a backend exercises last ("dynamo", "aot", "inductor"),
    or the backend's own name for planted and third-party backends."""
    return dict(LADDER).get(backend, backend)


def ladder_rank(backend: str) -> int:
    """Position on the ladder; unknown backends sort after inductor."""
    names = [name for name, _ in LADDER]
    return names.index(backend) if backend in names else len(names)


def stance_of(name: str) -> str | None:
    """The compiler stance a pseudo-backend runs under, or None."""
    return STANCE_BACKENDS[name][1] if name in STANCE_BACKENDS else None


def resolve_backend(name: str) -> str | Callable[..., Any]:
    """The value to pass as ``torch.compile(backend=...)``.

    Raises ValueError naming the known backends if ``name`` is neither planted
    nor registered with torch.
    """
    if name in STANCE_BACKENDS:
        name = STANCE_BACKENDS[name][0]
    if name in PLANTED_BACKENDS:
        import torch

        namespace: dict[str, Any] = {"torch": torch}
        exec(PLANTED_BACKENDS[name], namespace)
        return namespace[name]
    import torch._dynamo

    known = set(torch._dynamo.list_backends(exclude_tags=())) | {"inductor"}
    if name not in known:
        raise ValueError(
            f"Expected a torch backend or one of {sorted(PLANTED_BACKENDS) + sorted(STANCE_BACKENDS)} "
            f"but got backend={name!r}"
        )
    return name
