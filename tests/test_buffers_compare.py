"""Guard bands and the comparison's messages, without running a kernel."""

import numpy as np

from autograder.wire import buffers
from autograder.judge.compare import check_margins, compare_output
from autograder.exercises.base import Tolerance


def test_output_margins_hold_a_2d_overrun_by_a_whole_tile():
    buf, margin = buffers.guarded_output((1, 70), "float32")
    assert margin > 31 * 70 + 95  # a 32x96 grid writing B[row, col] without bounds checks


def test_a_write_past_the_end_is_reported():
    buf, margin = buffers.guarded_output((4, 4), "float32")
    buf[margin:margin + 16] = 1.0
    assert check_margins("C", buf, (4, 4)) is None
    buf[margin + 16 + 3] = 2.0
    msg = check_margins("C", buf, (4, 4))
    assert "wrote outside C" in msg and "1 past its end" in msg


def test_inputs_sit_between_nan_margins():
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    buf, margin = buffers.guarded_input(values)
    assert np.isnan(buf[:margin]).all() and np.isnan(buf[margin + 6:]).all()
    assert (buf[margin:margin + 6] == values.ravel()).all()


def test_unwritten_floats_are_named_in_an_exact_comparison():
    got = np.array([1.0, np.nan, 3.0], np.float32)
    ok, msg = compare_output("B", got, np.array([1.0, 2.0, 3.0], np.float32), Tolerance(exact=True))
    assert not ok and "1 never written" in msg and "B[1]" in msg


def test_float_comparison_reports_count_and_first_wrong_element():
    expected = np.ones((3, 3))
    got = expected.astype(np.float32).copy()
    got[1, 2] = 5.0
    ok, msg = compare_output("C", got, expected, Tolerance())
    assert not ok
    assert msg.startswith("1 of 9 elements wrong") and "C[1, 2]: got 5, expected 1" in msg


def test_nan_output_fails_even_when_otherwise_close():
    got = np.array([1.0, np.nan], np.float32)
    ok, msg = compare_output("C", got, np.array([1.0, 1.0]), Tolerance())
    assert not ok and "NaN" in msg
