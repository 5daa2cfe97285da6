"""tiled_matmul: the instructor solution gets full marks; every known-bad submission is rejected
with the verdict its header declares."""

import pytest

from autograder import known_bad
from conftest import SOLUTIONS, assert_full_marks, assert_rejected, grade_file

EXERCISE = "tiled_matmul"


def test_instructor_solution_gets_full_marks():
    result = grade_file(SOLUTIONS / "tiled_matmul.py", EXERCISE)
    assert_full_marks(result)
    assert result.score > 0


@pytest.mark.parametrize("mutant", known_bad.mutants(EXERCISE), ids=lambda p: p.stem)
def test_known_bad_is_rejected(mutant):
    assert_rejected(mutant, grade_file(mutant, EXERCISE))


def test_mutants_exist():
    assert len(known_bad.mutants(EXERCISE)) >= 3
