"""Order dependences the simulator's serial order hides (issue 30, goal 4): a shared element
two threads store different values to, and a chain of atomics whose returned values are used."""

from __future__ import annotations

import numpy as np

from autograder.instrument import instrumented_launch
from autograder.judge import diagnostics
from autograder.source.submission import Source
from .conftest import f32, line_of, load

FILE = "hidden_orders.py"


def _deciding(report) -> list[str]:
    return diagnostics.scheduling_hazards(Source("\n" * 60, "k.py"), report)


def test_a_shared_store_of_different_values_decides_and_one_value_does_not():
    last = instrumented_launch(load(FILE).shared_last_writer, 2, 32,
                               [f32(64), np.zeros(2, np.int32)])
    (race,) = last["races"]
    assert race["kind"] == "WAW" and race["space"] == "shared" and race["values_differ"]
    assert race["first"]["line"] == line_of(FILE, "every thread, a different value")
    assert _deciding(last)
    same = instrumented_launch(load(FILE).shared_same_value, 2, 32,
                               [f32(64), np.zeros(2, np.int32)])
    (race,) = same["races"]
    assert race["kind"] == "WAW" and not race["values_differ"]
    assert _deciding(same) == []


def test_an_atomic_whose_value_is_used_races_with_another_thread_s_change():
    """``prev = atomic.add(out, i - 1, 0)`` reads what the neighbour's ``atomic.exch`` stores,
    with no barrier between: the chain of the global scan, spelled with atomics."""
    x, out = np.arange(64, dtype=np.int32), np.zeros(64, np.int32)
    r = instrumented_launch(load(FILE).atomic_chain, 1, 64, [x, out])
    np.testing.assert_array_equal(out, np.cumsum(x))   # the serial order made it exact
    races = [g for g in r["races"] if g["space"] == "global"]
    assert races and {g["scope"] for g in races} == {"block"}
    assert {(g["first"]["access"], g["second"]["access"]) for g in races} == {("atomic", "atomic")}
    assert any(g["first"]["line"] == line_of(FILE, "the neighbour's write")
               and g["second"]["line"] == line_of(FILE, "# the read") for g in races)
    assert _deciding(r)


def test_atomics_whose_values_are_unused_or_tickets_do_not_race():
    x = np.ones(64, np.float32)
    out = np.zeros(1, np.float32)
    r = instrumented_launch(load(FILE).atomic_sum_ignored, 2, 32, [x, out])
    assert r["races"] == [] and out[0] == 64
    r = instrumented_launch(load(FILE).atomic_ticket, 2, 32,
                            [x, np.zeros(64, np.float32), np.zeros(1, np.int32)])
    assert r["races"] == []


def test_an_atomic_read_of_another_block_s_unreleased_change_races():
    x, out = np.arange(96, dtype=np.int32), np.zeros(96, np.int32)
    r = instrumented_launch(load(FILE).atomic_chain_fenced, 3, 32, [x, out])
    races = [g for g in r["races"] if g["space"] == "global"]
    assert any(g["scope"] == "grid" and g["kind"] == "RAW"
               and g["second"]["block"][0] == g["first"]["block"][0] + 1 for g in races), races


def test_a_lock_taken_with_compare_and_swap_and_fences_orders_the_blocks():
    x, total = np.ones(96, np.float32), np.zeros(1, np.float32)
    r = instrumented_launch(load(FILE).lock_protected_total, 3, 32,
                            [x, total, np.zeros(1, np.int32)])
    assert r["error"] is None and total[0] == 3
    assert r["races"] == []
