"""One secret seed per class and exercise on every path (issue 32, item 8): nbgrader's
autograde, the Gradescope runner and ``autograder batch`` grade every submission of an exercise
with the seed derived from the class's seed by one rule, so the same code gets the same grade
whoever hands it in, and a second autograde keeps the seed."""

from __future__ import annotations

import json
import os
import stat
import zipfile

import pytest

from autograder.batch.store import ResultStore
from autograder.errors import GraderSetupError
from autograder.host import class_seed
from conftest import SOLUTIONS
from course.nbhelpers import nbgrader, submit

EXERCISE, ASSIGNMENT = "occupancy", "07_occupancy"


def test_the_rule_is_batchs_rule_and_the_seed_file_is_kept(tmp_path):
    assert class_seed.exercise_seed(77, EXERCISE) == ResultStore.exercise_seed(77, EXERCISE)
    path = tmp_path / "instructor" / class_seed.SEED_FILE
    first = class_seed.read_or_create(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600  # the instructor's alone
    assert class_seed.read_or_create(path) == first  # kept, never drawn again
    with pytest.raises(GraderSetupError, match="not the one asked for"):
        class_seed.read_or_create(path, first + 1)
    path.write_text("not a number\n")
    with pytest.raises(GraderSetupError, match="no whole number"):
        class_seed.read(path)


def test_a_gradescope_bundle_keeps_its_class_seed(tmp_path):
    from autograder.gradescope.bundle import build_bundle

    zip_path = build_bundle(EXERCISE, tmp_path / "autograder.zip", seed=1234)
    with zipfile.ZipFile(zip_path) as z:
        assert z.read("solutions/class_seed").decode().strip() == "1234"
        assert (z.getinfo("solutions/class_seed").external_attr >> 16) & 0o077 == 0


def test_gradescope_runner_grades_with_the_bundles_seed(tmp_path, monkeypatch):
    """The runner grades every submission with the exercise seed of the bundle's class seed
    (the grading itself stubbed: the seed it is asked for is the point)."""
    from autograder import grader
    from autograder.gradescope import run

    root = tmp_path / "autograder"
    (root / "source" / "solutions").mkdir(parents=True)
    (root / "source" / "solutions" / "class_seed").write_text("1234\n")
    (root / "submission").mkdir()
    (root / "submission" / "occupancy.py").write_text((SOLUTIONS / "occupancy.py").read_text())
    monkeypatch.setattr(run, "grading_environment", lambda r: {})
    monkeypatch.setattr(run, "require_sandbox", lambda: None)
    asked = []

    def fake_grade(path, exercise, device="auto", seed=None, **kw):
        from autograder.wire.results import ExerciseResult

        asked.append(seed)
        return ExerciseResult(exercise, str(path), "sim", seed=seed)

    monkeypatch.setattr(grader, "grade", fake_grade)
    for _ in range(2):
        assert run.run(root, EXERCISE, "sim") == 0
    assert asked == [class_seed.exercise_seed(1234, EXERCISE)] * 2


def _seeds_and_scores(course):
    found = {}
    for student in ("ann", "ben"):
        nb = json.loads((course / "autograded" / student / ASSIGNMENT / f"{EXERCISE}.ipynb"
                         ).read_text())
        result = nb["metadata"]["kernelgrade"]["results"][EXERCISE]
        found[student] = (result["seed"], result["score"])
    return found


def test_nbgrader_autograde_grades_a_class_with_one_seed_and_keeps_it(tmp_path):
    """Two students hand in the same notebook: real ``nbgrader autograde`` grades both with the
    course's exercise seed and gives the same grade; a second autograde keeps the seed."""
    from autograder.nbgrader.course import build_course

    course = build_course(tmp_path / "course", names=[EXERCISE], device="sim",
                          allow_provisional=True)
    kept = class_seed.read(course / "instructor" / "class_seed")
    assert kept is not None
    nbgrader(course, "generate_assignment", ASSIGNMENT, "--log-level=WARN")
    code = (SOLUTIONS / f"{EXERCISE}.py").read_text()
    for student in ("ann", "ben"):
        submit(course, student, ASSIGNMENT, code)
    nbgrader(course, "autograde", ASSIGNMENT, "--log-level=WARN")
    first = _seeds_and_scores(course)
    expected = class_seed.exercise_seed(kept, EXERCISE)
    assert first["ann"] == first["ben"]
    assert first["ann"][0] == expected
    nbgrader(course, "autograde", ASSIGNMENT, "--student=ann", "--force", "--log-level=WARN")
    assert _seeds_and_scores(course)["ann"] == first["ann"]
    assert class_seed.read(course / "instructor" / "class_seed") == kept
