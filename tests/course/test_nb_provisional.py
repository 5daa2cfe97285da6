"""A course without a GPU, as its TA meets it with real nbgrader commands (issue 32, items 5 and
6): ``nbgrader autograde`` stops before the first student, with one line and no traceback, when
the course does not store provisional grades; where it does, the feedback page's score header
and ``grades.csv`` say "provisional" beside the score."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SOLUTIONS
from .nbhelpers import TEST_DEVICE, kernel_env, nbgrader, submit

EXERCISE, ASSIGNMENT, NOTEBOOK = "occupancy", "07_occupancy", "occupancy"


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    """A course of the occupancy exercise, simulator grades stored, released."""
    from autograder.nbgrader.course import build_course

    course = build_course(tmp_path_factory.mktemp("prov") / "course", names=[EXERCISE],
                          device="sim", allow_provisional=True)
    nbgrader(course, "generate_assignment", ASSIGNMENT, "--log-level=WARN")
    return course


def test_autograde_without_a_gpu_stops_before_the_first_student(released, tmp_path):
    """The README's defaults on a machine without a GPU: provisional grades refused. Nothing is
    graded; one line names the setting; no traceback; exit status 2 (the grader's setup)."""
    course = Path(shutil.copytree(released, tmp_path / "course"))
    config = course / "nbgrader_config.py"
    text = config.read_text()
    assert "c.GradeWithAutograder.allow_provisional = True" in text
    config.write_text(text.replace("c.GradeWithAutograder.allow_provisional = True",
                                   "c.GradeWithAutograder.allow_provisional = False"))
    code = (SOLUTIONS / f"{EXERCISE}.py").read_text()
    for student in ("ann", "ben"):
        submit(course, student, ASSIGNMENT, code)
    run = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT],
                         cwd=course, env=kernel_env(KERNELGRADE_DEVICE="sim"),
                         capture_output=True, text=True, timeout=900)
    said = run.stdout + run.stderr
    assert run.returncode == 2, said[-3000:]
    assert "Traceback" not in said, said[-3000:]
    assert said.count("c.GradeWithAutograder.allow_provisional = True") == 1, said[-3000:]
    assert "--allow-provisional" in said and "provisional" in said
    assert "Autograding" not in said and "ann" not in said  # no student was started
    assert not list(course.glob("autograded/**/*.ipynb"))


@pytest.fixture(scope="module")
def autograded(released, tmp_path_factory) -> Path:
    course = Path(shutil.copytree(released, tmp_path_factory.mktemp("prov-ag") / "course"))
    submit(course, "ann", ASSIGNMENT, (SOLUTIONS / f"{EXERCISE}.py").read_text())
    nbgrader(course, "autograde", ASSIGNMENT, "--log-level=WARN")
    return course


def test_feedback_header_and_grades_csv_say_provisional_beside_the_score(autograded):
    nbgrader(autograded, "generate_feedback", ASSIGNMENT, "--log-level=WARN")
    nbgrader(autograded, "export", "--log-level=WARN")
    html = (autograded / "feedback" / "ann" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()
    with open(autograded / "grades.csv", newline="") as fh:
        (row,) = list(csv.DictReader(fh))
    header = html[html.index("<h4>"):html.index("</h4>")]
    columns = list(row)
    assert columns.index("provisional") == columns.index("max_score") + 1
    nb = json.loads((autograded / "autograded" / "ann" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
                     ).read_text())
    result = nb["metadata"]["kernelgrade"]["results"][EXERCISE]
    if TEST_DEVICE == "sim":  # occupancy's driver cases compare with the GPU's calculator
        note = f"provisional: {result['pending_points']:g} points need a GPU"
        assert result["provisional"] and result["pending_points"] > 0
        assert f"(Score: {result['score']:.1f} / {result['max_score']:.1f}, " in header, header
        assert f"{note}</span>)" in header, header
        assert float(row["score"]) == result["score"] and row["provisional"] == "True"
        assert note in row["notes"]
    else:  # a final grade: nbgrader's header as it is
        assert "provisional" not in header and row["provisional"] == "False"
