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
    build = importlib.import_module("autograder.exercises.grid_barrier.driver").build

    @cuda.jit(device=True)
    def barrier(*args):
        pass

    @cuda.jit(device=True)
    def another(*args):
        pass

    assert wrap(barrier) is wrap(barrier)
    assert build(wrap(barrier)) is build(wrap(barrier))
    assert build(wrap(another)) is not build(wrap(barrier))
