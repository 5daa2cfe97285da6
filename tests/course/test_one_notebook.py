"""An exercise's student notebook authored as one notebook (issue 32, item 20;
:mod:`autograder.nbgrader.one_notebook`): markdown, a partial skeleton with solution regions, a
cell of the student's own and a written answer graded by hand, in the instructor's order.

The fixture is the built-in ``block_sum`` converted to that form:
``tests/files/one_notebook/solutions/block_sum.ipynb``, copied beside the built-in
``solutions/block_sum.py`` and ``assignments/block_sum/exercise.py``. The builder's rules are
tested in-process; the path through nbgrader with real commands in a temporary course:
``autograder course build``, ``nbgrader generate_assignment`` (regions stripped, the written
answer kept with its points, read-only cells locked), ``nbgrader autograde`` (the kernel graded,
the written answer left for formgrader), ``generate_feedback`` and ``export`` (its points in the
total).
"""

from __future__ import annotations

import html
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder import exercises
from autograder.nbgrader import one_notebook as one
from autograder.authoring.new import write_starter
from autograder.nbgrader import notebook as nbb
from autograder.nbgrader.authoring import AuthoringError, build_source_notebook

from .nbhelpers import ROOT, TEST_DEVICE, kernel_env, nbgrader

FIXTURE = ROOT / "tests" / "files" / "one_notebook"
NAME = "block_sum"


def _copy_fixture(dest):
    """The fixture's one notebook, beside the built-in block_sum's definition and solution
    (copied, not kept twice in the repository): a course folder of its own."""
    shutil.copytree(FIXTURE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "assignments" / NAME).mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "assignments" / NAME / "exercise.py", dest / "assignments" / NAME)
    shutil.copy(ROOT / "solutions" / f"{NAME}.py", dest / "solutions")
ANSWER_ID = "why_barrier_outside"
#: The student's code in the skeleton's region: the reduction, correct.
STUDENT_REGION = """\
sums[tid] = x[i] if i < x.shape[0] else float32(0.0)
cuda.syncthreads()
s = BLOCK_SIZE // 2
while s > 0:
    if tid < s:
        sums[tid] += sums[tid + s]
    cuda.syncthreads()
    s //= 2"""


@pytest.fixture
def course_folder(tmp_path):
    """A copy of the fixture (assignments/ and solutions/), registered for this test only."""
    _copy_fixture(tmp_path / "course")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(exercises, "_ADDED", [])
        mp.setattr(exercises, "_LOADED", {})
        mp.delenv(exercises.ASSIGNMENTS_ENV, raising=False)
        mp.delenv(exercises.SOLUTIONS_ENV, raising=False)
        exercises.add_folder(tmp_path / "course" / "assignments")
        yield tmp_path / "course"


def _edit(path: Path, edit) -> None:
    nb = nbformat.read(str(path), as_version=4)
    edit(nb)
    nbformat.write(nb, str(path))


def _ids(nb) -> list[str]:
    return [c.id for c in nb.cells]


def test_the_source_notebook_keeps_the_instructors_cells_in_order(course_folder):
    nb = build_source_notebook(NAME)
    assert one.notebook_path(NAME) == course_folder / "solutions" / f"{NAME}.ipynb"
    ids = _ids(nb)
    # task, setup, what to write, then the instructor's cells in order, then the grade cells
    assert ids[:4] == ["task", "simulator", "setup", "your-kernel"]
    mine = ids[ids.index("your-kernel") + 1:ids.index("public-tests-text")]
    assert mine == [f"{NAME}-cell-{i}" for i in range(2, 7)] + [ANSWER_ID]
    assert ids[-3:] == [f"{NAME}-hidden-{p}" for p in ("correctness", "concept", "timing")]
    cells = dict(zip(ids, nb.cells))
    skeleton = cells[f"{NAME}-cell-3"]
    assert skeleton.metadata.nbgrader["solution"] and not skeleton.metadata.nbgrader["grade"]
    assert nbb.BEGIN_SOLUTION in skeleton.source
    assert "nbgrader" not in cells[f"{NAME}-cell-5"].metadata  # the student's own: editable
    assert cells[f"{NAME}-cell-6"].metadata.nbgrader["locked"]  # the question: read-only
    answer = cells[ANSWER_ID].metadata.nbgrader
    assert answer["grade"] and answer["solution"] and answer["points"] == 5.0
    assert not answer["locked"]
    assert ("| written answers | 5 | 1 question of this notebook, answered in words and graded "
            "by hand" in cells["task"].source)
    assert "105 points: 100 in three hidden-test cells" in cells["task"].source


def test_released_code_is_what_nbgrader_hands_out():
    src = ("def f():\n    a = 1\n    ### BEGIN SOLUTION\n    b = 2\n    ### END SOLUTION\n"
           "    return a\n")
    assert one.released_code(src) == ("def f():\n    a = 1\n    # YOUR CODE HERE\n"
                                      "    raise NotImplementedError()\n    return a")
    assert one.released_code("x = 1") == one.CODE_STUB  # a solution cell without a region
    # nbgrader finds a region by "BEGIN SOLUTION" anywhere in a line, as the builder does
    assert one.released_code("a = 1\n# BEGIN SOLUTION\nb = 2\n# END SOLUTION") == (
        "a = 1\n" + one.CODE_STUB)
    with pytest.raises(ValueError, match="has no ### END SOLUTION"):
        one.released_code("### BEGIN SOLUTION\nx = 1\n")


def test_a_notebook_that_disagrees_with_the_solution_file_is_refused(course_folder):
    solution = course_folder / "solutions" / f"{NAME}.py"
    solution.write_text(solution.read_text().replace("BLOCK_SIZE = 256", "BLOCK_SIZE = 128"))
    with pytest.raises(AuthoringError, match=r"disagree: `BLOCK_SIZE` differs from block_sum"
                                             r"\.py's \(the notebook: `256`; the file: `128`\)"):
        build_source_notebook(NAME)
    solution.write_text(solution.read_text() + "\n\ndef helper():\n    return 1\n")
    with pytest.raises(AuthoringError, match=r"`helper` is in block_sum.py but no code cell"):
        build_source_notebook(NAME)


def test_a_skeleton_that_hands_out_the_kernel_is_refused(course_folder):
    path = course_folder / "solutions" / f"{NAME}.ipynb"

    def whole_kernel_in_a_plain_cell(nb):
        skeleton = nb.cells[2]
        skeleton.source = nbb.unmark(skeleton.source)
        nb.cells.insert(2, nbformat.v4.new_code_cell("### BEGIN SOLUTION\nSCALE = 1\n"
                                                     "### END SOLUTION"))
    _edit(path, whole_kernel_in_a_plain_cell)
    with pytest.raises(AuthoringError, match="would hand out the solution of block_sum"):
        build_source_notebook(NAME)


@pytest.mark.parametrize("change, message", [
    (lambda nb: nb.cells[6].metadata.nbgrader.pop("points"), "needs its points"),
    (lambda nb: nb.cells[4].metadata.update(nbgrader={"grade": True, "solution": False,
                                                      "points": 1, "grade_id": "mine"}),
     "an autograded test cell of your own never runs"),
    (lambda nb: nb.cells[6].metadata.nbgrader.update(grade_id="setup"), "used twice"),
    (lambda nb: nb.cells[2].update(source=nb.cells[2].source.replace(nbb.END_SOLUTION, "")),
     "has no ### END SOLUTION"),
    (lambda nb: nb.cells[1].update(source="### BEGIN SOLUTION\nhint\n### END SOLUTION"),
     "a solution region in markdown makes a written answer, which needs grade and points"),
    (lambda nb: nb.cells.pop(0), "the task cell must start with a '# ' title"),
    (lambda nb: nb.cells.insert(0, nbformat.v4.new_code_cell("x = 1")),
     "the first cell must be the task"),
])
def test_what_nbgrader_would_refuse_or_never_grade_is_named(course_folder, change, message):
    _edit(course_folder / "solutions" / f"{NAME}.ipynb", change)
    with pytest.raises(AuthoringError, match=message):
        build_source_notebook(NAME)


def test_an_exercise_has_notebook_py_or_the_notebook_not_both(course_folder):
    (course_folder / "assignments" / NAME / "notebook.py").write_text(
        (ROOT / "assignments" / NAME / "notebook.py").read_text())
    with pytest.raises(AuthoringError, match="has both"):
        build_source_notebook(NAME)


def test_a_built_in_exercise_says_how_to_author_it_as_one_notebook(tmp_path):
    """The instructor of the walk-through (issue 32) put block_sum.ipynb beside the built-in
    block_sum's solution: kernelgrade's own notebook.py is not theirs to remove, so the message
    says what to do instead, and doing it builds."""
    _copy_fixture(tmp_path / "course")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(exercises, "_ADDED", [])
        mp.setattr(exercises, "_LOADED", {})
        mp.delenv(exercises.ASSIGNMENTS_ENV, raising=False)
        mp.setenv(exercises.SOLUTIONS_ENV, str(tmp_path / "course" / "solutions"))
        assert exercises.is_builtin(NAME)
        with pytest.raises(AuthoringError) as refused:
            build_source_notebook(NAME)
        said = str(refused.value)
        assert "built-in exercise" in said and "--assignments DIR" in said, said
        assert f"DIR/{NAME}/exercise.py" in said and "remove" not in said, said
        exercises.add_folder(tmp_path / "course" / "assignments")  # as the message says
        nb = build_source_notebook(NAME)
        assert any(c.get("id") == ANSWER_ID for c in nb.cells)


def test_new_writes_a_one_notebook_starter_that_builds(tmp_path):
    written = write_starter("scale_nb", tmp_path / "assignments", notebook=True)
    assert tmp_path / "solutions" / "scale_nb.ipynb" in written
    assert not (tmp_path / "assignments" / "scale_nb" / "notebook.py").exists()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(exercises, "_ADDED", [])
        mp.setattr(exercises, "_LOADED", {})
        exercises.add_folder(tmp_path / "assignments")
        nb = build_source_notebook("scale_nb")
    meta = [c.metadata.get("nbgrader", {}) for c in nb.cells]
    assert sum(1 for m in meta if m.get("solution") and m.get("grade")) == 1  # written answer
    assert sum(1 for m in meta if m.get("solution") and not m.get("grade")) == 1  # skeleton


# --- the path through nbgrader, with real commands --------------------------------------------

def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in kernel_env().items()
           if k not in (exercises.ASSIGNMENTS_ENV, exercises.SOLUTIONS_ENV)}
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_autograder_new_notebook_writes_the_notebook_beside_the_solution(tmp_path):
    made = _cli("new", "scale_nb", "--assignments", str(tmp_path / "assignments"), "--notebook",
                cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert f"wrote {tmp_path / 'solutions' / 'scale_nb.ipynb'}" in made.stdout
    assert not (tmp_path / "assignments" / "scale_nb" / "notebook.py").exists()


@pytest.fixture(scope="module")
def walked(tmp_path_factory):
    """A course built from the fixture, released, and one student's notebook (the skeleton
    completed, the question answered) autograded."""
    pytest.importorskip("nbgrader")
    home = tmp_path_factory.mktemp("one_notebook")
    _copy_fixture(home / "instructor")
    built = _cli("course", "build", str(home / "course"), "--exercise", NAME, "--assignments",
                 str(home / "instructor" / "assignments"), "--device", TEST_DEVICE,
                 "--allow-provisional", cwd=home)
    assert built.returncode == 0, built.stdout + built.stderr
    course = home / "course"
    assignment = next(p.name for p in (course / "source").iterdir())
    nbgrader(course, "generate_assignment", assignment, "--log-level=WARN")
    release = nbb.read(course / "release" / assignment / f"{NAME}.ipynb")
    student = nbformat.from_dict(json.loads(json.dumps(release)))
    for cell in student.cells:
        if cell.cell_type == "code" and "raise NotImplementedError()" in cell.source:
            indent = "    "
            stub = f"{indent}# YOUR CODE HERE\n{indent}raise NotImplementedError()"
            cell.source = cell.source.replace(
                stub, "\n".join(indent + ln for ln in STUDENT_REGION.splitlines()))
        elif cell.get("id") == ANSWER_ID:
            cell.source = "Every thread must reach every barrier, or the block hangs."
    dest = course / "submitted" / "ada" / assignment / f"{NAME}.ipynb"
    dest.parent.mkdir(parents=True)
    dest.write_text(nbb.dumps(student), encoding="utf-8")
    nbgrader(course, "autograde", assignment, "--log-level=WARN")
    nbgrader(course, "generate_feedback", assignment, "--log-level=WARN")
    nbgrader(course, "export", "--log-level=WARN")
    return {"course": course, "assignment": assignment, "release": release}


def test_the_release_strips_the_regions_and_keeps_the_written_answer(walked):
    cells = {c.id: c for c in walked["release"].cells}
    skeleton = cells[f"{NAME}-cell-3"]
    assert nbb.BEGIN_SOLUTION not in skeleton.source and "sums[tid] +=" not in skeleton.source
    assert "# YOUR CODE HERE\n    raise NotImplementedError()" in skeleton.source
    assert "partial[cuda.blockIdx.x] = sums[0]" in skeleton.source  # the given part stays
    answer = cells[ANSWER_ID]
    assert answer.source == "YOUR ANSWER HERE"  # the model answer is not released
    assert answer.metadata.nbgrader["points"] == 5.0 and answer.metadata.nbgrader["grade"]
    assert answer.metadata.get("editable", True) is not False
    for locked in ("task", f"{NAME}-cell-6", f"{NAME}-hidden-correctness"):
        assert cells[locked].metadata.get("editable") is False, locked  # nbgrader's lock
        assert cells[locked].metadata.get("deletable") is False, locked
    assert cells[f"{NAME}-cell-5"].metadata.get("editable", True) is not False  # the student's
    assert "print(\"your sum:\"" in cells[f"{NAME}-cell-5"].source


def test_autograde_grades_the_kernel_and_leaves_the_written_answer_to_formgrader(walked):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{walked['course'] / 'gradebook.db'}") as gb:
        sub = gb.find_submission_notebook(NAME, walked["assignment"], "ada")
        grades = {g.name: g for g in sub.grades}
        assert sub.max_score == 105.0  # 100 for the kernel, 5 for the written answer
        assert sub.needs_manual_grade
        answer = grades[ANSWER_ID]
        assert answer.auto_score is None and answer.needs_manual_grade
        assert answer.max_score == 5.0
        correctness = grades[f"{NAME}-hidden-correctness"]
        if TEST_DEVICE == "sim":  # the GPU-only sizes are skipped
            assert 0 < correctness.auto_score < correctness.max_score
        else:
            assert correctness.auto_score == correctness.max_score == 60.0
        assert grades[f"{NAME}-hidden-concept"].auto_score == 15.0
        # kernelgrade's note goes under the code, not in the written answer's comment box
        comments = {c.name: c.auto_comment or "" for c in sub.comments}
        assert comments[f"{NAME}-cell-3"].startswith(f"{NAME}: "), comments
        assert f"{NAME}: " not in comments[ANSWER_ID], comments


def test_export_and_feedback_count_the_written_answers_points(walked):
    import csv

    course = walked["course"]
    with open(course / "grades.csv", newline="") as f:
        (row,) = [r for r in csv.DictReader(f) if r["student_id"] == "ada"]
    assert float(row["max_score"]) == 105.0
    feedback = (course / "feedback" / "ada" / walked["assignment"] / f"{NAME}.html").read_text()
    assert f'<a href="#{ANSWER_ID}">Written response</a> (Score: 0.0 / 5.0)' in feedback
    assert "/ 105.0" in feedback
    # the grade cell's own total, beside nbgrader's "/ 105", names the points graded by hand
    total = "points from the autograder's tests, graded on"
    said = "; the written answers (5 points) are graded by hand"
    page = html.unescape(feedback)
    assert total in page and said in page, page  # the HTML report
    assert "points in all" not in page, page
    graded = nbb.read(course / "autograded" / "ada" / walked["assignment"] / f"{NAME}.ipynb")
    [first] = [c for c in graded.cells if c.get("id") == f"{NAME}-hidden-correctness"]
    text = first.outputs[0]["data"]["text/plain"]  # the text report, as a terminal shows it
    assert total in text.splitlines()[0] and said in text.splitlines()[0], text
    # a rebuild from the course's own copy finds the notebook there
    assert (course / "instructor" / "solutions" / f"{NAME}.ipynb").is_file()
