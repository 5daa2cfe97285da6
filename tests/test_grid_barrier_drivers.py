"""The grid-barrier drivers launch one multi-phase kernel per student barrier in a process, so
it is compiled once, not inside every case's wall-clock limit (no GPU needed: Numba's CUDA
dispatchers are built without compiling)."""

from __future__ import annotations

import importlib

import pytest

from autograder import exercises


@pytest.mark.parametrize("name", ["grid_barrier", "grid_barrier_lockfree"])
def test_every_case_launches_the_same_kernel_for_one_barrier(name):
    from numba import cuda

    contract = exercises.get(name).contract
    driver = importlib.import_module(contract.driver)
    wrap = getattr(driver, "_call_lock_free", None) or driver._call_lock_based
    build = exercises.module("grid_barrier", "driver").build

    @cuda.jit(device=True)
    def barrier(*args):
        pass

    @cuda.jit(device=True)
    def another(*args):
        pass

    assert wrap(barrier) is wrap(barrier)
    assert build(wrap(barrier)) is build(wrap(barrier))
    assert build(wrap(another)) is not build(wrap(barrier))


class _Buffer:
    """A host array standing in for a device array (``copy_to_host``)."""

    def __init__(self, host):
        self.host = host

    def copy_to_host(self):
        return self.host.copy()


def _state(size):
    import numpy as np

    driver = exercises.module("grid_barrier", "driver")

    host = np.full(size + 2 * driver.STATE_MARGIN, driver.STATE_SENTINEL, np.int32)
    host[driver.STATE_MARGIN:driver.STATE_MARGIN + size] = 5
    return host


def test_a_barrier_that_writes_past_its_state_is_named_with_the_index():
    driver = exercises.module("grid_barrier", "driver")

    inside, past = _state(7), _state(7)
    past[driver.STATE_MARGIN + 7] = 3  # depart[7] on a 7-block grid: the checker's guard is <=
    driver.check_state([_Buffer(inside)], ("arrive",))  # writes inside: nothing to say
    with pytest.raises(driver.BarrierOutOfBounds, match=r"depart\[7\], outside depart, which "
                                                          r"has 7 element"):
        driver.check_state([_Buffer(inside), _Buffer(past)], ("arrive", "depart"))
    before = _state(1)
    before[driver.STATE_MARGIN - 2] = 0
    with pytest.raises(driver.BarrierOutOfBounds, match=r"counter\[-2\]"):
        driver.check_state([_Buffer(before)], ("counter",))


def test_a_wait_that_reads_past_the_state_never_ends():
    """A checker thread with no ``tid < gridDim.x`` guard waits on ``arrive[tid]`` until it
    reaches the goal: the margin must stay below every goal, so that wait deadlocks (a timeout)
    instead of passing on a value no block wrote; and no barrier writes the sentinel."""
    driver = exercises.module("grid_barrier", "driver")

    assert driver.STATE_SENTINEL < 0  # goals are j * gridDim.x or j, j >= 1


def test_blocks_may_be_two_or_three_dimensional_and_the_kernel_takes_the_skew():
    import inspect

    from autograder import exercises
    driver = exercises.module("grid_barrier", "driver")

    assert driver.block_shape({"threads": 96}) == (96,)
    assert driver.block_shape({"threads": 128, "block": [32, 4]}) == (32, 4)
    params = inspect.signature(driver.build(lambda *a: None).py_func).parameters
    assert len(params) == len(driver.launch_types(1))
    cases = exercises.get("grid_barrier").cases
    assert any(len(c.params.get("block", [])) > 1 for c in cases)  # thread 0 by .x alone fails
    for name in ("grid_barrier", "grid_barrier_lockfree"):  # a barrier before arriving is needed
        assert any(c.params.get("skew_us", 0) > 0 for c in exercises.get(name).cases)
        assert sum(c.points for c in exercises.get(name).cases) == 80


def test_a_barrier_that_lets_a_thread_through_fails_its_case_with_the_drivers_message():
    """The driver's finding (a thread out of the barrier before the grid arrived) travels as an
    error record marked ``finding`` and is judged a failed case with the driver's words, not
    "your kernel raised"; an exception the kernel raises stays an error."""
    from autograder.grading import plan
    from autograder.child.channel import is_finding
    driver = exercises.module("grid_barrier", "driver")
    BarrierLetThrough, check_entered = driver.BarrierLetThrough, driver.check_entered
    from autograder.judge.cases import judge_case
    from autograder.judge.inputs import Grading
    from autograder.sandbox.run import ChildRun
    from autograder.wire.protocol import Error
    from autograder.wire.results import Status
    from autograder.source.submission import Source

    class Early:  # check_entered's view of the device flag array
        def __init__(self, call):
            self.call = call

        def copy_to_host(self):
            import numpy as np
            return np.array([self.call, 0], np.int32)

    check_entered(Early(0), 4)
    with pytest.raises(BarrierLetThrough) as raised:
        check_entered(Early(3), 4)
    assert is_finding(raised.value) and not is_finding(RuntimeError("x"))
    record = Error.from_header(Error("run", str(raised.value), id=0, finding=True).to_header())
    assert record.finding is True
    ex = exercises.get("grid_barrier")
    case = plan.make_cases(ex, 1)[0]
    source = Source("x = 1\n", "submission.py", [(None, 1)])
    grading = Grading(exercise=ex, source=source, backend="gpu", cases=[case])
    judged = judge_case(grading, case, ChildRun(records=[(record.to_header(), {})]))
    assert (judged.status, judged.points) == (Status.FAILED, 0.0)
    assert judged.message.startswith("a thread came out of your barrier (call 3)")
    raised_by_kernel = Error("run", "RuntimeError: x", id=case.id)
    judged = judge_case(grading, case, ChildRun(records=[(raised_by_kernel.to_header(), {})]))
    assert judged.status is Status.ERROR and judged.name == case.spec.name
