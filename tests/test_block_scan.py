"""block_scan: the reference, the contract, and the instructor solution at another BLOCK_SIZE.
Solutions and known-bad submissions of every exercise are checked in test_exercises.py."""

import numpy as np

from autograder import exercises
from conftest import assert_full_marks, grade_file, SOLUTIONS

EXERCISE = "block_scan"


def test_reference_scans_each_block_separately():
    ex = exercises.get(EXERCISE)
    x = np.arange(1, 11, dtype=np.int32)
    got = ex.reference({"x": x}, {"n": 10, "BLOCK_SIZE": 4})["out"]
    assert got.tolist() == [1, 3, 6, 10, 5, 11, 18, 26, 9, 19]


def test_output_shape_and_launch_follow_the_contract():
    ex = exercises.get(EXERCISE)
    assert ex.outputs({"n": 33}) == {"out": ((33,), "int32")}
    assert ex.contract.grid == ("ceil(n / BLOCK_SIZE)",)
    assert ex.max_score == 100


def test_instructor_solution_at_another_block_size(tmp_path):
    """The reference is per block of the *submission's* BLOCK_SIZE."""
    src = (SOLUTIONS / "block_scan.py").read_text().replace("BLOCK_SIZE = 256", "BLOCK_SIZE = 32")
    path = tmp_path / "block_scan_32.py"
    path.write_text(src)
    assert_full_marks(grade_file(path, EXERCISE))
