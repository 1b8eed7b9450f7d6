"""The default torch release is written once in Python (harness.casefile);
tox.ini cannot import it, so this holds its pin to the constant."""

import configparser
import re
from pathlib import Path

from harness.casefile import DEFAULT_TORCH

ROOT = Path(__file__).resolve().parents[2]


def test_tox_pins_the_worker_envs_to_the_default_torch():
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini")
    pins = re.findall(r"torch==([0-9][\w.]*)", tox["testenv"]["deps"])
    assert pins == [DEFAULT_TORCH]


def test_a_case_without_a_pin_gets_the_default_torch():
    from harness import casefile

    assert f"torch=={DEFAULT_TORCH}" in casefile.render_header({"kind": "crash"})
