"""Validate tells the truth (issue 21): the public-test cell raises after its report when a public
case or the concept test fails, so ``nbgrader validate`` (and the Validate button, which runs the
same validator) fails the skeleton and an out-of-bounds kernel and passes the solution; and a
public test that fails in ``nbgrader autograde --run-notebooks`` costs none of the hidden tests.

One course of one exercise (``tiled_matmul``) is built per module with ``autograder course build
--run-notebooks`` and released with nbgrader; every nbgrader command runs for real. Grades on
``KERNELGRADE_TEST_DEVICE`` (default ``sim``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from course.nbhelpers import (ROOT, TEST_DEVICE, kernel_env, load_script, nbgrader, scores,
                              submit)

from autograder import exercises
from autograder.nbgrader import notebook as nbb
from autograder.nbgrader.course import build_course
from autograder.errors import GraderSetupError
from autograder.nbgrader import public
from autograder.nbgrader.public import failure_summary, failures
from autograder.wire.results import ExerciseResult, Kind, Status, TestResult

ASSIGNMENT, NOTEBOOK = "01_tiled_matmul", "tiled_matmul.ipynb"
OUT_OF_BOUNDS = ROOT / "assignments" / "tiled_matmul" / "mutants" / \
    "no_boundary_checks.py"
FAILED = "VALIDATION FAILED ON 1 CELL(S)!"
SUCCESS = "Success! Your notebook passes all the tests."


# --- which results raise, and what the line says (no grading) ---------------------------------

def _result(*tests: tuple[str, Kind, Status]) -> ExerciseResult:
    return ExerciseResult("tiled_matmul", "nb", "sim", [
        TestResult(name=name, kind=kind,
                   visibility="public" if kind is Kind.CORRECTNESS else "hidden", status=status,
                   points=0, max_points=0)
        for name, kind, status in tests])


OK, SKIP = Status.PASSED, Status.SKIPPED
C, K, D = Kind.CORRECTNESS, Kind.CONCEPT, Kind.DIAGNOSTIC


@pytest.mark.parametrize("tests, summary", [
    ([("public: width 16", C, OK), ("public: width 17", C, Status.ERROR), ("concept", K, OK)],
     "1 of 2 public tests failed"),
    ([("public: width 16", C, Status.TIMEOUT), ("public: width 17", C, Status.TIMEOUT),
      ("concept", K, Status.FAILED)],
     "2 of 2 public tests and the concept test failed"),
    ([("public: width 16", C, OK), ("public: width 99", C, SKIP), ("concept", K, Status.ERROR)],
     "the concept test failed"),
    ([("public: width 16", C, SKIP), ("public: width 17", C, Status.FAILED)],
     "1 of 1 public tests failed"),  # a skipped case is not counted
])
def test_a_failed_public_case_or_concept_test_is_a_failure(tests, summary):
    result = _result(*tests)
    assert failures(result)
    assert failure_summary(result) == summary
    assert len("    AssertionError: " + summary) < 87  # nbgrader validate cuts lines at 90


@pytest.mark.parametrize("tests", [
    [("public: width 16", C, OK), ("concept", K, OK), ("diagnostic: races", D, OK)],
    [("public: n 64", C, SKIP), ("public: n 128", C, SKIP), ("concept", K, SKIP)],  # no GPU
    [("public: width 16", C, OK), ("public: width 4096", C, SKIP), ("concept", K, SKIP)],
    [("public: width 16", C, OK), ("diagnostic: warps", D, Status.FAILED)],  # no concept test
])
def test_passed_and_skipped_tests_are_not_a_failure(tests):
    assert failures(_result(*tests)) == []


def test_a_grader_that_cannot_run_here_prints_one_line_and_raises_nothing(monkeypatch, capsys):
    """No GPU where ``KERNELGRADE_DEVICE=gpu`` asks for one: the tests did not run, which is not
    the student's failure; the cell says so and ends without an error."""
    def no_gpu(*args, **kwargs):
        raise GraderSetupError("device 'gpu' asked for, and no CUDA GPU is visible")

    monkeypatch.setattr(public, "public_result", no_gpu)
    assert public.run_public_tests("tiled_matmul", device="gpu", cells=["x = 1"]) is None
    assert capsys.readouterr().out == ("The public tests of tiled_matmul cannot run here: device "
                                       "'gpu' asked for, and no CUDA GPU is visible\n")


# --- real nbgrader ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """tiled_matmul's course, released; nbgrader runs the notebooks before it grades them."""
    root = build_course(tmp_path_factory.mktemp("validate") / "course", names=["tiled_matmul"],
                        device=TEST_DEVICE, run_notebooks=True,
                        allow_provisional=TEST_DEVICE == "sim")
    nbgrader(root, "generate_assignment", ASSIGNMENT, "--log-level=WARN")
    return root


def student_copy(course: Path, name: str, code: str | None) -> Path:
    """The release notebook with ``code`` in its solution cell (None: untouched), as a student
    would validate it, at ``<course>/<name>/tiled_matmul.ipynb``."""
    release = nbb.read(course / "release" / ASSIGNMENT / NOTEBOOK)
    if code is not None:
        release = load_script("examples/make_class.py").student_notebook(release, code)
    path = course / name / NOTEBOOK
    path.parent.mkdir(exist_ok=True)
    path.write_text(nbb.dumps(release), encoding="utf-8")
    return path


def validate(course: Path, notebook: Path) -> str:
    """What ``nbgrader validate NOTEBOOK`` prints, run in the course folder (its config)."""
    run = subprocess.run([sys.executable, "-m", "nbgrader", "validate", str(notebook)],
                         cwd=course, env=kernel_env(), capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr  # nbgrader's exit status is 0 pass or fail
    return run.stdout


def submission_code(path: Path) -> str:
    return load_script("examples/make_class.py").submission_code(path)


def test_validate_fails_the_untouched_release_notebook(course):
    out = validate(course, student_copy(course, "skeleton", None))
    assert FAILED in out and SUCCESS not in out, out
    assert 'run_public_tests("tiled_matmul")' in out  # the cell that failed
    assert "Public tests of tiled_matmul" in out and "0 of 2 public tests passed" in out, out
    assert "see the report" not in out, out  # the report itself


def test_validate_passes_the_instructor_solution(course):
    code = submission_code(exercises.solution_path("tiled_matmul"))
    out = validate(course, student_copy(course, "solution", code))
    assert SUCCESS in out and "FAILED" not in out, out


def test_validate_fails_a_kernel_that_reads_out_of_bounds(course):
    out = validate(course, student_copy(course, "oob", submission_code(OUT_OF_BOUNDS)))
    assert FAILED in out and SUCCESS not in out, out
    assert "[FAILED] concept: " in out, out  # the stray read fails it
    if TEST_DEVICE == "sim":  # an IndexError at width 17
        assert "1 of 2 public tests passed" in out, out


def test_autograde_grades_the_hidden_tests_when_the_public_test_raises(course):
    """nbgrader runs the notebook (``--run-notebooks``): the public-test cell ends with the
    AssertionError, nbgrader goes on, and every hidden grade cell is graded and stored; the
    feedback shows the public report with the error under it."""
    submit(course, "bob", ASSIGNMENT, submission_code(OUT_OF_BOUNDS))
    nbgrader(course, "autograde", ASSIGNMENT, "--log-level=WARN")
    got = scores(course, ASSIGNMENT, "bob")
    ex = exercises.get("tiled_matmul")
    assert set(got) == {"tiled_matmul-public-tests", "tiled_matmul-hidden-correctness",
                        "tiled_matmul-hidden-concept", "tiled_matmul-hidden-timing"}, got
    assert got["tiled_matmul-public-tests"] == (0.0, 0.0)
    assert got["tiled_matmul-hidden-concept"] == (0.0, ex.concept.points)
    correctness, most = got["tiled_matmul-hidden-correctness"]
    assert most == sum(c.points for c in ex.cases) and 0 < correctness < most, got
    nb = nbb.read(course / "autograded" / "bob" / ASSIGNMENT / NOTEBOOK)
    (public,) = [c for c in nbb.cells_with(nb, grade=True) if "run_public_tests" in c.source]
    kinds = [o.output_type for o in public.outputs]
    assert kinds == ["error"], kinds  # the report is the error's text
    text = " ".join(" ".join(public.outputs[0].traceback).split())
    assert "1 of 2 public tests passed" in text or TEST_DEVICE != "sim"
    assert public.outputs[0].ename == "PublicTestsFailed"
    nbgrader(course, "generate_feedback", ASSIGNMENT, "--log-level=WARN")
    page = (course / "feedback" / "bob" / ASSIGNMENT / "tiled_matmul.html").read_text()
    assert "Public tests of tiled_matmul" in page
    assert "hidden test 1" in page  # the hidden grade cells' reports
