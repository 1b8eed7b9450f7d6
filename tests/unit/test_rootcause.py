"""Root-cause keys: one bug is one key whatever channel showed it, two bugs two.

The outcomes in tests/unit/data/rootcause/outcomes.json were recorded once
(harness.execute.run_program, CPython 3.12, torch 2.12.0, backend eager, or
the case's own) for the corpus's divergence programs as they were before
their re-keying (ids below) and for the constructed programs next to it, so
these tests run on the host without torch.
"""

from __future__ import annotations

import collections
import itertools
import json
from pathlib import Path

import pytest

from harness.outcome import Aspect, CallResult, Outcome, Verdict
from fuzz.corpus import store
from fuzz.triage.language import features_text, language_features
from fuzz.triage.rootcause import Channel, DivergenceClass, message_template, root_cause
from fuzz.triage.signature import Signature, findings
from fuzz.triage.skeleton import skeleton

DATA = Path(__file__).parent / "data" / "rootcause"
RECORDED = json.loads((DATA / "outcomes.json").read_text())
# One bug each: the issue's labelled corpus families and the constructed ones.
FAMILIES = {
    "grad-mode object entered after a graph break": [
        *(f"corpus/divergence/{c}" for c in "841655829fb4 badc202f100b 7c95ce2248c2 83365fda8d6d f19852baeb1f".split()),
        *(f"constructed/grad_{c}" for c in ("value", "stdout", "global_state", "backward"))],
    "generator send": ["corpus/divergence/38d4098dc31b", "corpus/divergence/5555b2ab479f",
                       "constructed/send_value", "constructed/send_stdout"],
}
LABEL = {name: next((f for f, members in FAMILIES.items() if name in members), name) for name in RECORDED}


def _source(name: str) -> str:
    return (DATA / "programs" / f"{name.replace('/', '_')}.py").read_text()


def _finding_signature(name: str) -> tuple[Signature, Outcome]:
    outcome = Outcome.from_json(RECORDED[name])
    [finding] = [f for f in findings([outcome]) if f.signature.kind == "divergence"]
    return finding.signature, outcome


def keys_before() -> dict[str, str]:
    """The former key: what was observed, then the language features."""
    keys = {}
    for name in RECORDED:
        sig, _ = _finding_signature(name)
        keys[name] = f"{sig.key}|{features_text(language_features(_source(name)))}"
    return keys


def keys_after() -> dict[str, str]:
    keys = {}
    for name in RECORDED:
        sig, outcome = _finding_signature(name)
        keys[name] = sig.with_root_cause(_source(name), [outcome]).id
    return keys


def dedup(keys: dict[str, str]) -> dict[str, int]:
    """Causes with one key, cause pairs with no key in common, and keys per family."""
    by_cause = collections.defaultdict(set)
    for name, key in keys.items():
        by_cause[LABEL[name]].add(key)
    pairs = list(itertools.combinations(by_cause, 2))
    return {"causes": len(by_cause), "one_key": sum(len(k) == 1 for k in by_cause.values()),
            "pairs": len(pairs), "pairs_apart": sum(not (by_cause[a] & by_cause[b]) for a, b in pairs),
            **{family: len(by_cause[family]) for family in FAMILIES}}


def test_the_former_keys_split_each_family_and_the_root_cause_keys_do_not():
    before, after = dedup(keys_before()), dedup(keys_after())
    assert before["grad-mode object entered after a graph break"] == 9 and before["generator send"] >= 3
    assert before["one_key"] == before["causes"] - 2
    assert after["grad-mode object entered after a graph break"] == 1 and after["generator send"] == 1
    assert after["one_key"] == after["causes"] == 9
    assert after["pairs_apart"] == after["pairs"] == 36  # no two different bugs share a key


def test_the_channel_is_a_label_and_the_grad_observation_is_a_wrong_result():
    sig, outcome = _finding_signature("corpus/divergence/7c95ce2248c2")
    cause = root_cause(sig.detail, _source("corpus/divergence/7c95ce2248c2"), stage="dynamo",
                       fingerprint=__import__("fuzz.triage.rootcause", fromlist=["x"]).exception_fingerprint([outcome]))
    assert cause.klass is DivergenceClass.WRONG_RESULT and cause.channel is Channel.GRAD
    printed, _ = _finding_signature("corpus/divergence/badc202f100b")
    assert root_cause(printed.detail, _source("corpus/divergence/badc202f100b"), stage="dynamo").channel \
        is Channel.STDOUT


def test_a_compiled_exception_is_keyed_by_its_message_with_the_program_s_names_abstracted():
    assert message_template("cannot access local variable 't2' where it is", {"t2"}) == \
        "cannot access local variable '<name>' where it is"
    assert message_template("'tuple_iterator' object has no attribute 'send'", {"t2"}) == \
        "'tuple_iterator' object has no attribute 'send'"
    text = "takes 2 positional arguments but 4 were given at 0xdeadbeef"
    assert message_template(message_template(text)) == message_template(text) == \
        "takes N positional arguments but N were given at N"


GRAD_PROGRAM = """import torch

def f(x):
    ctx = torch.set_grad_enabled(False)
    torch._dynamo.graph_break()
    with ctx:
        y = x * 2
    return y
"""


@pytest.mark.parametrize("variant", [
    # renamed, another constant, an unused import, a returned value instead of a print
    GRAD_PROGRAM.replace("ctx", "mode").replace("x * 2", "x * 3"),
    "import math\n" + GRAD_PROGRAM.replace("    return y\n", "    print(y)\n"),
    # what the minimiser leaves after deleting statements one by one
    GRAD_PROGRAM.replace("        y = x * 2\n", "        pass\n").replace("    return y\n", ""),
    # inside a shape-guarded branch and after unrelated tensor code
    GRAD_PROGRAM.replace("    ctx =", "    z = x.sin() + 1\n    if x.shape[0] > 1:\n        ctx =")
    .replace("    torch._dynamo", "        torch._dynamo", 1).replace("    with ctx:\n        y", "        with ctx:\n            y"),
])
def test_re_minimising_or_rewriting_a_case_keeps_its_skeleton(variant):
    assert skeleton(variant) == skeleton(GRAD_PROGRAM)


LOCAL_CLASS_PROGRAM = """import torch

def f(x):
    class C:
        scale = 0.5

        def apply(self, v):
            return v * self.scale
    obj = C()
    a = obj.apply(x)
    C.scale = 0.75
    return a, obj.apply(x)
"""


@pytest.mark.parametrize("variant", [
    LOCAL_CLASS_PROGRAM.replace("class C:", "class C(object):"),
    # an empty base defined before the class, in f or at module level
    LOCAL_CLASS_PROGRAM.replace("    class C:", "    class Base:\n        pass\n    class C(Base):"),
    LOCAL_CLASS_PROGRAM.replace("def f(x):", "class Base:\n    pass\n\ndef f(x):").replace("class C:", "class C(Base):"),
    # the attribute found through the base
    LOCAL_CLASS_PROGRAM.replace("    class C:\n        scale = 0.5\n", "    class Base:\n        scale = 0.5\n    class C(Base):\n"),
])
def test_the_local_class_bug_seen_through_a_base_class_keeps_its_key(variant):
    # the 2.15.0 regression of corpus/divergence/0905e7b83163 (was c06658bcb364), re-found with its class given a base
    assert skeleton(variant) == skeleton(LOCAL_CLASS_PROGRAM)


def test_a_base_class_the_program_also_uses_is_not_merged():
    module = LOCAL_CLASS_PROGRAM.replace("class C:", "class C(torch.nn.Module):")
    assert skeleton(module) != skeleton(LOCAL_CLASS_PROGRAM)
    used = LOCAL_CLASS_PROGRAM.replace("    class C:", "    class Base:\n        pass\n    class C(Base):").replace(
        "    obj = C()", "    obj = C()\n    other = Base()\n    other.scale = 1")
    assert "class v1" in skeleton(used) and "class v2(v1)" in skeleton(used)


def test_what_the_bug_needs_stays_in_the_skeleton():
    entered_before = GRAD_PROGRAM.replace("    ctx = torch.set_grad_enabled(False)\n    torch._dynamo.graph_break()\n"
                                          "    with ctx:\n", "    with torch.set_grad_enabled(False):\n"
                                          "        torch._dynamo.graph_break()\n")
    assert skeleton(entered_before) != skeleton(GRAD_PROGRAM)
    consumed = "def f(x):\n    it = reversed([1, 2])\n    list(it)\n    return next(it, x)\n"
    assert "list(v2)" in skeleton(consumed)  # consuming an iterator is an effect, not an observation
    assert "torch.sin" in skeleton("import torch\ndef f(x):\n    y = torch.sin(x)\n    x.add_(y)\n", stage="inductor")
    # a container's reorder is an effect (pytorch#198189), not a tensor method
    assert "move_to_end" in skeleton("def f(x, cache):\n    cache.move_to_end('a')\n    return x + 1\n")
    # an operator on a tensor subclass runs its __torch_function__: two such bugs and an empty f are three keys
    hooked = ("import torch\nclass H(torch.Tensor):\n    @classmethod\n"
              "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
              "        out = super().__torch_function__(func, types, args, kwargs or {})\n"
              "        if func is torch.Tensor.add:\n            out = out * 0\n        return out\n"
              "def f(x):\n    t = x.as_subclass(H) + 0\n    print(t)\n    return x\n")
    keys = {skeleton(hooked), skeleton(hooked.replace("torch.Tensor.add", "torch.Tensor.mul")), skeleton("def f(x):\n    return x\n")}
    assert len(keys) == 3 and "__torch_function__" in skeleton(hooked)


def test_a_bug_in_the_returned_value_keeps_that_value_and_its_channel_stays_a_label():
    """Two different bugs whose whole computation is what f returns or prints
    (builtin format(n, "b") giving str(n), pytorch#144830's fix; a module's
    function called through a stale alias) are two keys, not the empty
    ``def f():`` both collapsed to; returning or printing the value is one key;
    a call with out= writes its argument."""
    fmt = "def f(x, n):\n    return x + 1, format(n, 'b')\n"
    alias = "def f(x, g):\n    return g(x)\n"
    printed = "def f(x, n):\n    print(x + 1, format(n, 'b'))\n"
    assert "format(v2, C)" in skeleton(fmt) and skeleton(fmt) != skeleton(alias)
    assert skeleton(fmt) == skeleton(printed)
    assert skeleton(fmt).startswith("def f(") and skeleton(fmt) != "def f():\n"
    assert "out=v1" in skeleton("import torch\ndef f(s):\n    torch.clamp(s.float(), 0, out=s)\n    return s\n",
                                stage="inductor")
    # a program with more than its observation keeps only that, as before
    assert "observed" not in skeleton(CONSUMED_PROGRAM)


CONSUMED_PROGRAM = "def f(x):\n    it = reversed([1, 2])\n    list(it)\n    return next(it, x)\n"


def _case_outcome(sig: Signature, backend: str) -> Outcome:
    """The outcome a run of the case on its interpreters reports, rebuilt from
    what its signature records (the observed aspect and call, the compiled
    exception and its message), so the repro id can be checked without torch."""
    observed, root = sig.observed, sig.root
    call = observed.rsplit("@", 1)[1] if "@" in observed else "fresh"
    aspect = observed.split("@", 1)[0].split(":", 1)[0]
    error_type = observed.split("@", 1)[0].split(":", 1)[1] if ":" in observed else ""
    message = root.split(": ", 1)[1] if root.startswith(("raises ", "message ")) or "->" in root.split(":", 1)[0] else ""
    if message.startswith("in "):
        message = ""
    if aspect == Aspect.EXCEPTION_MESSAGE.value:
        error_type = observed.split("@", 1)[0].split(":", 1)[1]
    compiled_type = error_type.split("->")[-1] if error_type else None
    if root.startswith("wrong-result") and compiled_type not in (None, "None"):
        # a compiled exception keyed as a wrong result is autograd observing the wrong grad mode
        message = "element 0 of tensors does not require grad and does not have a grad_fn"
    results = [CallResult(label=c, exc_type=None if compiled_type in (None, "None") else compiled_type,
                          exc_message=message) for c in ("fresh", "cached", "guard", "shape")]
    return Outcome(program_id="p", interpreter=sig.interpreters[0], backend=backend, verdict=Verdict.DIVERGENCE,
                   aspect=aspect, call=call if call != "fresh" else "", error_type=error_type,
                   eager=[CallResult(label=c) for c in ("fresh", "cached", "guard", "shape")], compiled=results)


@pytest.mark.parametrize("path", [p for p in store.list_cases(Path("corpus")) if p.parent.name == "divergence"],
                         ids=lambda p: p.stem)
def test_repro_of_every_divergence_case_computes_that_case_s_own_id(path):
    """What ``tcfuzz repro CASE`` prints as the id (``with_root_cause`` of the
    case's program as read_case gives it, over the run's outcomes) is the
    case's file name: the runner is not part of the program."""
    program, meta = store.read_case(path)
    sig = Signature.parse(meta["signature"])
    outcome = _case_outcome(sig, meta["backend"])
    outcomes = [dataclasses_replace(outcome, interpreter=name) for name in sig.interpreters]
    [finding] = [f for f in findings(outcomes) if f.signature.kind == "divergence"]
    assert finding.signature.with_root_cause(program.source, outcomes).id == path.stem == sig.id


def dataclasses_replace(outcome: Outcome, **changes) -> Outcome:
    import dataclasses

    return dataclasses.replace(outcome, **changes)


def test_every_corpus_case_s_file_name_is_its_bucket_id():
    for path in store.list_cases(Path("corpus")):
        assert Signature.parse(store.read_case(path)[1]["signature"]).id == path.stem, path


def test_known_issues_name_existing_cases_and_every_merge_has_a_reason():
    import tomllib

    known = tomllib.loads(Path("corpus/known-issues.toml").read_text())
    ids = {p.stem for p in store.list_cases(Path("corpus"))}
    assert set(known["cases"]) <= ids
    assert all(m["into"] in ids and m["reason"] for m in known["merged"].values())
    assert {m["into"] for k, m in known["merged"].items() if k in FAMILIES_OLD_IDS["grad"]} == {"741b40f445d6"}


FAMILIES_OLD_IDS = {"grad": {"841655829fb4", "badc202f100b", "7c95ce2248c2", "83365fda8d6d", "f19852baeb1f"}}


def test_a_campaign_knows_every_channel_a_merged_bucket_was_seen_through():
    from fuzz.corpus.filing import known_signature_ids

    ids = known_signature_ids(Path("corpus"))
    everywhere = ("3.11", "3.12", "3.13", "3.13t")
    for observed in ("stdout", "value", "global-state", "global-state@shape", "exception:None->RuntimeError"):
        assert Signature("divergence", "dynamo", observed, everywhere).id in ids, observed
    assert Signature("divergence", "dynamo", "mutation", everywhere).id not in ids


def test_one_bug_seen_with_eager_returning_or_raising_gets_one_key():
    """The comprehension-shadow bug (corpus/divergence/f511b6484939): compiled
    raises UnboundLocalError whether eager returned or raised the program's own
    TypeError later (the 1,000-program hypothesmith/mutation campaign found it
    both ways); an exception without a message still keeps eager's type."""
    from fuzz.triage.rootcause import Fingerprint

    shadow = ("import torch\n\ndef f():\n    t2 = 0\n    try:\n        [0 for t2 in (0,)]\n        raise 0\n"
              "    except:\n        torch._dynamo.graph_break()\n    {tail}\n\ndef inputs():\n    return ()\n")
    message = "cannot access local variable 't2' where it is not associated with a value"
    returned = root_cause("exception:None->UnboundLocalError", shadow.format(tail="t2"), stage="dynamo",
                          fingerprint=Fingerprint(None, "UnboundLocalError", message))
    raised = root_cause("exception:TypeError->UnboundLocalError", shadow.format(tail="0(t2)"), stage="dynamo",
                        fingerprint=Fingerprint("TypeError", "UnboundLocalError", message))
    assert returned.text == raised.text == ("raises UnboundLocalError: cannot access local variable '<name>' "
                                            "where it is not associated with a value")
    assert raised.klass is DivergenceClass.OTHER_EXCEPTION
    silent = root_cause("exception:TypeError->AssertionError", shadow.format(tail="0(t2)"), stage="dynamo",
                        fingerprint=Fingerprint("TypeError", "AssertionError", ""))
    assert silent.text.startswith("TypeError->AssertionError: in ")
