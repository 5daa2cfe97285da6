"""The Gradescope bundle, used the way Gradescope uses it: ``autograder gradescope build`` makes
the zip; it is unpacked into a folder laid out like the container (``source/``,
``run_autograder``, ``submission/``, ``results/``) and ``run_autograder`` grades into
``results/results.json``, with the root pointed at the test's folder and the Python a fresh
venv with the bundle's wheel installed by pip, as setup.sh does (its dependencies come from
this venv: :func:`test_packaging.install`). The wheel carries no solution: the grader finds it
in the bundle's ``solutions/`` through ``$KERNELGRADE_SOLUTIONS``, which the runner sets."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder import exercises
from autograder.errors import GraderSetupError
from autograder.gradescope import run as gs_run
from autograder.gradescope.bundle import pinned
from autograder.gradescope.lock import canonical, closure, pins
from autograder.gradescope.wheel import project

from conftest import ROOT, EXERCISES, TEST_DEVICE, SOLUTIONS

EXERCISE = "tiled_matmul"
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
TOP_KEYS = {"score", "execution_time", "output", "output_format", "test_output_format",
            "test_name_format", "visibility", "stdout_visibility", "extra_data", "tests",
            "leaderboard"}
TEST_KEYS = {"score", "max_score", "status", "name", "name_format", "number", "output",
             "output_format", "tags", "visibility", "extra_data"}


def check_spec(results: dict) -> None:
    """results.json as Gradescope's autograder specification describes it."""
    assert set(results) <= TOP_KEYS, set(results) - TOP_KEYS
    assert isinstance(results["execution_time"], int) and results["execution_time"] >= 0
    assert isinstance(results["output"], str) and results["output"]
    assert isinstance(results["tests"], list) and results["tests"]
    if "score" in results:
        assert isinstance(results["score"], (int, float))
    for t in results["tests"]:
        assert set(t) <= TEST_KEYS, set(t) - TEST_KEYS
        assert isinstance(t["name"], str) and t["name"]
        assert t["status"] in ("passed", "failed")  # the spec knows no other status
        assert isinstance(t["output"], str)
        assert t["visibility"] in VISIBILITY
        if "score" in t:
            assert isinstance(t["score"], (int, float))
            assert isinstance(t["max_score"], (int, float))
            assert 0 <= t["score"] <= t["max_score"]


@pytest.fixture(scope="module")
def bundle(gradescope_bundle) -> Path:
    return gradescope_bundle


@pytest.fixture(scope="module")
def installed(gradescope_python) -> str:
    """The python of a venv with the bundle's wheel installed (pip, --no-deps)."""
    return gradescope_python


def container(bundle: Path, where: Path, submission: dict[str, str | bytes]) -> Path:
    """``where/autograder`` laid out as Gradescope does: the zip in source/, run_autograder
    copied to the root, the student's files in submission/."""
    root = where / "autograder"
    with zipfile.ZipFile(bundle) as z:
        z.extractall(root / "source")
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    (root / "run_autograder").chmod(0o755)
    (root / "submission").mkdir(parents=True)
    for name, data in submission.items():
        path = root / "submission" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return root


def run_autograder(root: Path, python: str, device: str = TEST_DEVICE):
    # as on Gradescope: the venv's own kernelgrade (no PYTHONPATH to a checkout), no solutions
    env = {k: v for k, v in os.environ.items() if k not in (exercises.SOLUTIONS_ENV, "PYTHONPATH")}
    env.update(KERNELGRADE_GRADESCOPE_ROOT=str(root), KERNELGRADE_GRADESCOPE_PYTHON=python,
               KERNELGRADE_DEVICE=device)
    proc = subprocess.run([str(root / "run_autograder")], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600)
    results = json.loads((root / "results" / "results.json").read_text())
    return proc, results


def test_bundle_has_what_gradescope_needs(bundle, tmp_path):
    with zipfile.ZipFile(bundle) as z:
        names = z.namelist()
        modes = {i.filename: (i.external_attr >> 16) for i in z.infolist()}
        z.extractall(tmp_path)
    assert {"setup.sh", "run_autograder"} <= set(names)  # at the root of the zip
    assert modes["run_autograder"] & stat.S_IXUSR and modes["setup.sh"] & stat.S_IXUSR
    for script in ("setup.sh", "run_autograder"):
        proc = subprocess.run(["bash", "-n", str(tmp_path / script)], capture_output=True,
                              text=True)
        assert proc.returncode == 0, proc.stderr
    setup = (tmp_path / "setup.sh").read_text()
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    locked = pins((ROOT / "requirements-lock.txt").read_text())
    for dep in deps:  # the versions the project tested, exactly
        assert "==" in pinned(dep), f"{dep} is not installed here"
        assert shlex.quote(pinned(dep)) in setup, f"setup.sh does not install {pinned(dep)}"
        name, version = pinned(dep).split("==")
        assert locked[canonical(name.split("[")[0])] == version
    # apt-get update before any install; every package pip installs is in the lock file
    assert setup.index("apt-get update") < setup.index("apt-get install")
    assert '-c "$SOURCE/requirements-lock.txt"' in setup
    assert (tmp_path / "requirements-lock.txt").read_text() == \
        (ROOT / "requirements-lock.txt").read_text()
    assert "apt-get install -y bubblewrap\n" in setup  # required, not optional
    assert f"autograder.gradescope.run {EXERCISE} --setup" in setup  # the preflight, once
    assert stat.S_IMODE(modes[f"solutions/{EXERCISE}/solution.py"]) == 0o600
    [wheel] = [n for n in names if n.endswith(".whl")]
    assert wheel in setup and "--no-deps" in setup
    with zipfile.ZipFile(tmp_path / wheel) as w:
        files = set(w.namelist())
        meta = w.read(next(n for n in files if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = w.read(next(n for n in files if n.endswith("entry_points.txt"))).decode()
    # the wheel is what a student installs: the definition, no solution or known-bad code
    assert f"kernelgrade_assignments/{EXERCISE}/exercise.py" in files
    assert "autograder/gradescope/run.py" in files
    assert not any(n.endswith("/solution.py") or "/mutants/" in n for n in files)
    assert not any("__pycache__" in n or n.startswith("tests/") for n in files)
    assert [ln.split(": ", 1)[1] for ln in meta.splitlines()
            if ln.startswith("Requires-Dist")] == deps
    assert "autograder = autograder.cli:app" in entry_points
    # the instructor solution travels beside the wheel (the grader times against it)
    solution = tmp_path / "solutions" / EXERCISE / "solution.py"
    assert solution.read_bytes() == (SOLUTIONS / f"{EXERCISE}.py").read_bytes()
    assert not [n for n in names if n.startswith("solutions/") and EXERCISE not in n
                and n != "solutions/class_seed"]  # the class's secret seed (docs/seeds.md)
    run = (tmp_path / "run_autograder").read_text()
    assert f"autograder.gradescope.run {EXERCISE} --root" in run


def _spec_and_pending(results: dict) -> float:
    check_spec(results)
    ex = exercises.get(EXERCISE)
    graded_max = sum(t["max_score"] for t in results["tests"])
    pending = results["extra_data"]["pending_points"]
    assert pending == pytest.approx(ex.max_score - graded_max)  # skipped tests left out
    assert not set(results["extra_data"]["skipped"]) & {t["name"] for t in results["tests"]}
    if pending:
        assert f"provisional: {pending:g} points need a GPU" in results["output"]
    else:
        assert "provisional" not in results["output"]
    if TEST_DEVICE == "sim":
        assert pending > 0 and results["extra_data"]["provisional"] is True
    return pending


def test_instructor_solution_gets_every_point_it_can_earn_here(bundle, installed, tmp_path):
    root = container(bundle, tmp_path, {"tiled_matmul.py": (SOLUTIONS / "tiled_matmul.py")
                                        .read_text(), "notes.txt": "my notes"})
    proc, results = run_autograder(root, installed)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _spec_and_pending(results)
    for t in results["tests"]:
        assert t["status"] == "passed" and t["score"] == t["max_score"], t
    assert results["score"] == pytest.approx(sum(t["score"] for t in results["tests"]))
    assert "tiled_matmul" in proc.stdout  # the console report, for the instructor's stdout


def test_mutant_notebook_loses_points_and_says_why(bundle, installed, tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("My tiled matmul"), nbformat.v4.new_code_cell(
        (EXERCISES / EXERCISE / "mutants" / "naive.py").read_text())]
    root = container(bundle, tmp_path, {"hw/01_tiled_matmul.ipynb": nbformat.writes(nb),
                                        "hw/.ipynb_checkpoints/old-checkpoint.ipynb": "{}",
                                        "hw/helpers.py": "x = 1\n"})
    proc, results = run_autograder(root, installed)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _spec_and_pending(results)
    concept = next(t for t in results["tests"] if t["name"].startswith("concept"))
    assert concept["status"] == "failed" and concept["score"] == 0
    assert "shared memory" in concept["output"]
    assert results["score"] < sum(t["max_score"] for t in results["tests"])
    assert "01_tiled_matmul.ipynb" in proc.stdout


def test_no_submission_file_is_a_zero_with_a_message(bundle, installed, tmp_path):
    root = container(bundle, tmp_path, {"report.pdf": b"%PDF-1.4"})
    proc, results = run_autograder(root, installed)
    assert proc.returncode == 0, proc.stderr
    check_spec(results)
    assert results["score"] == 0
    assert "No .py file or .ipynb notebook" in results["output"]
    assert "report.pdf" in results["output"]


def test_grader_setup_fault_is_not_a_zero(bundle, installed, tmp_path):
    root = container(bundle, tmp_path, {"tiled_matmul.py": "TILE_WIDTH = 16\n"})
    proc, results = run_autograder(root, installed, device="quantum")  # a misconfigured bundle
    assert proc.returncode == GraderSetupError.exit_code
    check_spec(results)
    assert "score" not in results and all("score" not in t for t in results["tests"])
    assert "not your score" in results["output"] and "quantum" in results["output"]
    assert results["extra_data"]["grader_failed"] is True


def test_missing_solution_is_a_setup_fault_not_a_zero(bundle, installed, tmp_path):
    """A bundle whose solutions/ is gone: the installed wheel has none, so the grader stops
    (exit 2, no score) and names $KERNELGRADE_SOLUTIONS; the student gets no zero."""
    root = container(bundle, tmp_path, {"tiled_matmul.py": (SOLUTIONS / f"{EXERCISE}.py")
                                        .read_text()})
    shutil.rmtree(root / "source" / "solutions")
    proc, results = run_autograder(root, installed, device="sim")
    assert proc.returncode == GraderSetupError.exit_code, proc.stdout + proc.stderr
    check_spec(results)
    assert "score" not in results and results["extra_data"]["grader_failed"] is True
    assert exercises.SOLUTIONS_ENV in results["output"] and "not your score" in results["output"]


def test_missing_install_still_writes_results(bundle, tmp_path):
    root = container(bundle, tmp_path, {"tiled_matmul.py": "TILE_WIDTH = 16\n"})
    proc, results = run_autograder(root, python=str(tmp_path / "no-venv" / "bin" / "python"))
    assert proc.returncode == 2
    check_spec(results)
    assert "score" not in results and "setup.sh" in results["output"]


@pytest.fixture
def own_environment(monkeypatch):
    """os.environ as it was after the test: :func:`autograder.gradescope.run.run` sets the
    grading environment in its own process."""
    for name in ("KERNELGRADE_SANDBOX", exercises.SOLUTIONS_ENV, "KERNELGRADE_CACHE_DIR",
                 gs_run.ROOT_ENV, gs_run.PYTHON_ENV, gs_run.DEVICE_ENV):
        if name in os.environ:
            monkeypatch.setenv(name, os.environ[name])
        else:
            monkeypatch.delenv(name, raising=False)


def test_lock_file_pins_every_package_the_dependencies_need():
    """setup.sh installs with requirements-lock.txt as constraints: every distribution
    kernelgrade's dependencies pull in (here, with its extras) has its tested version there."""
    needed = closure(project().requires)
    locked = pins((ROOT / "requirements-lock.txt").read_text())
    assert {"numpy", "numba", "numba-cuda", "llvmlite"} <= set(needed)
    assert {n: v for n, v in needed.items() if locked.get(n) != v} == {}


def test_run_autograder_writes_results_when_python_dies(bundle, tmp_path):
    """A Python that imports fine and then dies without a word: results.json still says the
    grader failed, with no score, and the exit status is 2."""
    root = container(bundle, tmp_path, {"tiled_matmul.py": "TILE_WIDTH = 16\n"})
    fake = tmp_path / "python"
    fake.write_text('#!/bin/sh\n[ "$1" = -c ] && exit 0\nkill -9 $$\n')
    fake.chmod(0o755)
    (root / "results").mkdir()
    (root / "results" / "results.json").write_text('{"score": 100}')  # a stale one
    proc, results = run_autograder(root, python=str(fake))
    assert proc.returncode == 2
    check_spec(results)
    assert "score" not in results and results["extra_data"]["grader_failed"] is True


def test_preflight_setup_error_writes_a_failure_not_a_zero(tmp_path, monkeypatch,
                                                           own_environment):
    """A GraderSetupError raised while grading (the preflight: no GPU, the instructor's own
    solution losing points) ends as exit 2 and a results.json without a score."""
    import autograder.grader

    def broken(*a, **k):
        raise GraderSetupError("the instructor's solution lost points: timing failed")

    monkeypatch.setattr(autograder.grader, "grade", broken)
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "tiled_matmul.py").write_text("TILE_WIDTH = 16\n")
    assert gs_run.run(tmp_path, EXERCISE, "sim") == 2
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    check_spec(results)
    assert "score" not in results and "instructor's solution lost points" in results["output"]


@pytest.mark.parametrize("files, expected", [
    (["tiled_matmul.ipynb"], "tiled_matmul.ipynb"),
    (["answer.py"], "answer.py"),
    (["x/01_tiled_matmul.ipynb", "x/utils.py"], "x/01_tiled_matmul.ipynb"),
    (["tiled_matmul.py", "scratch.ipynb"], "tiled_matmul.py"),
    (["work.ipynb", "helpers.py"], "work.ipynb"),
    (["tiled_matmul.ipynb", ".ipynb_checkpoints/tiled_matmul-checkpoint.ipynb",
      "__MACOSX/tiled_matmul.ipynb"], "tiled_matmul.ipynb"),
    (["a.py", "b.py"], None),
    (["readme.md"], None),
    ([], None),
])
def test_find_submission(tmp_path, files, expected):
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("")
    path, why = gs_run.find_submission(tmp_path, EXERCISE)
    if expected is None:
        assert path is None and why
    else:
        assert path == tmp_path / expected and not why


def test_links_and_pipes_are_found_and_refused_unread(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "tiled_matmul.py").symlink_to("/etc/passwd")
    (tmp_path / "sub" / "linked_folder").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere" / "other.py").write_text("x = 1\n")
    path, why = gs_run.find_submission(tmp_path / "sub", EXERCISE)
    assert path == tmp_path / "sub" / "tiled_matmul.py" and not why  # the folder link not followed
    assert "link" in gs_run.refusal(path) and "root" not in gs_run.refusal(path)
    os.mkfifo(tmp_path / "sub" / "pipe.ipynb")
    assert "not a regular file" in gs_run.refusal(tmp_path / "sub" / "pipe.ipynb")
    (tmp_path / "sub" / "tiled_matmul.py").unlink()
    (tmp_path / "sub" / "tiled_matmul.py").write_text("x = 1\n")
    assert gs_run.refusal(tmp_path / "sub" / "tiled_matmul.py") == ""


def test_exercise_names_do_not_match_longer_ones(tmp_path):
    for f in ("grid_barrier_lockfree.py", "06_grid_barrier.py"):
        (tmp_path / f).write_text("")
    path, _ = gs_run.find_submission(tmp_path, "grid_barrier")
    assert path == tmp_path / "06_grid_barrier.py"


def test_a_course_own_exercise_is_carried_and_graded(installed, tmp_path):
    """``gradescope build --assignments DIR``: the bundle carries the course's assignment
    (definition, notebook text, shared helpers; no known-bad file) beside its solution, and the
    same installed kernelgrade grades it (issue 23)."""
    course = ROOT / "tests" / "fixtures" / "course_histogram"
    out = tmp_path / "histogram.zip"
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "gradescope", "build",
                           "histogram", "--assignments", str(course / "assignments"),
                           "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
    assert "assignments/histogram/exercise.py" in names
    assert "solutions/histogram/solution.py" in names
    assert not any("mutants" in n for n in names)
    solution = (course / "solutions" / "histogram.py").read_text()
    root = container(out, tmp_path, {"histogram.py": solution})
    ran, results = run_autograder(root, installed)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    _spec_and_pending(results)
    assert all(t["status"] == "passed" for t in results["tests"]), results["tests"]


@pytest.mark.parametrize("files, graded, ignored", [
    # issue 32, item 11: the .py that holds the work beside an empty notebook is graded
    ({"solution.py": "x = 1\n", "notes.ipynb": json.dumps({"cells": [], "nbformat": 4})},
     "solution.py", {"notes.ipynb": "holds no code"}),
    ({"tiled_matmul.ipynb": json.dumps({"cells": [{"cell_type": "code", "source": "",
                                                   "metadata": {}}], "nbformat": 4}),
      "solution.py": "x = 1\n"}, "solution.py", {"tiled_matmul.ipynb": "holds no code"}),
    ({"work.ipynb": json.dumps({"cells": [{"cell_type": "code", "source": "x = 1",
                                          "metadata": {}}], "nbformat": 4}),
      "helpers.py": "y = 2\n"}, "work.ipynb", {"helpers.py": "notebook is graded"}),
    ({"tiled_matmul.py": "x = 1\n", "scratch.py": "y = 2\n"}, "tiled_matmul.py",
     {"scratch.py": "does not name tiled_matmul"}),
])
def test_several_files_the_graded_one_and_the_others_are_named(tmp_path, files, graded,
                                                               ignored):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    choice = gs_run.choose_submission(tmp_path, EXERCISE)
    assert choice.path == tmp_path / graded and not choice.why
    assert {name for name, _ in choice.ignored} == set(ignored)
    note = choice.note(tmp_path)
    assert note.startswith(f"Graded {graded}.")
    for name, why in ignored.items():
        assert name in note and why in dict(choice.ignored)[name]


def test_a_lone_empty_notebook_is_still_the_one_refused(tmp_path):
    (tmp_path / "notes.ipynb").write_text(json.dumps({"cells": [], "nbformat": 4}))
    choice = gs_run.choose_submission(tmp_path, EXERCISE)
    assert choice.path == tmp_path / "notes.ipynb" and choice.note(tmp_path) == ""
