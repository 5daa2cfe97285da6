"""A slow machine is not a hung kernel (issue 10).

On the simulator the children's deadlines count CPU time of their whole process tree
(:class:`autograder.sandbox.limits.Limits`), so several gradings at once on a small machine all get full
marks, while a child that spins runs out of CPU and one that blocks without using CPU is caught by
the idle backstop, each with its own message. No test here asserts on a wall-clock duration.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from autograder.exercises import known_bad
from autograder.wire.results import Kind, Status
from autograder.sandbox.limits import Limits
from autograder.sandbox.watchdog import Watchdog, _process_table, tree_cpu_seconds
from conftest import TEST_DEVICE, grade_file, SOLUTIONS
from tests.adversarial.lift import reach_lifted  # noqa: F401 (a fixture)

SPIN = [sys.executable, "-c", "while True: pass"]
SAFETY_S = 120  # only so that a broken clock fails the test instead of hanging it


def _until(predicate, what: str):
    """Poll ``predicate()`` until it is truthy; fail (never pass) if it never is."""
    give_up = time.monotonic() + SAFETY_S
    while time.monotonic() < give_up:
        found = predicate()
        if found:
            return found
        time.sleep(0.05)
    pytest.fail(f"never happened: {what}")


@pytest.fixture
def spawn():
    """Start processes for a test, each in a new session; afterwards kill each one's process
    group (its PID: what it started too) and reap it."""
    started: list[subprocess.Popen] = []

    def start(cmd):
        proc = subprocess.Popen(cmd, start_new_session=True)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


# ---------------------------------------------------------------------------------------------
# CPU accounting


def test_a_sleeping_child_uses_no_cpu_and_a_spinning_one_does(spawn):
    sleeper = spawn(["sleep", "300"])
    spinner = spawn(SPIN)
    _until(lambda: tree_cpu_seconds(spinner.pid) >= 0.5, "the spinner used 0.5 s of CPU")
    assert tree_cpu_seconds(sleeper.pid) < 0.1


def test_cpu_of_a_grandchild_counts_for_its_grandparent(spawn):
    # sh → sh → python spinning ("; true" keeps each shell from exec'ing its command)
    inner = f"{shlex.quote(sys.executable)} -c 'while True: pass'; true"
    root = spawn(["sh", "-c", f"sh -c {shlex.quote(inner)}; true"])
    _until(lambda: tree_cpu_seconds(root.pid) >= 0.5, "the tree used 0.5 s of CPU")
    assert _process_table()[root.pid][1] / os.sysconf("SC_CLK_TCK") < 0.1  # not the root's own


def test_a_process_that_is_gone_has_used_nothing(spawn):
    proc = spawn(["true"])
    proc.wait()
    assert tree_cpu_seconds(proc.pid) == 0.0


def test_the_cpu_clock_stops_a_spinner_for_cpu_and_a_sleeper_for_idleness(spawn):
    limits = Limits(import_timeout=0.5, idle_timeout=1.0, wall_factor=1000.0)
    spinner, sleeper = spawn(SPIN), spawn(["sleep", "300"])
    spinning = Watchdog(limits, "sim", spinner.pid, time.monotonic())
    sleeping = Watchdog(limits, "sim", sleeper.pid, time.monotonic())
    assert _until(lambda: spinning.expired(time.monotonic()), "the spinner stopped") == \
        ("cpu", 0.5)
    assert _until(lambda: sleeping.expired(time.monotonic()), "the sleeper stopped") == \
        ("idle", 1.0)


def test_a_gpu_child_keeps_wall_time_deadlines(spawn):
    limits = Limits(import_timeout=0.5)
    assert limits.clock_for("gpu") == "wall" and limits.clock_for("sim") == "cpu"
    assert limits.clock_for("compile") == "cpu"
    sleeper = spawn(["sleep", "300"])  # a GPU kernel that spins uses no host CPU
    watch = Watchdog(limits, "gpu", sleeper.pid, time.monotonic())
    assert _until(lambda: watch.expired(time.monotonic()), "the deadline passed") == ("wall", 0.5)
    with pytest.raises(ValueError):
        Limits(clock="gpu").clock_for("sim")


def test_a_case_budget_grows_with_its_size_up_to_case_timeout():
    import numpy as np

    limits = Limits(case_timeout=60.0, case_cpu_per_element=0.01)
    small = {"inputs": {"A": np.zeros((16, 16)), "B": np.zeros((16, 16))}}
    large = {"inputs": {"A": np.zeros((100, 100))}}
    assert limits.case_budget(small, "cpu") == pytest.approx(10 + 5.12, abs=0.1)
    assert limits.case_budget(large, "cpu") == 60.0
    assert limits.case_budget(small, "wall") == 60.0  # a GPU case: the wall deadline as given
    assert Limits(case_timeout=3.0, case_cpu_per_element=0.01).case_budget(small, "cpu") == 3.0


# ---------------------------------------------------------------------------------------------
# What a student reads (occupancy: plain Python functions, so no simulator launches)

SLEEPS = """
def answer(**kw):
    import time
    time.sleep(3600)


warps_per_block = resident_blocks_per_sm = resident_threads_per_sm = answer
tile_shared_bytes = global_traffic_reduction = answer
"""
SPINS = SLEEPS.replace("import time\n    time.sleep(3600)", "while True:\n        pass")


@pytest.mark.parametrize("code, words", [
    (SPINS, r"your function did not finish in time \(3 s of CPU time\): an endless loop\?"),
    (SLEEPS, r"your function did not finish in time \(it made no progress for 5 s, using no "
             r"CPU time\)"),
], ids=["spins", "sleeps"])
def test_a_timeout_says_whether_the_code_spun_or_waited(tmp_path, code, words, reach_lifted):
    """(``import time`` is out of a submission's reach: the lift lets this one sleep, as code
    that got past the reach layers would, to test the deadline that holds after them.)"""
    if TEST_DEVICE != "sim":
        pytest.skip("the CPU clock is the simulator's; GPU children keep wall-time deadlines")
    path = tmp_path / "occupancy.py"
    path.write_text(code, encoding="utf-8")
    limits = Limits(import_timeout=30, case_timeout=3, total_timeout=60, idle_timeout=5)
    result = grade_file(path, "occupancy", limits=limits)
    first = next(t for t in result.tests if t.kind is Kind.CORRECTNESS)
    assert first.status is Status.TIMEOUT
    assert re.search(words, first.message), first.message
    assert result.score == 0


# ---------------------------------------------------------------------------------------------
# Several gradings at once on a small machine


def _tiled_at(tmp_path: Path, tile: int) -> Path:
    text = (SOLUTIONS / "matmul_any_size.py").read_text(encoding="utf-8")
    text, n = re.subn(r"^TILE_WIDTH = \d+$", f"TILE_WIDTH = {tile}", text, flags=re.M)
    assert n == 1
    path = tmp_path / f"matmul_any_size_tile{tile}.py"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.slow
def test_five_gradings_at_once_all_get_full_marks(tmp_path):
    """The tester's case: a correct TILE_WIDTH 4 kernel, five gradings at once (ten children
    on a 2-core machine); each once lost its 37×41×43 case to a wall-clock timeout."""
    path = _tiled_at(tmp_path, 4)
    results: dict[int, object] = {}

    def one(i):
        results[i] = grade_file(path, "matmul_any_size")

    threads = [threading.Thread(target=one, args=(i,)) for i in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == list(range(5))
    for i, result in results.items():
        problems = known_bad.full_marks_problems(result)
        assert not problems, f"grading {i} lost points:\n" + "\n".join(problems)
        assert not [t for t in result.tests if t.status is Status.TIMEOUT]
