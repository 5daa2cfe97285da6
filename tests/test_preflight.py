"""Misconfiguration is an error, never a grade: exit status 2, one line on standard error, nothing
stored; the instructor solution is graded first (the preflight) and a child whose numpy differs
from the grader's is the grader's fault, not the student's."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autograder import exercises, grader, preflight, sandbox
from autograder.cli import app
from autograder.errors import GraderSetupError
from autograder.sandbox import ChildRun
from conftest import ROOT, EXERCISES, TEST_DEVICE

OCCUPANCY = EXERCISES / "occupancy" / "solution.py"
TRANSPOSE = EXERCISES / "transpose" / "solution.py"


@pytest.fixture
def fresh_preflight(monkeypatch):
    """An empty preflight cache for this test (a failure it provokes must not stay cached);
    preflights it started end before its monkeypatches are undone (on a GPU one runs beside
    the student's grading, which may raise first)."""
    monkeypatch.setattr(preflight, "_checks", {})
    yield
    for future in list(preflight._checks.values()):
        future.exception(timeout=600)


@pytest.fixture
def losing_solution(monkeypatch, tmp_path, fresh_preflight):
    """The grader's instructor solution for transpose is replaced by one that loses points."""
    broken = tmp_path / "solution" / "transpose.py"
    broken.parent.mkdir()
    text = TRANSPOSE.read_text()
    wrong = "B[b_row, b_col] = tile[tx, ty + j] + float32(1.0)"
    broken.write_text(text.replace("B[b_row, b_col] = tile[tx, ty + j]", wrong))
    assert wrong in broken.read_text()
    real = exercises.solution_path  # other exercises' solutions stay (hints use occupancy's)
    monkeypatch.setattr(exercises, "solution_path",
                        lambda ex: broken if ex.name == "transpose" else real(ex))
    return broken


def _fake_numpy(root: Path, kind: str) -> Path:
    """A folder holding a numpy other than the grader's: ``other_version`` (the grader's own
    files, installed as numpy 1.0.0) or ``broken`` (fails at import)."""
    folder = root / f"numpy-{kind}"
    folder.mkdir()
    if kind == "other_version":
        (folder / "numpy").symlink_to(Path(preflight.package_facts()["numpy"]["path"]))
        info = folder / "numpy-1.0.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: numpy\nVersion: 1.0.0\n")
    else:
        (folder / "numpy").mkdir()
        (folder / "numpy" / "__init__.py").write_text(
            "raise ImportError('this numpy was built for another Python')\n")
    return folder


@pytest.fixture(params=["other_version", "broken"])
def child_numpy_differs(request, monkeypatch, tmp_path, fresh_preflight):
    """Children (not the grader) find a different numpy first on their path, as when the
    sandbox hid the folder the grader's numpy came from."""
    folder = _fake_numpy(tmp_path, request.param)
    monkeypatch.setattr(sandbox, "_broken", {})  # a child that dies may turn bubblewrap off
    real = sandbox.import_path
    monkeypatch.setattr(sandbox, "import_path", lambda: [str(folder), *real()])
    return request.param


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=300, env={**os.environ, **env})


def _result_rows(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as con:
        return con.execute("SELECT COUNT(*) FROM results").fetchone()[0]


# --- autograder grade: exit 2, one line, no table ------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (["/nonexistent/nope.py", "--exercise", "tiled_matmul"], "/nonexistent/nope.py: no such file"),
    (["tests", "--exercise", "tiled_matmul"], "tests is a folder"),
    ([str(OCCUPANCY), "--exercise", "no_such_exercise"], "unknown exercise 'no_such_exercise'"),
])
def test_grade_refuses_bad_arguments_with_exit_2(args, words):
    out = _cli("grade", *args)
    assert out.returncode == 2, out.stdout[-500:]
    assert out.stdout == ""
    assert out.stderr.strip().splitlines() == [out.stderr.strip()]
    assert words in out.stderr


# No GPU visible: CUDA_VISIBLE_DEVICES="" hides a GPU this machine may have.
@pytest.mark.parametrize("command", [["grade", str(OCCUPANCY), "--exercise", "occupancy"],
                                     ["solutions", "--exercise", "occupancy"]])
def test_device_gpu_without_a_gpu_is_exit_2_not_a_zero(command):
    out = _cli(*command, "--device", "gpu", CUDA_VISIBLE_DEVICES="")
    assert out.returncode == 2
    assert out.stdout == ""
    assert "--device gpu, but no GPU is visible here (CUDA_VISIBLE_DEVICES='' hides every " \
        "GPU)" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_grade_raises_for_device_gpu_without_a_gpu(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    with pytest.raises(GraderSetupError, match="no GPU is visible"):
        grader.grade(OCCUPANCY, "occupancy", device="gpu")


def test_a_required_sandbox_that_cannot_run_is_exit_2():
    out = _cli("grade", str(OCCUPANCY), "--exercise", "occupancy", "--device", "sim",
               PATH="/nonexistent", KERNELGRADE_SANDBOX="require")
    assert out.returncode == 2, out.stderr[-2000:]
    assert out.stdout == ""
    assert out.stderr.strip() == "error: bubblewrap cannot run: bwrap is not installed"


# --- the preflight ----------------------------------------------------------------------------

def test_a_solution_that_loses_points_stops_grading_before_the_student(losing_solution,
                                                                       monkeypatch):
    graded = []
    real = grader._grade_submission
    monkeypatch.setattr(grader, "_grade_submission",
                        lambda *a, **k: graded.append(a[0]) or real(*a, **k))
    with pytest.raises(GraderSetupError) as info:
        grader.grade(TRANSPOSE, "transpose", device=TEST_DEVICE, seed=1)
    message = str(info.value)
    assert message.startswith("preflight: the instructor solution of transpose gets ")
    assert "elements wrong" in message and "\n" not in message
    assert losing_solution in graded
    if TEST_DEVICE == "sim":  # the preflight runs first there: the student's never started
        assert graded == [losing_solution]
    count = len(graded)  # (on a GPU it ran beside the preflight, and was discarded)
    with pytest.raises(GraderSetupError) as again:  # cached: nothing graded again
        grader.grade(TRANSPOSE, "transpose", device=TEST_DEVICE, seed=1)
    assert str(again.value) == message and len(graded) == count


def test_the_cli_says_so_and_prints_no_grade(losing_solution):
    out = CliRunner().invoke(app, ["grade", str(TRANSPOSE), "--exercise", "transpose",
                                   "--device", TEST_DEVICE, "--json"])
    assert out.exit_code == 2, out.stdout
    assert out.stdout == ""
    assert out.stderr.startswith("error: preflight: the instructor solution of transpose")


def test_solutions_and_public_runs_skip_the_preflight(fresh_preflight):
    """``autograder solutions`` grades the solutions itself (and shows wrong verdicts in its
    table), and a public-tests run has no solution to check: neither runs the preflight."""
    from autograder.self_check import check_exercise

    rows = check_exercise("occupancy", TEST_DEVICE, seed=1)
    assert rows[0].ok, rows[0].got
    public = grader.grade(OCCUPANCY, "occupancy", device=TEST_DEVICE, visibility="public")
    assert public.score > 0
    assert preflight._checks == {}


def test_the_preflight_runs_once_for_many_threads(monkeypatch, fresh_preflight):
    runs = []
    gate = threading.Event()

    def slow(exercise, backend, sanitize):
        runs.append((exercise, backend))
        gate.wait(10)

    monkeypatch.setattr(preflight, "_preflight", slow)
    futures = []
    threads = [threading.Thread(target=lambda: futures.append(preflight.start("x", "sim")))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    gate.set()
    assert len({id(f) for f in futures}) == 1
    futures[0].result(timeout=10)
    assert runs == [("x", "sim")]


# --- a child whose numpy is not the grader's ----------------------------------------------------

def test_a_child_with_another_numpy_is_a_setup_error_not_a_zero(child_numpy_differs):
    with pytest.raises(GraderSetupError) as info:
        grader.grade(OCCUPANCY, "occupancy", device=TEST_DEVICE, seed=1)
    message = str(info.value)
    assert message.startswith("grader environment: "), message
    if child_numpy_differs == "other_version":
        assert "imports numpy 1.0.0" in message
    else:
        assert "this numpy was built for another Python" in message
    assert "your kernel" not in message


def test_the_cli_exits_2_for_a_child_with_another_numpy(child_numpy_differs):
    out = CliRunner().invoke(app, ["grade", str(OCCUPANCY), "--exercise", "occupancy",
                                   "--device", TEST_DEVICE])
    assert out.exit_code == 2
    assert out.stdout == ""
    assert out.stderr.startswith("error: grader environment: ")


def test_setup_problem_reads_the_child_records():
    assert preflight.setup_problem(ChildRun(records=[({"type": "hello"}, {})])) is None
    died = ChildRun(ended="exited", exit_code=1, output="Traceback...\nImportError: no numba\n")
    assert preflight.setup_problem(died) == (
        "grader environment: the grading process ended before it started grading (exit code "
        "1): ImportError: no numba")
    assert preflight.setup_problem(ChildRun(ended="timeout")) is None  # the watchdog's call
    facts = preflight.package_facts()
    assert preflight.package_mismatch(facts, dict(facts)) is None
    assert "no numba at all" in preflight.package_mismatch(facts, {**facts, "numba": None})


# --- autograder batch: nothing stored ---------------------------------------------------------

def _class(root: Path, solution: Path = OCCUPANCY) -> Path:
    folder = root / "submitted"
    folder.mkdir()
    for student in ("alice", "bob"):
        (folder / f"{student}.py").write_text(solution.read_text())
    return folder


def test_batch_stores_nothing_when_the_solution_loses_points(losing_solution, tmp_path):
    db = tmp_path / "results.sqlite"
    out = CliRunner().invoke(app, ["batch", str(_class(tmp_path, TRANSPOSE)), "--exercise",
                                   "transpose", "--db", str(db), "--device", TEST_DEVICE,
                                   "--workers", "1"])
    assert out.exit_code == 2, out.stdout + out.stderr
    assert "instructor solution of transpose" in out.stderr
    assert _result_rows(db) == 0


def test_batch_stores_nothing_for_a_child_with_another_numpy(child_numpy_differs, tmp_path):
    from autograder.batch import run_batch

    db = tmp_path / "results.sqlite"
    with pytest.raises(GraderSetupError, match="^grader environment: "):
        run_batch(_class(tmp_path), db, "occupancy", TEST_DEVICE, workers=1, progress=False)
    assert _result_rows(db) == 0


def test_a_workers_setup_error_is_not_stored_and_stops_the_batch(tmp_path):
    """A worker's own preflight fails (its GPU, its machine): that submission is not stored and
    what is left is cancelled; the results that arrived before it stay."""
    from autograder.batch import _collect
    from autograder.discovery import Submission
    from autograder.store import ResultStore

    class Done:
        def __init__(self, value=None, error=None):
            self.value, self.error, self.cancelled = value, error, False

        def result(self):
            if self.error:
                raise self.error
            return self.value

        def cancel(self):
            self.cancelled = True

    store = ResultStore(tmp_path / "r.sqlite")
    ok = grader.grade(OCCUPANCY, "occupancy", device=TEST_DEVICE, seed=1, preflight=False)
    good, bad, left = (Done(ok.to_dict()), Done(error=GraderSetupError("no GPU on worker 3")),
                       Done(ok.to_dict()))
    futures = {f: Submission(s, "occupancy", OCCUPANCY, f"{s}/occupancy")
               for f, s in ((good, "a"), (bad, "b"), (left, "c"))}
    error = _collect(futures, [good, bad, left], store, [], progress=False)
    assert str(error) == "no GPU on worker 3"
    assert store.done_keys() == {"a/occupancy"}
    assert left.cancelled


def test_a_child_reports_the_grader_s_own_packages(tmp_path):
    """The real setup passes the check: the child's first record names the same numpy, numba,
    numba-cuda and llvmlite (versions and folders) as the grader, whichever the sandbox."""
    from autograder import exercises
    from autograder.grader import _make_cases, _request

    ex = exercises.get("occupancy")
    source = tmp_path / "submission.py"
    source.write_text(OCCUPANCY.read_text())
    run = sandbox.run_child(_request(ex, "sim", ["run"], source, _make_cases(ex, 1)[:1], None),
                            "sim", sandbox.Limits(), tmp_path)
    facts = preflight.package_facts()
    assert facts["numpy"]["version"] == __import__("numpy").__version__
    assert run.first("hello")["packages"] == facts
    assert run.ended == "finished" and preflight.setup_problem(run) is None
