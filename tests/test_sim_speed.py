"""Cheap wins of issue 13: the timing child stops as soon as correctness fails, and
``autograder solutions``'s progress lines. No GPU and no child
process: the timing child's ``run_child`` is a fake, the decisions are unit-tested."""

from __future__ import annotations

import contextlib
import threading

import numpy as np
import pytest
from typer.testing import CliRunner

from autograder import exercises, grader, self_check
from autograder.cli import app
from autograder.grader import _passed_every_case, _spoils_timing, _TimingChild
from autograder.sandbox import ChildRun, Limits
from autograder.submission import load_source


# --- the decision: which records rule timing out -------------------------------------------

@pytest.mark.parametrize("header, spoils", [
    ({"type": "error", "phase": "run", "id": 3, "message": "IndexError"}, True),
    ({"type": "error", "phase": "import", "message": "NameError"}, True),
    ({"type": "error", "phase": "contract", "message": "no kernel"}, True),
    ({"type": "error", "phase": "environment", "message": "numba 0.1"}, True),
    ({"type": "error", "phase": "compile", "message": "NVVM"}, False),  # the concept's PTX
    ({"type": "case", "id": 0}, False),
    ({"type": "start", "id": 0}, False),
    ({"type": "imported", "constants": {}}, False),
    ({"type": "error"}, False),
    ("not a dict", False),
])
def test_spoils_timing(header, spoils):
    assert _spoils_timing(header) is spoils


def _tiled_run(cases, wrong=(), missing=(), extra=()):
    """A fake GPU correctness run of tiled_matmul: the reference's outputs in guarded buffers
    (no margins), ``wrong`` case ids with one element changed, ``missing`` ids left out."""
    ex = exercises.get("tiled_matmul")
    run = ChildRun(records=[({"type": "imported", "constants": {"TILE_WIDTH": 16}}, {})])
    for c in cases:
        if c.id in missing:
            continue
        out = ex.reference(c.inputs, {**c.spec.params, "TILE_WIDTH": 16})["C"].astype(np.float32)
        if c.id in wrong:
            out = out.copy()
            out.flat[0] += 100.0
        run.records.append(({"type": "case", "id": c.id}, {"C": out.reshape(-1)}))
    run.records.extend(extra)
    run.records.append(({"type": "done"}, {}))
    return ex, run


@pytest.fixture(scope="module")
def tiled():
    ex = exercises.get("tiled_matmul")
    cases = [c for c in grader._make_cases(ex, 7) if c.spec.params["width"] <= 33]
    return ex, load_source(grader.solution_path(ex)), cases


def test_passed_every_case_only_for_correct_outputs(tiled):
    ex, source, cases = tiled
    _, good = _tiled_run(cases)
    assert _passed_every_case(ex, source, good, cases)
    # Outputs for every case, one of them wrong: the old rule (ran every case) would time it.
    _, one_wrong = _tiled_run(cases, wrong={cases[-1].id})
    assert grader._ran_every_case(one_wrong, cases)
    assert not _passed_every_case(ex, source, one_wrong, cases)
    _, short = _tiled_run(cases, missing={cases[0].id})
    assert not _passed_every_case(ex, source, short, cases)
    _, errored = _tiled_run(cases, extra=[({"type": "error", "phase": "run", "id": 99,
                                            "message": "x"}, {})])
    assert not _passed_every_case(ex, source, errored, cases)
    _, malformed = _tiled_run(cases)
    malformed.records[1] = ({"type": "case", "id": cases[0].id}, {"C": "not an array"})
    assert not _passed_every_case(ex, source, malformed, cases)


# --- the timing child: a fake run_child that warms up, says ready and waits for its go -------

class _FakeTimingChild:
    """Stands in for ``run_child`` of the timing child: sends ``ready`` once ``warm`` is set,
    then reports whether it got its go (``b"g"``) or was stopped (hook True or cancel)."""

    def __init__(self):
        self.warm = threading.Event()
        self.started = threading.Event()
        self.got: list[bytes] = []
        self.how = None

    def __call__(self, request, backend, limits, work, on_record=None, cancel=None):
        self.started.set()
        while not self.warm.wait(0.01):  # warming up: a cancel stops it here
            if cancel.is_set():
                self.how = "cancelled while warming up"
                return ChildRun(ended="cancelled")
        if on_record({"type": "ready"}, self.got.append):
            self.how = "stopped at ready"
            return ChildRun(ended="cancelled")
        self.how = "measured"
        return ChildRun(records=[({"type": "timing"}, {})])


@pytest.fixture
def fake_child(monkeypatch, tmp_path):
    fake = _FakeTimingChild()
    monkeypatch.setattr(grader, "run_child", fake)
    monkeypatch.setattr(grader.gpulock, "gpu", lambda exclusive: contextlib.nullcontext())
    return fake


def test_timing_child_measures_a_passing_kernel(fake_child, tmp_path):
    timed = _TimingChild({}, Limits(), tmp_path)
    timed.watch({"type": "case", "id": 0}, None)
    fake_child.warm.set()
    assert timed.finish(go=True) is not None
    assert fake_child.how == "measured" and fake_child.got == [b"g"]


def test_timing_child_stops_at_the_first_error_while_warming_up(fake_child, tmp_path):
    timed = _TimingChild({}, Limits(), tmp_path)
    fake_child.started.wait(5)
    assert timed.watch({"type": "error", "phase": "run", "id": 0, "message": "x"}, None) is False
    timed._thread.join(timeout=10)  # stopped now, not when the correctness child ends
    assert not timed._thread.is_alive()
    assert fake_child.how == "cancelled while warming up"
    assert timed.finish(go=True) is None  # a later go cannot revive it
    assert fake_child.got == []


def test_timing_child_stops_at_an_error_while_waiting_for_its_go(fake_child, tmp_path):
    timed = _TimingChild({}, Limits(timing_timeout=600.0), tmp_path)
    fake_child.warm.set()
    timed.watch({"type": "error", "phase": "import", "message": "SyntaxError"}, None)
    timed._thread.join(timeout=10)  # not after timing_timeout (600 s)
    assert not timed._thread.is_alive()
    assert fake_child.how == "stopped at ready" and fake_child.got == []
    assert timed.finish(go=True) is None


def test_timing_child_not_let_go_for_a_failed_kernel(fake_child, tmp_path):
    timed = _TimingChild({}, Limits(), tmp_path)
    fake_child.warm.set()
    assert timed.finish(go=False) is None
    assert fake_child.got == []


# --- autograder solutions: a progress line per exercise ---------------------------------------

def test_solutions_prints_a_progress_line_per_exercise(monkeypatch):
    def fake_check(name, device, seed=None):
        ok = name != "block_sum"
        return [self_check.CheckRow(name, "solutions/x.py", "full marks", "100/100", True, 1.5,
                                    "sim"),
                self_check.CheckRow(name, "mutants/m.py", "correctness=failed", "0/100", ok,
                                    2.0, "sim")]

    monkeypatch.setattr(self_check, "check_exercise", fake_check)
    result = CliRunner().invoke(app, ["solutions", "--device", "sim", "-e", "tiled_matmul",
                                      "-e", "block_sum"])
    assert result.exit_code == 1, result.output  # one wrong verdict
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("[")]
    assert lines == ["[1/2] tiled_matmul: 2 graded, all ok, 3.5 s on sim",
                     "[2/2] block_sum: 2 graded, 1 WRONG (mutants/m.py), 3.5 s on sim"]
    assert "Instructor solutions and known-bad submissions" in result.stdout  # the table stays
    assert "1 wrong verdict(s)" in result.stdout
