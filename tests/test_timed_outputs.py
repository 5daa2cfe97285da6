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
    """One output's row for a right launch: relative error ``rel`` against the instructor's
    (as the digests estimate it), the same norm."""
    return [rel * rel * SQ_REF, SQ_REF, 0.0, 0.0, 1.0, SQ_REF, 0.0]


def skipped() -> list:
    """A launch that wrote nothing: every element still holds its NaN poison."""
    return [SQ_REF, SQ_REF, float(N), 0.0, 1.0, 0.0, 0.0]


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
    partly = [SQ_REF / 2, SQ_REF, N / 2, 0.0, 1.0, SQ_REF / 2, 0.0]
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


def test_exact_outputs_fail_on_any_differing_element():
    """transpose is float32 but exact; an integer output is judged the same way: the keyed
    hashes of every element must agree, and a NaN fails whatever the hashes say."""
    same = [0.0, SQ_REF, 0.0, 0.0, 0.0, SQ_REF, 0.0]
    one_off = [1e-12, SQ_REF, 0.0, 0.0, 1.0, SQ_REF, 0.0]
    assert grade_timing("transpose", [[same]] * 12).status is Status.PASSED
    t = grade_timing("transpose", [[same]] * 5 + [[one_off]] + [[same]] * 6)
    assert t.status is Status.FAILED and "B: differs from the instructor's" in t.message
    outputs = {"out": ((1000,), "int32")}
    assert wrong_launches([[one_off]], outputs, 1e-4, False, 1).message is not None
    assert wrong_launches([[same]], outputs, 1e-4, False, 1).message is None
    nan = [0.0, SQ_REF, 3.0, 0.0, 0.0, SQ_REF, 0.0]
    assert "3 elements NaN" in wrong_launches([[nan]], outputs, 1e-4, True, 1).message


def test_a_zeroed_or_rescaled_output_fails_whatever_its_projections_say():
    """The norms are exact: an output of zeros, or one scaled by 1.01, is off by more than the
    tolerance even where the projections' estimate came out small."""
    for sq_got in (0.0, SQ_REF * 1.01 ** 2):
        row = [0.0, SQ_REF, 0.0, 0.0, 1.0, sq_got, 0.0]
        t = grade_timing("tiled_matmul", [[right()], [row]])
        assert t.status is Status.FAILED and "timed launch 2 of 2" in t.message, t.message


def test_an_all_zero_expected_output_never_passes_a_launch_that_did_nothing():
    """0/0: where the instructor's output is what a launch that does nothing leaves (an
    accumulator that stays zero), the timing cannot be judged: a grader fault, not a pass;
    where it is zero and the poison is not, the student's must be zero too."""
    idle = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    t = grade_timing("tiled_matmul", [[right()], [idle]])
    assert t.status is Status.ERROR and t.points == 0.0
    assert "what a launch that does nothing leaves" in t.message
    zero = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert grade_timing("tiled_matmul", [[zero]]).status is Status.PASSED
    not_zero = [4.0, 0.0, 0.0, 0.0, 1.0, 4.0, 0.0]
    assert grade_timing("tiled_matmul", [[not_zero]]).status is Status.FAILED


def test_missing_or_malformed_checks_and_a_bad_reference_are_errors_not_points():
    for checks, rounds in ((None, 10), ([[right()]] * 9, 10), ([[right()[:4]]] * 10, 10)):
        t = grade_timing("tiled_matmul", checks, rounds)
        assert t.status is Status.ERROR and t.points == 0.0, t.message
    nan_ref = [0.0, SQ_REF, 0.0, 7.0, 0.0, SQ_REF, 0.0]
    t = grade_timing("tiled_matmul", [[right()], [nan_ref]])
    assert t.status is Status.ERROR and "instructor's kernel gave 7 non-finite" in t.message
    t = grade_timing("tiled_matmul", [[right()], [[-1.0, SQ_REF, 0.0, 0.0, 0.0, SQ_REF, 0.0]]])
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
    import warnings
    import numpy as np
    from numba import cuda
    from autograder.timing.outputs import LaunchChecks, wrong_launches

    warnings.simplefilter("ignore")  # the simulator's uint64 hashes overflow, as they should
    rng = np.random.default_rng(5)
    ref_host = (rng.random((40, 30)) + 0.5).astype(np.float32)
    student = cuda.device_array((40, 30), np.float32)
    want = cuda.device_array((40, 30), np.float32)
    timed_ref = cuda.to_device(ref_host)        # a timed instructor kernel's output
    refilled = []
    checks = LaunchChecks(cuda, [student], [[want]],
                          [[lambda: refilled.append(0)], [lambda: refilled.append(1)]], 8,
                          reference_outputs=[(timed_ref, False)])
    checks.expect(0, lambda: want.copy_to_device(ref_host))
    assert refilled == [0]
    # Only a digest stays: the expected output is poisoned before any student launch.
    assert np.isnan(want.copy_to_host()).all()
    try:
        checks.after_round(0)
    except RuntimeError:
        pass
    else:
        raise AssertionError("checked before the seal")
    checks.seal()
    assert checks.expected == [] and (checks.ftab.copy_to_host() == 0).all()
    checks.reset()
    checks.before(1, 3)                    # the instructor's launch: inputs only
    assert refilled == [0, 1] and not np.isnan(timed_ref.copy_to_host()).any()
    checks.before(0, 0)                    # the student's: inputs, its outputs and the timed
    assert refilled == [0, 1, 0]           # instructor kernel's outputs poisoned
    assert np.isnan(student.copy_to_host()).all() and np.isnan(timed_ref.copy_to_host()).all()

    wrong = ref_host.copy(); wrong[3, 4] += 1.0
    tile = ref_host.copy(); tile[8:16, 8:16] = 0.0
    near = ref_host * np.float32(1 + 1e-6)
    launches = [None, ref_host, wrong, tile, np.zeros_like(ref_host), near, ref_host * 2]
    for r, out in enumerate(launches):
        if out is None:
            checks.before(0, r)            # skipped: all NaN
        else:
            student.copy_to_device(out)
        checks.after_round(r)
        # No digest stays on the device between launches.
        assert (checks.ftab.copy_to_host() == 0).all() and (checks.utab.copy_to_host() == 0).all()
    rows = checks.results(len(launches))
    outputs = {"C": ((40, 30), "float32")}
    verdicts = [wrong_launches([row], outputs, 1e-4, False, 1).message for row in rows]
    assert "1200 elements NaN" in verdicts[0], verdicts[0]
    assert verdicts[1] is None and rows[1][0][:5] == [0.0, rows[1][0][1], 0.0, 0.0, 0.0], rows[1]
    assert all("relative error" in v for v in verdicts[2:5]), verdicts
    assert verdicts[5] is None and rows[5][0][4] == 1.0, rows[5]   # not equal, within tolerance
    assert "relative error 1" in verdicts[6], verdicts[6]
    sq = float((ref_host.astype(np.float64) ** 2).sum())
    assert abs(rows[1][0][1] - sq) < 1e-9 * sq and rows[4][0][5] == 0.0
    # The estimate of the squared error is near the truth (16 projections: within a factor 4).
    assert 0.25 < rows[2][0][0] / 1.0 < 4, rows[2]
    assert wrong_launches(rows[1:2], outputs, 1e-4, True, 1).message is None
    assert "differs" in wrong_launches(rows[5:6], outputs, 1e-4, True, 1).message

    # Integers: exact, through the keyed hash of every element.
    out = cuda.device_array(50, np.int32)
    ints_want = cuda.device_array(50, np.int32)
    ints = LaunchChecks(cuda, [out], [[ints_want]], [[]], 4)
    values = np.arange(50, dtype=np.int32) - 7
    ints.expect(0, lambda: ints_want.copy_to_device(values))
    assert (ints_want.copy_to_host() == -0x5EEDBEE).all()
    ints.seal()
    ints.before(0, 0)
    assert (out.copy_to_host() == -0x5EEDBEE).all()
    for r, got in enumerate([values, values + np.eye(1, 50, 49, dtype=np.int32)[0],
                             values[::-1].copy()]):
        out.copy_to_device(got)
        ints.after_round(r)
    rows = ints.results(3)
    assert [row[0][4] for row in rows] == [0.0, 1.0, 1.0], rows
    assert wrong_launches(rows[:1], {"out": ((50,), "int32")}, 1e-4, False, 1).message is None

    # Exact floats: -0.0 is 0.0; one ulp is not.
    zf = cuda.device_array(4, np.float32); zf_want = cuda.device_array(4, np.float32)
    zc = LaunchChecks(cuda, [zf], [[zf_want]], [[]], 4)
    zc.expect(0, lambda: zf_want.copy_to_device(np.array([0.0, 1.0, 2.0, 3.0], np.float32)))
    zc.seal()
    for r, got in enumerate([[-0.0, 1.0, 2.0, 3.0], [0.0, 1.0, np.nextafter(np.float32(2), 3), 3.0]]):
        zf.copy_to_device(np.array(got, np.float32))
        zc.after_round(r)
    assert [row[0][4] for row in zc.results(2)] == [0.0, 1.0]

    small = cuda.device_array(50, np.uint8)   # poisoned with a value a uint8 holds
    LaunchChecks(cuda, [small], [[cuda.device_array(50, np.uint8)]], [[]], 1).before(0, 0)
    assert (small.copy_to_host() == 0xA5).all()

    # An accumulator: zeroed on both sides; an expected output of zeros is what a launch that
    # does nothing leaves: ref_idle, a grader fault.
    bins = cuda.to_device(np.full(8, 7, np.int32))
    ref_bins = cuda.to_device(np.full(8, 9, np.int32))
    bins_want = cuda.device_array(8, np.int32)
    acc = LaunchChecks(cuda, [bins], [[bins_want]], [[]], 2, zeroed=[True],
                       reference_zeroed=[ref_bins], reference_outputs=[(ref_bins, True)])
    acc.expect(0, lambda: None)            # the instructor's kernel added nothing
    acc.seal()
    assert (bins.copy_to_host() == 0).all()
    bins.copy_to_device(np.full(8, 7, np.int32))
    acc.before(1, 0)
    assert (ref_bins.copy_to_host() == 0).all() and (bins.copy_to_host() == 7).all()
    acc.before(0, 0)
    assert (bins.copy_to_host() == 0).all()
    acc.after_round(0)
    verdict = wrong_launches(acc.results(1), {"bins": ((8,), "int32")}, 1e-4, False, 1)
    assert verdict.grader_fault and "does nothing" in verdict.message, verdict

    # Expected outputs per input copy: each computed once, from its copy's refilled inputs
    # and a poisoned start, and kept as a digest; round r is checked against copy r % copies.
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
    per_copy.seal()
    per_copy.reset()
    for r in range(4):
        got.copy_to_device(np.full(6, 1.0, np.float32))  # right for copy 0 only
        per_copy.after_round(r)
    rows = per_copy.results(4)
    assert [row[0][4] for row in rows] == [0.0, 1.0, 0.0, 1.0], rows
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
