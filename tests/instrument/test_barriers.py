"""Divergent barriers: a barrier not every live thread reaches from the same line."""

import numpy as np

from autograder.instrument import instrumented_launch
from .conftest import f32, line_of, load


def run(name, kernel, grid, block, args):
    return instrumented_launch(getattr(load(name), kernel), grid, block, args)


def test_barrier_inside_if_tid_lt_stride_is_caught():
    name = "reduction_barrier_in_if.py"
    out = np.zeros(1, np.float32)
    r = run(name, "reduce_sum", 1, 256, [f32(256), out])
    line = line_of(name, "        cuda.syncthreads()")   # the one inside the if
    assert [b["lines"] for b in r["divergent_barriers"]] == [[line]]
    b = r["divergent_barriers"][0]
    assert b["arrivals"] == [{"line": line, "threads": 128}]
    assert (b["live_threads"], b["block_threads"], b["exited"]) == (256, 256, 128)
    assert b["fewest_threads"] == 1
    assert b["episodes"] == 8          # strides 128, 64, ..., 1


def test_sequential_reduction_has_no_divergent_barrier():
    r = run("reduction_sequential.py", "reduce_sum", 2, 256, [f32(512), np.zeros(2, np.float32)])
    assert r["divergent_barriers"] == []
    assert r["error"] is None


def test_early_return_before_a_barrier_is_caught():
    name = "reduction_early_return.py"
    r = run(name, "reduce_sum", 2, 64, [f32(100), np.zeros(2, np.float32)])
    line = line_of(name, "cuda.syncthreads()")
    [b] = r["divergent_barriers"]
    assert b["arrivals"] == [{"line": line, "threads": 36}]   # 100 - 64 threads in block 1
    assert b["exited"] == 28 and b["example"]["block"] == [1, 0, 0]
    assert b["example"]["exited_thread"] == [36, 0, 0]
    assert b["blocks"] == 1            # block 0 is full: no finding there


def test_barriers_at_two_lines_are_reported_with_both_lines():
    name = "barrier_two_sites.py"
    r = run(name, "halves", 1, 64, [f32(64), np.zeros(64, np.float32)])
    first = line_of(name, "cuda.syncthreads()")
    [b] = r["divergent_barriers"]
    assert b["lines"] == [first, first + 3]
    assert [a["threads"] for a in b["arrivals"]] == [32, 32]
    assert b["exited"] == 0


def test_barrier_in_a_device_function_reports_the_device_function_line():
    name = "device_function_barrier.py"
    module = load(name)
    original = module.stage
    r = instrumented_launch(module.kernel, 1, 64, [f32(64), np.zeros(64, np.float32)])
    assert [b["lines"] for b in r["divergent_barriers"]] == [[line_of(name, "cuda.syncthreads")]]
    assert r["divergent_branches"]["by_line"][0]["line"] == line_of(name, "if tid % 2")
    assert module.stage is original    # the rewritten device function was swapped back
