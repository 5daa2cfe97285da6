"""Warp-level counters: divergent branches, bank conflicts, global loads per output."""

import numpy as np

from autograder.instrument import instrumented_launch
from autograder.instrument.banks import ways
from .conftest import ROOT, f32, line_of, load


def reduce(name):
    return instrumented_launch(load(name).reduce_sum, 1, 256, [f32(256), np.zeros(1, np.float32)])


def test_interleaved_reduction_diverges_more_than_sequential_addressing():
    inter = reduce("reduction_interleaved.py")["divergent_branches"]
    seq = reduce("reduction_sequential.py")["divergent_branches"]
    assert inter["total"] > seq["total"]
    # 8 warps diverge at strides 1..16, then 4, 2, 1 warps; sequential: one warp at 16..1
    by_line = {d["line"]: d["divergent"] for d in inter["by_line"]}
    assert by_line[line_of("reduction_interleaved.py", "if tid % (2 * stride)")] == 47
    by_line = {d["line"]: d["divergent"] for d in seq["by_line"]}
    assert by_line[line_of("reduction_sequential.py", "if tid < stride")] == 5


def transpose(name):
    a = f32(32, 32)
    out = np.zeros((32, 32), np.float32)
    r = instrumented_launch(load(name).transpose, (1, 1), (32, 8), [out, a])
    np.testing.assert_array_equal(out, a.T)
    return r


def test_unpadded_transpose_tile_read_along_columns_is_32_way():
    r = transpose("transpose_unpadded.py")
    [c] = r["bank_conflicts"]
    assert c["line"] == line_of("transpose_unpadded.py", "= tile[tx, ty + j]")
    assert (c["array"], c["access"], c["max_ways"]) == ("tile", "read", 32)
    assert c["conflicted_instructions"] == c["instructions"] == 32   # 8 warps x 4 rows


def test_padded_transpose_tile_has_no_bank_conflict():
    r = transpose("transpose_padded.py")
    assert r["bank_conflicts"] == []
    assert r["shared_arrays"][0]["shape"] == [32, 33]


def test_bank_cost_of_one_warp_access():
    assert ways([4 * i for i in range(32)], 4) == (1, 1)          # consecutive words
    assert ways([0] * 32, 4) == (1, 1)                            # broadcast
    assert ways([128 * i for i in range(32)], 4) == (32, 1)       # one column of 32x32
    assert ways([132 * i for i in range(32)], 4) == (1, 1)        # padded to 33
    assert ways([8 * i for i in range(32)], 4) == (2, 1)          # stride 2: two-way
    assert ways([8 * i for i in range(32)], 8) == (2, 2)          # float64: two wavefronts


def matmul_loads(path, kernel, n, tile):
    module = load(path)
    a, b = f32(n, n), f32(n, n, seed=1)
    c = np.zeros((n, n), np.float32)
    g = (n + tile - 1) // tile
    r = instrumented_launch(getattr(module, kernel), (g, g), (tile, tile), [a, b, c])
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)
    return r


def test_global_loads_per_element_tiled_vs_naive():
    n = 32
    tiled = matmul_loads(ROOT / "solutions" / "tiled_matmul.py", "tiled_matmul", n, 16)
    naive = matmul_loads("naive_matmul.py", "matmul", n, 16)
    assert tiled["global_loads_per_output"] == 2 * n / 16
    assert naive["global_loads_per_output"] == 2 * n
    assert tiled["global_loads"]["outputs_written"] == {"C": n * n}
    assert naive["global_loads"]["by_array"] == {"A": n ** 3, "B": n ** 3}


def test_loops_whose_trip_count_differs_within_a_warp_diverge():
    name = "loop_trip_counts.py"
    out = np.zeros(64, np.int64)
    r = instrumented_launch(load(name).kernel, 1, 64, [out])
    div = r["divergent_branches"]
    assert div["by_line"] == [{"line": line_of(name, "range(tid % 4)"), "divergent": 2,
                               "warp_branches": 2}]
    assert div["warp_branches"] == 4     # two loops, two warps: a loop counts once per run


def test_a_loop_over_another_iterable_is_counted_as_it_runs_even_after_break():
    from autograder.instrument.trace import Recorder

    rec = Recorder("k.py", (32, 1, 1), [])
    rec.tid = 3
    _, loop = rec.branch_hooks("k.py")
    for x in loop(5, iter([1, 2, 3])):
        if x == 2:
            break
    assert rec.branch_log == [(3, 5, 2)]
