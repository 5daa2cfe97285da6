"""Cheap wins of issue 13: the timing child stops as soon as correctness fails, and
``autograder solutions``'s progress lines. No GPU and no child
process: the timing child's ``run_child`` is a fake, the decisions are unit-tested."""

from __future__ import annotations

import contextlib
import threading

import numpy as np
import pytest
from typer.testing import CliRunner

from autograder import children, exercises, grader, judge_cases, plan, self_check
from autograder.cli import app
from autograder.children import TimingChild as _TimingChild
from autograder.judge_cases import passed_every_case as _passed_every_case
from autograder.judge_cases import spoils_timing as _spoils_timing
from autograder.results import ExerciseResult
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
    cases = [c for c in plan.make_cases(ex, 7) if c.spec.params["width"] <= 33]
    return ex, load_source(exercises.solution_path(ex)), cases


def test_passed_every_case_only_for_correct_outputs(tiled):
    ex, source, cases = tiled
    _, good = _tiled_run(cases)
    assert _passed_every_case(ex, source, good, cases)
    # Outputs for every case, one of them wrong: the old rule (ran every case) would time it.
    _, one_wrong = _tiled_run(cases, wrong={cases[-1].id})
    assert judge_cases.ran_every_case(one_wrong, cases)
    assert not _passed_every_case(ex, source, one_wrong, cases)
    _, short = _tiled_run(cases, missing={cases[0].id})
    assert not _passed_every_case(ex, source, short, cases)
    _, errored = _tiled_run(cases, extra=[({"type": "error", "phase": "run", "id": 99,
                                            "message": "x"}, {})])
    assert not _passed_every_case(ex, source, errored, cases)
    _, malformed = _tiled_run(cases)
    malformed.records[1] = ({"type": "case", "id": cases[0].id}, {"C": "not an array"})
    assert not _passed_every_case(ex, source, malformed, cases)


# --- the timing child: a fake run_child that compiles, says ready and waits for its go --------

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
    monkeypatch.setattr(children, "run_child", fake)
    monkeypatch.setattr(children.gpulock, "gpu", lambda exclusive: contextlib.nullcontext())
    return fake


def test_timing_child_measures_a_passing_kernel(fake_child, tmp_path):
    timed = _TimingChild({}, Limits(), tmp_path)
    timed.watch({"type": "case", "id": 0}, None)
    fake_child.warm.set()
    timed.decide(True)
    assert timed.finish() is not None
    assert fake_child.how == "measured" and fake_child.got == [b"g"]


def test_timing_child_stops_at_the_first_error_while_warming_up(fake_child, tmp_path):
    timed = _TimingChild({}, Limits(), tmp_path)
    fake_child.started.wait(5)
    assert timed.watch({"type": "error", "phase": "run", "id": 0, "message": "x"}, None) is False
    timed._thread.join(timeout=10)  # stopped now, not when the correctness child ends
    assert not timed._thread.is_alive()
    assert fake_child.how == "cancelled while warming up"
    timed.decide(True)
    assert timed.finish() is None  # a later go cannot revive it
    assert fake_child.got == []


def test_timing_child_stops_at_an_error_while_waiting_for_its_go(fake_child, tmp_path):
    timed = _TimingChild({}, Limits(timing_timeout=600.0), tmp_path)
    fake_child.warm.set()
    timed.watch({"type": "error", "phase": "import", "message": "SyntaxError"}, None)
    timed._thread.join(timeout=10)  # not after timing_timeout (600 s)
    assert not timed._thread.is_alive()
    assert fake_child.how == "stopped at ready" and fake_child.got == []
    timed.decide(True)
    assert timed.finish() is None


def test_timing_child_not_let_go_for_a_failed_kernel(fake_child, tmp_path):
    timed = _TimingChild({}, Limits(), tmp_path)
    fake_child.warm.set()
    timed.decide(False)
    assert timed.finish() is None
    assert fake_child.got == []


# --- autograder solutions: a progress line per exercise ---------------------------------------

@pytest.mark.parametrize("jobs", ["1", "3"])
def test_solutions_prints_a_progress_line_per_exercise(monkeypatch, jobs):
    graded = []

    def fake_check(name, path, device, seed=None):
        graded.append((name, path.name))
        ok = not (name == "block_sum" and path.name == "no_bound_check.py")
        return self_check.CheckRow(name, f"x/{name}/{path.name}", "?", "0/100", ok, 0.5, "sim")

    monkeypatch.setattr(self_check, "check_submission", fake_check)
    result = CliRunner().invoke(app, ["solutions", "--device", "sim", "-e", "tiled_matmul",
                                      "-e", "block_sum", "--jobs", jobs])
    assert result.exit_code == 1, result.output  # one wrong verdict
    n_tm = len(self_check.submissions("tiled_matmul"))
    n_bs = len(self_check.submissions("block_sum"))
    lines = sorted(ln for ln in result.stderr.splitlines() if ln.startswith("["))
    assert len(lines) == 2 and len(graded) == n_tm + n_bs
    assert any(ln.endswith(f"tiled_matmul: {n_tm} graded, all ok, {0.5 * n_tm:.1f} s on sim")
               for ln in lines), lines
    assert any(f"block_sum: {n_bs} graded, 1 WRONG (x/block_sum/no_bound_check.py)" in ln
               for ln in lines), lines
    assert {ln[:5] for ln in lines} == {"[1/2]", "[2/2]"}
    # the table stays, in exercise order, each exercise's solution first
    assert "Instructor solutions and known-bad submissions" in result.stdout
    assert (result.stdout.index("x/tiled_matmul/solution.py")
            < result.stdout.index("x/block_sum/solution.py"))
    assert "1 wrong verdict(s)" in result.stdout


def test_check_all_reports_each_exercise_once_all_its_rows_are_in(monkeypatch):
    """With several gradings at once, an exercise's line waits for its last row."""
    release = threading.Event()

    def fake_check(name, path, device, seed=None):
        if name == "tiled_matmul" and path.name == "naive.py":
            release.wait(10)  # the last of tiled_matmul's rows to end
        return self_check.CheckRow(name, path.name, "?", "?", True, 0.0, "sim")

    reported = []

    def on_exercise(rows):
        reported.append((rows[0].exercise, len(rows)))
        release.set()

    monkeypatch.setattr(self_check, "check_submission", fake_check)
    rows = self_check.check_all(["tiled_matmul", "block_sum"], "sim", jobs=8,
                                on_exercise=on_exercise)
    assert reported == [("block_sum", len(self_check.submissions("block_sum"))),
                        ("tiled_matmul", len(self_check.submissions("tiled_matmul")))]
    assert [r.submission for r in rows] == [p.name for n in ("tiled_matmul", "block_sum")
                                            for p in self_check.submissions(n)]


def test_check_all_raises_a_setup_error_and_starts_nothing_after_it(monkeypatch):
    from autograder.errors import GraderSetupError

    started = []

    def fake_check(name, path, device, seed=None):
        started.append(path.name)
        raise GraderSetupError("grader environment: numpy 2.5")

    monkeypatch.setattr(self_check, "check_submission", fake_check)
    with pytest.raises(GraderSetupError):
        self_check.check_all(["tiled_matmul", "block_sum"], "sim", jobs=1)
    assert len(started) <= 2  # the failing one, and at most one already handed to the pool


def test_a_gpu_grading_stops_the_timing_child_at_its_first_errored_case(monkeypatch):
    """The whole GPU path of ``_grade_source`` with fake children: the correctness child's first
    case errors, and the timing child (warming up) is stopped before the next record."""
    ex = exercises.get("tiled_matmul")
    timing_stopped = threading.Event()
    seen = {}

    def fake_run_child(request, backend, limits, work, on_record=None, cancel=None, **_):
        imported = ({"type": "imported", "constants": {"TILE_WIDTH": 16}, "skipped": [],
                     "_arrived": 0.2}, {})
        if request["phases"] == ["time"]:
            while not cancel.wait(0.01):  # warming up, as long as it is let
                pass
            timing_stopped.set()
            return ChildRun(ended="cancelled")
        if request["phases"] == ["instrument"]:  # the simulator's diagnostics run
            return ChildRun(records=[({"type": "hello", "_arrived": 0.1}, {}), imported,
                                     ({"type": "done", "_arrived": 0.3}, {})])
        run = ChildRun()

        def record(header):
            header["_arrived"] = 0.1 * len(run.records)  # as the sandbox stamps each record
            run.records.append((header, {}))
            assert on_record(header, lambda data: None) is False  # never stops this child

        for header in ({"type": "device", "name": "Fake GPU"}, {"type": "hello"}, imported[0],
                       {"type": "compiled", "ptx": ""}, {"type": "start", "id": 0},
                       {"type": "error", "phase": "run", "id": 0, "lineno": None,
                        "message": "IndexError: index 16 is out of bounds"}):
            record(header)
        seen["stopped at the first error"] = timing_stopped.wait(10)
        record({"type": "done"})
        return run

    monkeypatch.setattr(children, "run_child", fake_run_child)
    monkeypatch.setattr(children.gpulock, "gpu", lambda exclusive: contextlib.nullcontext())
    path = exercises.solution_path(ex)
    result = grader._grade_source(ex, load_source(path), "gpu", plan.make_cases(ex, 1),
                                  grader.default_limits("gpu"),
                                  ExerciseResult(ex.name, str(path), "gpu", seed=1), False)
    assert seen == {"stopped at the first error": True}
    timing = next(t for t in result.tests if t.kind.value == "timing")
    assert timing.points == 0 and "passes every correctness test" in timing.message
