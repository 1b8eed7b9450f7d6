"""harness.threads classifies as harness.execute does: the same comparison
(execute.call_difference, in threads.ASPECTS) and the same rule for torch's
own errors (execute.is_compile_error: an ``assert`` raised inside the
compiler is a compile error whatever its type). Runs inside a worker env;
the threads need not run in parallel for these checks (any build will do)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from harness import backends, execute, threads  # noqa: E402
from harness.outcome import Aspect, Verdict  # noqa: E402
from harness.program import Program  # noqa: E402

PROGRAM = """
import torch

def f(x):
    return x * 2 + 1

def inputs():
    return (torch.ones(3, 4),)
"""

# A backend whose compiled code fails an ``assert`` in a frame of Inductor's
# (its code object names a file under torch/_inductor/), not wrapped in any
# torch error type: only execute.raised_in_compiler tells it from the program's.
ASSERTING_BACKEND = '''\
def tcfuzz_test_assert(gm, example_inputs):
    namespace = {}
    exec(compile("def run(*args):\\n    assert False, 'an invariant of the compiler'\\n",
                 "/env/site-packages/torch/_inductor/runtime/fake_launcher.py", "exec"), namespace)
    return namespace["run"]
'''


def test_threads_compares_in_execute_s_aspects():
    assert set(threads.ASPECTS) <= set(execute.CALL_ASPECTS)
    assert Aspect.STDOUT not in threads.ASPECTS  # one stream for all threads


def test_an_assert_inside_the_compiler_is_a_compile_error_on_both_paths(tmp_path, monkeypatch):
    monkeypatch.setitem(backends.PLANTED_BACKENDS, "tcfuzz_test_assert", ASSERTING_BACKEND)
    program = Program(PROGRAM)
    single = execute.run_program(program, "tcfuzz_test_assert", interpreter="test", workdir=str(tmp_path))
    threaded = threads.run_threaded(program, "tcfuzz_test_assert", threads=2, interpreter="test",
                                    workdir=str(tmp_path))
    assert single.verdict is threaded.verdict is Verdict.COMPILE_ERROR, (single, threaded)
    assert single.error_type == threaded.error_type == "AssertionError"
    assert single.torch_frame == threaded.torch_frame == "torch/_inductor/runtime/fake_launcher.py:run"
    assert (single.call, threaded.call, threaded.threads) == ("fresh", "round0/thread0", 2)


def test_a_wrong_backend_diverges_on_value_in_every_thread(tmp_path):
    outcome = threads.run_threaded(Program(PROGRAM), "tcfuzz_add_one", threads=2, interpreter="test",
                                   workdir=str(tmp_path))
    assert (outcome.verdict, outcome.aspect, outcome.call, outcome.threads) == (
        Verdict.DIVERGENCE, Aspect.VALUE, "round0/thread0", 2)
    assert len(outcome.compiled) == 2 * threads.ROUNDS and outcome.eager[0].label == "reference"
