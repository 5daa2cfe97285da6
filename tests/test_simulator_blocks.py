"""The grading child's simulator runs a block's threads one at a time, in thread-id order, each
to its next barrier (autograder.simulator.adapter.lanes_in_turn over
autograder.simulator.scheduler): Numba's barrier rule, a fixed order, and Numba's errors.

Every kernel here runs in one fresh interpreter with the simulator chosen, as in the child; each
test reads its part of what that run printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

PROBE = textwrap.dedent(r'''
    import json, sys, threading
    import numpy as np
    threading.stack_size(1 << 20)
    from numba import cuda, int32, float32
    from autograder.simulator import adapter as simulator
    from autograder.simulator.adapter import prepare_simulator
    simulator.PATIENCE = 0.2
    prepare_simulator()
    prepare_simulator()   # idempotent
    out = {}

    @cuda.jit
    def tree_sum(x, total):             # the lesson's reduction, barriers in place
        s = cuda.shared.array(64, float32)
        t = cuda.threadIdx.x
        s[t] = x[cuda.blockIdx.x * 64 + t]
        cuda.syncthreads()
        stride = 32
        while stride > 0:
            if t < stride:
                s[t] += s[t + stride]
            cuda.syncthreads()
            stride //= 2
        if t == 0:
            total[cuda.blockIdx.x] = s[0]

    @cuda.jit
    def tree_sum_no_first_barrier(x, total):
        s = cuda.shared.array(64, float32)
        t = cuda.threadIdx.x
        s[t] = x[cuda.blockIdx.x * 64 + t]
        stride = 32
        while stride > 0:
            if t < stride:
                s[t] += s[t + stride]
            cuda.syncthreads()
            stride //= 2
        if t == 0:
            total[cuda.blockIdx.x] = s[0]

    x = np.arange(3 * 64, dtype=np.float32)
    want = x.reshape(3, 64).sum(axis=1)
    total = np.zeros(3, np.float32)
    tree_sum[3, 64](x, total)
    out["correct"] = bool(np.array_equal(total, want))
    racy = []
    for _ in range(4):
        total = np.zeros(3, np.float32)
        tree_sum_no_first_barrier[3, 64](x, total)
        racy.append(total.tolist())
    out["racy"] = racy
    out["racy_want"] = want.tolist()

    @cuda.jit
    def early_exit(x, y):               # returned threads do not hold a barrier
        t = cuda.threadIdx.x
        s = cuda.shared.array(32, int32)
        if t >= 20:
            return
        s[t] = x[t]
        cuda.syncthreads()
        y[t] = s[19 - t]

    y = np.zeros(32, np.int32)
    early_exit[1, 32](np.arange(32, dtype=np.int32), y)
    out["early_exit"] = y[:20].tolist()

    @cuda.jit
    def count_votes(x, y):
        t = cuda.threadIdx.x + 8 * cuda.threadIdx.y
        y[t] = cuda.syncthreads_count(x[t] > 2) * 100 + cuda.syncthreads_or(x[t] > 14) * 10 \
            + cuda.syncthreads_and(x[t] >= 0)

    y = np.zeros(16, np.int32)
    count_votes[1, (8, 2)](np.arange(16, dtype=np.int32), y)
    out["votes"] = sorted(set(y.tolist()))

    @cuda.jit
    def spin_on_a_later_thread(flag, y):  # thread 0 waits for thread 31: no fixed order ends
        t = cuda.threadIdx.x
        if t == 0:
            while flag[0] == 0:
                pass
            y[0] = 7
        if t == 31:
            flag[0] = 1

    y = np.zeros(1, np.int32)
    spin_on_a_later_thread[2, 32](np.zeros(1, np.int32), y)
    out["spin"] = int(y[0])

    import time

    @cuda.jit
    def slow_first_thread(flag, y):      # thread 0 waits without CPU: the order holds
        t = cuda.threadIdx.x
        if t == 0:
            time.sleep(0.6)
            flag[0] = 1
        y[t] = flag[0]

    y = np.zeros(8, np.int32)
    slow_first_thread[1, 8](np.zeros(1, np.int32), y)
    out["slow_first"] = y.tolist()

    @cuda.jit
    def out_of_bounds(x):
        t = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
        cuda.syncthreads()
        x[t] = t                        # x has 40 elements; 48 threads

    try:
        out_of_bounds[3, 16](np.zeros(40, np.int32))
        out["error"] = None
    except IndexError as exc:
        out["error"] = str(exc)
    total = np.zeros(3, np.float32)
    tree_sum[3, 64](x, total)           # the same shape's lanes, after a failure
    out["after_error"] = bool(np.array_equal(total, want))

    @cuda.jit
    def fill(y):
        y[cuda.grid(1)] = cuda.threadIdx.x

    for threads in (1, 7, 64, 129, 512, 1024, 640, 3):
        y = np.zeros(threads, np.int32)
        fill[1, threads](y)
        assert y.tolist() == list(range(threads)), threads
    out["threads_alive"] = threading.active_count()
    print(json.dumps(out))
''')


@pytest.fixture(scope="module")
def probe():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=root)
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         env=env, cwd=root, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.splitlines()[-1])


def test_a_kernel_with_its_barriers_is_right(probe):
    assert probe["correct"] is True


def test_a_missing_barrier_gives_the_same_wrong_sums_every_run(probe):
    """Lane 0 reaches the first addition before lane 32 has stored its element; with Numba's
    own threads the sums changed from run to run, and so could a grade."""
    runs = probe["racy"]
    assert all(r == runs[0] for r in runs), runs
    assert runs[0] != probe["racy_want"]


def test_threads_that_returned_do_not_hold_a_barrier(probe):
    assert probe["early_exit"] == list(range(19, -1, -1))


def test_block_votes_count_every_thread_of_a_2d_block(probe):
    assert probe["votes"] == [13 * 100 + 10 + 1]


def test_a_thread_spinning_on_a_later_thread_finishes_when_the_lanes_let_go(probe):
    assert probe["spin"] == 7


def test_a_thread_slowed_without_using_cpu_keeps_the_order(probe):
    """Patience counts CPU time: a lane held up by a busy machine (here: asleep) is not a lane
    spinning, so the later threads still run after it and see its store."""
    assert probe["slow_first"] == [1] * 8


def test_an_error_is_numbas_with_the_thread_and_block_and_the_lanes_recover(probe):
    assert probe["error"] is not None
    assert probe["error"].startswith("tid=[8, 0, 0] ctaid=[2, 0, 0]: "), probe["error"]
    assert probe["after_error"] is True


def test_parked_lanes_stay_bounded_across_block_shapes(probe):
    from autograder.simulator.adapter import MAX_PARKED_LANES

    # 1024 + 640 + 3 parked at most after the last launch, with the main thread
    assert probe["threads_alive"] <= MAX_PARKED_LANES + 1
