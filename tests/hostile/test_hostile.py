"""The hostile corpus: each program here (``# expect: <verdict>`` on its
first line, ``any`` for any verdict) runs through one warm 3.12 worker, and
the program after it (``after_state.py``, which reads the state the others
change) gets the outcome it gets in a fresh worker."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzz.campaign import interpreters
from fuzz.campaign.workers import Task, Worker
from harness.outcome import Outcome
from harness.program import Program
from tests.conftest import require_env

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
PROGRAMS = sorted(p for p in HERE.glob("*.py") if not p.name.startswith(("test_", "__")))
CONTROL = HERE / "after_state.py"


def expected(path: Path) -> str:
    first = path.read_text().splitlines()[0]
    assert first.startswith("# expect: "), f"{path.name}: the first line must be '# expect: <verdict>'"
    return first.removeprefix("# expect: ").strip()


def essence(o: Outcome) -> tuple:
    return (o.verdict, o.aspect, [c.value for c in o.eager], [c.value for c in o.compiled],
            [c.exc_type for c in o.compiled], o.graph_count, o.recompiles)


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    require_env("3.12")
    w = Worker(interpreters.resolve("3.12"), tmp_path_factory.mktemp("logs"), run_timeout_s=60)
    w.start()
    yield w
    w.close()


def run(worker: Worker, path: Path, backend: str = "eager") -> Outcome:
    return worker.run(Task(Program(path.read_text(), generator=f"file:{path.name}"), "3.12", backend))


def test_the_corpus_has_a_program_of_each_kind():
    names = {p.stem for p in PROGRAMS}
    assert {"subclass_return", "exotic_tensors", "raising_dunders", "self_referential", "system_exit",
            "keyboard_interrupt", "exception_str_raises", "eager_exits", "eager_kills", "leaves_state",
            "thread_left_running", "guard_attribute", "guard_function", "leaked_autocast"} <= names


def test_each_hostile_program_gets_a_verdict_and_the_next_program_is_unchanged(worker):
    fresh = essence(run(worker, CONTROL))  # the worker's first program: as in a fresh worker
    for path in PROGRAMS:
        outcome = run(worker, path)  # a worker failure would raise HarnessError here
        want = expected(path)
        assert want == "any" or outcome.verdict.value == want, (path.name, outcome)
        assert essence(run(worker, CONTROL)) == fresh, f"{path.name} changed the next program's outcome"


def test_a_compile_error_under_aot_eager_leaves_the_dispatch_keys_as_they_were(worker):
    """A failed AOTAutograd compile's garbage, collected after the worker put
    its state back, used to poison the worker (harness.worker._left_garbage):
    the next program was invalid on every backend."""
    fresh = essence(run(worker, CONTROL, "aot_eager"))
    assert fresh[0].value == "match"
    failed = run(worker, HERE / "inference_mode_compile_error.py", "aot_eager")
    assert failed.verdict.value != "invalid", failed
    assert essence(run(worker, CONTROL, "aot_eager")) == fresh
    assert essence(run(worker, CONTROL)) == essence(run(worker, CONTROL))


class HostileCampaign:
    """A campaign (fuzz.campaign.loop.Campaign) whose seeds draw the hostile
    programs in turn instead of generated ones."""

    @staticmethod
    def make(config):
        from fuzz.campaign.loop import Campaign

        class _Campaign(Campaign):
            def _next_program(self, seed: int) -> Program:
                path = PROGRAMS[(seed - config.seed) % len(PROGRAMS)]
                return Program(path.read_text(), generator=f"file:{path.name}")

        return _Campaign(config)


def test_a_campaign_over_the_hostile_corpus_ends_without_a_harness_failure(tmp_path):
    require_env("3.12")
    from fuzz.campaign.config import CampaignConfig
    from fuzz.campaign.database import CampaignDB

    config = CampaignConfig(interpreters=[interpreters.resolve("3.12")], backends=["eager"], out_dir=tmp_path / "c",
                            corpus_dir=tmp_path / "corpus", budget_s=None, programs=len(PROGRAMS), seed=0,
                            minimise=False, feedback=False, name="hostile")
    result = HostileCampaign.make(config).run()  # a worker failure would raise HarnessError
    assert result.summary["programs"] == len(PROGRAMS)
    db = CampaignDB(tmp_path / "c" / "campaign.sqlite")
    try:
        verdicts = {o.program_id: o.verdict.value for o in db.outcomes()}
    finally:
        db.close()
    for path in PROGRAMS:
        want = expected(path)
        got = verdicts[Program(path.read_text()).program_id]
        assert want == "any" or got == want, (path.name, got)
