"""Cheap wins of issue 13: the timing child stops as soon as correctness fails, and
``autograder solutions``'s progress lines. No GPU and no child
process: the timing child's ``run_child`` is a fake, the decisions are unit-tested."""

from __future__ import annotations

import contextlib
import threading

import numpy as np
import pytest
from typer.testing import CliRunner

from autograder import exercises, grader
from autograder.grading import children
from autograder.grading import steps as grading
from autograder.judge import collect as judge
from autograder.judge import cases as judge_cases
from autograder.grading import plan
from autograder.authoring import solutions as self_check
from autograder.cli import app
from autograder.judge.cases import passed_every_case
from autograder.judge.inputs import Children, Grading
from autograder.wire.results import ExerciseResult
from autograder.sandbox.limits import Limits
from autograder.sandbox.run import ChildRun
from autograder.source.submission import load_source


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
    the_grading = Grading(exercise=ex, source=source, backend="gpu", cases=cases)
    _, good = _tiled_run(cases)
    assert passed_every_case(the_grading, good)
    # Outputs for every case, one of them wrong: the old rule (ran every case) would time it.
    _, one_wrong = _tiled_run(cases, wrong={cases[-1].id})
    assert judge_cases.ran_every_case(one_wrong, cases)
    assert not passed_every_case(the_grading, one_wrong)
    _, short = _tiled_run(cases, missing={cases[0].id})
    assert not passed_every_case(the_grading, short)
    _, errored = _tiled_run(cases, extra=[({"type": "error", "phase": "run", "id": 99,
                                            "message": "x"}, {})])
    assert not passed_every_case(the_grading, errored)
    _, malformed = _tiled_run(cases)
    malformed.records[1] = ({"type": "case", "id": cases[0].id}, {"C": "not an array"})
    assert not passed_every_case(the_grading, malformed)


def test_a_compile_that_never_ends_is_named_in_every_case(tiled):
    """Imported, then stopped by the total limit before the first case's start: on a GPU that
    is the kernel's compile, which each case's message says (not "an earlier test")."""
    ex, source, cases = tiled
    run = ChildRun(records=[({"type": "imported", "constants": {"TILE_WIDTH": 16}}, {})],
                   ended="timeout", last_started=None, timeout_reason="wall",
                   timeout_after=90.0)
    for backend, expected in (("gpu", "your kernel was still being compiled"),
                              ("sim", "before the first test began")):
        the_grading = Grading(exercise=ex, source=source, backend=backend, cases=cases)
        tests = judge.collect(the_grading, Children(run=run, compiled=run))
        correctness = [t for t in tests if t.kind.value == "correctness"]
        assert len(correctness) == len(cases)
        for t in correctness:
            assert t.status.value == "timeout" and t.points == 0
            assert expected in t.message and "(90 s)" in t.message, t.message
            assert "earlier test" not in t.message


# --- the graded child: cases, then the grader's verdict, then the timing ----------------------

class _FakeGradedChild:
    """Stands in for ``run_child`` of the graded GPU child (as :mod:`autograder.child.harness` runs
    it): ready → cases → ready (the verdict) → the timing's start, ready → measure →
    done."""

    def __init__(self, cases=(0, 1)):
        self.cases = cases
        self.answers: list[bytes] = []
        self.seen_at_verdict = None

    def __call__(self, request, backend, limits, work, on_record=None, records=None, **_):
        run = ChildRun(records=records if records is not None else [])

        def send(header) -> bytes | None:
            got: list = []
            run.records.append((header, {}))
            assert on_record(header, got.append) is False
            if got:
                self.answers += got
                return got[0]
            return None

        assert send({"type": "ready"}) == b"g"
        for c in self.cases:
            send({"type": "case", "id": c})
        if send({"type": "ready"}) == b"g":
            send({"type": "start", "id": "timing"})
            assert send({"type": "ready"}) == b"g"
            send({"type": "timing"})
        send({"type": "done"})
        return run


class _Hold:
    """A fake GPU hold; the downgrade at a child's ``done`` is test_gpu_scheduling's subject."""

    def downgrade(self):
        pass


@pytest.fixture
def lock_log(monkeypatch):
    """The GPU lock's holds, in order, as ``("take"/"let go", exclusive)``."""
    log = []

    @contextlib.contextmanager
    def gpu(exclusive):
        log.append(("take", exclusive))
        yield _Hold()
        log.append(("let go", exclusive))

    monkeypatch.setattr(children.gpulock, "gpu", gpu)
    return log


def test_a_passing_kernel_is_timed_holding_the_gpu_alone(monkeypatch, tmp_path, lock_log):
    fake = _FakeGradedChild()
    monkeypatch.setattr(children, "run_child", fake)
    seen = []

    def decide(records):
        seen.append([h.get("id") for h, _ in records if h.get("type") == "case"])
        return True

    run = children.run_holding({}, Limits(), tmp_path, children.TIMED_STEPS, decide)
    assert seen == [[0, 1]]  # judged on every case, before the timing
    assert fake.answers == [b"g", b"g", b"g"]
    # shared for the cases, let go before the verdict; alone for the timing, let go at done
    assert lock_log == [("take", False), ("let go", False), ("take", True), ("let go", True)]
    cases, timing = children.split_timing(run)
    assert [h["type"] for h, _ in cases.records].count("case") == 2
    assert timing is not None and timing.first("timing") is not None
    assert cases.first("timing") is None


def test_a_failing_kernel_is_not_timed_and_never_holds_the_gpu_alone(monkeypatch, tmp_path,
                                                                     lock_log):
    fake = _FakeGradedChild()
    monkeypatch.setattr(children, "run_child", fake)
    run = children.run_holding({}, Limits(), tmp_path, children.TIMED_STEPS,
                               lambda records: False)
    assert fake.answers == [b"g", b"n"]
    assert ("take", True) not in lock_log
    cases, timing = children.split_timing(run)
    assert timing is None and cases is run


def test_a_timing_that_times_out_leaves_the_cases_judged_as_finished():
    """The watchdog stopped the child in its timing: its cases had all returned."""
    run = ChildRun(records=[({"type": "start", "id": 0}, {}), ({"type": "case", "id": 0}, {}),
                            ({"type": "start", "id": "timing", "_arrived": 2.0}, {})],
                   ended="timeout", last_started="timing", timeout_reason="wall",
                   timeout_after=45.0, seconds=47.0)
    cases, timing = children.split_timing(run)
    assert cases.ended == "finished" and len(cases.records) == 2
    assert timing.ended == "timeout" and timing.last_started == "timing"
    assert timing.seconds == 45.0


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
    assert (result.stdout.index("x/tiled_matmul/tiled_matmul.py")
            < result.stdout.index("x/block_sum/block_sum.py"))
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


def test_a_gpu_grading_does_not_time_a_kernel_whose_case_errored(monkeypatch):
    """The whole GPU path of ``_grade_source`` with a fake graded child: its first case errors,
    the grader's verdict after the cases is no, and the child ends without timing (it never
    gets the GPU alone)."""
    ex = exercises.get("tiled_matmul")
    answers: list[bytes] = []
    modes: list[bool] = []

    def fake_run_child(request, backend, limits, work, on_record=None, records=None, **_):
        imported = ({"type": "imported", "constants": {"TILE_WIDTH": 16}, "skipped": [],
                     "_arrived": 0.2}, {})
        if request["phases"] == ["instrument"]:  # the simulator's diagnostics run
            return ChildRun(records=[({"type": "hello", "_arrived": 0.1}, {}), imported,
                                     ({"type": "done", "_arrived": 0.3}, {})])
        timed = request["phases"] == ["compile", "run", "time"]
        assert request["await_go"] and (timed or request["phases"] == ["compile", "run"])
        run = ChildRun(records=records if records is not None else [])
        said = answers if timed else []  # the public cases' child: no verdict, no timing

        def record(header):
            header["_arrived"] = 0.1 * len(run.records)  # as the sandbox stamps each record
            run.records.append((header, {}))
            assert on_record(header, said.append) is False  # never stops this child

        first = request["cases"][0]["id"]
        for header in ({"type": "device", "name": "Fake GPU"}, {"type": "hello"}, imported[0],
                       {"type": "compiled", "ptx": ""}, {"type": "ready"},
                       {"type": "start", "id": first},
                       {"type": "error", "phase": "run", "id": first, "lineno": None,
                        "message": "IndexError: index 16 is out of bounds"},
                       *([{"type": "ready"}] if timed else []), {"type": "done"}):
            record(header)
        return run

    @contextlib.contextmanager
    def gpu(exclusive):
        modes.append(exclusive)
        yield _Hold()

    monkeypatch.setattr(children, "run_child", fake_run_child)
    monkeypatch.setattr(children.gpulock, "gpu", gpu)
    path = exercises.solution_path(ex)
    result = grading._grade_source(
        Grading(exercise=ex, source=load_source(path), backend="gpu",
                cases=plan.make_cases(ex, 1), limits=grader.default_limits("gpu"), seed=1),
        ExerciseResult(ex.name, str(path), "gpu", seed=1))
    # Two GPU children (the public cases', the hidden ones' that would time): shared holds only.
    assert answers == [b"g", b"n"] and modes == [False, False]
    timing = next(t for t in result.tests if t.kind.value == "timing")
    assert timing.points == 0 and "passes every correctness test" in timing.message
