"""The float64 reference run's lifting of the program's own constants.

torch's accuracy rule (``torch._dynamo.utils.same(..., fp64_ref=...)``) needs
the value computed again in float64. torch's benchmark runner makes that run
with ``cast_to_fp64(model, inputs)`` (``benchmarks/dynamo/common.py``): the
model's parameters and buffers are lifted as well as the inputs. A tcfuzz
program has no model object: its constants are written in its text, such as
``torch.linspace(-1.0, 1.0, 20, dtype=torch.bfloat16)`` as a ``linear``
weight, a ``batch_norm`` running mean or an ``nn.Module`` parameter, and a
run with only the inputs lifted (``harness.inputs.to_fp64``) meets them with
a float64 operand and raises ("expected m1 and m2 to have the same dtype",
"mixed dtype (CPU): expect parameter to have scalar type of Float"). Without
a reference the oracle falls back to ``allclose`` alone, and every fused
half-precision kernel that rounds once instead of per op is a false alarm.

``lifted()`` is the counterpart of the model cast for program text: while
it is active, a torch call that mixes float64 tensors with float16,
bfloat16 or float32 ones gets those operands lifted to float64 first. What
the program writes into keeps its dtype (the tensor an in-place method or
``__setitem__`` updates, an ``out=`` buffer), and calls with no float64
operand (a factory) are untouched. The program's own casts of a float64
value down to a lower float precision (``.to(torch.bfloat16)``, ``.half()``,
``.float()``) give a float64 copy instead (but a call into a float32
``out=`` buffer, ``torch.clamp(x.float(), -1.0, 1.0, out=buf)``, computes
in the buffer's dtype, as eager did: without that the reference run raised
and the oracle fell back to ``allclose``, a false alarm of the 45-minute
aot_eager campaign on an ill-conditioned gradient): a reference that rounds where
eager rounds shares eager's error, so a backend that keeps the segment in
float32 (Inductor does) looked worse than eager although it was as close to
the true value (the 300-program inductor run's one value divergence, a
float32 gradient through a bfloat16 segment: RMSE 1.93e-4 from the
uncast float64 value for both). Integer, bool and complex tensors are never
lifted.
"""

from __future__ import annotations

from typing import Any

# dtype names lifted where a call mixes them with float64 (harness.inputs lifts the same).
LIFTED_DTYPES = ("float16", "bfloat16", "float32")
# Methods that write into their first argument although their name has no
# trailing underscore (the in-place operators and item assignment).
_WRITES_SELF = frozenset({"__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
                          "__imod__", "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__",
                          "__imatmul__"})
# Keyword arguments a call writes into.
_WRITTEN_KWARGS = frozenset({"out"})

_MODE_CLASS: Any = None


def _dtype_name(value: Any) -> str:
    return str(value.dtype).removeprefix("torch.")


def _tensors(values: Any) -> list:
    """The tensors among ``values`` and one level of lists/tuples in them (``torch.cat([a, b])``)."""
    import torch

    found = []
    for v in values:
        if isinstance(v, torch.Tensor):
            found.append(v)
        elif isinstance(v, (list, tuple)):
            found.extend(x for x in v if isinstance(x, torch.Tensor))
    return found


def _lift(value: Any) -> Any:
    """``value`` as float64 if it is a tensor of a LIFTED_DTYPES dtype (lists and tuples element-wise)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(torch.float64) if _dtype_name(value) in LIFTED_DTYPES else value
    if isinstance(value, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in value):
        return type(value)(_lift(x) for x in value)
    return value


def writes_first_argument(func: Any) -> bool:
    """True if torch function ``func`` updates its first argument in place
    (``Tensor.add_``, ``Tensor.clamp_``, ``Tensor.__setitem__``, ``Tensor.__iadd__``)."""
    name = getattr(func, "__name__", "") or ""
    return name in _WRITES_SELF or (name.endswith("_") and not name.endswith("__"))


def lift_arguments(func: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``args`` and ``kwargs`` of a call of ``func`` with the float16,
    bfloat16 and float32 tensors lifted to float64 where some operand is a
    float64 tensor; unchanged otherwise. The tensor an in-place method
    updates and an ``out=`` buffer are never lifted."""
    tensors = _tensors(list(args) + list(kwargs.values()))
    if not any(_dtype_name(t) == "float64" for t in tensors) or not any(
            _dtype_name(t) in LIFTED_DTYPES for t in tensors):
        return args, kwargs
    keep = 1 if args and writes_first_argument(func) else 0
    lifted_args = tuple(args[:keep]) + tuple(_lift(a) for a in args[keep:])
    lifted_kwargs = {k: v if k in _WRITTEN_KWARGS else _lift(v) for k, v in kwargs.items()}
    return lifted_args, lifted_kwargs


def lower_to_out(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``args`` and ``kwargs`` with the float64 tensors cast to the dtype of
    the ``out=`` buffer where that is float16, bfloat16 or float32; unchanged
    otherwise. The buffer keeps its dtype in the reference run, and an
    operator given a float64 operand refuses a lower-precision ``out=``
    ("Found dtype Float but expected Double", ``torch.clamp``); eager
    computed that call in the buffer's dtype, and so does the reference."""
    import torch

    out = kwargs.get("out")
    if not isinstance(out, torch.Tensor) or _dtype_name(out) not in LIFTED_DTYPES:
        return args, kwargs

    def lower(value: Any) -> Any:
        if isinstance(value, torch.Tensor) and _dtype_name(value) == "float64":
            return value.to(out.dtype)
        if isinstance(value, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in value):
            return type(value)(lower(x) for x in value)
        return value

    return tuple(lower(a) for a in args), {k: v if k == "out" else lower(v) for k, v in kwargs.items()}


def casts_float64_down(func: Any, args: tuple, kwargs: dict) -> bool:
    """True for a cast of a float64 tensor to a lower float precision:
    ``x.to(torch.bfloat16)``, ``x.to(y)`` with ``y`` float16, ``x.half()``,
    ``x.bfloat16()``, ``x.float()``."""
    import torch

    name = getattr(func, "__name__", "") or ""
    if name not in ("to", "half", "bfloat16", "float") or not args or not isinstance(args[0], torch.Tensor) \
            or _dtype_name(args[0]) != "float64":
        return False
    if name != "to":
        return True
    target = kwargs.get("dtype")
    for a in args[1:]:
        if target is None and isinstance(a, torch.dtype):
            target = a
        elif target is None and isinstance(a, torch.Tensor):
            target = a.dtype
    return target is not None and str(target).removeprefix("torch.") in LIFTED_DTYPES


def lifted() -> Any:
    """A context manager (a ``torch.overrides.TorchFunctionMode``) under which
    calls mixing float64 with lower-precision float tensors run with those
    lifted to float64 (``lift_arguments``), except into a lower-precision
    ``out=`` buffer (``lower_to_out``), and the program's own down-casts of
    float64 values are skipped (``casts_float64_down``). For the float64
    reference run only."""
    global _MODE_CLASS
    if _MODE_CLASS is None:
        from torch.overrides import TorchFunctionMode

        class LiftToFloat64(TorchFunctionMode):
            """See harness.reference. torch disables the mode inside its own
            ``__torch_function__``, so the lifting ``.to`` calls are not seen."""

            def __torch_function__(self, func, types, args=(), kwargs=None):
                args, kwargs = tuple(args), dict(kwargs or {})
                if casts_float64_down(func, args, kwargs):
                    return args[0].clone()  # a new tensor, as the cast made one, in the graph's autograd
                args, kwargs = lift_arguments(func, *lower_to_out(args, kwargs))
                return func(*args, **kwargs)

        _MODE_CLASS = LiftToFloat64
    return _MODE_CLASS()
