"""The minimiser's ``settings/drop`` pass (fuzz.reduce.settings_passes): compile
settings are minimised with the program, with fake checks (no torch)."""

from harness.program import Program
from harness.settings import MAX_AUTOTUNE, CompileSettings
from fuzz.corpus import render
from fuzz.reduce.pipeline import minimize_source
from fuzz.reduce.settings_passes import SettingItem, SettingKind, setting_items, settings_with
from fuzz.triage.signature import Signature

SOURCE = "import torch\n\ndef f(x):\n    return x.sin()\n\ndef inputs():\n    return (torch.ones(3),)\n"
PASSES = {"normalization_pass": {}, "merge_splits_pass": {}, "split_cat_pass": {}, "batch_relu": {},
          "batch_tanh": {}, "batch_detach": {}}
MANY = CompileSettings(dynamic=True, mark_dynamic=((0, 0), (1, 1)), mode=MAX_AUTOTUNE,
                       inductor=(("pre_grad_fusion_options", PASSES), ("freezing", True), ("cpp.simdlen", 1)),
                       dynamo=(("capture_scalar_outputs", True),))


class SettingsCheck:
    """A check whose calls compile with ``settings``; the bug needs what
    ``needs(settings)`` says, and the source keeps ``sin``."""

    def __init__(self, settings, needs):
        self.settings, self.needs, self.seen = settings, needs, []

    def __call__(self, source):
        self.seen.append(self.settings)
        return "sin" in source and self.needs(self.settings)


def test_items_cover_every_setting_and_a_nested_dict_entry_by_entry():
    items = setting_items(MANY)
    assert SettingItem(SettingKind.MODE) in items and SettingItem(SettingKind.DYNAMIC) in items
    assert SettingItem(SettingKind.MARK, (1, 1)) in items
    assert SettingItem(SettingKind.INDUCTOR, "pre_grad_fusion_options", "batch_relu") in items
    assert SettingItem(SettingKind.DYNAMO, "capture_scalar_outputs") in items
    assert len(items) == 1 + 1 + 2 + len(PASSES) + 2 + 1
    assert settings_with(MANY, items) == MANY and settings_with(MANY, []).is_default
    one = settings_with(MANY, [SettingItem(SettingKind.INDUCTOR, "pre_grad_fusion_options", "split_cat_pass")])
    assert one == CompileSettings(inductor=(("pre_grad_fusion_options", {"split_cat_pass": {}}),))


def _passes(settings):
    return dict(dict(settings.inductor).get("pre_grad_fusion_options", {}))


def test_settings_the_bug_does_not_need_are_dropped_down_to_one_nested_entry():
    check = SettingsCheck(MANY, lambda s: "normalization_pass" in _passes(s) and s.dynamic is True)
    result = minimize_source(SOURCE, check, budget_s=60, stages=("settings",))
    assert result.settings == CompileSettings(dynamic=True,
                                              inductor=(("pre_grad_fusion_options", {"normalization_pass": {}}),))
    assert check.settings == result.settings  # later checks compile with the reduced settings
    checks, kept = result.passes["settings/drop"]
    assert kept >= 1 and checks <= 2 * len(setting_items(MANY)), result.passes


def test_a_bug_of_torch_compile_s_defaults_ends_with_no_settings():
    check = SettingsCheck(MANY, lambda s: True)
    result = minimize_source(SOURCE, check, budget_s=60)
    assert result.settings is not None and result.settings.is_default
    assert result.passes["settings/drop"] == [1, 1]  # the defaults first: one check
    assert all(s.is_default for s in check.seen[2:])  # every check after it compiles with the defaults


def test_settings_that_all_matter_are_kept_and_a_check_without_settings_is_left_alone():
    needed = CompileSettings(dynamic=False, dynamo=(("capture_scalar_outputs", True),))
    check = SettingsCheck(needed, lambda s: s == needed)
    assert minimize_source(SOURCE, check, budget_s=60, stages=("settings",)).settings == needed
    plain = minimize_source(SOURCE, lambda s: "sin" in s, budget_s=60, stages=("settings",))
    assert plain.settings is None and "settings/drop" not in plain.passes


def test_a_fast_check_that_rejects_the_reduced_settings_in_full_keeps_the_input_s():
    class FastCheck(SettingsCheck):
        fast = True

        def confirm(self, source):  # every interpreter: the bug needs freezing there
            return ("freezing", True) in self.settings.inductor

    check = FastCheck(MANY, lambda s: "normalization_pass" in _passes(s))
    result = minimize_source(SOURCE, check, budget_s=60, stages=("settings",))
    assert result.settings == MANY and check.settings == MANY
    assert result.passes["confirm/full-signature"][0] >= 1


def test_the_rendered_case_shows_the_kept_settings():
    check = SettingsCheck(MANY, lambda s: "batch_tanh" in _passes(s))
    result = minimize_source(SOURCE, check, budget_s=60, stages=("settings",))
    sig = Signature("divergence", "inductor", "value", ("3.12",))
    text = render.render_case(Program(result.source), sig, backend="inductor", settings=result.settings)
    assert "'batch_tanh': {}" in text and "normalization_pass" not in text
    assert "dynamic" not in text.split("# ///")[1] and "capture_scalar_outputs" not in text


def test_a_filed_finding_records_the_settings_the_minimiser_kept(tmp_path, monkeypatch):
    """file_finding: the minimiser's checks run on the workers with the settings
    it tries, and the filed case's table and runner carry the kept ones."""
    from harness import casefile
    from harness.outcome import CallResult, Outcome, Verdict
    from fuzz.campaign.interpreters import Interpreter
    from fuzz.corpus import filing, store
    from fuzz.triage.signature import Finding

    class Pool:  # the bug shows while normalization_pass is on, whatever else is
        def run_all(self, tasks):
            out = []
            for t in tasks:
                bug = "normalization_pass" in _passes(t.settings) and "sin" in t.program.source
                out.append(Outcome(program_id="p", interpreter=t.interpreter, backend=t.backend,
                                   verdict=Verdict.DIVERGENCE if bug else Verdict.MATCH, aspect="value",
                                   eager=[CallResult("fresh", "tensor([1.])")],
                                   compiled=[CallResult("fresh", "tensor([2.])" if bug else "tensor([1.])")]))
            return out

    monkeypatch.setattr(store, "run_standalone", lambda text, interps: {i.name: 1 for i in interps})
    sig = Signature("divergence", "inductor", "value", ("3.12",))
    case = filing.file_finding(Pool(), Finding(sig, "inductor"), Program(SOURCE), names=["3.12"],
                               interpreters=[Interpreter("3.12", tmp_path / "python")], corpus_dir=tmp_path,
                               device="cpu", fullgraph=False, jobs=1, budget_s=60, torch_version="2.15.0",
                               settings=MANY)
    assert case.filed, case.reason
    text = case.path.read_text()
    assert casefile.read_table(text)["compile"] == {
        "inductor": {"pre_grad_fusion_options": {"normalization_pass": {}}}}
    assert "torch._inductor.config.patch({'pre_grad_fusion_options': {'normalization_pass': {}}})" in text
    assert "freezing" not in text and "dynamic" not in text.split("# ///")[1]
