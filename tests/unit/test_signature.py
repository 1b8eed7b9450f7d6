from harness.outcome import Aspect, GraphBreak, Outcome, Phase, Verdict
from fuzz.triage.signature import Kind, Signature, findings, normalise


def outcome(interp, backend, verdict=Verdict.MATCH, **kw):
    return Outcome(program_id="p", interpreter=interp, backend=backend, verdict=verdict, **kw)


def test_key_round_trips_and_id_is_stable():
    sig = Signature("divergence", "dynamo", "value", ("3.12", "3.13"))
    assert Signature.parse(sig.key) == sig
    assert sig.id == Signature("divergence", "dynamo", "value", ("3.12", "3.13")).id
    assert sig.id != Signature("divergence", "dynamo", "value", ("3.13",)).id
    assert len(sig.id) == 12


def test_parse_rejects_malformed_keys():
    import pytest

    with pytest.raises(ValueError, match="Expected a signature key"):
        Signature.parse("nonsense")


def test_normalise_removes_addresses_and_lines():
    assert normalise("obj at 0x7f3a2b1c line 12 in  f") == normalise("obj at 0xdeadbeef line 99 in f")


def test_finding_is_attributed_to_lowest_backend_with_its_interpreters():
    outs = [
        outcome("3.11", "eager"),
        outcome("3.12", "eager", Verdict.DIVERGENCE, aspect="value"),
        outcome("3.11", "inductor", Verdict.DIVERGENCE, aspect="value"),
        outcome("3.12", "inductor", Verdict.DIVERGENCE, aspect="value"),
    ]
    [f] = findings(outs)
    assert f.backend == "eager"
    assert f.signature == Signature("divergence", "dynamo", "value", ("3.12",))


def test_distinct_causes_are_distinct_buckets():
    outs = [
        outcome("3.11", "inductor", Verdict.COMPILE_ERROR, error_type="BackendCompilerFailed(X)", torch_frame="torch/a.py:g"),
        outcome("3.12", "inductor", Verdict.DIVERGENCE, aspect="exception", error_type="IndexError->None"),
    ]
    sigs = {f.signature.kind: f.signature for f in findings(outs)}
    assert sigs["compile-error"].stage == "inductor"
    assert sigs["compile-error"].detail == "BackendCompilerFailed(X)@torch/a.py:g"
    assert sigs["divergence"].detail == "exception:IndexError->None"


def test_graph_breaks_bucket_by_gb_type_and_skip_planted_ones():
    gb = GraphBreak(gb_type="Data-dependent branching", reason="x")
    planted = GraphBreak(gb_type="Call to `torch._dynamo.graph_break()`", reason="y")
    outs = [outcome("3.11", "eager", graph_breaks=[gb, planted]), outcome("3.13t", "eager", graph_breaks=[gb]),
            outcome("3.12", "eager", graph_breaks=[planted])]
    [f] = findings(outs)
    # 3.12 traced the program and broke only where the program asked it to
    assert f.signature == Signature("graph-break-regression", "dynamo", "Data-dependent branching [absent on 3.12]",
                                    ("3.11", "3.13t"))


def test_graph_break_on_every_interpreter_that_traced_is_a_plain_graph_break():
    gb = GraphBreak(gb_type="Data-dependent branching", reason="x")
    outs = [outcome("3.11", "eager", graph_breaks=[gb]),
            outcome("3.12", "eager", Verdict.DIVERGENCE, aspect="value", graph_breaks=[gb]),
            # a crash or compile error may stop before the break: not evidence of absence
            outcome("3.13", "eager", Verdict.CRASH, error_type="SIGSEGV"),
            outcome("3.13t", "eager", Verdict.COMPILE_ERROR, error_type="InternalTorchDynamoError")]
    gb_findings = [f for f in findings(outs) if f.signature.kind.startswith("graph-break")]
    assert [f.signature for f in gb_findings] == [
        Signature("graph-break", "dynamo", "Data-dependent branching", ("3.11", "3.12"))]


def test_graph_break_on_some_interpreters_only_is_a_regression():
    gb = GraphBreak(gb_type="Attempt to trace generator", reason="x")
    outs = [outcome("3.11", "eager"), outcome("3.12", "eager"),
            outcome("3.13", "eager", graph_breaks=[gb]), outcome("3.13t", "eager", graph_breaks=[gb]),
            outcome("3.11", "inductor", graph_breaks=[gb])]  # the lowest backend decides
    [f] = findings(outs)
    assert f.backend == "eager"
    sig = f.signature
    assert sig == Signature("graph-break-regression", "dynamo", "Attempt to trace generator [absent on 3.11, 3.12]",
                            ("3.13", "3.13t"))
    assert Signature.parse(sig.key) == sig
    # what must hold on each interpreter of the set is the plain graph break
    assert sig.cause == ("graph-break", "Attempt to trace generator")


def test_regression_needs_a_traced_interpreter_without_the_break():
    gb = GraphBreak(gb_type="Attempt to trace generator", reason="x")
    outs = [outcome("3.11", "eager", Verdict.FLAKY), outcome("3.13", "eager", graph_breaks=[gb])]
    assert [f.signature.kind for f in findings(outs)] == ["graph-break"]


def test_flaky_and_match_are_not_findings():
    assert findings([outcome("3.11", "eager", Verdict.FLAKY), outcome("3.12", "eager")]) == []


class _FakePool:
    """Answers run_all like a WorkerPool: the program breaks wherever ``breaks_on(source)`` says."""

    def __init__(self, breaks_on):
        self.breaks_on = breaks_on

    def run_all(self, tasks):
        gb = GraphBreak(gb_type="Attempt to trace generator", reason="x")
        return [outcome(t.interpreter, t.backend, graph_breaks=[gb] if t.interpreter in self.breaks_on(t.program.source)
                        else []) for t in tasks]


def test_signature_check_of_a_regression_enforces_absence_elsewhere():
    from harness.program import Program
    from fuzz.reduce.check import SignatureCheck

    sig = Signature("graph-break-regression", "dynamo", "Attempt to trace generator [absent on 3.11, 3.12]",
                    ("3.13", "3.13t"))
    where = {"kept": {"3.13", "3.13t"}, "everywhere": {"3.11", "3.12", "3.13", "3.13t"}, "gone": set()}
    pool = _FakePool(lambda source: where[source.strip()])
    check = SignatureCheck(pool, Program(source="kept"), sig, "eager", ["3.11", "3.12", "3.13", "3.13t"])
    assert check("kept")
    assert not check("everywhere")  # breaks on 3.11 and 3.12 too: no longer a regression
    assert not check("gone")


def test_backends_off_the_ladder_are_compilers_of_their_own():
    from harness.outcome import Outcome, Verdict
    from fuzz.triage.signature import findings

    def bad(backend, interp="3.12"):
        return Outcome("p", interp, backend, verdict=Verdict.DIVERGENCE, aspect="value")

    found = findings([bad("aot_eager"), bad("inductor"), bad("inductor", "3.13"), bad("tcfuzz_add_one"),
                      bad("relu_accuracy_error_TESTING_ONLY")])
    stages = sorted((f.signature.stage, f.backend, f.signature.interpreters) for f in found)
    assert stages == [("aot", "aot_eager", ("3.12",)),
                      ("relu_accuracy_error_TESTING_ONLY", "relu_accuracy_error_TESTING_ONLY", ("3.12",)),
                      ("tcfuzz_add_one", "tcfuzz_add_one", ("3.12",))]


def test_a_divergence_signature_carries_the_root_cause_of_its_minimised_program():
    from fuzz.triage.signature import Signature

    base = Signature("divergence", "dynamo", "value", ("3.11", "3.12"))
    loop = base.with_root_cause("import torch\ndef f(x):\n    for i in reversed(range(2)):\n        x = x + i\n"
                                "    return x\ndef inputs():\n    return (torch.ones(2),)\n")
    ctx = base.with_root_cause("import torch\ndef f(x):\n    with torch.no_grad():\n        return x * 2\n")
    assert loop.detail.startswith("value {wrong-result: def f():; .for v1 in reversed(range(C)):")
    assert loop.key != ctx.key and loop.id != ctx.id and loop.cause == ctx.cause == ("divergence", "value")
    assert loop.base() == base and Signature.parse(loop.key) == loop
    # the channel is a label: the same program seen through printed text is the same bucket
    printed = Signature("divergence", "dynamo", "stdout@guard", ("3.11", "3.12")).with_root_cause(
        "import torch\ndef f(x):\n    for i in reversed(range(2)):\n        x = x + i\n    print(x)\n")
    assert printed.key != loop.key and printed.id == loop.id and printed.observed == "stdout@guard"
    crash = Signature("crash", "dynamo", "SIGSEGV@torch/x.py:f", ("3.12",))
    assert crash.with_root_cause("x = 1\n") == crash and crash.id == Signature.parse(crash.key).id


def test_signature_check_bounds_candidate_runs_by_the_case_s_own_run_time():
    """Once the case holds (its runs took 2 s), a candidate gets 5 x 2 s, at
    least 20 s; a "timeout" case keeps the worker's limit (its runs must hang)."""
    from harness.program import Program
    from fuzz.reduce.check import CANDIDATE_TIMEOUT_MIN_S, SignatureCheck

    class Timed(_FakePool):
        def __init__(self, breaks_on, elapsed_s):
            super().__init__(breaks_on)
            self.elapsed_s, self.timeouts = elapsed_s, []

        def run_all(self, tasks):
            self.timeouts += [t.timeout_s for t in tasks]
            outcomes = super().run_all(tasks)
            for o in outcomes:
                o.elapsed_s = self.elapsed_s
            return outcomes

    sig = Signature("graph-break", "dynamo", "Attempt to trace generator", ("3.12",))
    assert CANDIDATE_TIMEOUT_MIN_S == 20.0
    for elapsed_s, expected in ((2.0, 20.0), (8.0, 40.0)):
        pool = Timed(lambda source: {"3.12"}, elapsed_s)
        check = SignatureCheck(pool, Program(source="kept"), sig, "eager", ["3.12"])
        assert check("kept") and pool.timeouts == [None]
        assert check("kept again") and pool.timeouts[-1] == expected
    hang = Signature("timeout", "dynamo", "timeout", ("3.12",))
    pool = Timed(lambda source: {"3.12"}, 2.0)
    check = SignatureCheck(pool, Program(source="kept"), hang, "eager", ["3.12"])
    check("kept"), check("kept again")
    assert pool.timeouts == [None, None]


def test_kinds_are_an_enum_whose_values_are_the_keys():
    for kind in Kind:
        assert kind.describe() and f"{kind}" == kind.value
    assert Kind.of(Verdict.COMPILE_ERROR) is Kind.COMPILE_ERROR
    import pytest

    with pytest.raises(ValueError, match="Expected a bug verdict"):
        Kind.of(Verdict.FLAKY)
    sig = Signature("crash", "dynamo", "SIGSEGV", ("3.12",))
    assert sig.kind is Kind.CRASH and sig == Signature(Kind.CRASH, "dynamo", "SIGSEGV", ("3.12",))
    assert sig.key == "crash|dynamo|SIGSEGV|3.12" and Signature.parse(sig.key).kind is Kind.CRASH
    with pytest.raises(ValueError):
        Signature("bug", "dynamo", "x", ())


# Keys that the tree before Outcome.phase and Kind computed for these outcomes
# (aspect then held "threads:value" or a phase; error types "threads:..."):
# they must not change, or every known bucket would look new.
THREADED_KEYS = [
    "compile-error|inductor|threads:BackendCompilerFailed(AssertionError)@torch/_inductor/lowering.py:f|3.13t",
    "crash|aot@cuda|CUDA error: y@after-run|3.13t",
    "crash|aot|threads:SIGSEGV@torch/x.py:y|3.13t",
    "divergence|aot|threads:exception|3.13t",
    "divergence|dynamo|threads:value|3.13t",
    "timeout|dynamo|timeout|3.13t",
]


def test_threaded_findings_keep_their_keys_built_from_the_new_fields():
    def run(backend, verdict, **kw):
        return Outcome("p", "3.13t", backend, verdict=verdict, threads=4, **kw)

    outs = [run("eager", Verdict.DIVERGENCE, aspect=Aspect.VALUE, call="round0/thread1"),
            run("eager", Verdict.TIMEOUT, phase=Phase.EAGER, error_type="timeout"),
            run("aot_eager", Verdict.DIVERGENCE, aspect=Aspect.EXCEPTION, error_type="None->KeyError",
                call="round1/thread0"),
            run("aot_eager", Verdict.CRASH, phase=Phase.COMPILED, error_type="SIGSEGV", torch_frame="torch/x.py:y"),
            run("aot_eager", Verdict.CRASH, phase=Phase.AFTER_RUN, device="cuda", error_type="CUDA error: y",
                torch_frame="after-run"),
            run("inductor", Verdict.COMPILE_ERROR, error_type="BackendCompilerFailed(AssertionError)",
                torch_frame="torch/_inductor/lowering.py:f", call="round0/thread0")]
    assert sorted(f.signature.key for f in findings(outs)) == THREADED_KEYS
    # the same outcomes as a database row held them before (the old tree's JSON)
    def old(backend, verdict, **kw):
        return {"program_id": "p", "interpreter": "3.13t", "backend": backend, "verdict": verdict, "threads": 4, **kw}

    rows = [old("eager", "divergence", aspect="threads:value", detail="round0/thread1"),
            old("eager", "timeout", aspect="eager", error_type="threads:timeout"),
            old("aot_eager", "divergence", aspect="threads:exception", error_type="threads:None->KeyError",
                detail="round1/thread0"),
            old("aot_eager", "crash", aspect="compiled", error_type="threads:SIGSEGV", torch_frame="torch/x.py:y"),
            old("aot_eager", "crash", aspect="after-run", device="cuda", error_type="CUDA error: y",
                torch_frame="after-run"),
            old("inductor", "compile-error", error_type="threads:BackendCompilerFailed(AssertionError)",
                torch_frame="torch/_inductor/lowering.py:f", detail="round0/thread0")]
    assert sorted(f.signature.key for f in findings(Outcome.from_json(row) for row in rows)) == THREADED_KEYS


def test_a_heap_corruption_abort_and_a_bus_error_are_keyed_as_a_segfault_and_a_plain_abort_is_not():
    def crash(error_type):
        return Outcome("p", "3.12", "inductor", verdict=Verdict.CRASH, phase=Phase.COMPILED, error_type=error_type,
                       torch_frame="torch/_inductor/output_code.py:__call__")
    keys = {error: {f.signature.key for f in findings([crash(error)])}
            for error in ("SIGSEGV", "SIGBUS", "SIGABRT: free(): invalid next size (fast)", "SIGABRT")}
    assert keys["SIGSEGV"] == keys["SIGBUS"] == keys["SIGABRT: free(): invalid next size (fast)"] == {
        "crash|inductor|SIGSEGV@torch/_inductor/output_code.py:__call__|3.12"}
    assert keys["SIGABRT"] == {"crash|inductor|SIGABRT@torch/_inductor/output_code.py:__call__|3.12"}


def test_a_crash_s_phase_is_not_in_its_key_but_a_cuda_fault_s_frame_names_it():
    crash = Outcome("p", "3.12", "inductor", verdict=Verdict.CRASH, phase=Phase.COMPILED, error_type="SIGABRT")
    fault = Outcome("p", "3.12", "inductor", device="cuda", verdict=Verdict.CRASH, phase=Phase.FP64,
                    error_type="CUDA error: illegal memory access", torch_frame="fp64:triton_poi_fused_add")
    assert sorted(f.signature.key for f in findings([crash, fault])) == [
        "crash|inductor@cuda|CUDA error: illegal memory access@fp64:triton_poi_fused_add|3.12",
        "crash|inductor|SIGABRT|3.12"]


def test_a_graph_break_regression_is_its_first_difference_and_later_breaks_are_its_consequences():
    """As in program b7fa0656a8d75085: 3.13 breaks early reading an undefined
    local and so never reaches the data-dependent branch 3.12 breaks on."""
    from fuzz.triage.signature import first_difference

    early = GraphBreak(gb_type="Attempted to read undefined local variable", reason="x", lineno=5)
    branch = GraphBreak(gb_type="Data-dependent branching", reason="y", lineno=9)
    later = GraphBreak(gb_type="Unsupported method call", reason="z", lineno=12)
    common = GraphBreak(gb_type="Attempt to trace generator", reason="g", lineno=2)
    outs = [outcome("3.12", "eager", graph_breaks=[common, branch, later]),
            outcome("3.13", "eager", graph_breaks=[common, early])]
    first = first_difference(outs)
    assert (first.gb_type, first.lineno, first.interpreters) == ("Attempted to read undefined local variable", 5,
                                                                  ("3.13",))
    assert first.consequences == ("3.12: Data-dependent branching at line 9", "3.12: Unsupported method call at line 12")
    sigs = {f.signature.detail: f for f in findings(outs)}
    assert set(sigs) == {"Attempt to trace generator", "Attempted to read undefined local variable [absent on 3.12]"}
    assert sigs["Attempted to read undefined local variable [absent on 3.12]"].consequences == first.consequences
    # the same breaks everywhere: no first difference, no regression
    assert first_difference([outcome("3.12", "eager", graph_breaks=[branch]),
                             outcome("3.13", "eager", graph_breaks=[branch])]) is None
    # one interpreter breaks, the other traced it whole: that break is the finding
    [only] = findings([outcome("3.12", "eager", graph_breaks=[branch]), outcome("3.13", "eager")])
    assert only.signature.detail == "Data-dependent branching [absent on 3.13]" and only.consequences == ()


def test_breaks_every_interpreter_has_do_not_hide_the_first_difference_behind_them():
    from fuzz.triage.signature import first_difference

    a = GraphBreak(gb_type="Attempt to trace generator", reason="a", lineno=2)
    extra = GraphBreak(gb_type="Missing bytecode handler", reason="x", lineno=5)
    b = GraphBreak(gb_type="Unsupported method call", reason="b", lineno=9)
    # 3.11 has one more break before a break both have: that shift is no consequence
    first = first_difference([outcome("3.11", "eager", graph_breaks=[a, extra, b]),
                              outcome("3.12", "eager", graph_breaks=[a, b])])
    assert (first.gb_type, first.interpreters, first.consequences) == ("Missing bytecode handler", ("3.11",), ())
    [f] = [f for f in findings([outcome("3.11", "eager", graph_breaks=[a, extra, b]),
                                outcome("3.12", "eager", graph_breaks=[a, b])]) if f.signature.kind == "graph-break-regression"]
    assert f.signature.detail == "Missing bytecode handler [absent on 3.12]"
