"""Process state that a program can change and that must not reach the next
run or the next program: ``capture()`` before, ``restore(saved)`` after.

What is saved and put back (``ProcessState``):

- torch's modes (``torch_modes``: grad, inference and forward-AD modes,
  default dtype and device, autocast per device type with its dtype, nesting
  and cache flag, the torch function and dispatch mode stacks, saved-tensor
  hooks, anomaly mode, deterministic algorithms, float32 matmul precision),
  Dynamo's stance (``torch.compiler.set_stance``), print options, ``torch.backends`` flags, intra-op threads;
- ``torch._dynamo.config``, ``torch._inductor.config`` and
  ``torch._functorch.config``;
- attributes of the modules and classes in ``WATCHED`` that the program
  rebound, added or deleted (``torch.sin = ...``, ``builtins.len = ...``,
  ``torch.Tensor.__add__ = ...``). torch patches some of them itself on its
  first compile (Dynamo wraps ``torch.manual_seed`` and
  ``nn.Module.__init__``): a change whose new value is a new object defined
  in torch's own code is kept (``_made_by_torch``);
- ``sys.modules`` entries the program replaced, removed or added (an added
  module is kept where the import system made it from a file outside the
  working directory, or an extension registered it under a package);
- the recursion limit, switch interval, int-to-str digit limit, trace and
  profile functions, ``sys`` hooks and streams, ``sys.path``, meta path and
  path hooks, the collector's state, warning filters, the root logger;
- signal handlers, the signal mask and interval timers (the worker's
  faulthandler dumps for SIGXCPU and SIGUSR1 re-registered if touched);
- the working directory, umask and ``os.environ``;
- threads the program started (``threading.Thread.start`` called from its
  code, ``install``): joined for up to THREAD_JOIN_S seconds; the names of
  those still running are returned, since no one can stop them.

Every step is guarded: a state that cannot be put back is logged and named
in what ``restore`` returns, never raised.
"""

from __future__ import annotations

import dataclasses
import faulthandler
import gc
import logging
import os
import signal
import sys
import threading
import time
import types
import warnings
from typing import Any, Callable

log = logging.getLogger(__name__)

# Seconds restore() waits, in all, for threads the program started to end.
THREAD_JOIN_S = 2.0
# Modules (by name) and classes (as "module:Class") whose attributes are
# saved: what a program can rebind to change what later code calls.
WATCHED = ("builtins", "math", "operator", "random", "functools", "itertools", "collections", "copy",
           "os", "time", "types", "contextlib", "dataclasses", "warnings", "torch", "torch.nn",
           "torch.nn.functional", "torch.nn.init", "torch.linalg", "torch.fft", "torch.special",
           "torch.autograd", "torch:Tensor", "torch.nn:Module", "torch.nn:Parameter")
# Config modules saved with get_config_copy() and put back with load_config().
CONFIGS = ("torch._dynamo.config", "torch._inductor.config", "torch._functorch.config")
# (module, attribute) flags of torch.backends a program may set.
BACKEND_FLAGS = (("torch.backends.cudnn", "enabled"), ("torch.backends.cudnn", "benchmark"),
                 ("torch.backends.cudnn", "deterministic"), ("torch.backends.cudnn", "allow_tf32"),
                 ("torch.backends.cuda.matmul", "allow_tf32"),
                 ("torch.backends.cuda.matmul", "allow_fp16_reduced_precision_reduction"),
                 ("torch.backends.mkldnn", "enabled"))
# sys attributes put back by identity.
SYS_ATTRS = ("stdin", "stdout", "stderr", "excepthook", "displayhook", "breakpointhook", "unraisablehook",
             "dont_write_bytecode")
# Device types whose autocast state is saved and compared.
AUTOCAST_DEVICES = ("cpu", "cuda")
# Signals that harness.limits has faulthandler dump stacks on.
DUMP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGXCPU", "SIGUSR1") if hasattr(signal, n))
TIMERS = tuple(getattr(signal, n) for n in ("ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF") if hasattr(signal, n))

# Threads started from a program's code (install()), in start order.
_program_threads: list[threading.Thread] = []
# Guards entered to end an inference mode a program left on; held for good.
_held_guards: list[Any] = []
_installed = False


def _is_program_frame(frame: types.FrameType) -> bool:
    return str(frame.f_globals.get("__name__", "")).startswith("tcfuzz_program_")


def _is_torch_frame(frame: types.FrameType) -> bool:
    return "/torch/" in frame.f_code.co_filename.replace(os.sep, "/")


def install() -> None:
    """Wrap ``threading.Thread.start`` so that threads started from a
    program's code are recorded (idempotent). The innermost frame of the
    program's module or of torch on the starting stack decides: a pool that
    Inductor starts while a program's frame is further out is torch's."""
    global _installed
    if _installed:
        return
    original = threading.Thread.start

    def start(self: threading.Thread) -> None:
        frame = sys._getframe(1)
        while frame is not None:
            if _is_torch_frame(frame):
                break
            if _is_program_frame(frame):
                _program_threads.append(self)
                break
            frame = frame.f_back
        original(self)

    threading.Thread.start = start  # type: ignore[method-assign]
    _installed = True


def _lookup(name: str) -> Any:
    """The module ``name`` or class ``module:Class`` of WATCHED, None if not imported."""
    module_name, _, class_name = name.partition(":")
    module = sys.modules.get(module_name)
    return getattr(module, class_name, None) if class_name else module


def autocast_nesting() -> int:
    """Autocast's nesting depth (read by one increment and one decrement)."""
    import torch

    depth = torch.autocast_increment_nesting() - 1
    torch.autocast_decrement_nesting()
    return depth


def _mode_names(length: Callable[[], int], at: Callable[[int], Any]) -> tuple[str, ...]:
    return tuple(type(at(i)).__qualname__ for i in range(length()))


def dispatch_keys() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The names of the dispatch keys in this thread's local include and
    exclude sets. A compile that fails inside AOTAutograd can leave the
    PythonDispatcher key included without the Python dispatcher set: every
    later operator of the worker then fails with "Hit PythonDispatcher
    dispatch key but PythonDispatcherTLS was not set" (measured: an
    ``inference_mode`` program under aot_eager poisoned a worker so, and its
    later programs were all invalid; 36% of a guided campaign's runs)."""
    import torch

    keys = torch._C.DispatchKey.__members__.values()
    return (tuple(k.name for k in keys if torch._C._dispatch_tls_is_dispatch_key_included(k)),
            tuple(k.name for k in keys if torch._C._dispatch_tls_is_dispatch_key_excluded(k)))


def _restore_dispatch_keys(included: tuple[str, ...], excluded: tuple[str, ...]) -> None:
    """Put this thread's local include and exclude sets back to ``dispatch_keys()``'s."""
    import torch

    now_included, now_excluded = dispatch_keys()
    for names, now, setter in ((included, now_included, torch._C._dispatch_tls_set_dispatch_key_included),
                               (excluded, now_excluded, torch._C._dispatch_tls_set_dispatch_key_excluded)):
        for name in set(names) ^ set(now):
            try:
                setter(getattr(torch._C.DispatchKey, name), name in names)
            except (RuntimeError, ValueError):  # an alias key: set through its members
                pass


def torch_modes() -> tuple:
    """torch's process-wide (thread-local) modes that a call can leave
    changed, as ``(name, value)`` pairs: compared after every call
    (harness.execute) and put back by ``restore``."""
    import torch

    modes: list[tuple[str, Any]] = [
        ("grad", torch.is_grad_enabled()),
        ("inference", torch.is_inference_mode_enabled()),
        ("forward-ad", torch._C._is_fwd_grad_enabled()),
        ("default-dtype", str(torch.get_default_dtype())),
        ("default-device", str(torch.get_default_device())),
        ("deterministic", (torch.are_deterministic_algorithms_enabled(),
                           torch.is_deterministic_algorithms_warn_only_enabled())),
        ("anomaly", (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())),
        ("autocast-nesting", autocast_nesting()),
        ("autocast-cache", torch.is_autocast_cache_enabled()),
        ("function-modes", _mode_names(torch._C._len_torch_function_stack, torch._C._get_function_stack_at)),
        ("dispatch-modes", _mode_names(torch._C._len_torch_dispatch_stack, torch._C._get_dispatch_stack_at)),
        ("saved-tensor-hooks", torch._C._autograd._top_saved_tensors_default_hooks(False) is not None),
        ("matmul-precision", torch.get_float32_matmul_precision()),
        ("dispatch-keys", dispatch_keys()),
    ]
    for device in AUTOCAST_DEVICES:
        modes.append((f"autocast-{device}", (torch.is_autocast_enabled(device),
                                             str(torch.get_autocast_dtype(device)))))
    return tuple(modes)


@dataclasses.dataclass
class ProcessState:
    """What ``capture`` saved (see the module docstring)."""

    modes: tuple
    stance: Any
    print_options: dict
    backend_flags: dict
    num_threads: int
    configs: dict
    namespaces: Namespaces
    sys_modules: dict
    sys_attrs: dict
    sys_lists: dict
    limits: tuple
    trace: tuple
    gc_state: tuple
    warning_filters: list
    logging_state: tuple
    signals: dict
    sigmask: Any
    timers: dict
    cwd: str
    umask: int
    environ: dict
    threads: set
    program_threads: int


def _namespace(obj: Any) -> dict:
    return dict(vars(obj))


def capture(*, configs: bool = True) -> ProcessState:
    """The process state now (about 1 ms, plus 1 ms per config module with
    ``configs``; without, ``restore`` leaves the compiler's config as it is)."""
    import torch

    eval_frame = sys.modules.get("torch._dynamo.eval_frame")
    configs = {name: sys.modules[name].get_config_copy() for name in CONFIGS if configs and name in sys.modules}
    flags = {}
    for module_name, attr in BACKEND_FLAGS:
        module = sys.modules.get(module_name)
        if module is not None:
            try:
                flags[(module_name, attr)] = getattr(module, attr)
            except Exception:
                pass
    umask = os.umask(0)
    os.umask(umask)
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = ""
    return ProcessState(
        modes=torch_modes(),
        stance=getattr(eval_frame, "_stance", None),
        print_options=dict(vars(torch._tensor_str.PRINT_OPTS)),
        backend_flags=flags,
        num_threads=torch.get_num_threads(),
        configs=configs,
        namespaces=capture_namespaces(),
        sys_modules=dict(sys.modules),
        sys_attrs={a: getattr(sys, a, None) for a in SYS_ATTRS},
        sys_lists={"path": list(sys.path), "meta_path": list(sys.meta_path), "path_hooks": list(sys.path_hooks)},
        limits=(sys.getrecursionlimit(), sys.getswitchinterval(),
                sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else None),
        trace=(sys.gettrace(), sys.getprofile(), getattr(threading, "_trace_hook", None),
               getattr(threading, "_profile_hook", None)),
        gc_state=(gc.isenabled(), gc.get_threshold(), list(gc.callbacks)),
        warning_filters=list(warnings.filters),
        logging_state=(logging.root.level, list(logging.root.handlers), logging.root.manager.disable),
        signals={s: signal.getsignal(s) for s in _signals()},
        sigmask=signal.pthread_sigmask(signal.SIG_BLOCK, []) if hasattr(signal, "pthread_sigmask") else None,
        timers={t: signal.getitimer(t) for t in TIMERS},
        cwd=cwd,
        umask=umask,
        environ=dict(os.environ),
        threads=set(threading.enumerate()),
        program_threads=len(_program_threads),
    )


def _signals() -> list[int]:
    """The standard signals a handler can be set for (not the real-time ones:
    reading 64 handlers twice per run cost 0.6 ms)."""
    last = getattr(signal, "SIGRTMIN", 32)
    return [s for s in signal.valid_signals() if s < last and s not in (signal.SIGKILL, signal.SIGSTOP)]


def _made_by_torch(value: Any, known_ids: set) -> bool:
    """Is ``value``, newly bound in a watched namespace, torch's own doing:
    a new object (not one any watched namespace held: rebinding ``torch.sin``
    to ``torch.cos`` is the program's) defined in torch's code, a module the
    import system made, or private bookkeeping data (Dynamo's
    ``___needs_generation_tag_patch`` flag)?"""
    if id(value) in known_ids:
        return False
    if isinstance(value, types.ModuleType):
        return getattr(value, "__spec__", None) is not None
    module = getattr(value, "__module__", None) if callable(value) else None
    return isinstance(module, str) and (module == "torch" or module.startswith("torch."))


def _installed_by_dynamo(key: object) -> bool:
    """Is ``key`` a name Dynamo binds in the globals of a frame it compiles
    (``OutputGraph.install_global``, torch/_dynamo/output_graph.py):
    ``__resume_at_16_11``, ``__builtins_dict___10``, ``__compiled_fn_3``,
    ``__import_torch_dot_nn``, or bookkeeping such as
    ``___needs_generation_tag_patch``? It starts with two underscores and is
    no dunder. When Dynamo compiles a frame of a watched module's own code
    (a ``contextlib`` frame after a graph break in a program's ``__exit__``),
    its resume functions live there, and the cached call needs them."""
    return isinstance(key, str) and key.startswith("__") and not key.endswith("__")


def _known_ids(namespaces: dict) -> set:
    """The ids of every value the saved namespaces hold (alive: they hold them)."""
    return {id(v) for ns in namespaces.values() for v in ns.values()}


def _restore_namespace(name: str, saved: dict, known_ids: Callable[[], set], undone: list[str]) -> None:
    obj = _lookup(name)
    if obj is None:
        return
    now = vars(obj)
    try:
        if now == saved:  # C-level: identical values compare equal without their __eq__
            return
    except Exception:  # a value whose __eq__ raises: compared one by one below
        pass
    known_ids = known_ids()
    for key, value in list(now.items()):
        if key in saved:
            if value is not saved[key] and not _made_by_torch(value, known_ids):
                setattr(obj, key, saved[key])
                undone.append(f"{name}.{key} rebound")
        elif not _made_by_torch(value, known_ids) and not _installed_by_dynamo(key):
            delattr(obj, key)
            undone.append(f"{name}.{key} added")
    for key in [k for k in saved if k not in vars(obj)]:
        setattr(obj, key, saved[key])
        undone.append(f"{name}.{key} deleted")


def _keeps_module(name: str, module: Any, workdir: str) -> bool:
    """Is a ``sys.modules`` entry added while a program ran one to keep?"""
    if name.startswith("tcfuzz_program_") or not isinstance(module, types.ModuleType):
        return False
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None) or getattr(module, "__file__", None) or ""
    if workdir and str(origin).startswith(workdir):
        return False  # the program's own file, imported
    if spec is not None:
        return True
    parent = name.rpartition(".")[0]
    return bool(parent) and parent in sys.modules or name.startswith("_cython_")  # an extension's submodule


def _restore_modes(saved: ProcessState, undone: list[str]) -> None:
    import torch

    modes = dict(saved.modes)
    now = dict(torch_modes())
    if now == modes:
        return
    if now["default-device"] != modes["default-device"]:
        torch.set_default_device(None if modes["default-device"] == "cpu" else modes["default-device"])
    for _ in range(torch._C._len_torch_function_stack() - len(modes["function-modes"])):
        torch._C._pop_torch_function_stack()
    for _ in range(torch._C._len_torch_dispatch_stack() - len(modes["dispatch-modes"])):
        torch._C._pop_torch_dispatch_stack()
    for device in AUTOCAST_DEVICES:
        enabled, dtype = modes[f"autocast-{device}"]
        torch.set_autocast_enabled(device, enabled)
        torch.set_autocast_dtype(device, getattr(torch, dtype.removeprefix("torch.")))
    for _ in range(autocast_nesting() - modes["autocast-nesting"]):
        torch.autocast_decrement_nesting()
    for _ in range(modes["autocast-nesting"] - autocast_nesting()):
        torch.autocast_increment_nesting()
    if modes["autocast-nesting"] == 0:
        torch.clear_autocast_cache()
    torch.set_autocast_cache_enabled(modes["autocast-cache"])
    if torch.is_inference_mode_enabled() and not modes["inference"]:
        guard = torch._C._InferenceMode(False)
        guard.__enter__()
        _held_guards.append(guard)
    torch.set_grad_enabled(modes["grad"])
    torch._C._set_fwd_grad_enabled(modes["forward-ad"])
    torch.set_default_dtype(getattr(torch, modes["default-dtype"].removeprefix("torch.")))
    deterministic, warn_only = modes["deterministic"]
    torch.use_deterministic_algorithms(deterministic, warn_only=warn_only)
    torch.set_anomaly_enabled(*modes["anomaly"])
    for _ in range(100):
        if modes["saved-tensor-hooks"] or torch._C._autograd._top_saved_tensors_default_hooks(False) is None:
            break
        torch._C._autograd._pop_saved_tensors_default_hooks()
    torch.set_float32_matmul_precision(modes["matmul-precision"])
    if dispatch_keys() != modes["dispatch-keys"]:
        _restore_dispatch_keys(*modes["dispatch-keys"])
    eval_frame = sys.modules.get("torch._dynamo.eval_frame")
    if eval_frame is not None and saved.stance is not None and eval_frame._stance is not saved.stance:
        eval_frame._set_stance(saved.stance)
    left = dict(torch_modes())
    undone.append("torch modes: " + ", ".join(k for k in modes if now.get(k) != modes[k]))
    if left != modes:
        raise RuntimeError("modes still changed: " + ", ".join(k for k in modes if left.get(k) != modes[k]))


def _restore_torch(saved: ProcessState, undone: list[str]) -> None:
    import torch

    opts = torch._tensor_str.PRINT_OPTS
    if vars(opts) != saved.print_options:
        for key, value in saved.print_options.items():
            setattr(opts, key, value)
        undone.append("print options")
    for (module_name, attr), value in saved.backend_flags.items():
        module = sys.modules.get(module_name)
        if module is not None and getattr(module, attr) != value:
            setattr(module, attr, value)
            undone.append(f"{module_name}.{attr}")
    if torch.get_num_threads() != saved.num_threads:
        torch.set_num_threads(saved.num_threads)
        undone.append("intra-op threads")
    for name, config in saved.configs.items():
        module = sys.modules[name]
        if module.get_config_copy() != config:
            module.load_config(config)
            undone.append(name)


def _restore_sys_modules(saved: dict, workdir: str, undone: list[str]) -> None:
    """Put back ``sys.modules`` entries replaced or removed since ``saved``;
    drop added ones that ``_keeps_module`` does not keep. The harness's
    ``tcfuzz_program_*`` modules are neither put back nor reported."""
    current = sys.modules
    if len(current) == len(saved) and current == saved:  # C-level, identity first: the usual case
        return
    for name in [k for k, v in saved.items() if current.get(k) is not v]:
        if name.startswith("tcfuzz_program_"):
            continue
        undone.append(f"sys.modules[{name!r}] {'replaced' if name in current else 'removed'}")
        current[name] = saved[name]
    for name in current.keys() - saved.keys():
        module = current.get(name)
        if not _keeps_module(name, module, workdir):
            current.pop(name, None)
            if not name.startswith("tcfuzz_program_"):
                undone.append(f"sys.modules[{name!r}] added")


def _restore_sys(saved: ProcessState, workdir: str, undone: list[str]) -> None:
    _restore_sys_modules(saved.sys_modules, workdir, undone)
    for attr, value in saved.sys_attrs.items():
        if getattr(sys, attr, None) is not value:
            setattr(sys, attr, value)
            undone.append(f"sys.{attr}")
    for attr, items in saved.sys_lists.items():
        current = getattr(sys, attr)
        if current != items:
            if not isinstance(current, list):
                setattr(sys, attr, list(items))
            else:
                current[:] = items
            undone.append(f"sys.{attr}")
    recursion, switch, digits = saved.limits
    if sys.getrecursionlimit() != recursion:
        sys.setrecursionlimit(recursion)
        undone.append("recursion limit")
    if sys.getswitchinterval() != switch:
        sys.setswitchinterval(switch)
        undone.append("switch interval")
    if digits is not None and sys.get_int_max_str_digits() != digits:
        sys.set_int_max_str_digits(digits)
        undone.append("int max str digits")
    trace, profile, thread_trace, thread_profile = saved.trace
    if sys.gettrace() is not trace:
        sys.settrace(trace)
        undone.append("trace function")
    if sys.getprofile() is not profile:
        sys.setprofile(profile)
        undone.append("profile function")
    if getattr(threading, "_trace_hook", None) is not thread_trace:
        threading.settrace(thread_trace)
    if getattr(threading, "_profile_hook", None) is not thread_profile:
        threading.setprofile(thread_profile)
    enabled, thresholds, callbacks = saved.gc_state
    if gc.isenabled() != enabled:
        (gc.enable if enabled else gc.disable)()
        undone.append("collector enabled")
    if gc.get_threshold() != thresholds:
        gc.set_threshold(*thresholds)
        undone.append("collector thresholds")
    if gc.callbacks != callbacks:
        gc.callbacks[:] = callbacks
        undone.append("collector callbacks")
    if warnings.filters != saved.warning_filters:
        warnings.filters[:] = saved.warning_filters
        warnings._filters_mutated() if hasattr(warnings, "_filters_mutated") else None
        undone.append("warning filters")
    level, handlers, disable = saved.logging_state
    if (logging.root.level, logging.root.handlers, logging.root.manager.disable) != (level, handlers, disable):
        logging.root.setLevel(level)
        logging.root.handlers[:] = handlers
        logging.disable(disable)
        undone.append("root logger")


def _restore_signals(saved: ProcessState, undone: list[str]) -> None:
    redump = False
    for signum, handler in saved.signals.items():
        if signal.getsignal(signum) is not handler and signal.getsignal(signum) != handler:
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
            undone.append(f"handler of {signal.Signals(signum).name}")
            redump = redump or signum in DUMP_SIGNALS
    if redump and faulthandler.is_enabled():  # the worker's stack dumps (harness.limits)
        from harness import limits

        for signum in DUMP_SIGNALS:
            faulthandler.unregister(signum)
        limits.install_signal_dumps(sys.stderr)
    if saved.sigmask is not None and signal.pthread_sigmask(signal.SIG_BLOCK, []) != saved.sigmask:
        signal.pthread_sigmask(signal.SIG_SETMASK, saved.sigmask)
        undone.append("signal mask")
    for timer, value in saved.timers.items():
        if signal.getitimer(timer) != value and value == (0.0, 0.0):
            signal.setitimer(timer, 0)
            undone.append("interval timer")


def _restore_os(saved: ProcessState, undone: list[str]) -> None:
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = ""
    if saved.cwd and cwd != saved.cwd:
        os.chdir(saved.cwd)
        undone.append("working directory")
    if os.umask(saved.umask) != saved.umask:
        undone.append("umask")
    if os.environ != saved.environ:
        for key in [k for k in os.environ if k not in saved.environ]:
            del os.environ[key]
        for key, value in saved.environ.items():
            if os.environ.get(key) != value:
                os.environ[key] = value
        undone.append("environment")


def _join_threads(saved: ProcessState) -> list[str]:
    """Join threads the program started since ``saved`` (THREAD_JOIN_S in
    all); the names of those still alive."""
    deadline = time.monotonic() + THREAD_JOIN_S
    started = [t for t in _program_threads[saved.program_threads:] if t not in saved.threads]
    for t in started:
        if t is not threading.current_thread() and t.ident is not None:
            t.join(max(0.0, deadline - time.monotonic()))
    alive = [t for t in started if t.is_alive()]
    del _program_threads[saved.program_threads:]
    _program_threads.extend(alive)  # still the program's: reported again until they end
    return [t.name for t in alive]


@dataclasses.dataclass
class Namespaces:
    """The attributes of the WATCHED modules and classes (``capture_namespaces``)."""

    saved: dict
    _ids: set | None = None

    def known_ids(self) -> set:
        """``_known_ids`` of the saved namespaces, computed once, when needed."""
        if self._ids is None:
            self._ids = _known_ids(self.saved)
        return self._ids


def capture_namespaces() -> Namespaces:
    """The attributes of the WATCHED modules and classes now: what
    ``restore_namespaces`` puts back after each call, before harness code that
    uses ``len`` or ``torch.equal`` runs again."""
    return Namespaces({name: _namespace(obj) for name in WATCHED if (obj := _lookup(name)) is not None})


def restore_namespaces(saved: Namespaces) -> list[str]:
    """Put back what the program rebound, added or deleted in the WATCHED
    namespaces since ``saved`` (changes torch makes itself are kept,
    ``_made_by_torch``); what was undone, as "torch.sin rebound". Never raises."""
    undone: list[str] = []
    for name, ns in saved.saved.items():
        try:
            _restore_namespace(name, ns, saved.known_ids, undone)
        except Exception as e:
            undone.append(f"could not restore {name}: {type(e).__name__}")
    return undone


@dataclasses.dataclass
class Restored:
    """What ``restore`` did: ``undone`` names each piece of state put back,
    ``failed`` each one that could not be (with the error), ``threads`` the
    names of threads the program started that are still running."""

    undone: list[str]
    failed: list[str]
    threads: list[str]

    @property
    def clean(self) -> bool:
        """True if the process is as it was: nothing failed, no thread left."""
        return not self.failed and not self.threads


def restore(saved: ProcessState, workdir: str = "") -> Restored:
    """Put back what ``capture`` saved; a new ``sys.modules`` entry made
    from a file under ``workdir`` (the program's) is dropped. Never raises:
    each step that fails is named in ``Restored.failed``."""
    result = Restored([], [], [])
    result.threads = _join_threads(saved)
    steps = (lambda u: _restore_modes(saved, u), lambda u: _restore_torch(saved, u),
             lambda u: _restore_sys(saved, workdir, u), lambda u: _restore_signals(saved, u),
             lambda u: _restore_os(saved, u))
    for step in steps:
        try:
            step(result.undone)
        except Exception as e:
            result.failed.append(f"{type(e).__name__}: {e}"[:200])
    result.undone += restore_namespaces(saved.namespaces)
    if result.undone or result.failed or result.threads:
        log.info("state left by the program: undone %s; failed %s; threads running %s",
                 result.undone, result.failed, result.threads)
    return result

