"""torch's after-AOT minifier (fuzz.triage.minifier) on a planted Inductor
bug: torch's own ``inject_relu_bug_TESTING_ONLY``, which makes Inductor's
C++ code for ``relu`` fail to compile."""

from __future__ import annotations

import pytest

from fuzz.campaign import interpreters
from fuzz.triage import minifier
from tests.conftest import require_env

pytestmark = pytest.mark.slow

PLANTED = '''import torch
import torch._inductor.config

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"


def f(x):
    return torch.relu(x.sin()) + x.cos()


if __name__ == "__main__":
    try:
        torch.compile(f, backend="inductor")(torch.randn(4))
    except Exception as e:
        raise SystemExit(f"compiled raised {type(e).__name__}")
'''


def test_the_minifier_reduces_a_planted_inductor_bug_to_its_operator(tmp_path):
    require_env("3.12")
    case = tmp_path / "planted.py"
    case.write_text(PLANTED)
    result = minifier.after_aot_repro(case, interpreters.resolve("3.12"), kind="compile-error")
    assert result.repro, result.note
    forward = result.repro[result.repro.index("def forward"):result.repro.index("def load_args")]
    assert "aten.relu" in forward and "aten.cos" not in forward  # the graph is cut to the failing operator
    assert "save_dir=None" in result.repro and "tcfuzz-minifier-" not in result.repro  # runs elsewhere
    assert "/tcfuzz/" not in result.repro
