"""block_sum: the reference, the output shape, the timing size, and the instructor solution at
another BLOCK_SIZE (which changes the shape of ``partial``). Solutions and known-bad submissions
of every exercise are checked in test_exercises.py."""

import numpy as np

from autograder import exercises
from autograder.wire import shapes
from conftest import assert_full_marks, grade_file, SOLUTIONS

EXERCISE = "block_sum"


def test_reference_sums_each_block_with_zero_padding():
    ex = exercises.get(EXERCISE)
    x = np.arange(1, 11, dtype=np.float32)
    got = ex.reference({"x": x}, {"n": 10, "BLOCK_SIZE": 4})["partial"]
    assert got.tolist() == [10.0, 26.0, 19.0]


def test_partial_shape_depends_on_block_size():
    ex = exercises.get(EXERCISE)
    (shape, dtype), = ex.outputs({"n": 1000}).values()
    assert dtype == "float32"
    assert shapes.evaluate(shape, {"n": 1000}, {"BLOCK_SIZE": 256}) == (4,)
    assert shapes.evaluate(shape, {"n": 1000}, {"BLOCK_SIZE": 64}) == (16,)
    assert ex.max_score == 100


def test_timing_size_is_large():
    t = exercises.get(EXERCISE).timing
    assert t.params["n"] * 4 >= 1 << 30  # 1 GiB of float32: >= 1 ms on an H100 (estimate)
    assert t.full_ratio == 1.25


def test_instructor_solution_at_another_block_size(tmp_path):
    src = (SOLUTIONS / "block_sum.py").read_text().replace("BLOCK_SIZE = 256", "BLOCK_SIZE = 64")
    path = tmp_path / "block_sum_64.py"
    path.write_text(src)
    assert_full_marks(grade_file(path, EXERCISE))
