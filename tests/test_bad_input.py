"""Bad input gets a clear message and a score of 0, never a traceback or a lost grade."""

import pytest

from autograder.grading import preflight
from autograder.wire.results import Status
from autograder.sandbox.limits import Limits
from conftest import FILES, TEST_DEVICE, grade_file, graded_once

BAD = FILES / "bad_input"
EXERCISE = "tiled_matmul"


def graded(name: str):
    """``files/bad_input/NAME`` graded with the default limits, once per process: several tests
    read the same grading."""
    return graded_once(BAD / name, EXERCISE)


def _statuses(result):
    return {t.status for t in result.tests}


@pytest.fixture
def preflight_done():
    """The instructor solution's check, once per process, done before the grading under test
    (so the short limits below apply to the submission alone)."""
    preflight.check(EXERCISE, TEST_DEVICE)


@pytest.mark.parametrize("name, status, words", [
    ("syntax_error.py", Status.ERROR, "does not parse"),
    ("not_utf8.py", Status.ERROR, "not UTF-8"),
    ("malformed.ipynb", Status.ERROR, "not a valid notebook"),
    ("no_code.ipynb", Status.ERROR, "no code"),
    ("missing_kernel.py", Status.ERROR, "does not define tiled_matmul"),
    ("fake_kernel.py", Status.ERROR, "not run by the grader"),  # a class: not run
    ("bad_tile_width.py", Status.ERROR, "TILE_WIDTH = 64 is outside 1..32"),
    ("wrong_signature.py", Status.ERROR, "must take 3 arguments"),
    ("exits_early.py", Status.ERROR, "does not define tiled_matmul"),  # sys.exit skipped
    ("os_exit.py", Status.ERROR, "does not define tiled_matmul"),  # os._exit skipped
    ("does_not_exist.py", Status.ERROR, "does not exist"),
])
def test_bad_input_scores_zero_with_a_message(name, status, words):
    result = graded(name)
    assert result.score == 0
    assert result.max_score == 100
    assert status in _statuses(result)
    assert any(words in t.message for t in result.tests), [t.message for t in result.tests]


def test_syntax_error_names_the_line():
    result = graded("syntax_error.py")
    assert "line 5" in result.tests[0].message


def test_hung_import_is_a_timeout(preflight_done):
    limits = Limits(import_timeout=3, case_timeout=3, total_timeout=10)
    result = grade_file(BAD / "hangs_at_import.py", EXERCISE, limits=limits)
    assert result.score == 0
    assert _statuses(result) == {Status.TIMEOUT}


def test_spinning_kernel_is_a_timeout_and_grading_goes_on(preflight_done):
    limits = Limits(import_timeout=20, case_timeout=3, total_timeout=20)
    result = grade_file(BAD / "spins_in_kernel.py", EXERCISE, limits=limits)
    assert result.score <= result.tests[-2].points  # at most the concept test
    correctness = [t for t in result.tests if t.kind.value == "correctness"]
    assert correctness[0].status is Status.TIMEOUT
    assert "did not finish" in correctness[0].message


def test_code_rejected_by_the_gpu_compiler_is_an_error_on_the_simulator_too():
    result = graded("typing_error_gpu_only.py")
    concept = next(t for t in result.tests if t.kind.value == "concept")
    assert concept.status is Status.ERROR
    assert "does not compile for a real GPU" in concept.message


def test_printed_fake_result_does_not_change_the_score():
    result = graded("os_exit.py")
    assert result.score == 0


def test_missing_kernel_gets_each_test_once_and_a_did_you_mean():
    result = graded("missing_kernel.py")
    names = [t.name for t in result.tests]
    assert len(names) == len(set(names)), names  # the five diagnostics once, not twice
    assert sum(t.kind.value == "diagnostic" for t in result.tests) == 5  # boundary checks too
    first = result.tests[0].message
    assert "does not define tiled_matmul; did you mean matmul?" in first
    assert all(t.message == "not run (see above)" for t in result.tests[1:])


def test_syntax_error_is_shown_once_with_its_line():
    result = graded("syntax_error.py")
    carriers = [t for t in result.tests if "does not parse:" in t.message]
    assert len(carriers) == 1 and carriers[0] is result.tests[0]
    assert "`def tiled_matmul(A, B, C)`" in carriers[0].message
    assert {t.message for t in result.tests[1:]} == {
        "not run: the code does not parse (see above)"}
    assert all(t.status is Status.ERROR for t in result.tests) and result.score == 0
