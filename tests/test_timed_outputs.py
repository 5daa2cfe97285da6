"""Every timed launch's outputs are checked (issue 20, "skipping work at the timing size"): the
grader's judgement of the child's per-launch numbers, on fabricated records; the order of the
checks around the timed region, on a scripted GPU; the check kernels, on the simulator.
The games graded on a GPU are in tests/test_timing.py."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from autograder import exercises
from autograder.judge import collect as judge
from autograder.judge.inputs import Grading
from autograder.wire.protocol import TimingSamples
from autograder.wire.results import Status
from autograder.sandbox.run import ChildRun
from autograder.source.submission import Source
from autograder.timing.outputs import TOLERANCE_FACTOR, wrong_launches
from conftest import env_with_root

N = 2048 * 2048
SQ_REF = 1.0e9  # a plausible sum of C's squares at width 2048


def right(rel: float = 1e-6) -> list:
    """One output's row for a right launch: relative error ``rel`` against the instructor's."""
    return [rel * rel * SQ_REF, SQ_REF, 0.0, 0.0, float(N)]


def skipped() -> list:
    """A launch that wrote nothing: every element still holds its NaN poison."""
    return [0.0, SQ_REF, float(N), 0.0, float(N)]


def grade_timing(exercise_name: str, checks, rounds: int | None = None, ratio: float = 0.01):
    """The timing test judged from a fabricated record: ``rounds`` rounds whose student/
    instructor ratio is ``ratio``, with ``checks`` as the child would send them."""
    ex = exercises.get(exercise_name)
    rounds = len(checks) if rounds is None and checks is not None else (rounds or 10)
    rec = TimingSamples([ratio] * rounds, [1.0] * rounds, [1.0] * 8, [1.0] * 8, 3, 1.0,
                        checks=checks)
    run = ChildRun(records=[(rec.to_header(), {}), ({"type": "done"}, {})])
    source = Source("", "submission.py")
    return judge.judge_timing(Grading(exercise=ex, source=source, backend="gpu"), run, True)


def test_a_kernel_that_skips_every_timed_launch_gets_no_timing_points():
    t = grade_timing("tiled_matmul", [[skipped()] for _ in range(40)])
    assert t.status is Status.FAILED and t.points == 0.0
    assert "40 of 40 timed launches (the first: launch 1) gave wrong results" in t.message
    assert f"C: {N} elements NaN" in t.message
    assert "compute the whole result on every launch" in t.message


@pytest.mark.parametrize("wrong_at", [[6], list(range(1, 40, 2)), list(range(1, 40))],
                         ids=["one launch", "every other launch", "all but the first"])
def test_a_kernel_that_skips_some_timed_launches_gets_no_timing_points(wrong_at):
    checks = [[skipped() if k in wrong_at else right()] for k in range(40)]
    t = grade_timing("tiled_matmul", checks)
    assert t.status is Status.FAILED and t.points == 0.0
    first = wrong_at[0] + 1
    expected = (f"timed launch {first} of 40" if len(wrong_at) == 1 else
                f"{len(wrong_at)} of 40 timed launches (the first: launch {first})")
    assert expected in t.message


def test_a_partly_written_output_and_wrong_numbers_are_wrong_launches():
    partly = [0.0, SQ_REF, N / 2, 0.0, N / 2]
    t = grade_timing("tiled_matmul", [[right()], [partly], [right()]])
    assert t.status is Status.FAILED and "timed launch 2 of 3" in t.message
    assert f"{N // 2} elements NaN" in t.message
    off = right(rel=1.0)  # finite, but another result (zeros, say)
    t = grade_timing("tiled_matmul", [[right()], [right()], [off]])
    assert t.status is Status.FAILED and "relative error 1" in t.message


def test_a_right_kernel_keeps_its_points_within_twice_the_tolerance():
    """Both kernels may be off the float64 reference by the tolerance: twice it passes."""
    tol = exercises.get("tiled_matmul").tolerance.rel_frobenius
    t = grade_timing("tiled_matmul", [[right(rel=0.99 * TOLERANCE_FACTOR * tol)]] * 12)
    assert t.status is Status.PASSED and t.points == t.max_points, t.message
    t = grade_timing("tiled_matmul", [[right(rel=1.01 * TOLERANCE_FACTOR * tol)]] * 12)
    assert t.status is Status.FAILED


def test_exact_outputs_count_every_differing_element():
    """transpose is float32 but exact; an integer output is judged the same way."""
    same = [0.0, SQ_REF, 0.0, 0.0, 0.0]
    one_off = [1e-12, SQ_REF, 0.0, 0.0, 1.0]
    assert grade_timing("transpose", [[same]] * 12).status is Status.PASSED
    t = grade_timing("transpose", [[same]] * 5 + [[one_off]] + [[same]] * 6)
    assert t.status is Status.FAILED and "B: 1 elements differ" in t.message
    outputs = {"out": ((1000,), "int32")}
    ints = [0.0, 0.0, 0.0, 0.0, 3.0]
    assert wrong_launches([[ints]], outputs, 1e-4, False, 1).message is not None
    assert wrong_launches([[[0.0] * 5]], outputs, 1e-4, False, 1).message is None


def test_missing_or_malformed_checks_and_a_bad_reference_are_errors_not_points():
    for checks, rounds in ((None, 10), ([[right()]] * 9, 10), ([[right()[:4]]] * 10, 10)):
        t = grade_timing("tiled_matmul", checks, rounds)
        assert t.status is Status.ERROR and t.points == 0.0, t.message
    nan_ref = [0.0, SQ_REF, 0.0, 7.0, 0.0]
    t = grade_timing("tiled_matmul", [[right()], [nan_ref]])
    assert t.status is Status.ERROR and "instructor's kernel gave 7 non-finite" in t.message
    t = grade_timing("tiled_matmul", [[right()], [[-1.0, SQ_REF, 0.0, 0.0, 0.0]]])
    assert t.status is Status.ERROR


def test_the_checks_run_outside_every_timed_region_and_after_each_round(monkeypatch):
    """``before`` runs before the L2 flush (retakes included), ``after_round`` after the
    round's second end event: between a start and an end event there is only the launch."""
    from autograder.timing import measure as timing

    # No retake: on a loaded machine this fake's host-side queueing may exceed the window.
    monkeypatch.setattr(timing, "HOST_WINDOW_S", float("inf"))

    log = []

    class GPU:
        def event(self):
            class Event:
                def record(self):
                    log.append("event")

                def synchronize(self):
                    pass
            return Event()

        def event_elapsed_time(self, start, end):
            return 1.0

        def synchronize(self):
            pass

    timing.time_pair(GPU(), lambda r: log.append(f"a{r}"), lambda r: log.append(f"b{r}"),
                     lambda: log.append("flush"), min_rounds=2, max_rounds=2, warmup=1,
                     before=lambda side, r: log.append(f"before_{'ab'[side]}{r}"),
                     after_round=lambda r: log.append(f"check{r}"))
    assert log == ["flush", "event", "a0", "event",  # warm-up: timed (what a disturbed
                   "flush", "event", "b0", "event",  # sample is judged by), not checked
                   "before_a0", "flush", "event", "a0", "event",
                   "before_b0", "flush", "event", "b0", "event", "check0",
                   "before_b1", "flush", "event", "b1", "event",
                   "before_a1", "flush", "event", "a1", "event", "check1"]


_SIM_SCRIPT = textwrap.dedent("""
    import numpy as np
    from numba import cuda
    from autograder.timing.outputs import LaunchChecks, wrong_launches

    ref_host = np.arange(1200, dtype=np.float32).reshape(40, 30)
    student = cuda.device_array((40, 30), np.float32)
    ref = cuda.to_device(ref_host)
    refilled = []
    checks = LaunchChecks(cuda, [student], [[ref]],
                          [[lambda: refilled.append(0)], [lambda: refilled.append(1)]], 4)
    checks.reset()
    checks.before(1, 3)                    # the instructor's launch: inputs only
    assert refilled == [1]
    checks.before(0, 0)                    # the student's: inputs of copy 0, outputs poisoned
    assert refilled == [1, 0] and np.isnan(student.copy_to_host()).all()
    checks.after_round(0)                  # skipped: all NaN
    student.copy_to_device(ref_host)
    checks.after_round(1)                  # right
    wrong = ref_host.copy(); wrong[3, 4] += 1000
    student.copy_to_device(wrong)
    checks.after_round(2)                  # one element off
    rows = checks.results(3)
    assert rows[0] == [[0.0, float((ref_host.astype(np.float64) ** 2).sum()), 1200.0, 0.0,
                        1200.0]], rows[0]
    assert rows[1][0][0] == 0.0 and rows[1][0][2:] == [0.0, 0.0, 0.0], rows[1]
    assert rows[2][0][0] == 1000.0 ** 2 and rows[2][0][4] == 1.0, rows[2]
    verdict = wrong_launches(rows, {"C": ((40, 30), "float32")}, 1e-4, False, 3)
    assert "2 of 3 timed launches (the first: launch 1)" in verdict.message, verdict
    checks.reset()                         # a second measurement starts from zeros
    student.copy_to_device(ref_host)
    checks.after_round(0)
    assert checks.results(1)[0][0][0] == 0.0 and checks.results(1)[0][0][2:] == [0.0] * 3

    out = cuda.device_array(50, np.int32)
    ints = LaunchChecks(cuda, [out], [[cuda.to_device(np.arange(50, dtype=np.int32))]], [[]], 1)
    ints.reset()
    ints.before(0, 0)
    assert (out.copy_to_host() == -0x5EEDBEE).all()
    ints.after_round(0)
    assert ints.results(1) == [[[0.0, 0.0, 0.0, 0.0, 50.0]]]

    small = cuda.device_array(50, np.uint8)   # poisoned with a value a uint8 holds
    LaunchChecks(cuda, [small], [[cuda.to_device(np.zeros(50, np.uint8))]], [[]], 1).before(0, 0)
    assert (small.copy_to_host() == 0xA5).all()

    bins = cuda.to_device(np.full(8, 7, np.int32))      # an accumulator: zeroed on both sides
    ref_bins = cuda.to_device(np.full(8, 9, np.int32))
    acc = LaunchChecks(cuda, [bins], [[cuda.device_array(8, np.int32)]], [[]], 2, zeroed=[True],
                       reference_zeroed=[ref_bins])
    acc.before(1, 0)
    assert (ref_bins.copy_to_host() == 0).all() and (bins.copy_to_host() == 7).all()
    acc.before(0, 0)
    assert (bins.copy_to_host() == 0).all()

    # Expected outputs per input copy (the instructor's kernel at the student's constants):
    # each computed once, from its copy's refilled inputs and a poisoned start; round r is
    # checked against copy r % copies.
    got = cuda.device_array(6, np.float32)
    want = [cuda.device_array(6, np.float32), cuda.device_array(6, np.float32)]
    log = []
    per_copy = LaunchChecks(cuda, [got], [[want[0]], [want[1]]],
                            [[lambda: log.append("fill 0")], [lambda: log.append("fill 1")]], 4)

    def launch(copy):
        def run():
            assert np.isnan(want[copy].copy_to_host()).all()  # poisoned before the launch
            log.append(f"launch {copy}")
            want[copy].copy_to_device(np.full(6, copy + 1.0, np.float32))
        return run

    per_copy.expect(0, launch(0))
    per_copy.expect(1, launch(1))
    assert log == ["fill 0", "launch 0", "fill 1", "launch 1"], log
    per_copy.reset()
    for r in range(4):
        got.copy_to_device(np.full(6, 1.0, np.float32))  # right for copy 0 only
        per_copy.after_round(r)
    rows = per_copy.results(4)
    assert [row[0][4] for row in rows] == [0.0, 6.0, 0.0, 6.0], rows
    print("ok")
""")


def test_the_check_kernels_on_the_simulator():
    """Poison, compare and the table's rows, run by the CUDA simulator (its own process: the
    simulator is chosen when numba.cuda is first imported)."""
    env = env_with_root(NUMBA_ENABLE_CUDASIM="1")
    out = subprocess.run([sys.executable, "-c", _SIM_SCRIPT], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


def test_the_timing_inputs_are_hashed_from_the_secret_seed():
    """A submission cannot carry answers for the timing size: its inputs change with the
    grading's secret seed (and replay with it)."""
    from autograder import exercises
    from autograder.grading import plan

    exercise = exercises.get("tiled_matmul")
    first = plan.timing_request(exercise, 1234).input_seed
    assert first == plan.timing_request(exercise, 1234).input_seed
    assert first != plan.timing_request(exercise, 1235).input_seed
    assert 0 <= first < 2 ** 31


def test_the_timing_message_says_when_the_constants_are_not_the_instructors():
    """Issue 30: the instructor's kernel is timed at its own constants; the timing test says
    where the student's differ ("your TILE_WIDTH 2 against the instructor's 16") and keeps
    which reference was timed in its details; the same constants, or a record that does not
    say them as integers, add nothing."""
    ex = exercises.get("tiled_matmul")

    def judged(reference, ratio=3.0):
        rec = TimingSamples([ratio] * 12, [1.0] * 12, [1.0] * 8, [1.0] * 8, 3, 1.0,
                            checks=[[right()]] * 12, reference=reference)
        header = TimingSamples.from_header(rec.to_header()).to_header()  # through the wire
        run = ChildRun(records=[(header, {}), ({"type": "done"}, {})])
        return judge.judge_timing(Grading(exercise=ex, source=Source("", "submission.py"),
                                          backend="gpu"), run, True)

    reference = {"name": "tiled_matmul.py", "constants": {"TILE_WIDTH": 16},
                 "student_constants": {"TILE_WIDTH": 2},
                 "compared": [["tiled_matmul.py", "tiled_matmul_blockdim.py", 0.91]],
                 "choice_seconds": 0.05}
    t = judged(reference)
    assert t.status is Status.FAILED and t.points == 0.0
    assert "your TILE_WIDTH 2 against the instructor's 16" in t.message, t.message
    assert "lecture on block granularity" in t.message
    assert t.details["timing"]["reference"] == reference
    same = judged({**reference, "student_constants": {"TILE_WIDTH": 16}}, ratio=1.0)
    assert same.status is Status.PASSED and "against the instructor's 16" not in same.message
    odd = judged({"constants": {"TILE_WIDTH": "16"}, "student_constants": {"TILE_WIDTH": 2},
                  "name": 7})
    assert "your TILE_WIDTH" not in odd.message and odd.details["timing"]["reference"] == {
        "student_constants": {"TILE_WIDTH": 2}}
