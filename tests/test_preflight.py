"""Misconfiguration is an error, never a grade: exit status 2, one line on standard error, nothing
stored; the instructor solution is graded first (the preflight) and a child whose numpy differs
from the grader's is the grader's fault, not the student's."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autograder import exercises, grader
from autograder.host import environment
from autograder.grading import steps as grading
from autograder.grading import preflight
from autograder.grading import preflight_key
from autograder.sandbox import bwrap, mode as sandbox_mode
from autograder.cli import app
from autograder.errors import GraderSetupError
from autograder.wire.results import ExerciseResult
from autograder.sandbox.limits import Limits
from autograder.sandbox.run import ChildRun, run_child
from conftest import ROOT, TEST_DEVICE, SOLUTIONS

OCCUPANCY = SOLUTIONS / "occupancy.py"
TRANSPOSE = SOLUTIONS / "transpose.py"


@pytest.fixture
def fresh_preflight(monkeypatch, tmp_path):
    """Empty preflight caches for this test, in this process and on disk (a failure it
    provokes must not stay cached; a pass found on disk would skip the preflight it tests);
    preflights it started end before its monkeypatches are undone (on a GPU one runs beside
    the student's grading, which may raise first)."""
    monkeypatch.setattr(preflight, "_checks", {})
    monkeypatch.setenv(preflight.CACHE_ENV, str(tmp_path / "kernelgrade-cache"))
    monkeypatch.delenv(preflight.CACHE_SWITCH_ENV, raising=False)
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
    monkeypatch.setattr(exercises, "solution_path",  # called with an Exercise or its name
                        lambda ex: broken if getattr(ex, "name", ex) == "transpose" else real(ex))
    return broken


def _fake_numpy(root: Path, kind: str) -> Path:
    """A folder holding a numpy other than the grader's: ``other_version`` (the grader's own
    files, installed as numpy 1.0.0) or ``broken`` (fails at import)."""
    folder = root / f"numpy-{kind}"
    folder.mkdir()
    if kind == "other_version":
        (folder / "numpy").symlink_to(Path(environment.package_facts()["numpy"]["path"]))
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
    monkeypatch.setattr(sandbox_mode, "_broken", {})  # a child that dies may turn bubblewrap off
    real = bwrap.import_path
    monkeypatch.setattr(bwrap, "import_path", lambda: [str(folder), *real()])
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
    # One line that says why (as root without bubblewrap it also says why a child could not
    # run as a user of its own: autograder.sandbox.dropuser).
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr[-2000:]
    assert "bwrap is not installed" in lines[0]


# --- the preflight ----------------------------------------------------------------------------

def test_a_solution_that_loses_points_stops_grading_before_the_student(losing_solution,
                                                                       monkeypatch):
    graded = []
    real = grading.grade_submission

    def counting(*a, **k):
        graded.append(a[0])
        return real(*a, **k)
    monkeypatch.setattr(grader, "grade_submission", counting)  # the student's grading
    monkeypatch.setattr(grading, "grade_submission", counting)  # the preflight's
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


def test_a_preflight_that_says_see_the_concept_test_shows_it(monkeypatch, fresh_preflight,
                                                            tmp_path):
    """Issue 32, item 16: a solution that runs on the simulator but does not compile for a GPU
    loses its correctness points "(see the concept test)"; the preflight's one line shows the
    concept test's own message (the compiler's error), not only the pointer to it."""
    broken = tmp_path / "transpose.py"
    old = "            B[b_row, b_col] = tile[tx, ty + j]\n"
    # never taken, so the simulator runs it; Numba's typing cannot unify float32 and a tuple
    new = ("            v = tile[tx, ty + j]\n            if j < -1:\n"
           "                v = (1, 2)\n            B[b_row, b_col] = v\n")
    assert old in TRANSPOSE.read_text()
    broken.write_text(TRANSPOSE.read_text().replace(old, new))
    real = exercises.solution_path
    monkeypatch.setattr(exercises, "solution_path",
                        lambda ex: broken if getattr(ex, "name", ex) == "transpose" else real(ex))
    with pytest.raises(GraderSetupError) as info:
        preflight.check("transpose", TEST_DEVICE)
    message = str(info.value)
    if TEST_DEVICE == "sim":  # correctness passed there, and sends its reader to the concept test
        assert "see the concept test" in message
        assert "The concept test (concept: " in message and "TypingError" in message
    assert "\n" not in message


def test_the_cli_says_so_and_prints_no_grade(losing_solution):
    out = CliRunner().invoke(app, ["grade", str(TRANSPOSE), "--exercise", "transpose",
                                   "--device", TEST_DEVICE, "--json"])
    assert out.exit_code == 2, out.stdout
    assert out.stdout == ""
    assert out.stderr.startswith("error: preflight: the instructor solution of transpose")


def test_solutions_and_public_runs_skip_the_preflight(fresh_preflight):
    """``autograder solutions`` grades the solutions itself (and shows wrong verdicts in its
    table), and a public-tests run has no solution to check: neither runs the preflight."""
    from autograder.authoring.solutions import check_exercise

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


# --- the preflight cache across processes ------------------------------------------------------

_COUNT_SOLUTION_GRADINGS = """
import sys
from autograder.grading import preflight, steps
graded = []
real = steps.grade_submission
steps.grade_submission = lambda *a, **k: graded.append(str(a[0])) or real(*a, **k)
preflight.check(sys.argv[1], sys.argv[2])
print(len(graded))
"""


def test_a_passed_preflight_is_not_run_again_by_the_next_process(fresh_preflight, tmp_path):
    """Two processes, one after the other: the first grades the instructor solution and keeps
    the pass on disk; the second finds it and grades nothing. (If another engineer edits the
    package between the two, the key changes and the second grades again: rerun.)"""
    def solution_gradings() -> int:
        out = subprocess.run([sys.executable, "-c", _COUNT_SOLUTION_GRADINGS, "occupancy",
                              TEST_DEVICE], capture_output=True, text=True, cwd=ROOT,
                             timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        return int(out.stdout.split()[-1])

    assert solution_gradings() == 1
    entries = list((tmp_path / "kernelgrade-cache" / "preflight").glob("*.json"))
    assert len(entries) == 1
    assert solution_gradings() == 0
    out = _cli("grade", str(OCCUPANCY), "--exercise", "occupancy", "--device", TEST_DEVICE,
               "--json")  # what a user runs: it grades, from the same cache
    assert out.returncode == 0, out.stderr[-2000:]
    assert list((tmp_path / "kernelgrade-cache" / "preflight").glob("*.json")) == entries


@pytest.fixture
def counted(monkeypatch, fresh_preflight):
    """The solution's grading replaced by a counter (a pass, or the errors queued in
    ``fail``): returns the list of exercises it was called for."""
    class Graded(list):
        fail: list[Exception]

    graded = Graded()
    graded.fail = []

    def fake(exercise, backend, sanitize):
        graded.append(exercise)
        if graded.fail:
            raise graded.fail.pop(0)
        return ExerciseResult(exercise, "solution.py", backend)

    monkeypatch.setattr(preflight, "_grade_solution", fake)
    return graded


def _other_solution(monkeypatch, tmp_path):
    changed = tmp_path / "solution.py"
    changed.write_text(OCCUPANCY.read_text() + "\n# one more line\n")
    monkeypatch.setattr(exercises, "solution_path", lambda ex: changed)


def _other_numpy_in_children(monkeypatch, tmp_path):
    folder = _fake_numpy(tmp_path, "other_version")
    real = bwrap.import_path
    monkeypatch.setattr(bwrap, "import_path", lambda: [str(folder), *real()])


def _other_numpy_version(monkeypatch, tmp_path):
    facts = environment.package_facts()
    other = {**facts, "numpy": {**facts["numpy"], "version": "1.0.0"}}
    monkeypatch.setattr(preflight_key, "package_facts", lambda: other)


def _other_python(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python3"))


def _other_sandbox(monkeypatch, tmp_path):
    monkeypatch.setenv("KERNELGRADE_SANDBOX", "off" if sandbox_mode.sandbox_status().available
                       else "require")


def _numba_setting(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_OPT", "0")


def _kernelgrade_source(monkeypatch, tmp_path):
    monkeypatch.setattr(preflight_key, "_package_digest", lambda: "0" * 64)


@pytest.mark.parametrize("change", [_other_solution, _other_numpy_in_children,
                                    _other_numpy_version, _other_python, _other_sandbox,
                                    _numba_setting, _kernelgrade_source],
                         ids=lambda f: f.__name__.strip("_"))
def test_a_change_of_any_key_part_runs_the_preflight_again(counted, change, monkeypatch,
                                                           tmp_path):
    preflight._preflight("occupancy", "sim", True)
    preflight._preflight("occupancy", "sim", True)
    assert counted == ["occupancy"]
    change(monkeypatch, tmp_path)
    preflight._preflight("occupancy", "sim", True)
    assert len(counted) == 2
    preflight._preflight("occupancy", "sim", True)  # the new key's pass is kept too
    assert len(counted) == 2


def _a_copy_of_the_solutions_named(monkeypatch, tmp_path):
    """(nbgrader's course names its own copy of the solutions.)"""
    folder = tmp_path / "course" / exercises.SOLUTIONS_FOLDER
    shutil.copytree(exercises.solution_path("occupancy").parent, folder)
    monkeypatch.setenv(exercises.SOLUTIONS_ENV, str(folder))


def _pythonpath_of_the_import_path(monkeypatch, tmp_path):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), ""]))


def _device_asked_for_by_name(monkeypatch, tmp_path):
    monkeypatch.setenv("KERNELGRADE_DEVICE", "sim")


@pytest.mark.parametrize("same", [_a_copy_of_the_solutions_named, _pythonpath_of_the_import_path,
                                  _device_asked_for_by_name],
                         ids=lambda f: f.__name__.strip("_"))
def test_the_same_setup_reached_another_way_shares_the_pass(counted, same, monkeypatch,
                                                             tmp_path):
    """The test suite's CLI processes, nbgrader's course and Gradescope's runner reach the
    same setup through other variables: one pass serves them all."""
    preflight._preflight("occupancy", "sim", True)
    key = preflight_key.fingerprint("occupancy", "sim", True)[0]
    same(monkeypatch, tmp_path)
    assert preflight_key.fingerprint("occupancy", "sim", True)[0] == key
    preflight._preflight("occupancy", "sim", True)
    assert counted == ["occupancy"]


def test_the_sanitize_choice_and_the_exercise_are_part_of_the_key(counted):
    for exercise, sanitize in [("occupancy", True), ("occupancy", False), ("transpose", True),
                               ("occupancy", True), ("transpose", True)]:
        preflight._preflight(exercise, "sim", sanitize)
    assert counted == ["occupancy", "occupancy", "transpose"]


def test_a_failed_preflight_is_never_kept(counted, tmp_path):
    counted.fail.append(GraderSetupError("preflight: the instructor solution of occupancy "
                                         "gets 0/100"))
    with pytest.raises(GraderSetupError):
        preflight._preflight("occupancy", "sim", True)
    assert not list((tmp_path / "kernelgrade-cache" / "preflight").glob("*.json"))
    preflight._preflight("occupancy", "sim", True)  # graded again: now it passes
    preflight._preflight("occupancy", "sim", True)
    assert len(counted) == 2


@pytest.mark.parametrize("damage", ["garbage", "another key", "not passed", "a folder",
                                    "unreadable bytes"])
def test_a_corrupt_or_foreign_entry_is_ignored(counted, damage, tmp_path):
    import json

    preflight._preflight("occupancy", "sim", True)
    [entry] = (tmp_path / "kernelgrade-cache" / "preflight").glob("*.json")
    good = json.loads(entry.read_text())
    if damage == "garbage":
        entry.write_text('{"format": 1, "key": ')
    elif damage == "another key":
        entry.write_text(json.dumps({**good, "key": "0" * 64}))
    elif damage == "not passed":
        entry.write_text(json.dumps({**good, "verdict": "failed"}))
    elif damage == "a folder":
        entry.unlink()
        entry.mkdir()
    else:
        entry.write_bytes(b"\xff\xfe\x00garbage")
    preflight._preflight("occupancy", "sim", True)  # graded again, and no exception
    assert len(counted) == 2
    if damage != "a folder":  # replaced by a good entry
        preflight._preflight("occupancy", "sim", True)
        assert len(counted) == 2


def test_the_cache_can_be_turned_off_or_be_unwritable(counted, monkeypatch, tmp_path):
    monkeypatch.setenv(preflight.CACHE_SWITCH_ENV, "off")
    preflight._preflight("occupancy", "sim", True)
    preflight._preflight("occupancy", "sim", True)
    assert len(counted) == 2 and not (tmp_path / "kernelgrade-cache").exists()
    monkeypatch.delenv(preflight.CACHE_SWITCH_ENV)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(preflight.CACHE_ENV, str(blocker / "cache"))  # cannot be created
    preflight._preflight("occupancy", "sim", True)  # no error: just no cache
    assert len(counted) == 3


def test_processes_missing_the_same_key_take_turns(monkeypatch, fresh_preflight):
    """Workers that start together (a batch on a GPU) grade the solution once: the others
    wait for its pass (a lock file per key) instead of grading it too."""
    graded = []
    first = threading.Event()

    def slow(exercise, backend, sanitize):
        graded.append(exercise)
        first.set()
        threading.Event().wait(0.5)  # the others arrive meanwhile
        return ExerciseResult(exercise, "solution.py", backend)

    monkeypatch.setattr(preflight, "_grade_solution", slow)
    threads = [threading.Thread(target=preflight._preflight, args=("occupancy", "sim", True))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert graded == ["occupancy"]


def test_the_key_names_the_gpu_it_was_made_on(monkeypatch):
    """On a GPU the key holds every GPU's UUID, name, driver and compute capability; with
    no answer from nvidia-smi nothing is cached."""
    rows = [["0", "GPU-1234", "NVIDIA H100 80GB HBM3", "570.86.15", "9.0"]]
    monkeypatch.setattr(preflight_key, "_gpu_facts", lambda: rows)
    key, parts = preflight_key.fingerprint("occupancy", "gpu", True)
    assert parts["gpus"] == rows and parts["device"] == "gpu"
    monkeypatch.setattr(preflight_key, "_gpu_facts",
                        lambda: [["0", "GPU-5678", "NVIDIA H200", "570.86.15", "9.0"]])
    assert preflight_key.fingerprint("occupancy", "gpu", True)[0] != key
    monkeypatch.setattr(preflight_key, "_gpu_facts", lambda: None)
    assert preflight_key.fingerprint("occupancy", "gpu", True) is None


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
    assert environment.setup_problem(ChildRun(records=[({"type": "hello"}, {})])) is None
    died = ChildRun(ended="exited", exit_code=1, output="Traceback...\nImportError: no numba\n")
    assert environment.setup_problem(died) == (
        "grader environment: the grading process ended before it started grading (exit code "
        "1): ImportError: no numba")
    assert environment.setup_problem(ChildRun(ended="timeout")) is None  # the watchdog's call
    facts = environment.package_facts()
    assert environment.package_mismatch(facts, dict(facts)) is None
    assert "no numba at all" in environment.package_mismatch(facts, {**facts, "numba": None})


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
    from autograder.batch.run import run_batch

    db = tmp_path / "results.sqlite"
    with pytest.raises(GraderSetupError, match="^grader environment: "):
        run_batch(_class(tmp_path), db, "occupancy", TEST_DEVICE, workers=1, progress=False)
    assert _result_rows(db) == 0


def test_a_workers_setup_error_is_not_stored_and_stops_the_batch(tmp_path):
    """A worker's own preflight fails (its GPU, its machine): that submission is not stored and
    what is left is cancelled; the results that arrived before it stay."""
    from autograder.batch.run import _collect
    from autograder.batch.discovery import Submission
    from autograder.batch.store import ResultStore

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
    from autograder.grading.plan import make_cases as _make_cases, request as _request

    ex = exercises.get("occupancy")
    source = tmp_path / "submission.py"
    source.write_text(OCCUPANCY.read_text())
    run = run_child(_request(ex, "sim", ["run"], source, _make_cases(ex, 1)[:1], None),
                    "sim", Limits(), tmp_path)
    facts = environment.package_facts()
    assert facts["numpy"]["version"] == __import__("numpy").__version__
    assert run.first("hello")["packages"] == facts
    assert run.ended == "finished" and environment.setup_problem(run) is None


def test_gpus_are_counted_from_the_drivers_list_without_nvidia_smi(monkeypatch, tmp_path):
    """The driver's folder per GPU answers without starting nvidia-smi (0.1 s per grading)."""
    from autograder.grading import devices

    for bus in ("0000:19:00.0", "0000:3b:00.0"):
        (tmp_path / bus).mkdir()
    monkeypatch.setattr(devices, "DRIVER_GPUS", str(tmp_path))
    monkeypatch.setattr(devices.subprocess, "run",
                        lambda *a, **k: pytest.fail("nvidia-smi started"))
    assert devices.gpu_count() == 2


def test_no_preflight_cache_grades_the_solution_again_and_stores_nothing(tmp_path):
    """``autograder grade --no-preflight-cache`` (a fresh process, as an instructor runs it):
    nothing is remembered; the same command without the option remembers the passed
    preflight."""
    env = {k: v for k, v in os.environ.items() if k != preflight.CACHE_SWITCH_ENV}
    env["KERNELGRADE_CACHE_DIR"] = str(tmp_path / "cache")
    args = [sys.executable, "-m", "autograder.cli", "grade", str(OCCUPANCY), "--exercise",
            "occupancy", "--device", TEST_DEVICE, "--json"]

    def remembered() -> list:
        return [p for p in (tmp_path / "cache").rglob("*.json") if p.is_file()]

    out = subprocess.run(args + ["--no-preflight-cache"], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr
    assert remembered() == []
    out = subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr
    # (on a GPU the driver's occupancy answers are kept beside it, in driver_answers/)
    assert len([p for p in remembered() if p.parent.name == "preflight"]) == 1
