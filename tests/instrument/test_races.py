"""Shared-memory hazards between two barriers, found from the set of accesses."""

import numpy as np

from autograder.instrument import instrumented_launch
from .conftest import ROOT, f32, line_of, load


def test_scan_reading_and_writing_one_array_between_barriers_is_a_race():
    name = "scan_race.py"
    r = instrumented_launch(load(name).scan, 1, 64, [f32(64), np.zeros(64, np.float32)])
    line = line_of(name, "temp[tid] += temp[tid - offset]")
    assert r["races"], "the scan's race was not reported"
    race = r["races"][0]
    assert race["array"] == "temp"
    assert race["kind"] == "RAW"
    assert (race["first"]["line"], race["second"]["line"]) == (line, line)
    assert (race["first"]["access"], race["second"]["access"]) == ("write", "read")
    assert race["first"]["thread"] != race["second"]["thread"]
    # thread t reads temp[t - offset] that thread t - offset writes
    assert race["index"] == [race["first"]["thread"][0]]
    assert race["second"]["thread"][0] - race["first"]["thread"][0] in (1, 2, 4, 8, 16, 32)


def test_scan_with_a_barrier_between_read_and_write_is_clean():
    x = f32(64)
    out = np.zeros(64, np.float32)
    r = instrumented_launch(load("scan_fixed.py").scan, 1, 64, [x, out])
    assert r["races"] == []
    np.testing.assert_allclose(out, np.cumsum(x), rtol=1e-5)


def test_tiled_matmul_without_its_second_barrier_races_on_both_tiles():
    name = "tiled_matmul_one_barrier.py"
    a, b = f32(16, 16), f32(16, 16, seed=1)
    r = instrumented_launch(load(name).tiled_matmul, (2, 2), (8, 8),
                            [a, b, np.zeros((16, 16), np.float32)])
    read = line_of(name, "acc += tile_a")
    pairs = {(x["array"], x["kind"], x["first"]["line"], x["second"]["line"]) for x in r["races"]}
    assert ("tile_a", "WAR", read, line_of(name, "tile_a[ty, tx] =")) in pairs
    assert ("tile_b", "WAR", read, line_of(name, "tile_b[ty, tx] =")) in pairs
    assert r["divergent_barriers"] == []


def test_atomics_do_not_race_but_a_plain_shared_update_does():
    name = "histogram_atomic.py"
    r = instrumented_launch(load(name).histogram, 1, 64,
                            [np.arange(64, dtype=np.int32), np.zeros(8, np.int32)])
    lines = {x["first"]["line"] for x in r["races"]} | {x["second"]["line"] for x in r["races"]}
    assert lines == {line_of(name, "bins[0] += 1")}
    assert {x["kind"] for x in r["races"]} == {"RAW", "WAR", "WAW"}


def test_instructor_tiled_matmul_is_clean():
    module = load(ROOT / "solutions" / "tiled_matmul.py")
    n = 32
    a, b = f32(n, n), f32(n, n, seed=1)
    c = np.zeros((n, n), np.float32)
    tile = module.TILE_WIDTH
    g = (n + tile - 1) // tile
    r = instrumented_launch(module.tiled_matmul, (g, g), (tile, tile), [a, b, c])
    assert r["error"] is None
    assert r["races"] == [] and r["divergent_barriers"] == []
    assert r["bank_conflicts"] == []
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def _check(log):
    from autograder.instrument.memory import ArrayInfo
    from autograder.instrument.races import SharedRaces
    from autograder.instrument.trace import Interval, Recorder

    rec = Recorder("k.py", (64, 1, 1), [])
    rec.arrays.append(ArrayInfo("s", "shared", (64,), "float32", 4, 0, 1))
    rec.site_loc = lambda site: site   # these events carry line numbers, not sites
    races = SharedRaces()
    # events: (thread, line, array id, byte address, kind)
    races.interval(rec, Interval(log, [], []))
    return {(r["kind"], r["first"]["line"], r["second"]["line"]) for r in races.result(rec)}


def test_hazards_come_from_the_set_of_accesses_in_one_interval():
    from autograder.instrument.trace import ATOMIC, READ, WRITE

    # threads 0 and 1 write at line 10, then thread 0 reads at 12: the read races with
    # thread 1's write even though thread 0 wrote the element too
    assert _check([(0, 10, 0, 0, WRITE), (1, 10, 0, 0, WRITE),
                   (0, 12, 0, 0, READ)]) == {("WAW", 10, 10), ("RAW", 10, 12)}
    # a thread reading and writing its own element is no hazard; nor are two atomics
    assert _check([(0, 10, 0, 0, READ), (0, 10, 0, 0, WRITE),
                   (1, 13, 0, 4, ATOMIC), (2, 13, 0, 4, ATOMIC)]) == set()
    # a plain read of an element another thread updates atomically is
    assert _check([(1, 13, 0, 4, ATOMIC), (2, 14, 0, 4, READ)]) == {("RAW", 13, 14)}
