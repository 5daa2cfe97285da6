"""Student-facing messages from a report."""

import numpy as np

from autograder.instrument import instrumented_launch, messages
from .conftest import ROOT, f32, line_of, load


def test_barrier_message_names_the_line_and_the_thread_count():
    name = "reduction_barrier_in_if.py"
    r = instrumented_launch(load(name).reduce_sum, 1, 256, [f32(256), np.zeros(1, np.float32)])
    [m] = messages(r)
    line = line_of(name, "        cuda.syncthreads()")
    assert (m["concept"], m["severity"], m["line"]) == ("barrier", "error", line)
    assert m["text"].startswith(f"line {line}: this barrier is reached by only 128 of 256 threads")
    assert m["file"] == r["file"]


def test_race_message_names_array_lines_and_threads_and_uses_where():
    name = "tiled_matmul_one_barrier.py"
    a, b = f32(16, 16), f32(16, 16, seed=1)
    r = instrumented_launch(load(name).tiled_matmul, (2, 2), (8, 8),
                            [a, b, np.zeros((16, 16), np.float32)])
    ms = messages(r, where=lambda f, n: f"cell 3, line {n - 5}")
    races = [m for m in ms if m["concept"] == "race"]
    assert {m["text"].split(":")[1].strip() for m in races} == {"race on shared array tile_a",
                                                                "race on shared array tile_b"}
    read = line_of(name, "acc += tile_a")
    assert all({"file": r["file"], "line": read} in m["locations"] for m in races)
    assert all(f"cell 3, line {read - 5}" in m["text"] for m in races)
    assert "thread (" in races[0]["text"]


def test_bank_conflict_and_divergence_messages():
    a = f32(32, 32)
    r = instrumented_launch(load("transpose_unpadded.py").transpose, (1, 1), (32, 8),
                            [np.zeros((32, 32), np.float32), a])
    [m] = messages(r)
    assert m["concept"] == "bank_conflict" and "32-way" in m["text"]
    r = instrumented_launch(load("reduction_interleaved.py").reduce_sum, 1, 256,
                            [f32(256), np.zeros(1, np.float32)])
    [m] = messages(r)
    assert m["concept"] == "divergence"
    assert m["line"] == line_of("reduction_interleaved.py", "if tid % (2 * stride)")
    assert messages(r, min_divergent_fraction=0.9) == []


def test_clean_kernel_gets_no_message_but_loads_can_be_judged():
    module = load(ROOT / "solutions" / "tiled_matmul.py")
    r = instrumented_launch(module.tiled_matmul, (1, 1), (16, 16),
                            [f32(16, 16), f32(16, 16), np.zeros((16, 16), np.float32)])
    assert messages(r) == []
    assert messages(r, max_loads_per_output=2) == []       # 2 * 16 / 16 = 2 loads: fine
    [m] = messages(r, max_loads_per_output=1.5)
    assert m["concept"] == "global_loads" and m["severity"] == "warning"


def test_error_message():
    r = instrumented_launch(load("shared_out_of_bounds.py").kernel, 1, 65,
                            [f32(65), np.zeros(65, np.float32)])
    [m] = messages(r)
    assert m["concept"] == "error" and "IndexError" in m["text"] and "thread 64" in m["text"]
