"""Each comparison rule of the oracle, with a case that must match and one
that must diverge. Runs inside a worker env (needs torch); the host suite runs
it there through tests/slow/test_oracle_rules.py."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from harness import compare  # noqa: E402


def match(a, b, fp64=None):
    return compare.values_match(compare.snapshot(a), compare.snapshot(b), fp64)


def test_float_tensors_within_tolerance_match_beyond_it_diverge():
    x = torch.linspace(-1, 1, 50)
    assert match(x, x + 1e-6)
    assert not match(x, x + 1e-2)


def test_fp64_reference_decides_float_differences():
    """torch's rule: compiled may differ from eager if it is as close to fp64 as eager."""
    exact = torch.linspace(0, 1, 2000, dtype=torch.float64)
    eager = (exact + 1e-3).float()  # eager itself is off by 1e-3
    closer = (exact + 5e-4).float()  # compiled is closer to the truth
    further = (exact + 1e-1).float()
    assert not match(eager, closer)  # beyond tolerance without a reference
    assert match(eager, closer, exact)
    assert not match(eager, further, exact)


def test_half_precision_uses_half_tolerance():
    x = torch.linspace(-1, 1, 50, dtype=torch.bfloat16)
    assert match(x, x * (1 + 2**-9))
    assert not match(x, x + 0.5)


def test_integer_and_bool_tensors_compare_exactly():
    i = torch.arange(10)
    assert match(i, i.clone())
    assert not match(i, i + torch.eye(10, dtype=torch.long)[0])
    b = torch.tensor([True, False])
    assert match(b, b.clone())
    assert not match(b, ~b)


def test_dtype_shape_and_requires_grad_always_match():
    x = torch.ones(3)
    assert match(x, torch.ones(3))
    assert not match(x, torch.ones(3, dtype=torch.float64))
    assert not match(x, torch.ones(1, 3))
    assert not match(x, torch.ones(3, requires_grad=True))


def test_gradients_of_leaf_tensors_are_compared():
    def with_grad(scale):
        leaf = torch.ones(3, requires_grad=True)
        (leaf * scale).sum().backward()
        return leaf

    assert match(with_grad(2.0), with_grad(2.0))
    assert not match(with_grad(2.0), with_grad(3.0))


def test_python_floats_and_nans():
    assert match(1.0, 1.0 + 1e-9)
    assert not match(1.0, 1.1)
    assert match(float("nan"), float("nan"))
    assert not match(float("nan"), 1.0)


def test_returned_generators_are_drained_with_their_return_value():
    def gen(items, ret):
        yield from items
        return ret

    assert match(compare.drain(gen([1, 2], "r")), compare.drain(gen([1, 2], "r")))
    assert not match(compare.drain(gen([1, 2], "r")), compare.drain(gen([1, 2], "other")))
    assert not match(compare.drain(gen([1, 2], "r")), compare.drain(gen([1], "r")))
    assert match(compare.drain(iter(map(abs, [-1]))), compare.drain(iter(map(abs, [1]))))
    assert not match(compare.drain(zip([1], [2])), compare.drain(zip([1], [3])))


def test_objects_compare_by_public_state():
    class Box:
        def __init__(self, v, hidden):
            self.v, self._hidden = v, hidden

    assert match(Box(1, "a"), Box(1, "b"))
    assert not match(Box(1, "a"), Box(2, "a"))


def test_containers_compare_element_wise():
    assert match({"a": [torch.ones(2), 1]}, {"a": [torch.ones(2), 1]})
    assert not match({"a": [torch.ones(2), 1]}, {"a": [torch.ones(2), 2]})
    assert not match({"a": 1, "b": 2}, {"b": 2, "a": 1})  # insertion order is behaviour
    assert not match([1], (1,))


@pytest.mark.parametrize("eager, compiled, same", [
    ("index 5 is out of bounds for <object at 0x7f00deadbeef>", "index 5 is out of bounds for <object>", True),
    ('File "/tmp/a/prog_1234abcd.py", line 3, bad', 'File "/other/prog_99.py", line 7, bad', True),
    ("got tensor([1., 2.], grad_fn=<AddBackward0>)", "got tensor([1., 2.])", True),
    ("list index out of range", "tuple index out of range", False),
    ("expected 3 got 4", "expected 3 got 5", False),
])
def test_exception_messages_are_normalised(eager, compiled, same):
    assert (compare.normalise_message(eager) == compare.normalise_message(compiled)) is same


class Tagged(torch.Tensor):
    pass


class Refusing(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        raise RuntimeError("refuses every op")


def test_a_tensor_subclass_compares_its_type_then_its_plain_data():
    x = torch.arange(4.0)
    assert match(x.as_subclass(Tagged), x.clone().as_subclass(Tagged))
    assert not match(x.as_subclass(Tagged), x)  # the subclass type was lost
    assert not match(x.as_subclass(Tagged), (x + 1).as_subclass(Tagged))
    with torch._C.DisableTorchFunctionSubclass():
        hostile = x.as_subclass(Refusing)
    assert match(hostile, hostile) and "Refusing" in compare.describe(compare.snapshot(hostile))


def test_sparse_quantised_complex_and_meta_tensors_compare():
    x = torch.arange(4.0)
    assert match(x.to_sparse(), x.to_sparse()) and not match(x.to_sparse(), (x + 1).to_sparse())
    q = torch.quantize_per_tensor(x, 0.1, 0, torch.qint8)
    assert match(q, q) and not match(q, torch.quantize_per_tensor(x + 1, 0.1, 0, torch.qint8))
    assert match(torch.complex(x, x), torch.complex(x, x)) and not match(torch.complex(x, x), torch.complex(x, -x))
    assert match(torch.empty(2, device="meta"), torch.empty(2, device="meta"))
    assert not match(torch.empty(2, device="meta"), torch.empty(3, device="meta"))


class Hostile:
    __slots__ = ()

    def __eq__(self, other):
        raise ValueError("no eq")

    def __repr__(self):
        raise ValueError("no repr")

    __hash__ = object.__hash__


class BadInt(int):
    def __eq__(self, other):
        raise ValueError("no eq")

    __hash__ = int.__hash__


def test_values_whose_dunders_raise_compare_without_running_them():
    assert match([Hostile(), {Hostile(): 1}, {Hostile()}], [Hostile(), {Hostile(): 1}, {Hostile()}])
    assert match(BadInt(3), BadInt(3)) and not match(BadInt(3), BadInt(4))
    assert compare.describe(10 ** 5000).startswith("<int: repr raised")  # past int-to-str's digit limit
    assert compare.safe_str(type("E", (Exception,), {"__str__": lambda self: 1 / 0})()).endswith(
        "raised ZeroDivisionError>")


def test_self_referential_and_huge_values_are_snapshotted():
    a = [1]
    a.append(a)
    d = {"k": 1}
    d["self"] = d
    assert compare.snapshot(a) == [1, "<cycle>"] and compare.snapshot(d) == {"k": 1, "self": "<cycle>"}
    big = list(range(10 ** 6))
    digest = compare.snapshot(big)
    assert isinstance(digest, compare.Digest) and digest.length == 10 ** 6
    assert match(big, list(range(10 ** 6))) and not match(big, list(range(1, 10 ** 6 + 1)))


def test_a_comparison_torch_cannot_make_is_incomparable_not_a_harness_failure(monkeypatch):
    import torch._dynamo.utils

    def broken(*args, **kwargs):
        raise RuntimeError("cannot compare")

    monkeypatch.setattr(torch._dynamo.utils, "same", broken)
    monkeypatch.setattr(torch, "equal", broken)
    with pytest.raises(compare.Incomparable, match="RuntimeError: cannot compare"):
        compare.values_match(compare.snapshot(torch.ones(2)), compare.snapshot(torch.ones(2)))


def noisy_pair(n=60, seed=0):
    """A float64 truth, eager off by 1e-3 and compiled closer to it (torch's rule passes compiled)."""
    g = torch.Generator().manual_seed(seed)
    exact = torch.randn(n, generator=g, dtype=torch.float64)
    eager = (exact + 1e-3 * torch.randn(n, generator=g, dtype=torch.float64)).float()
    compiled = (exact + 5e-4 * torch.randn(n, generator=g, dtype=torch.float64)).float()
    return exact, eager, compiled


def test_a_shared_nan_does_not_make_the_fp64_rule_vacuous():
    """same() passes any tensor whose eager and compiled RMSEs against fp64 are
    both NaN (one shared NaN element does that): the oracle leaves such
    elements out, so a compiled value wrong elsewhere still diverges."""
    from torch._dynamo.utils import same

    exact, eager, compiled = noisy_pair()
    for t in (exact, eager, compiled):
        t[7] = float("nan")
    assert not match(eager, compiled) and match(eager, compiled, exact)  # an accuracy artifact passes
    wrong = compiled.clone()
    wrong[20] += 1.0
    assert same(eager, wrong, fp64_ref=exact, tol=compare.TOLERANCE, equal_nan=True, log_error=lambda *a: None)
    assert not match(eager, wrong, exact)  # torch's rule alone would pass it
    inf_wrong = wrong.clone()
    for t in (exact, eager, inf_wrong):
        t[7] = float("inf")
    assert not match(eager, inf_wrong, exact)


def test_eager_nan_where_compiled_matches_fp64_is_left_to_torchs_rule():
    """F.normalize of a zero fp16 column is NaN in eager (its eps underflows) and
    0 in Inductor's fp32 code, as in float64: same() passes that ("res is BETTER")."""
    exact, eager, compiled = noisy_pair()
    exact[3] = compiled[3] = 0.0
    eager[3] = float("nan")
    assert match(eager, compiled, exact)
    worse = compiled.clone()
    worse[3] = float("nan")
    worse[10] += 1.0
    assert not match(eager, worse, exact)


def test_where_only_the_fp64_run_is_not_finite_eager_is_the_reference():
    exact, eager, compiled = noisy_pair()
    exact[5] = float("nan")
    assert match(eager, compiled, exact)
    wrong = compiled.clone()
    wrong[5] += 1.0
    assert not match(eager, wrong, exact)


def test_a_float32_copy_of_half_values_has_the_half_tolerance():
    """normalize of a float16 tensor, one element a float16 ulp off under
    decompositions, copied out with .float(): half precision, HALF_TOLERANCE;
    a half copy off by much more diverges, and integers are no evidence."""
    eager = torch.tensor([0.461669921875, -0.8876953125])
    compiled = torch.tensor([0.4619140625, -0.8876953125])
    exact = torch.tensor([0.4617246389389038, -0.887725], dtype=torch.float64)
    assert compare.carries_half_precision(eager, compiled)
    assert match(eager, compiled, exact)
    assert not match(eager, torch.tensor([0.5, -0.8876953125]), exact)  # far past a float16 ulp
    assert not compare.carries_half_precision(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 3.0]))  # integers
