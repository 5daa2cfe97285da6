"""The data flow of outputs (issue 30): what each output's value depends on, and whether it got
there through shared memory written by another thread; every read of global memory counted,
whatever makes it; shared reads of elements no thread of the block wrote."""

from __future__ import annotations

import math

import numpy as np

from autograder.instrument import instrumented_launch, messages
from autograder.instrument.taint import plain, swapped_math, taint, tainted
from .conftest import ROOT, f32, line_of, load

FILE = "dataflow_kernels.py"
T = 8


def _use(kernel, x, y, grid=2, block=T) -> dict:
    r = instrumented_launch(getattr(load(FILE), kernel), grid, block, [x, y])
    assert r["error"] is None, r["error"]
    return r


def test_taint_follows_arithmetic_casts_and_math():
    a = tainted(np.float32(1.5), 0b01, 0, 0)
    b = tainted(np.float32(2.0), 0b10, 0b100, 3)
    assert taint(a * b + 1.0) == (0b11, 0b100, 4)   # one step combines two tainted values
    assert taint(1.0 + a) == (0b01, 0, 0) and taint(np.float64(2) * a) == (0b01, 0, 0)
    assert taint(-a) == (0b01, 0, 0) and taint(np.float32(3.0)) is None
    assert a * b + 1.0 == np.float32(4.0) and type(plain(a * b)) is np.float32
    assert taint(np.int32(7) // tainted(np.int32(2), 1, 0, 0)) == (1, 0, 0)
    globs = {"math": math}
    fn = eval("lambda v: math.sqrt(v)", globs)
    with swapped_math([fn]):
        assert taint(fn(b)) == (0b10, 0b100, 3)
    assert globs["math"] is math


def test_an_output_computed_from_the_tile_counts_its_neighbours_through_shared_memory():
    x = f32(2 * T)
    y = np.zeros(2 * T, np.float32)
    use = _use("neighbour_sum", x, y)["shared_use"]
    assert use["outputs_traced"] == 2 * T
    # each output: its two neighbours (one at a tile's edge) came from other threads
    assert use["shared_inputs"] == 2 * (2 * (T - 2) + 2)
    assert use["outputs_from_shared"] == 0   # its own element came from its own load
    assert use["max_output_steps"] == 2


def test_reading_the_tile_without_computing_from_it_counts_nothing():
    use = _use("neighbour_sum_from_global", f32(2 * T), np.zeros(2 * T, np.float32))
    assert use["shared_use"]["cross_thread_reads"] == 2 * T   # the reads are there
    assert use["shared_use"]["shared_inputs"] == 0             # the data never went through them


def test_the_data_flow_survives_local_arrays_casts_and_math_functions():
    use = _use("through_local_and_math", f32(2 * T), np.zeros(2 * T, np.float32))["shared_use"]
    assert use["shared_inputs"] == 2 * 2 * T
    assert use["outputs_from_shared"] == 2 * T


def test_a_serial_sum_handed_over_is_a_long_chain_and_a_tree_a_short_one():
    x = f32(2 * T)
    serial = _use("serial_then_handed_over", x, np.zeros(2, np.float32))["shared_use"]
    tree = _use("tree", x, np.zeros(2, np.float32))["shared_use"]
    assert serial["shared_inputs"] == tree["shared_inputs"] + 2   # thread 0 loaded all of them
    assert serial["max_output_steps"] == T - 1
    assert tree["max_output_steps"] == int(math.log2(T))


def test_atomics_and_array_methods_read_global_memory():
    r = _use("loads_by_other_means", f32(T + 1), np.zeros(T, np.float32), grid=1)
    loads = r["global_loads"]
    assert loads["by_array"] == {"x": T + 2 * T}   # one atomic and two elements a thread
    assert loads["outputs_written"] == {"y": T}   # an atomic that changes nothing is a read


def test_the_two_per_load_block_sum_reaches_its_inputs_with_half_the_shared_reads():
    from autograder.child.timing import import_solution

    x = f32(1024)
    honest = load(ROOT / "tests" / "files" / "concept_honest" / "block_sum_two_per_load.py")
    instructor = import_solution(str(ROOT / "solutions" / "block_sum.py"), {"BLOCK_SIZE": 512})
    got = [instrumented_launch(m.block_sum, 2, 512, [x, np.zeros(2, np.float32)])["shared_use"]
           for m in (honest, instructor)]
    assert got[0]["cross_thread_reads"] * 2 < got[1]["cross_thread_reads"]
    assert got[1]["shared_inputs"] == 2 * 511 and got[0]["shared_inputs"] == 2 * 510


def test_a_tile_whose_halo_is_never_loaded_reads_elements_no_thread_wrote():
    a = f32(2 * T, 2 * T)
    r = instrumented_launch(load(FILE).stencil_no_halo, (2, 2), (T, T),
                            [a, np.zeros_like(a)])
    rows, sides = r["uninitialized_reads"]
    assert (rows["line"], sides["line"]) == (line_of(FILE, "# the stencil"),
                                             line_of(FILE, "# its other half"))
    assert rows["array"] == "tile" and rows["access"] == "read" and rows["block"] == [0, 0, 0]
    assert rows["index"] == [0, 1] and rows["thread"] == [0, 0, 0]   # the row above the tile
    assert sides["index"] == [1, 0] and sides["thread"] == [0, 0, 0]  # the column left of it
    assert rows["count"] == sides["count"] == 4 * 2 * T   # two halo sides, T elements, 4 blocks
    msg = [m for m in messages(r) if m["concept"] == "uninitialized"]
    assert len(msg) == 2 and msg[0]["severity"] == "error" and "tile[0, 1]" in msg[0]["text"]


def test_a_tile_loaded_whole_has_no_unwritten_read():
    x = f32(4 * T - 3)
    y = np.zeros_like(x)
    r = instrumented_launch(load(FILE).stencil_1d_with_halo, 4, T, [x, y])
    assert r["uninitialized_reads"] == [] and r["races"] == []
    padded = np.concatenate([[0], x, [0]])
    assert np.allclose(y, padded[:-2] + padded[1:-1] + padded[2:])  # the kernel is the stencil
