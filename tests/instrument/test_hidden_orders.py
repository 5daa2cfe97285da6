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
