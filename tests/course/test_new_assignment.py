"""A course's own assignment, no fork (issue 23): ``autograder new`` writes a starter into a
folder outside the checkout, ``autograder check`` passes it, ``autograder course build
--assignments`` puts it into an nbgrader course, and ``nbgrader autograde`` grades a student's
notebook of it into the gradebook, with the course's config (not this process) naming the folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import exercises
from autograder.nbgrader import notebook as nbb

from .nbhelpers import ROOT, TEST_DEVICE, kernel_env, load_script, nbgrader

NAME = "scale_one_more"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``autograder ARGS`` as an instructor runs it, in ``cwd``, with no course folder in the
    environment."""
    env = {k: v for k, v in kernel_env().items()
           if k not in (exercises.ASSIGNMENTS_ENV, exercises.SOLUTIONS_ENV)}
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def starter(tmp_path_factory):
    """The instructor's own folder (assignments/ and solutions/) with the starter in it, made by
    ``autograder new`` and checked by ``autograder check``, outside the checkout."""
    assert exercises.ASSIGNMENTS_ENV not in os.environ  # nbgrader finds the folder by the config
    home = tmp_path_factory.mktemp("instructor")
    assert not home.is_relative_to(ROOT)
    made = cli("new", NAME, "--assignments", str(home / "assignments"), cwd=home)
    assert made.returncode == 0, made.stderr
    checked = cli("check", NAME, "--assignments", str(home / "assignments"), "--device",
                  TEST_DEVICE, "--no-mutants", cwd=home)
    return {"home": home, "made": made, "checked": checked}


@pytest.fixture(scope="module")
def course(starter):
    """An nbgrader course built from the starter's folder, with two students' notebooks of it
    autograded by ``nbgrader autograde``."""
    pytest.importorskip("nbgrader")
    home = starter["home"]
    built = cli("course", "build", str(home / "course"), "--assignments",
                str(home / "assignments"), "--device", TEST_DEVICE, "--allow-provisional",
                cwd=home)
    assert built.returncode == 0, built.stdout + built.stderr
    course = home / "course"
    assignment = next(p.name for p in (course / "source").iterdir() if p.name.endswith(NAME))
    nbgrader(course, "generate_assignment", assignment, "--log-level=WARN")
    release = course / "release" / assignment / f"{NAME}.ipynb"
    make_class = load_script("examples/make_class.py")
    for student, code in (("ada", (home / "solutions" / f"{NAME}.py").read_text()),
                          ("bo", (home / "assignments" / NAME / "mutants" /
                                  "one_block_only.py").read_text())):
        nb = make_class.student_notebook(nbb.read(release), code)
        dest = course / "submitted" / student / assignment / release.name
        dest.parent.mkdir(parents=True)
        dest.write_text(nbb.dumps(nb), encoding="utf-8")
    nbgrader(course, "autograde", assignment, "--log-level=WARN")
    return {"course": course, "assignment": assignment}


def _scores(course: Path, assignment: str, student: str) -> dict[str, tuple[float, float]]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        sub = gb.find_submission_notebook(NAME, assignment, student)
        return {g.name: (g.auto_score, g.max_score) for g in sub.grades}


def test_new_writes_the_layout_of_the_built_in_assignments(starter):
    home = starter["home"]
    for part in ("exercise.py", "notebook.py"):
        assert (home / "assignments" / NAME / part).is_file()
    assert len(list((home / "assignments" / NAME / "mutants").glob("*.py"))) == 2
    assert (home / "solutions" / f"{NAME}.py").is_file()
    assert (home / "assignments" / NAME / "mutants" / "equivalent.toml").is_file()
    again = cli("new", NAME, "--assignments", str(home / "assignments"), cwd=home)
    assert again.returncode == 2 and "already exists" in again.stderr
    bad = cli("new", "Not-A-Name", "--assignments", str(home / "assignments"), cwd=home)
    assert bad.returncode == 2 and "cannot name an assignment" in bad.stderr


def test_check_passes_the_starter(starter):
    out = starter["checked"].stdout
    assert starter["checked"].returncode == 0, out + starter["checked"].stderr
    for step in ("definition", "solution and known-bad submissions", "notebook",
                 "contract text", "concept thresholds"):
        assert f"ok {step}" in out, out
    # issue 32, item 16: "ready" only where everything ran; the simulator names what it did not
    last = out.strip().splitlines()[-1]
    assert last.startswith(f"{NAME}: provisional: every step that ran passed"), out
    assert "mutation analysis (skipped)" in last
    if TEST_DEVICE == "sim":
        assert "tests that sim does not run (" in last and "timing" in last
        assert "--device gpu" in last
    assert f"{NAME}: ready" not in out


def test_check_fails_a_known_bad_submission_that_gets_full_marks(starter, tmp_path):
    """A known-bad file the grader cannot tell from the solution fails the check (exit 1)."""
    import shutil

    copy = tmp_path / "assignments"
    shutil.copytree(starter["home"] / "assignments", copy)
    shutil.copytree(starter["home"] / "solutions", tmp_path / "solutions")
    (copy / NAME / "mutants" / "not_bad_at_all.py").write_text(
        "# kernelgrade-expect: correctness=failed\n"
        + (tmp_path / "solutions" / f"{NAME}.py").read_text())
    out = cli("check", NAME, "--assignments", str(copy), "--device", TEST_DEVICE,
              "--no-mutants", cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "FAILED solution and known-bad submissions" in out.stdout
    assert "not_bad_at_all.py" in out.stdout and "WRONG" in out.stdout


def test_nbgrader_autograde_grades_the_course_assignment(course):
    ada = _scores(course["course"], course["assignment"], "ada")
    bo = _scores(course["course"], course["assignment"], "bo")
    correctness = f"{NAME}-hidden-correctness"
    assert ada[correctness][0] == ada[correctness][1] or (
        TEST_DEVICE == "sim" and ada[correctness][0] > 0)
    assert bo[correctness][0] < ada[correctness][0]
    config = (course["course"] / "nbgrader_config.py").read_text()
    assert exercises.ASSIGNMENTS_ENV in config
    assert (course["course"] / "instructor" / "assignments" / NAME / "exercise.py").is_file()
    assert os.environ.get(exercises.ASSIGNMENTS_ENV) is None


def test_a_definition_that_does_not_load_is_the_instructors_fault(tmp_path):
    """A course's ``exercise.py`` that raises: ``grade`` and ``exercises`` exit 2 naming the
    file (never a traceback or a student's zero), ``check`` fails its definition step (exit 1)."""
    folder = tmp_path / "assignments" / "broken"
    folder.mkdir(parents=True)
    (folder / "exercise.py").write_text("raise ZeroDivisionError('oops')\n")
    (tmp_path / "sub.py").write_text("x = 1\n")
    where = str(folder / "exercise.py")
    graded = cli("grade", str(tmp_path / "sub.py"), "-e", "broken", "--assignments",
                 str(tmp_path / "assignments"), "--device", "sim", cwd=tmp_path)
    assert graded.returncode == 2 and "Traceback" not in graded.stderr
    assert f"{where} does not load: ZeroDivisionError: oops" in graded.stderr
    listed = cli("exercises", "--assignments", str(tmp_path / "assignments"), cwd=tmp_path)
    assert listed.returncode == 2 and where in listed.stderr and "tiled_matmul" in listed.stdout
    checked = cli("check", "broken", "--assignments", str(tmp_path / "assignments"),
                  "--device", "sim", cwd=tmp_path)
    assert checked.returncode == 1 and "FAILED definition" in checked.stdout
