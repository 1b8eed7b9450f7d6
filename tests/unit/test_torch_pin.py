"""Where the torch releases are written: tox.ini pins none (each env's comes
from .tox/pins/<env>.txt, resolved by scripts/provision.sh), and the release
of a case that names none (harness.casefile) is the mission matrix's."""

import configparser
import re
from pathlib import Path

from harness.casefile import DEFAULT_TORCH

ROOT = Path(__file__).resolve().parents[2]


def test_tox_takes_each_envs_torch_from_its_pin_file():
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini")
    deps = tox["testenv"]["deps"]
    assert re.findall(r"torch==", deps) == []
    assert "-r {work_dir}/pins/{env_name}.txt" in deps
    envs = [e.strip() for e in tox["tox"]["env_list"].split(",")]
    assert envs == ["py311", "py312", "py313", "py313t", "py314", "py314t", "py315", "py315t"]
    for env in ("py313t", "py314t", "py315t"):
        assert "PYTHON_GIL = 0" in tox[f"testenv:{env}"]["setenv"]


def test_the_default_case_pin_is_the_mission_torch():
    from fuzz.campaign.torch_releases import MATRIX_TORCH, Matrix

    assert MATRIX_TORCH[Matrix.MISSION] == DEFAULT_TORCH


def test_a_case_without_a_pin_gets_the_default_torch():
    from harness import casefile

    assert f"torch=={DEFAULT_TORCH}" in casefile.render_header({"kind": "crash"})


def test_pin_for_honours_tcfuzz_torch(monkeypatch, tmp_path):
    from fuzz.campaign import torch_releases

    monkeypatch.setenv("TCFUZZ_TORCH", "torch==2.13.0")
    assert torch_releases.pin_for(tmp_path / "python") == "torch==2.13.0"
    monkeypatch.delenv("TCFUZZ_TORCH")
    monkeypatch.setattr(torch_releases, "newest_release", lambda python: "2.15.0")
    assert torch_releases.pin_for(tmp_path / "python") == "torch==2.15.0"
    pin = tmp_path / "pins" / "py312.txt"
    monkeypatch.setattr(torch_releases, "pin_for", lambda python: "torch==2.15.0")
    assert torch_releases.main(["--python", "x", "--pin-file", str(pin)]) == 0
    assert pin.read_text() == "torch==2.15.0\n"

    def offline(python):
        raise torch_releases.HarnessError("the index cannot be reached")
    monkeypatch.setattr(torch_releases, "pin_for", offline)
    assert torch_releases.main(["--python", "x", "--pin-file", str(pin)]) == 0  # keeps what it has
    assert torch_releases.main(["--python", "x", "--pin-file", str(tmp_path / "none.txt")]) == 1
