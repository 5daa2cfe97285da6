"""benchmarks/hints_on_gpu.py: the table the lead records on a GPU, built here from fake
results (the grading itself needs a GPU for its timing)."""

from __future__ import annotations

import importlib.util

from autograder.wire.results import ExerciseResult, Kind, Status, TestResult
from autograder.timing.measure import ratio_stats, timing_details
from conftest import ROOT

spec = importlib.util.spec_from_file_location("hints_on_gpu", ROOT / "benchmarks" / "hints_on_gpu.py")
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)


def _fake(ratio: float | None) -> ExerciseResult:
    tests = [TestResult(name="public: width 16", kind=Kind.CORRECTNESS, visibility="public",
                        status=Status.PASSED, points=60, max_points=60)]
    if ratio is None:
        tests.append(TestResult(name="timing: against the instructor's kernel", kind=Kind.TIMING,
                                visibility="hidden", status=Status.SKIPPED, points=0.0,
                                max_points=25.0, message="needs a GPU"))
    else:
        s, i = [ratio] * 12, [1.0] * 12
        tests.append(TestResult(name="timing: against the instructor's kernel", kind=Kind.TIMING,
                                visibility="hidden", status=Status.FAILED, points=12.5,
                                max_points=25.0, message="1.32x; likeliest cause: line 14 ...",
                                details=timing_details(s, i, ratio_stats(s, i), 1.25, 2.0, {})))
    tests.append(TestResult(name=script.HINTS_TEST, kind=Kind.DIAGNOSTIC, visibility="hidden",
                            status=Status.PASSED, points=0, max_points=0, message="2 hint(s)",
                            details={"hints": [
                                {"kind": "float64", "line": 14, "text": "...", "weight": 5.0},
                                {"kind": "uncoalesced", "line": 20, "text": "...", "weight": 4}],
                                "unavailable": []}))
    return ExerciseResult("tiled_matmul", "x.py", "gpu:NVIDIA H200", tests)


def test_table_names_ratio_points_and_first_hint():
    rows = [script.row("f64 | acc", _fake(1.32)), script.row("on the simulator", _fake(None))]
    text = script.table(rows, "gpu:NVIDIA H200", "2026-11-22")
    lines = text.splitlines()
    assert lines[0] == ("# Performance hints of known-slow mutants on gpu:NVIDIA H200 "
                        "(2026-11-22)")
    assert lines[4] == ("| f64 \\| acc | 1.32x [1.32, 1.32] | timing 12.5/25, total 72.5/85 | "
                        "float64 (line 14); also uncoalesced | yes |")
    assert lines[5].startswith("| on the simulator | skipped | timing 0/25, total 60/85 |")
    assert len(lines) == 6


def test_every_mutant_the_script_grades_exists():
    for _, path, exercise in script.MUTANTS:
        assert (ROOT / path).is_file(), path
