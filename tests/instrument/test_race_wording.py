"""The race message names the barriers the two accesses ran between (issue 32, item 3): a
tiled matmul without its second barrier has a barrier between the tile's write and the read in
the source, so the message never says "no barrier between" them; it says the write is the
next iteration's and where a barrier would order them."""

import numpy as np

from autograder.instrument import instrumented_launch
from autograder.judge import diagnostics
from autograder.source.submission import Source

from .conftest import FILES, f32, line_of, load

NAME = "tiled_matmul_one_barrier.py"


def test_the_race_message_names_the_barrier_and_the_next_iteration():
    a, b = f32(16, 16), f32(16, 16, seed=1)
    report = instrumented_launch(load(NAME).tiled_matmul, (2, 2), (8, 8),
                                 [a, b, np.zeros((16, 16), np.float32)])
    source = Source((FILES / NAME).read_text(), NAME)
    sync, write, read = (line_of(NAME, "cuda.syncthreads()"), line_of(NAME, "tile_a[ty, tx] ="),
                         line_of(NAME, "acc += tile_a"))
    assert write < sync < read  # a barrier lies between the two lines in the source
    races = [r for r in report["races"] if r["array"] == "tile_a"]
    assert {r["kind"] for r in races} == {"RAW", "WAR"}, races
    for race in races:
        assert race["barriers"] == {"after": {"line": sync}, "before": {"line": sync}}
    texts = [t for t in diagnostics.scheduling_hazards(source, report) if "tile_a" in t]
    assert len(texts) == 2, texts
    for text in texts:
        assert "no barrier between" not in text, text
        assert (f"write at line {write} by thread" in text
                and "in the next iteration of the loop" in text), text
    first, again = texts  # the second race of the same tile points to the first: said once
    assert f"; both ran after the barrier at line {sync} and before the next barrier" in first
    assert (f"(a cuda.syncthreads() after line {read}, at the end of the loop body before "
            f"the next iteration's write at line {write}, would)") in first, first
    assert again.endswith("; the same barriers and the same fix as the RAW race on tile_a "
                          "above"), again
