"""Tests for fuzz.report: the three report files, escaping, and atomic writes."""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path

import pytest

from fuzz.report import pages

CASE = "corpus/divergence/ab12cd34ef56.py"
EVIL_SOURCE = "import torch\ndef f(x):\n    return '<script>alert(1)</script>' & x\n"


def sample_summary() -> dict:
    return {
        "campaign": "20261130-021500-seed0",
        "started": "2026-11-30T02:15:00Z", "finished": "2026-11-30T02:28:32Z",
        "programs": 120, "runs": 1440, "elapsed_s": 812.4, "programs_per_s": 0.148,
        "programs_per_s_by_backend": {"eager": 0.9, "aot_eager": 0.5, "inductor": 0.2},
        "verdicts": {"match": 1300, "divergence": 3, "compile-error": 0, "crash": 0,
                     "timeout": 0, "flaky": 0, "invalid": 20},
        "interpreters": {
            "3.11": {"version": "3.11.7", "torch": "2.12.0+cu130", "free_threaded": False, "gil_enabled": True},
            "3.13t": {"version": "3.13.5", "torch": "2.12.0+cu130", "free_threaded": True, "gil_enabled": False},
        },
        "backends": ["eager", "aot_eager", "inductor"], "device": "cpu", "seed": 0,
        "graph_breaks": {"Unsupported builtin": {"3.11": 12, "3.13t": 3},
                         "Data-dependent <branch>": {"3.11": 4}},
        "buckets": [
            {"signature": "divergence|dynamo|value|3.11,3.13t", "id": "ab12cd34ef56", "kind": "divergence",
             "stage": "dynamo", "detail": "value", "interpreters": ["3.11", "3.13t"], "backends": ["eager"],
             "count": 3, "case": CASE, "new": True,
             "matrix": {"3.11": {"eager": "divergence", "aot_eager": "match"},
                        "3.13t": {"eager": "divergence", "aot_eager": "compile-error"}}},
            {"signature": "graph-break|dynamo|x|3.11", "id": "0123456789ab", "kind": "graph-break",
             "stage": "dynamo", "detail": "a|b", "interpreters": ["3.11"], "backends": ["eager"],
             "count": 7, "case": "corpus/graph-break/0123456789ab.py", "new": False},
        ],
        "new_buckets": 1,
        "minimised": [{"id": "ab12cd34ef56", "lines_before": 40, "lines_after": 6, "checks": 80, "elapsed_s": 30.2}],
        "some_future_key": {"ignored": True},
    }


def empty_summary() -> dict:
    return {"campaign": "empty", "programs": 0, "runs": 0, "elapsed_s": 0.0, "programs_per_s": 0.0,
            "verdicts": {}, "interpreters": {}, "buckets": [], "graph_breaks": {}, "new_buckets": 0}


def test_write_report_writes_three_files(tmp_path: Path) -> None:
    out = tmp_path / "reports" / "c1"
    paths = pages.write_report(out, sample_summary(), {CASE: EVIL_SOURCE})
    assert paths == {"json": out / "summary.json", "md": out / "summary.md", "html": out / "index.html"}
    for path in paths.values():
        assert path.is_file() and path.stat().st_size > 0


def test_summary_json_round_trips(tmp_path: Path) -> None:
    summary = sample_summary()
    paths = pages.write_report(tmp_path, summary, {})
    assert json.loads(paths["json"].read_text(encoding="utf-8")) == summary
    assert paths["json"].read_text(encoding="utf-8").startswith(json.dumps(summary, indent=2, sort_keys=True))


def test_write_report_does_not_mutate_summary(tmp_path: Path) -> None:
    summary = sample_summary()
    before = copy.deepcopy(summary)
    pages.write_report(tmp_path, summary, {CASE: EVIL_SOURCE}, runs=[])
    assert summary == before


def test_markdown_headline_and_tables() -> None:
    md = pages.render_markdown(sample_summary())
    assert "**120** programs" in md and "**1440** runs" in md and "13m 32s" in md
    assert "**1** new buckets" in md
    assert "| divergence | 3 |" in md
    assert "| 3.13t | 3.13.5 | 2.12.0+cu130 | yes | no |" in md
    assert "| inductor | 0.2 |" in md
    assert f"| NEW | divergence | dynamo | value | 3.11, 3.13t | 3 |  | {CASE} |" in md


def test_minimisation_statistics_rendered() -> None:
    assert "| ab12cd34ef56 | 40 | 6 | 80 | 30.2 |" in pages.render_markdown(sample_summary())
    page = pages.render_html(sample_summary(), {})
    assert "<h2>Minimised</h2>" in page and "<td>30.2</td>" in page


def test_markdown_escapes_pipes_in_cells() -> None:
    md = pages.render_markdown(sample_summary())
    assert "| graph-break | dynamo | a\\|b | 3.11 | 7 |" in md
    # Every table row has the same number of unescaped separators as its header.
    bucket_rows = [l for l in md.splitlines() if "graph-break | dynamo" in l]
    assert len(re.findall(r"(?<!\\)\|", bucket_rows[0])) == 9


def test_html_escapes_case_source() -> None:
    page = pages.render_html(sample_summary(), {CASE: EVIL_SOURCE})
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&amp; x" in page
    assert "<details open>" in page and "<pre>" in page
    assert "Data-dependent &lt;branch&gt;" in page


def test_html_has_matrix_cells_coloured_by_verdict() -> None:
    page = pages.render_html(sample_summary(), {})
    assert f"<td style='background:{pages._VERDICT_COLOURS['divergence']}'>divergence</td>" in page
    assert f"<td style='background:{pages._VERDICT_COLOURS['compile-error']}'>compile-error</td>" in page
    # Columns follow summary["backends"], and only those the matrix uses.
    assert "<th>interpreter</th><th>eager</th><th>aot_eager</th></tr>" in page


def test_html_graph_break_table_with_bars() -> None:
    page = pages.render_html(sample_summary(), {})
    assert "Graph breaks by Python version" in page
    assert "<th>gb_type</th><th>3.11</th><th>3.13t</th>" in page
    assert "<td>Unsupported builtin</td>" in page
    assert "width:100px'></span>12</td>" in page  # the peak count gets the full bar
    assert "width:25px'></span>3</td>" in page
    assert "width:0px'></span>0</td>" in page  # 3.13t never breaks on the data-dependent branch


def test_html_is_self_contained() -> None:
    page = pages.render_html(sample_summary(), {CASE: EVIL_SOURCE})
    assert "<style>" in page
    assert not re.search(r"(src|href)=['\"](https?:|//)", page)
    assert "<link" not in page


def test_html_runs_section() -> None:
    runs = [{"interpreter": "3.11", "backend": "eager", "verdict": "match"},
            {"interpreter": "3.11", "backend": "eager", "verdict": "divergence"},
            {"interpreter": "3.11", "backend": "eager", "verdict": "match"},
            {"backend": "eager"}]
    page = pages.render_html(sample_summary(), {}, runs)
    assert "<td>divergence: 1, match: 2</td>" in page


def test_missing_case_source_is_noted() -> None:
    page = pages.render_html(sample_summary(), {})
    assert "no source for corpus/graph-break/0123456789ab.py" in page


@pytest.mark.parametrize("summary", [empty_summary(), {}], ids=["empty", "bare"])
def test_empty_summary_renders(tmp_path: Path, summary: dict) -> None:
    paths = pages.write_report(tmp_path, summary, {})
    assert "No buckets." in paths["md"].read_text(encoding="utf-8")
    page = paths["html"].read_text(encoding="utf-8")
    assert "No buckets." in page and "No graph breaks." in page
    assert page.rstrip().endswith("</html>")


def test_atomic_write_leaves_no_temp_files(tmp_path: Path) -> None:
    pages.write_report(tmp_path, sample_summary(), {CASE: EVIL_SOURCE})
    pages.write_report(tmp_path, empty_summary(), {})  # overwrite in place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html", "summary.json", "summary.md"]
    assert json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))["campaign"] == "empty"


def test_failed_write_keeps_old_file_and_removes_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pages.write_report(tmp_path, sample_summary(), {})
    old = (tmp_path / "summary.json").read_text(encoding="utf-8")

    def failing_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        pages.write_report(tmp_path, empty_summary(), {})
    assert (tmp_path / "summary.json").read_text(encoding="utf-8") == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html", "summary.json", "summary.md"]


def test_html_bucket_table_has_a_matrix_per_bucket() -> None:
    page = pages.render_html(sample_summary(), {})
    table = page.split("<h2>Buckets</h2>", 1)[1].split("</tbody></table>", 1)[0]
    assert "<th>interpreter x backend</th>" in table
    [mini] = re.findall(r"<table class='mini'>.*?</table>", table)  # the graph-break bucket has no matrix
    assert "<th title='aot_eager'>aot</th>" in mini
    assert (f"<td style='background:{pages._VERDICT_COLOURS['compile-error']}' "
            "title='3.13t aot_eager: compile-error'>CE</td>") in mini
    assert mini.count("<tr>") == 3  # header + 3.11 + 3.13t
    # the bucket's interpreters on its backend (eager) are outlined; aot_eager is not
    assert mini.count("class='shows'") == 2
    assert "class='shows' title='3.13t eager: divergence'>D</td>" in mini


def test_html_graph_break_chart_is_inline_svg_with_a_bar_per_interpreter() -> None:
    page = pages.render_html(sample_summary(), {})
    [svg] = re.findall(r"<svg class='chart' id='gb-chart'.*?</svg>", page)
    bars = re.findall(r"<rect x='330' y='\d+' width='([\d.]+)' height='9'", svg)
    assert len(bars) == 2 * 2  # two reasons x two interpreters
    assert "520.0" in bars  # the peak (12) gets the full width
    assert "<title>3.13t: 0 programs</title>" in svg
    # breaks on 3.11 but not 3.13t: labelled version-specific
    assert "<text class='vs'" in svg and "Data-dependent &lt;branch&gt; (version-specific)" in svg
    assert "<title>Unsupported builtin</title>" in svg  # on both: not marked


def test_html_shows_each_case_source() -> None:
    source = "import torch\ndef f(x):\n    return x.sin()\n"
    page = pages.render_html(sample_summary(), {CASE: source})
    assert f"<summary>{CASE}</summary><pre>import torch\ndef f(x):\n    return x.sin()\n</pre>" in page


def test_buckets_are_listed_new_then_known_open_then_fixed_since_and_limitations_folded_last(tmp_path: Path) -> None:
    from fuzz.report.summary import _with_standing

    (tmp_path / "known-issues.toml").write_text(
        '[cases."fixed000001"]\nissue = "https://github.com/pytorch/pytorch/issues/1"\nstate = "fixed"\n'
        '[cases."open00000001"]\nissue = "https://github.com/pytorch/pytorch/issues/2"\n'
        '[merged]\n"oldid0000001" = { into = "open00000001", reason = "same root cause" }\n'
        '[limitations]\ngb_types = ["Data-dependent branching"]\n'
        'messages = ["non-empty donated buffers", "modified by an inplace operation"]\n')
    buckets = [
        {"id": "fixed000001", "kind": "divergence", "detail": "value", "new": False, "count": 9},
        {"id": "gb0000000001", "kind": "graph-break", "detail": "Data-dependent branching", "new": True, "count": 50},
        {"id": "oldid0000001", "kind": "divergence", "detail": "stdout", "new": True, "count": 1},
        {"id": "brandnew0001", "kind": "crash", "detail": "SIGSEGV", "new": True, "count": 1},
        {"id": "donated00001", "kind": "divergence", "new": True, "count": 2, "detail":
         "exception:None->RuntimeError {raises RuntimeError: This backward function was compiled with non-empty "
         "donated buffers which requires create_graph=False}"},
        # a compile error's detail is its type and frame: its message is matched
        {"id": "inplace00001", "kind": "compile-error", "new": True, "count": 1,
         "detail": "BackendCompilerFailed(RuntimeError)@torch/fx/experimental/proxy_tensor.py:__torch_function__",
         "message": "RuntimeError: one of the variables needed for gradient computation has been modified by an "
                    "inplace operation: [torch.FloatTensor [4]]"},
        {"id": "otherbcf0001", "kind": "compile-error", "new": True, "count": 1,
         "detail": "BackendCompilerFailed(RuntimeError)@torch/fx/experimental/proxy_tensor.py:__torch_function__",
         "message": "RuntimeError: something else"},
    ]
    ordered = _with_standing(buckets, str(tmp_path))
    assert [(b["id"], b["standing"]) for b in ordered] == [
        ("brandnew0001", "new"), ("otherbcf0001", "new"), ("oldid0000001", "known-open"),
        ("fixed000001", "fixed-since"), ("gb0000000001", "limitation"), ("donated00001", "limitation"),
        ("inplace00001", "limitation")]
    assert ordered[2]["upstream"].endswith("/issues/2")
    summary = {**sample_summary(), "buckets": [{**b, "interpreters": ["3.12"], "stage": "dynamo"} for b in ordered]}
    md = pages.render_markdown(summary)
    assert md.index("SIGSEGV") < md.index("| known |") < md.index("| fixed since |")
    assert md.index("| fixed since |") < md.index("<details><summary>3 buckets of documented limitations")
    assert md.index("<details><summary>") < md.index("Data-dependent branching |")
