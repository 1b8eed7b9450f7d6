"""Comparison rules for eager vs compiled values.

Tensors compare with ``torch._dynamo.utils.same`` (torch's accuracy rule, as
its minifier and benchmark runner use it): ``allclose`` with ``tol`` as both
relative and absolute tolerance, NaNs equal, and, where the direct comparison
fails and an fp64 reference of the same structure is given, the compiled
result passes if its RMSE against the fp64 reference is within a small
multiple of eager's (so a compiler that is *more* precise than eager is not a
bug); elements that eager and compiled agree are NaN or infinite are left out
of those RMSEs, which one such element would make NaN and the rule vacuous
(``_without_shared_non_finite``). Dtype, shape and ``requires_grad`` must always match; integer and bool
tensors compare exactly. A leaf tensor's ``.grad`` is compared with the same
rule. Containers compare element-wise, Python floats with the same tolerance,
everything else with ``==`` on a normalised snapshot (addresses removed).

What a snapshot keeps of the program's data is what eager shows
deterministically: the order of ordered containers (a dict's and an
``OrderedDict``'s keys, the latter in its own order, which ``move_to_end``
changes and the dict underneath does not; a deque's items and its
``maxlen``), a set's contents (whatever order it iterates in), a container's
type (``OrderedDict``, ``defaultdict`` with its factory, ``Counter``,
``frozenset``), and an object's attribute names (private ones and
``__slots__`` too) beside its public attributes' values. A value eager does
not reproduce (an ``id()`` kept in a public attribute) makes eager disagree
with itself, a ``flaky`` program, never a finding.
"""

from __future__ import annotations

import collections.abc
import enum
import hashlib
import math
import re
import reprlib
import types
from typing import Any, NamedTuple

# Relative and absolute tolerance for float32/float64 tensors and Python
# floats: torch._dynamo.utils.same's default.
TOLERANCE = 1e-4
# Tolerance for float16 and bfloat16 tensors: their unit roundoff is 2**-11 and
# 2**-8, so 1e-4 would flag every fused kernel that rounds once instead of twice.
HALF_TOLERANCE = 1e-2
# Longest value repr kept in an Outcome, in characters.
MAX_REPR_CHARS = 400
# Most items drained from a returned generator or iterator.
MAX_DRAINED_ITEMS = 1000
# Most items (scalars, tensors, container entries) one snapshot copies; a
# container that would take it past this is digested instead (``Digest``),
# so a program returning a list of ten million ints costs a hash, not a copy.
MAX_SNAPSHOT_ITEMS = 20_000
# Items of a huge container whose reprs go into its digest.
MAX_DIGEST_ITEMS = 50_000

# Bounded reprs (reprlib's default limits on items shown, strings at most
# MAX_REPR_CHARS characters): a self-referential or huge value has a short repr.
_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = MAX_REPR_CHARS

ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+|0x[0-9a-fA-F]{6,}")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:/[\w.+-]+)+\.py\b")
_LINE = re.compile(r"\bline \d+")
_PROGRAM_ID = re.compile(r"tcfuzz_program_[0-9a-f]+|prog_[0-9a-f]+")


def normalise_text(text: str) -> str:
    """Remove memory addresses from a repr or message."""
    return ADDRESS.sub("", text)


def _strip_tensor_reprs(text: str) -> str:
    """``tensor([[1., 2.], ...], grad_fn=...)`` -> ``tensor(...)``, parentheses balanced."""
    out, i = [], 0
    while (j := text.find("tensor(", i)) != -1:
        out.append(text[i:j] + "tensor(...)")
        depth, k = 1, j + len("tensor(")
        while k < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            k += 1
        i = k
    out.append(text[i:])
    return "".join(out)


def normalise_message(text: str) -> str:
    """An exception message with what differs between equal failures removed:
    memory addresses, file paths, line numbers, the harness's module names and
    tensor reprs (whose values and ``grad_fn`` legitimately differ between
    eager and compiled code). Only the first line is kept."""
    text = text.split("\n", 1)[0]
    text = _strip_tensor_reprs(normalise_text(text))
    text = _PATH.sub("<path>", text)
    text = _LINE.sub("line N", text)
    return _PROGRAM_ID.sub("<program>", text).strip()[:300]


class TensorWithGrad(NamedTuple):
    """Snapshot of a leaf tensor whose ``.grad`` is set: the value and the gradient."""

    tensor: Any
    grad: Any


class Drained(NamedTuple):
    """Snapshot of a returned generator or iterator: its type name, the items it
    yielded (at most MAX_DRAINED_ITEMS) and, for a generator, its return value."""

    kind: str
    items: tuple
    returned: Any


def drain(value: Any) -> Any:
    """Exhaust a generator or iterator the entry function returned, so that
    its lazily run code is compared too. Anything else is returned as is.

    Exceptions raised while draining propagate: they are the call's.
    """
    import torch

    if isinstance(value, types.CoroutineType):
        value.close()
        return Drained("coroutine", (), value.__qualname__)
    if isinstance(value, (torch.Tensor, str, bytes)) or not isinstance(value, collections.abc.Iterator):
        return value
    items, returned = [], None
    while len(items) < MAX_DRAINED_ITEMS:
        try:
            items.append(snapshot(next(value)))
        except StopIteration as stop:
            returned = snapshot(stop.value)
            break
    kind = "generator" if isinstance(value, types.GeneratorType) else type(value).__name__
    return Drained(kind, tuple(items), returned)


class TensorKind(NamedTuple):
    """Snapshot of a tensor that is not a plain strided one: ``kind`` names
    what it is ("subclass <module>.<Class>", "sparse_coo", "quantized
    torch.qint8 per_tensor_affine", "meta", ...) and ``data`` holds what
    compares: the plain strided tensor (the subclass's data read with torch
    function handling disabled, the dense values, the dequantised values) or,
    for a meta tensor, its shape and dtype as text. The kind compares exactly,
    the data by the tensor rules."""

    kind: str
    data: Any


class Opaque(NamedTuple):
    """Snapshot of a value that could not be read (its ``__repr__``,
    ``__eq__`` or an attribute raised, or it is a tensor torch cannot copy):
    its type and why. Two Opaque snapshots of one type and reason are equal,
    so such a value is compared by type only; ``reason`` is recorded in the
    Outcome (``Outcome.incomparable``)."""

    type_name: str
    reason: str


class Instance(NamedTuple):
    """Snapshot of an object with a ``__dict__`` or ``__slots__``: its type
    name, its public attributes (instance dict order, then set slots in
    class order) as snapshots, and the sorted names of every attribute it
    has, private ones and set slots included: an attribute added, removed
    or renamed shows although its value is not compared."""

    type_name: str
    public: dict
    names: tuple


class Sequenced(NamedTuple):
    """Snapshot of a ``collections.deque``: its type name, its ``maxlen``
    (None: unbounded) and its items, in order, as snapshots."""

    type_name: str
    maxlen: Any
    items: tuple


class Members(NamedTuple):
    """Snapshot of a set or frozenset: its type name and its elements as
    snapshots, sorted by their normalised reprs (a set's iteration order
    follows hashes and insertion history; its contents are what eager
    fixes)."""

    type_name: str
    items: tuple


class Mapped(NamedTuple):
    """Snapshot of a dict subclass (``OrderedDict``, ``defaultdict``,
    ``Counter``, a program's): its type name, its items as a plain dict's
    snapshot (in the subclass's own order: an ``OrderedDict``'s, not the
    dict's underneath) and a ``defaultdict``'s ``default_factory`` (else
    None)."""

    type_name: str
    items: Any
    factory: Any


class Digest(NamedTuple):
    """Snapshot of a container with more than MAX_SNAPSHOT_ITEMS items: its
    type, length and the SHA-256 of the normalised reprs of its first
    MAX_DIGEST_ITEMS items (a huge value is compared by digest, not text)."""

    type_name: str
    length: int
    sha256: str


class Incomparable(Exception):
    """Two snapshots could not be compared (torch raised on a tensor kind it
    does not handle). ``harness.execute`` records the message in
    ``Outcome.incomparable`` and counts the aspect as equal: never a finding,
    never a harness failure."""


def safe_repr(value: Any) -> str:
    """``repr(value)`` bounded by reprlib (at most MAX_REPR_CHARS characters,
    self-reference shown as ``[...]``), or ``<T: repr raised E>`` when the
    value's ``__repr__`` raises (an int of more than sys.get_int_max_str_digits
    digits raises ValueError too)."""
    try:
        return _REPR.repr(value)
    except BaseException as e:  # the program's __repr__: any exception is data
        return f"<{type_name(value)}: repr raised {type(e).__name__}>"


def safe_str(exc: BaseException) -> str:
    """``str(exc)``, or ``<T whose __str__ raised E>`` when it raises (a
    program's exception is recorded by its type then)."""
    try:
        text = str(exc)
        return text if isinstance(text, str) else f"<{type_name(exc)} whose __str__ returned no str>"
    except BaseException as e:
        return f"<{type_name(exc)} whose __str__ raised {type(e).__name__}>"


def type_name(value: Any) -> str:
    """``module.Qualname`` of ``type(value)`` (builtins without a module)."""
    cls = type(value)
    module = getattr(cls, "__module__", None)
    qualname = getattr(cls, "__qualname__", None) or cls.__name__
    return qualname if module in (None, "builtins") else f"{module}.{qualname}"


# Exact builtin scalar types that a snapshot keeps as they are; subclasses
# are converted to these by the base type's own method (so a program's
# ``__eq__``/``__int__`` is never called by a comparison).
_SCALARS = {bool: bool, int: int.__int__, float: float.__float__, complex: complex.__complex__,
            str: str.__str__, bytes: lambda b: bytes(memoryview(b))}


class _Snapshot:
    """One snapshot walk: ids on the current path (cycles become
    ``"<cycle>"``) and the items taken so far (past MAX_SNAPSHOT_ITEMS a
    container is digested)."""

    def __init__(self) -> None:
        self.path: set[int] = set()
        self.items = 0

    def take(self, value: Any, depth: int) -> Any:
        try:
            return self._take(value, depth)
        except BaseException as e:  # a program's __getattr__, __iter__, __repr__...: the value is opaque
            return Opaque(type_name(value), f"{type(e).__name__} while reading it")

    def _take(self, value: Any, depth: int) -> Any:
        import torch

        self.items += 1
        cls = type(value)
        if value is None or cls in (bool, int, float, complex, str, bytes):
            return value
        if isinstance(value, torch.Tensor):
            return _snapshot_tensor(value)
        if cls in (TensorWithGrad, Drained, TensorKind, Opaque, Digest, Instance, Sequenced, Members, Mapped):
            return value
        for base, convert in _SCALARS.items():
            if isinstance(value, base):  # a subclass: its type, then its builtin value
                return (type_name(value), convert(value))
        if depth > 8:
            return "<deep>"
        if isinstance(value, (torch.dtype, torch.device, torch.Size)):
            return repr(value)
        if isinstance(value, enum.Enum):
            return f"{type_name(value)}.{value.name}"
        if id(value) in self.path:
            return "<cycle>"
        self.path.add(id(value))
        try:
            return self._container(value, depth)
        finally:
            self.path.discard(id(value))

    def _container(self, value: Any, depth: int) -> Any:
        cls = type(value)
        base = _container_base(value)
        if base is not None and self.items + base.__len__(value) > MAX_SNAPSHOT_ITEMS:
            return digest(value)
        if base in (list, tuple):  # the builtin iteration: a subclass's __iter__ is not called
            items = [self.take(v, depth + 1) for v in base.__iter__(value)]
            return cls(items) if cls in (list, tuple) else (type_name(value), tuple(items))
        if base is dict:
            mapping = self._mapping(_dict_items(value), depth)
            if cls is dict:
                return mapping
            factory = None
            if isinstance(value, collections.defaultdict):  # the C descriptor: no property of a subclass's runs
                factory = self.take(collections.defaultdict.default_factory.__get__(value), depth + 1)
            return Mapped(type_name(value), mapping, factory)
        if base is collections.deque:  # the deque's own iteration and maxlen, not a subclass's
            items = tuple(self.take(v, depth + 1) for v in collections.deque.__iter__(value))
            return Sequenced(type_name(value), collections.deque.maxlen.__get__(value), items)
        if base in (set, frozenset):
            items = [self.take(v, depth + 1) for v in base.__iter__(value)]
            order = sorted(range(len(items)), key=lambda i: normalise_text(safe_repr(items[i])))
            return Members(type_name(value), tuple(items[i] for i in order))
        if callable(value) and isinstance(getattr(value, "__name__", None), str):
            return f"<callable {value.__name__}>"
        attrs = getattr(value, "__dict__", None)
        slots = _set_slots(value)
        if (isinstance(attrs, dict) or slots) and not isinstance(value, type):
            attrs = attrs if isinstance(attrs, dict) else {}
            public = {k: self.take(v, depth + 1) for k, v in list(attrs.items()) + slots
                      if isinstance(k, str) and not k.startswith("_")}
            names = sorted({k for k in list(attrs) if isinstance(k, str)} | {k for k, _ in slots})
            return Instance(type_name(value), public, tuple(names))
        return normalise_text(safe_repr(value))

    def _mapping(self, pairs: list, depth: int) -> Any:
        """The snapshot of a dict's ``pairs``, in their order: a dict where
        every key is a str, int, bool or None, else ("dict", ((key, value), ...))."""
        if all(type(k) in (str, int, bool, type(None)) for k, _ in pairs):
            return {k: self.take(v, depth + 1) for k, v in pairs}
        return ("dict", tuple((self.take(k, depth + 1), self.take(v, depth + 1)) for k, v in pairs))


# The containers a snapshot reads with their base type's own methods, most
# specific first where one derives from another.
_CONTAINER_BASES = (list, tuple, dict, set, frozenset, collections.deque)


def _container_base(value: Any) -> Any:
    """The first of _CONTAINER_BASES that ``value`` is an instance of, or None."""
    return next((b for b in _CONTAINER_BASES if isinstance(value, b)), None)


def _dict_items(value: dict) -> list:
    """The (key, value) pairs of dict ``value`` in its own order: an
    ``OrderedDict``'s order (``move_to_end`` changes it, not the dict
    underneath), else the dict's; read with the base type's C methods, so a
    subclass's ``__iter__`` or ``items`` is not called."""
    if isinstance(value, collections.OrderedDict):
        return list(collections.OrderedDict.items(value))
    return list(dict.items(value))


def _set_slots(value: Any) -> list[tuple[str, Any]]:
    """(name, value) of every ``__slots__`` attribute that is set on
    ``value``, in the order its classes (most derived first) declare them,
    read through the slots' own member descriptors (no program code runs; a
    private slot ``__x`` of class ``C`` by its stored name ``_C__x``)."""
    found: list[tuple[str, Any]] = []
    seen: set[str] = set()
    for klass in type(value).__mro__:
        declared = vars(klass).get("__slots__", ())
        for name in (declared,) if isinstance(declared, str) else declared:
            if not isinstance(name, str) or name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__"):
                name = f"_{klass.__name__.lstrip('_')}{name}"
            descriptor = vars(klass).get(name)
            if name in seen or not isinstance(descriptor, types.MemberDescriptorType):
                continue
            seen.add(name)
            try:
                found.append((name, descriptor.__get__(value, klass)))
            except AttributeError:  # declared, not set
                pass
    return found


def _snapshot_tensor(value: Any) -> Any:
    """A detached copy of tensor ``value`` (see ``snapshot``); a tensor kind
    that cannot be copied becomes ``Opaque``."""
    import torch

    try:
        cls = type(value)
        if cls is not torch.Tensor:
            # a subclass (nn.Parameter too): its type, then its plain data, read
            # with the subclass's __torch_function__ out of the way
            with torch._C.DisableTorchFunctionSubclass():
                plain = value.as_subclass(torch.Tensor)
            return TensorKind(f"subclass {type_name(value)}", _snapshot_tensor(plain))
        if value.is_meta:
            return TensorKind("meta", f"shape={list(value.shape)} dtype={value.dtype}")
        if value.is_quantized:
            return TensorKind(f"quantized {value.dtype} {value.qscheme()}", _snapshot_tensor(value.dequantize()))
        if value.layout != torch.strided:
            return TensorKind(str(value.layout).removeprefix("torch."), _snapshot_tensor(value.to_dense()))
        copy = value.detach().clone()
        if value.requires_grad and copy.is_floating_point():
            copy.requires_grad_()
        if value.is_leaf and value.requires_grad and value.grad is not None:
            return TensorWithGrad(copy, _snapshot_tensor(value.grad.detach()))
        return copy
    except Exception as e:  # a wrapper subclass without storage, a nested or functorch tensor...
        return Opaque(type_name(value), f"tensor not copied: {type(e).__name__}")


def digest(value: Any) -> Digest:
    """The ``Digest`` of a huge list, tuple, dict, set or deque (a subclass's
    own ``__iter__`` and ``__len__`` are not called): a dict's items in its
    own order (``_dict_items``), a set's reprs sorted, since its iteration
    order is not its contents; a deque's ``maxlen`` too."""
    h = hashlib.sha256()
    base = _container_base(value)
    items = _dict_items(value) if base is dict else base.__iter__(value)
    reprs = (normalise_text(safe_repr(item)) for _, item in zip(range(MAX_DIGEST_ITEMS), items))
    for text in sorted(reprs) if base in (set, frozenset) else reprs:
        h.update(text.encode("utf-8", "replace"))
    if base is collections.deque:
        h.update(f"maxlen={collections.deque.maxlen.__get__(value)}".encode())
    return Digest(type_name(value), base.__len__(value), h.hexdigest())


def snapshot(value: Any) -> Any:
    """A detached copy of ``value`` that later mutation cannot change and
    that compares without running any of the program's code.

    Tensors are detached and cloned (with their gradient, for a leaf that has
    one); a tensor subclass, sparse, quantised or meta tensor becomes a
    ``TensorKind`` (its kind, then its plain data); lists, tuples, dicts and
    sets are copied recursively (a cycle becomes "<cycle>", past
    MAX_SNAPSHOT_ITEMS items a ``Digest``): a dict in its own order, a
    subclass of dict as ``Mapped``, a set as ``Members`` (contents, not
    iteration order), a deque as ``Sequenced`` (items and ``maxlen``);
    objects with a ``__dict__`` or ``__slots__`` become an ``Instance``
    (type name, public attributes, every attribute name); subclasses of int, float,
    str... ``(type name, builtin value)``; anything else its normalised
    repr. Whatever cannot be read becomes ``Opaque``. Never raises.
    """
    return _Snapshot().take(value, 0)


def _like(fp64: Any, ref: Any) -> Any:
    """``fp64`` if it has the structure of ``ref`` (same container type and
    length, or both tensors of one shape), else None: a reference whose
    program took another path at float64 is no reference."""
    import torch

    if fp64 is None:
        return None
    if isinstance(ref, torch.Tensor):
        return fp64 if isinstance(fp64, torch.Tensor) and fp64.shape == ref.shape else None
    if type(fp64) is not type(ref):
        return None
    if isinstance(ref, (list, tuple)) and len(ref) != len(fp64):
        return None
    if isinstance(ref, dict) and list(ref) != list(fp64):
        return None
    return fp64


def _without_shared_non_finite(ref: Any, res: Any, fp64: Any) -> tuple[Any, Any, Any]:
    """``ref``, ``res`` and ``fp64`` (float tensors of one shape) prepared for
    same()'s float64 rule where eager and compiled agree on every non-finite
    element (NaN where the other is NaN, the same infinity): those elements
    become 0 in all three, and an element where only the float64 run is not
    finite takes eager's value as its reference (as same() does with no
    reference). Otherwise, or with nothing non-finite, all three are returned
    unchanged.

    Why: same()'s RMSEs are NaN as soon as one element is NaN or inf in both,
    and with ``equal_nan`` it then passes the tensor whatever its other
    elements are (``torch/_dynamo/utils.py``: "equal_nan and
    math.isnan(ref_error) and math.isnan(res_error)"). The elements made 0
    compare equal under ``allclose(equal_nan=True)`` anyway, so this only
    makes the rule check the rest: it is stricter than torch's, never looser.
    Eager NaN where compiled is finite is left to same()'s own rule (compiled
    passes if it matches the float64 value: "res is BETTER")."""
    import torch

    ref_bad, res_bad = ~ref.isfinite(), ~res.isfinite()
    if not (ref_bad.any() or res_bad.any() or not fp64.isfinite().all()):
        return ref, res, fp64
    shared = (ref.isnan() & res.isnan()) | (ref.isinf() & (ref == res))
    if not torch.equal(ref_bad, shared) or not torch.equal(res_bad, shared):
        return ref, res, fp64
    zero = torch.zeros((), dtype=ref.dtype, device=ref.device)
    fp64 = torch.where(fp64.isfinite(), fp64, ref.to(torch.float64))
    return (torch.where(shared, zero, ref), torch.where(shared, zero, res),
            torch.where(shared, torch.zeros((), dtype=torch.float64, device=ref.device), fp64))


def carries_half_precision(ref: Any, res: Any) -> bool:
    """Whether float32/float64 tensors ``ref`` and ``res`` both hold only
    float16 values (or both only bfloat16 values), every element exactly
    representable there (and not all integers): a half-precision value
    copied out with ``.float()``. torch's accuracy rule gives a tensor the
    tolerance of its precision (``same``'s 1e-4 is for single precision), and
    such a copy carries half precision: one ulp of float16 is 2**-11
    relative, past 1e-4. Measured: ``normalize`` of a float16 tensor under
    ``aot_eager_decomp_partition`` rounded one element of two to the next
    float16 (0.46191 against eager's 0.46167, float64 0.46172); the float16
    output passed at HALF_TOLERANCE and its ``.float()`` copy failed at 1e-4."""
    import torch

    if ref.dtype not in (torch.float32, torch.float64) or ref.numel() == 0:
        return False
    finite_ref, finite_res = ref[ref.isfinite()], res[res.isfinite()]
    if bool((finite_ref == finite_ref.round()).all()) and bool((finite_res == finite_res.round()).all()):
        return False  # integers are exact in every float dtype: they say nothing of the precision
    return any(bool((finite_ref.to(half).to(ref.dtype) == finite_ref).all())
               and bool((finite_res.to(half).to(ref.dtype) == finite_res).all())
               for half in (torch.float16, torch.bfloat16))


def _tensors_match(ref: Any, res: Any, fp64_ref: Any) -> bool:
    import torch
    from torch._dynamo.utils import same

    if ref.dtype != res.dtype or ref.shape != res.shape or ref.requires_grad != res.requires_grad:
        return False
    if ref.device != res.device:
        res = res.to(ref.device)
    ref, res = ref.detach(), res.detach()
    if not (ref.dtype.is_floating_point or ref.dtype.is_complex):
        return bool(torch.equal(ref, res))
    tol = HALF_TOLERANCE if ref.dtype in (torch.float16, torch.bfloat16) or carries_half_precision(ref, res) \
        else TOLERANCE
    fp64 = None
    if isinstance(fp64_ref, torch.Tensor) and fp64_ref.shape == ref.shape and not ref.dtype.is_complex:
        fp64 = fp64_ref.detach().to(device=ref.device, dtype=torch.float64)
        ref, res, fp64 = _without_shared_non_finite(ref, res, fp64)
    try:
        return bool(same(ref, res, fp64_ref=fp64, tol=tol, equal_nan=True, log_error=lambda *a, **k: None))
    except Exception:  # a tensor kind same() does not handle: compare exactly
        return bool(torch.equal(ref, res))


def values_match(ref: Any, res: Any, fp64_ref: Any = None) -> bool:
    """True if two snapshots are equal under the module's rules.

    ``fp64_ref`` is the same value computed with float64 inputs (or None): it
    decides float tensors that differ beyond the tolerance, as in
    ``torch._dynamo.utils.same``. Raises Incomparable (one line, the torch
    error) when torch cannot compare two tensors of a kind it does not handle.
    """
    try:
        return _match(ref, res, fp64_ref)
    except Incomparable:
        raise
    except Exception as e:
        raise Incomparable(f"{type(e).__name__}: {safe_str(e).splitlines()[0] if safe_str(e) else ''}"[:200]) from None


def _match(ref: Any, res: Any, fp64_ref: Any) -> bool:
    import torch

    fp64_ref = _like(fp64_ref, ref)
    if isinstance(ref, torch.Tensor) or isinstance(res, torch.Tensor):
        if not (isinstance(ref, torch.Tensor) and isinstance(res, torch.Tensor)):
            return False
        return _tensors_match(ref, res, fp64_ref)
    if type(ref) is not type(res):
        return False
    if isinstance(ref, (list, tuple)):
        fp64s = fp64_ref if fp64_ref is not None else [None] * len(ref)
        return len(ref) == len(res) and all(_match(a, b, c) for a, b, c in zip(ref, res, fp64s))
    if isinstance(ref, dict):
        return list(ref) == list(res) and all(
            _match(ref[k], res[k], None if fp64_ref is None else fp64_ref[k]) for k in ref)
    if isinstance(ref, float):
        if math.isnan(ref) or math.isnan(res):
            return math.isnan(ref) and math.isnan(res)
        if math.isclose(ref, res, rel_tol=TOLERANCE, abs_tol=TOLERANCE):
            return True
        # as same(): the compiled value passes if it is as close to the fp64 value as eager's
        if isinstance(fp64_ref, float) and math.isfinite(fp64_ref):
            return abs(res - fp64_ref) <= 2 * abs(ref - fp64_ref) + TOLERANCE / 10
        return False
    return bool(ref == res)


def has_float(value: Any) -> bool:
    """True if a snapshot holds a floating-point tensor or a float anywhere
    (the case where an fp64 reference can decide)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.is_floating_point()
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(has_float(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(has_float(v) for v in value)
    return False


def describe(value: Any) -> str:
    """A short, stable repr of a snapshot for reports (at most MAX_REPR_CHARS); never raises."""
    try:
        return _describe(value)[:MAX_REPR_CHARS]
    except Exception as e:
        return f"<{type_name(value)}: {type(e).__name__} while describing it>"


def _describe(value: Any) -> str:
    import torch

    if isinstance(value, TensorWithGrad):
        text = f"{describe(value.tensor)} grad={describe(value.grad)}"
    elif isinstance(value, TensorKind):
        text = f"<{value.kind} {describe(value.data)}>"
    elif isinstance(value, Opaque):
        text = f"<{value.type_name}: {value.reason}>"
    elif isinstance(value, Digest):
        text = f"<{value.type_name} of {value.length} items, sha256 {value.sha256[:12]}>"
    elif isinstance(value, Drained):
        text = f"<{value.kind} yielded {describe(list(value.items))} returned {describe(value.returned)}>"
    elif isinstance(value, torch.Tensor):
        text = f"tensor(shape={list(value.shape)}, dtype={str(value.dtype).removeprefix('torch.')}"
        if value.numel() and (value.dtype.is_floating_point or value.dtype in (torch.int64, torch.int32, torch.bool)):
            flat = value.detach().flatten()[:4].float().tolist() if value.dtype.is_floating_point else \
                value.detach().flatten()[:4].tolist()
            text += f", values={[round(v, 4) if isinstance(v, float) else v for v in flat]}"
        text += ")"
    elif isinstance(value, (list, tuple)):
        inner = ", ".join(describe(v) for v in value)
        text = f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    elif isinstance(value, dict):
        text = "{" + ", ".join(f"{k!r}: {describe(v)}" for k, v in value.items()) + "}"
    else:
        text = safe_repr(value)
    return text
