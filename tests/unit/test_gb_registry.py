"""Graph breaks torch's registry marks fundamental are documented limitations
(fuzz/triage/gb_registry.py): counted and folded, never minimised, as a graph
break; a graph-break regression of one is still listed as new."""

import json
import logging
from pathlib import Path

import pytest

from fuzz.report.summary import _with_standing
from fuzz.triage import gb_registry, known
from tests.conftest import env_python

FUNDAMENTAL = ("This graph break is fundamental - it is unlikely that Dynamo will ever be able to trace "
               "through your code. Consider finding a workaround.")


def _venv(root: Path, registry: object | None, python_dir: str = "python3.12") -> Path:
    """A venv's layout with ``registry`` as its torch's graph_break_registry.json; its python's path."""
    python = root / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.touch()
    if registry is not None:
        path = root / "lib" / python_dir / "site-packages" / "torch" / "_dynamo" / "graph_break_registry.json"
        path.parent.mkdir(parents=True)
        path.write_text(registry if isinstance(registry, str) else json.dumps(registry))
    return python


REGISTRY = {
    "GB0003": [{"Gb_type": "Attempt to trace generator", "Context": "", "Explanation": "",
                "Hints": ["Call a generator from inside of a non-generator Python function.", FUNDAMENTAL]}],
    "GB0147": [{"Gb_type": "Unsupported function call", "Context": "", "Explanation": "",
                "Hints": ["Please report an issue to PyTorch."]}],
}


def test_only_the_gb_types_with_the_fundamental_hint_are_read_from_each_env(tmp_path, caplog):
    newest = _venv(tmp_path / "py312", REGISTRY)
    other = _venv(tmp_path / "py313t", {"GB0046": [{"Gb_type": "Encountered torch.is_inference_mode_enabled "
                                                    "during tracing", "Hints": [FUNDAMENTAL]}]}, "python3.13t")
    old_torch = _venv(tmp_path / "py311", None)  # torch < 2.8 has no registry
    assert gb_registry.fundamental_gb_types([newest]) == {"Attempt to trace generator"}
    assert gb_registry.fundamental_gb_types([newest, other, old_torch, ""]) == {
        "Attempt to trace generator", "Encountered torch.is_inference_mode_enabled during tracing"}
    assert gb_registry.fundamental_gb_types([old_torch]) == frozenset()
    broken = _venv(tmp_path / "broken", "{not json")
    with caplog.at_level(logging.WARNING):
        assert gb_registry.fundamental_gb_types([broken]) == frozenset()
    assert "not a graph-break registry" in caplog.text


def test_a_fundamental_graph_break_is_a_limitation_and_its_regression_is_not(tmp_path):
    python = _venv(tmp_path / "py312", REGISTRY)
    buckets = [
        {"id": "gen000000001", "kind": "graph-break", "detail": "Attempt to trace generator", "new": True},
        {"id": "gen000000002", "kind": "graph-break-regression", "new": True,
         "detail": "Attempt to trace generator [absent on 3.11, 3.12, 3.13]"},
        {"id": "call00000001", "kind": "graph-break", "detail": "Unsupported function call", "new": True},
    ]
    assert {b["id"]: b["standing"] for b in _with_standing([dict(b) for b in buckets], None)} == {
        "gen000000001": "new", "gen000000002": "new", "call00000001": "new"}
    standing = {b["id"]: b["standing"] for b in _with_standing([dict(b) for b in buckets], None, [str(python)])}
    assert standing == {"gen000000001": "limitation", "gen000000002": "new", "call00000001": "new"}
    issues = known.KnownIssues().with_registry([python])
    assert known.standing(buckets[0], issues) is known.Standing.LIMITATION


@pytest.mark.parametrize("name", ["3.12", "3.13t"])
def test_the_worker_envs_torch_marks_generators_and_inference_checks_fundamental(name):
    """The registry's format, on the torch the worker envs run (2.15.0, and 2.12.0 on 3.13t)."""
    python = env_python(name)
    if not python.exists():
        pytest.skip(f"no worker env for Python {name} (scripts/provision.sh)")
    found = gb_registry.fundamental_gb_types([python])
    assert {"Attempt to trace generator", "Encountered tensor.is_inference() during tracing"} <= found
    assert "Unsupported function call" not in found
