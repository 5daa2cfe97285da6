"""Races in global memory (issue 30): between two threads of a block with no barrier between
them, and between two blocks with no fence protocol ordering them. The simulator runs threads
and blocks one at a time, so every one of these kernels gives exact outputs there; only the
analysis tells them apart."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.instrument import instrumented_launch
from .conftest import ROOT, f32, line_of, load

FILE = "global_races.py"
EXERCISES = ROOT / "assignments"


def _global(report) -> list[dict]:
    return [r for r in report["races"] if r.get("space") == "global"]


def test_a_chain_through_global_memory_is_a_race_though_its_outputs_are_exact():
    x, out = f32(64), np.zeros(64, np.float32)
    r = instrumented_launch(load(FILE).chain, 1, 64, [x, out])
    np.testing.assert_allclose(out, np.cumsum(x), rtol=1e-5)   # the serial order made it right
    (race,) = [g for g in _global(r) if g["first"]["line"] == g["second"]["line"]]
    assert race["kind"] == "RAW" and race["array"] == "out" and race["scope"] == "block"
    assert race["first"]["line"] == line_of(FILE, "# the chain")
    assert race["second"]["thread"][0] - race["first"]["thread"][0] == 1
    assert race["index"] == [race["first"]["thread"][0]]


def test_a_barrier_between_one_thread_s_store_and_another_s_load_orders_them():
    r = instrumented_launch(load(FILE).chain_with_barrier, 1, 64, [f32(64),
                                                                    np.zeros(64, np.float32)])
    assert r["races"] == []


def test_a_plain_read_modify_write_of_one_element_races_and_an_atomic_does_not():
    x = f32(128)
    partial = np.zeros(2, np.float32)
    r = instrumented_launch(load(FILE).plain_sum, 2, 64, [x, partial])
    np.testing.assert_allclose(partial, x.reshape(2, 64).sum(axis=1), rtol=1e-5)
    assert {g["kind"] for g in _global(r)} == {"RAW", "WAR", "WAW"}
    assert all(g["scope"] == "block" and g["array"] == "partial" for g in _global(r))
    r = instrumented_launch(load(FILE).atomic_sum, 2, 64, [x, np.zeros(2, np.float32)])
    assert r["races"] == []


def test_stores_of_one_value_are_told_from_stores_the_last_writer_wins():
    x = f32(64)
    one = _global(instrumented_launch(load(FILE).same_value, 2, 32, [x, np.zeros(1, np.float32)]))
    assert one and all(g["kind"] == "WAW" and not g["values_differ"] for g in one)
    assert {g["scope"] for g in one} == {"block", "grid"}
    last = _global(instrumented_launch(load(FILE).last_writer_wins, 2, 32,
                                       [x, np.zeros(1, np.float32)]))
    assert last and all(g["values_differ"] for g in last)


def _handoff(kernel_name: str, blocks: int = 3, threads: int = 32) -> dict:
    n = blocks * threads
    return instrumented_launch(getattr(load(FILE), kernel_name), blocks, threads,
                               [f32(n), np.zeros(n, np.float32), np.zeros(blocks, np.int32)])


def test_a_block_reading_what_another_block_stored_races_without_a_fence_protocol():
    races = _global(_handoff("neighbour_block"))
    assert races and {g["scope"] for g in races} == {"grid"}
    race = races[0]
    assert race["kind"] == "RAW" and race["array"] == "out"
    assert race["first"]["line"] == line_of(FILE, "# own")
    assert race["second"]["line"] == line_of(FILE, "# neighbour")
    assert race["second"]["block"][0] == race["first"]["block"][0] + 1


def test_a_release_and_an_acquire_through_one_flag_order_two_blocks():
    """Fence then atomic in the block that stores, atomic then fence in the one that reads,
    barriers carrying both to the other threads of each block."""
    assert _handoff("flag_handoff")["races"] == []


@pytest.mark.parametrize("kernel", ["flag_handoff_no_release_fence",
                                    "flag_handoff_no_acquire_fence"])
def test_either_fence_missing_leaves_the_race(kernel):
    """On ``out``; without the release fence the wait's atomic also reads a flag raised by no
    release (an atomic read of another block's unreleased change)."""
    races = _global(_handoff(kernel))
    assert any(g["array"] == "out" for g in races)
    assert all(g["scope"] == "grid" and g["array"] in ("out", "flag") for g in races)
    assert all(g["array"] == "out" for g in races) or kernel.endswith("no_release_fence")


def test_a_plain_load_of_a_flag_races_with_the_atomic_that_raised_it():
    races = _global(_handoff("flag_handoff_plain_spin"))
    assert any(g["array"] == "flag" and g["first"]["access"] == "atomic"
               and g["second"]["access"] == "read" for g in races)
    assert any(g["array"] == "out" for g in races)   # and the wait acquires nothing


def test_the_threadfence_reduction_is_race_free():
    blocks = 5
    x, total = f32(blocks), np.zeros(1, np.float32)
    r = instrumented_launch(load(FILE).last_block_sums, blocks, 32,
                            [x, np.zeros(blocks, np.float32), np.zeros(1, np.int32), total])
    assert r["races"] == []
    assert total[0] == pytest.approx(x.sum(), rel=1e-5)


def test_only_the_blocks_run_are_compared():
    """max_blocks: block 1 of 4 never runs, so block 2's read of its elements meets no store."""
    r = instrumented_launch(load(FILE).neighbour_block, 4, 32,
                            [f32(128), np.zeros(128, np.float32), np.zeros(4, np.int32)],
                            max_blocks=2)   # blocks 0 and 3
    assert r["blocks_run"] == 2 and _global(r) == []


def _phases(barrier_file, blocks=3, threads=32) -> dict:
    module = load("barrier_phases.py")
    module.barrier = load(barrier_file).grid_barrier
    n = blocks * threads
    x = np.arange(n, dtype=np.int32)
    out = np.zeros(n, np.int32)
    r = instrumented_launch(module.phases, blocks, threads, [x, out, np.zeros(1, np.int32)])
    assert r["error"] is None
    np.testing.assert_array_equal(x[threads:], 2 * np.arange(n - threads))
    return r


def test_the_instructor_s_lock_based_grid_barrier_orders_its_blocks():
    assert _phases(ROOT / "solutions" / "grid_barrier.py")["races"] == []


@pytest.mark.parametrize("mutant, array", [("no_fence", "out"), ("no_fence_after_wait", "out"),
                                           ("no_block_barrier_after", "out"),
                                           ("plain_load_spin", "counter")])
def test_the_grid_barrier_s_known_bad_forms_leave_races(mutant, array):
    """No release fence, no acquire fence, threads other than 0 not held: the phases race on
    ``out``; a spin on a plain load races on the counter the atomics raise."""
    races = _global(_phases(EXERCISES / "grid_barrier" / "mutants" / f"{mutant}.py"))
    assert any(g["array"] == array and g["scope"] == "grid" for g in races), races


def test_the_instructor_s_lock_free_grid_barrier_is_race_free_in_one_block():
    """Its checker block waits for every block, which a grid run one block after another never
    sees arrive: one block is what the simulator can run."""
    module = load("barrier_phases.py")
    module.barrier = load(ROOT / "solutions" / "grid_barrier_lockfree.py").grid_barrier_lockfree
    x = np.arange(64, dtype=np.int32)
    r = instrumented_launch(module.phases_one_block, 1, 64,
                            [x, np.zeros(64, np.int32), np.zeros(1, np.int32),
                             np.zeros(1, np.int32)])
    assert r["error"] is None and r["races"] == []
    np.testing.assert_array_equal(x, 2 * np.roll(np.arange(64), -1))
