"""The launch itself: determinism, JSON, outputs, block selection, errors, clean-up."""

import gc
import json
import threading

import numpy as np
import pytest

from autograder.instrument import instrumented_launch, messages
from autograder.instrument.launch import select_blocks
from .conftest import FILES, ROOT, f32, line_of, load


def test_same_kernel_same_report_every_run():
    module = load("tiled_matmul_one_barrier.py")
    a, b = f32(16, 16), f32(16, 16, seed=1)
    reports = [json.dumps(instrumented_launch(module.tiled_matmul, (2, 2), (8, 8),
                                              [a, b, np.zeros((16, 16), np.float32)]))
               for _ in range(3)]
    assert reports[0] == reports[1] == reports[2]


def test_report_is_plain_json():
    r = instrumented_launch(load("scan_race.py").scan, 1, 64, [f32(64), np.zeros(64, np.float32)])
    assert json.loads(json.dumps(r)) == r
    for key in ("divergent_barriers", "races", "bank_conflicts", "divergent_branches",
                "global_loads_per_output", "error", "blocks_run", "file"):
        assert key in r


def test_device_arrays_and_host_arrays_both_get_the_results(sim_only):
    from numba import cuda

    module = load(ROOT / "solutions" / "tiled_matmul.py")
    a, b = f32(16, 16), f32(16, 16, seed=1)
    d_c = cuda.to_device(np.zeros((16, 16), np.float32))
    instrumented_launch(module.tiled_matmul, (1, 1), (16, 16), [cuda.to_device(a), b, d_c])
    np.testing.assert_allclose(d_c.copy_to_host(), a @ b, rtol=1e-4)


def test_select_blocks_spreads_over_the_grid_and_keeps_both_ends():
    assert select_blocks((3, 1, 1), None) == [(0, 0, 0), (1, 0, 0), (2, 0, 0)]
    picked = select_blocks((4, 4, 1), 3)
    assert picked[0] == (0, 0, 0) and picked[-1] == (3, 3, 0) and len(picked) == 3
    assert select_blocks((4, 4, 1), 1) == [(0, 0, 0)]
    with pytest.raises(ValueError):
        select_blocks((4, 1, 1), 0)


def test_max_blocks_limits_the_run():
    module = load("naive_matmul.py")
    n = 32
    c = np.zeros((n, n), np.float32)
    r = instrumented_launch(module.matmul, (4, 4), (8, 8), [f32(n, n), f32(n, n), c],
                            max_blocks=2)
    assert (r["blocks_run"], r["blocks_total"]) == (2, 16)
    assert r["global_loads"]["outputs_written"] == {"C": 2 * 64}
    assert r["global_loads_per_output"] == 2 * n


def test_a_kernel_error_is_reported_with_its_line_and_threads_end():
    name = "shared_out_of_bounds.py"
    before = threading.active_count()
    r = instrumented_launch(load(name).kernel, 1, 65, [f32(65), np.zeros(65, np.float32)])
    assert r["error"]["message"].startswith("IndexError")
    assert r["error"]["where"] == {"line": line_of(name, "buf[tid] = x[tid]")}
    assert r["error"]["thread"] == [64, 0, 0] and r["blocks_run"] == 0
    assert r["divergent_barriers"] == []          # the aborted episode is not a finding
    assert threading.active_count() == before


def test_lane_threads_end_after_a_clean_launch():
    before = threading.active_count()
    instrumented_launch(load("scan_fixed.py").scan, 1, 64, [f32(64), np.zeros(64, np.float32)])
    assert threading.active_count() == before


def test_lines_from_another_file_carry_that_file():
    helper = str(FILES / "helper_device.py")
    r = instrumented_launch(load("kernel_uses_helper.py").kernel, 1, 32,
                            [f32(32), np.zeros(32, np.float32)])
    [b] = r["divergent_barriers"]
    assert b["arrivals"] == [{"line": line_of(helper, "cuda.syncthreads()"), "file": helper,
                              "threads": 16}]
    [d] = r["divergent_branches"]["by_line"]
    assert d == {"line": line_of(helper, "if tid < 16"), "file": helper, "divergent": 1,
                 "warp_branches": 1}
    # threads 16..31 read buf elements that threads 15..0 wrote in the device function
    [race] = r["races"]
    assert race["first"]["file"] == helper and "file" not in race["second"]
    assert race["second"]["line"] == line_of("kernel_uses_helper.py", "out[tid] = buf")
    [m] = [m for m in messages(r) if m["concept"] == "race"]
    write = line_of(helper, "buf[tid] = value")
    assert m["file"] == r["file"] and m["locations"][1] == {"file": helper, "line": write}
    assert f"helper_device.py, line {write}" in m["text"]


def test_garbage_collection_is_back_on_after_the_launch():
    assert gc.isenabled()
    instrumented_launch(load("shared_out_of_bounds.py").kernel, 1, 65,
                        [f32(65), np.zeros(65, np.float32)])
    assert gc.isenabled()


def test_a_kernel_without_readable_source_still_gets_memory_and_barrier_findings():
    from numba import cuda, float32

    source = (
        "def scan(x, out):\n"
        "    temp = cuda.shared.array(64, float32)\n"
        "    tid = cuda.threadIdx.x\n"
        "    temp[tid] = x[tid]\n"
        "    if tid > 0:\n"
        "        temp[tid] += temp[tid - 1]\n"
        "    cuda.syncthreads()\n"
        "    out[tid] = temp[tid]\n")
    namespace = {"cuda": cuda, "float32": float32}
    exec(compile(source, "<no file>", "exec"), namespace)
    kernel = cuda.jit(namespace["scan"])
    r = instrumented_launch(kernel, 1, 64, [f32(64), np.zeros(64, np.float32)])
    assert r["divergent_branches"] is None and r["notes"]
    # no barrier after line 4 either: thread t + 1 reads what thread t wrote there
    assert {(x["first"]["line"], x["second"]["line"]) for x in r["races"]} == {(4, 6), (6, 6)}
