"""Benchmark building blocks: the sandbox, SAFIM loading and scoring, the context bench."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from copilot_lsp.bench import harness
from copilot_lsp.bench.context.report import render as render_context
from copilot_lsp.bench.context.run import run_context_bench
from copilot_lsp.bench.quality import vendor
from copilot_lsp.bench.quality.safim import (
    DATA,
    SUBSETS,
    VENDORED,
    edit_similarity,
    exact_match,
    load_tasks,
    read_rows,
    statement_holes,
)
from copilot_lsp.bench.quality.sandbox import UnitTest, passes
from copilot_lsp.errors import CopilotLspError


def test_sandbox_runs_programs_on_their_tests() -> None:
    program = "a, b = map(int, input().split())\nprint(a + b)\n"
    assert passes(program, [UnitTest("1 2", ["3"]), UnitTest("5 5", ["10"])])
    assert not passes(program, [UnitTest("1 2", ["4"])])
    assert not passes("raise SystemExit(3)\n", [UnitTest("", [""])])


def test_sandbox_stops_runaway_programs() -> None:
    assert not passes("while True:\n    pass\n", [UnitTest("", [""])], timeout_s=1.0)
    assert not passes("x = bytearray(4 << 30)\n", [UnitTest("", [""])])


def test_sandbox_has_no_inherited_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "sk-123")
    program = "import os\nprint(os.environ.get('SECRET_TOKEN', 'none'))\n"
    assert passes(program, [UnitTest("", ["none"])])


def test_scoring() -> None:
    assert exact_match("np.sum(x, axis=0)", "np.sum(x,  axis=0)")
    assert exact_match("f(a,b)", "f(a, b)")  # same AST
    assert not exact_match("f(a)", "f(b)")
    assert edit_similarity("a = 1", "a = 1") == 1.0
    assert 0 < edit_similarity("a = 1", "a = 2") < 1


def test_safim_python_tasks_load_deterministically() -> None:
    first = load_tasks(DATA, "block", 3)
    again = load_tasks(DATA, "block", 3)
    assert [t.task_id for t in first] == [t.task_id for t in again]
    for task in first:
        assert "{{completion}}" not in task.text
        assert task.tests
    assert all(not t.tests for t in load_tasks(DATA, "api", 2))


def test_the_vendored_tasks_are_every_python_task_of_the_three_subsets() -> None:
    rows = list(read_rows(DATA / VENDORED))
    counts = {subset: sum(row["subset"] == subset for row in rows) for subset in SUBSETS}
    assert counts == {"block": 805, "control": 750, "api": 181}  # as data/README.md says
    assert {key for row in rows for key in row} == {"subset", *vendor.FIELDS}
    assert (DATA / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


def _published_safim(folder: Path) -> None:
    """A few tasks in SAFIM's own layout: a file per subset, every language, the problem
    statement beside the code."""
    folder.mkdir()
    program = "n = int(input())\nfor i in range(n):\n    {{completion}}\n    print(i)\n"
    for subset, name in SUBSETS.items():
        rows = [
            {
                "task_id": f"{name}_{index:06d}",
                "lang": ["python", "cpp", "python", "java", "python"][index],
                "prompt": "Problem statement: print the numbers below n.",
                "eval_prompt": program.replace("i)", f"i + {index})"),
                "ground_truth": "x = i * 2" if subset != "block" else "x = i\n    y = x",
                "unit_tests": [] if subset == "api" else [{"input": "2", "output": ["0\n1"]}],
            }
            for index in range(5)
        ]
        text = "".join(json.dumps(row) + "\n" for row in rows)
        (folder / f"{name}.jsonl.gz").write_bytes(gzip.compress(text.encode()))


def test_vendored_tasks_are_those_the_published_files_give(tmp_path: Path) -> None:
    published = tmp_path / "safim"
    _published_safim(published)
    vendored = tmp_path / "vendored"
    size = vendor.write(vendor.vendored_rows(published), vendored / VENDORED)
    assert size == (vendored / VENDORED).stat().st_size
    for subset in SUBSETS:
        for limit in (1, 2, 3):
            for seed in (0, 1):
                expected = load_tasks(published, subset, limit, seed)
                assert load_tasks(vendored, subset, limit, seed) == expected
        assert len(load_tasks(vendored, subset, 10)) == 3  # the Python tasks only
    assert statement_holes(vendored, 3) == statement_holes(published, 3) != []
    rows = list(read_rows(vendored / VENDORED))
    assert all("prompt" not in row and "lang" not in row for row in rows)
    again = tmp_path / "again.jsonl.gz"
    vendor.write(vendor.vendored_rows(published), again)
    assert again.read_bytes() == (vendored / VENDORED).read_bytes()
    with pytest.raises(CopilotLspError, match="no SAFIM tasks"):
        load_tasks(tmp_path, "block", 1)


def test_raw_results_are_saved_compressed_and_read_back_in_either_form(tmp_path: Path) -> None:
    data = {"runs": [{"records": [{"ms": 12.5, "outcome": "items"}] * 200}], "label": "é"}
    (tmp_path / harness.PLAIN_RESULTS).write_text("{}", encoding="utf-8")  # an older run's
    path = harness.save_results(tmp_path, data)
    assert path.name == "results.json.gz" and path.read_bytes()[:2] == b"\x1f\x8b"
    assert len(path.read_bytes()) < len(json.dumps(data)) / 10
    assert not (tmp_path / harness.PLAIN_RESULTS).exists()  # it no longer matched the report
    assert harness.load_results(tmp_path) == data
    again = harness.save_results(tmp_path / "again", data)
    assert again.read_bytes() == path.read_bytes()  # no timestamp: a rerun changes no byte
    older = tmp_path / "older"
    older.mkdir()
    (older / harness.PLAIN_RESULTS).write_text(json.dumps(data), encoding="utf-8")
    assert harness.load_results(older) == data
    with pytest.raises(CopilotLspError, match=r"results\.json\.gz"):
        harness.load_results(tmp_path / "nothing")
    path.write_bytes(b"not gzip")
    with pytest.raises(CopilotLspError, match="cannot read"):
        harness.load_results(tmp_path)


def test_context_bench_reports_every_stage(tmp_path: Path) -> None:
    source = tmp_path / "a.py"
    source.write_text("\n".join(f"def f{i}(x):\n    return helper_{i}(x)\n" for i in range(300)))
    other = tmp_path / "b.py"
    other.write_text("\n".join(f"def helper_{i}(y):\n    return y\n" for i in range(300)))
    report = run_context_bench([source, other], samples=10)
    for key in ("incremental_parse_ms", "syntax_breaking_edit_ms", "context_build_ms"):
        assert report[key]["n"] == 10
        assert report[key]["p50"] <= report[key]["p99"]
    assert set(report["full_parse_ms"]) == {"a.py", "b.py"}
    assert "context build" in render_context(report)


def test_a_report_folder_is_measured_and_saved_or_reloaded_without_measuring(
    tmp_path: Path,
) -> None:
    calls: list[int] = []

    def measure() -> dict[str, object]:
        calls.append(1)
        return {"runs": len(calls)}

    assert harness.measured_or_reloaded(tmp_path, False, measure) == {"runs": 1}
    assert harness.load_results(tmp_path) == {"runs": 1}
    assert harness.measured_or_reloaded(tmp_path, True, measure) == {"runs": 1}
    assert calls == [1]
