"""Gradescope shows a score bare ("55.0 / 100.0"): a provisional score's results.json says so in
the first line of its ``output``, the first text a student reads, and names what needs a GPU
(issue 32, item 5). No grading runs here."""

from __future__ import annotations

from autograder.report import export
from autograder.wire.results import ExerciseResult, Kind, Status, TestResult


def _result(device: str) -> ExerciseResult:
    """55 / 100 on the simulator: the timing test (25) and two hidden sizes (10) skipped."""
    sim = device == "sim"
    skipped = Status.SKIPPED if sim else Status.PASSED
    tests = [
        TestResult(name="public: width 16", kind=Kind.CORRECTNESS, visibility="public",
                   status=Status.PASSED, points=40, max_points=40, message="correct"),
        TestResult(name="hidden: width 17", kind=Kind.CORRECTNESS, visibility="hidden",
                   status=Status.PASSED, points=15, max_points=15, message="correct"),
        TestResult(name="hidden: width 1024", kind=Kind.CORRECTNESS, visibility="hidden",
                   status=skipped, points=0 if sim else 5, max_points=5, message="GPU only"),
        TestResult(name="hidden: width 2048", kind=Kind.CORRECTNESS, visibility="hidden",
                   status=skipped, points=0 if sim else 5, max_points=5, message="GPU only"),
        TestResult(name="concept: shared memory", kind=Kind.CONCEPT, visibility="hidden",
                   status=Status.FAILED, points=0, max_points=10, message="no tiles"),
        TestResult(name="timing: against the instructor's kernel", kind=Kind.TIMING,
                   visibility="hidden", status=skipped, points=0 if sim else 25,
                   max_points=25, message="timing needs a GPU"),
    ]
    return ExerciseResult("tiled_matmul", "a.py", "sim" if sim else "gpu:H100", tests=tests,
                          seed=1)


def test_the_first_line_says_provisional_and_names_what_needs_a_gpu():
    gs = export.to_gradescope(_result("sim").to_dict(), 1.0)
    first = gs["output"].splitlines()[0]
    assert first.startswith("Provisional score: 55 of 100 points."), first
    assert "35 more points need a GPU: the timing test and 2 hidden tests" in first, first
    assert "simulator" in first
    assert "provisional: 35 points need a GPU" in gs["output"]


def test_a_final_score_says_nothing_of_the_kind():
    gs = export.to_gradescope(_result("gpu").to_dict(), 1.0)
    first = gs["output"].splitlines()[0]
    assert first == "Graded on H100: 90 of 100 points." and "rovisional" not in gs["output"]
