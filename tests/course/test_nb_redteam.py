"""Red team: students who attack nbgrader's grading get their honest score.

Real ``nbgrader autograde`` runs into a real ``gradebook.db``, with the course that ``autograder
course build`` configures (GradeWithAutograder in Execute's place: the notebooks never run), a
course whose notebooks nbgrader runs first (``--run-notebooks``), and two runs that must store
nothing: simulator grades without the opt-in, and a grader that cannot grade
(:class:`autograder.errors.GraderSetupError`). Several students share each autograde run.

Every attack is on ``01_tiled_matmul``: a kernel whose body is ``pass`` (honest score: 0 in every
part) or a correct kernel (honest score: what the example class's alice gets).
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from .nbhelpers import (ASSIGNMENTS, TEST_DEVICE, kernel_env, load_script, nbgrader, scores,
                        student_notebook)

from autograder import exercises
from autograder.nbgrader import notebook as nbb

ASSIGNMENT = "01_tiled_matmul"
NB_NAME = ASSIGNMENTS[ASSIGNMENT][1]
EX = exercises.get("tiled_matmul")
CORRECT = load_script("examples/make_class.py").student_code("alice", ASSIGNMENT)  # solution
HIDDEN = {kind: nbb.hidden_grade_id("tiled_matmul", kind)
          for kind in ("correctness", "concept", "timing")}

MONKEYPATCH = """
import autograder.nbgrader.cells as _c
_c.grade_this_notebook = lambda ex, kind, **kw: {'correctness': 60.0, 'concept': 15.0,
                                                 'timing': 25.0}[kind]
"""
SILENCE = """
import IPython
IPython.core.interactiveshell.InteractiveShell.showtraceback = lambda *a, **k: None
"""
# every later cell (the grade cells too) ends in 15.0, which nbgrader would take as its points
FORGE = """
print(60.0)
get_ipython().input_transformers_post.append(lambda lines: lines + ["\\n15.0\\n"])
"""
EXIT = "import os\nos._exit(0)"
# from here on, the kernel spins before every cell: the public-test cell never ends
SPIN = """
def _spin(*args):
    while True:
        pass


get_ipython().events.register("pre_run_cell", _spin)
"""


def honest(code: str) -> dict[str, float]:
    """The score of each hidden grade cell for a pass kernel or the correct kernel."""
    if code != CORRECT:
        return {HIDDEN[k]: 0.0 for k in HIDDEN}
    cases = sum(c.points for c in EX.cases)
    on_sim = sum(c.points for c in EX.cases if c.sim)
    return {HIDDEN["correctness"]: on_sim if TEST_DEVICE == "sim" else cases,
            HIDDEN["concept"]: EX.concept.points,
            HIDDEN["timing"]: 0.0 if TEST_DEVICE == "sim" else EX.timing.points}


def pass_kernel(release) -> str:
    (cell,) = nbb.cells_with(release, solution=True)
    return cell.source.replace("raise NotImplementedError()", "pass")


def hand_in(course: Path, student: str, code: str, extra: str | None = None, change=None):
    """Write ``student``'s notebook: the release notebook with ``code`` in the solution cell,
    ``extra`` as a code cell of its own right after it, then ``change(nb)`` applied."""
    release = nbb.read(course / "release" / ASSIGNMENT / NB_NAME)
    nb = student_notebook(course / "release" / ASSIGNMENT / NB_NAME, "alice", ASSIGNMENT)
    (cell,) = nbb.cells_with(nb, solution=True)
    cell.source = code.strip("\n") if code != "pass" else pass_kernel(release)
    if extra:
        nb.cells.insert(nb.cells.index(cell) + 1, nbformat.v4.new_code_cell(extra.strip("\n")))
    if change:
        change(nb)
    dest = course / "submitted" / student / ASSIGNMENT / NB_NAME
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(nbb.dumps(nb), encoding="utf-8")


def hidden_cell(nb, kind):
    (cell,) = [c for c in nb.cells
               if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == HIDDEN[kind]]
    return cell


def forge_outputs(nb):
    """Outputs in the hidden grade cells, as if they had run and printed full points."""
    for kind in HIDDEN:
        cell = hidden_cell(nb, kind)
        cell.outputs = [nbformat.v4.new_output(
            "execute_result", data={"text/plain": repr(cell.metadata.nbgrader.points)},
            execution_count=1)]


def delete_correctness(nb):
    nb.cells.remove(hidden_cell(nb, "correctness"))


def edit_grade_cells(nb):
    cell = hidden_cell(nb, "concept")
    cell.source += "\n15.0"
    cell.metadata.nbgrader.locked = False
    cell.metadata.nbgrader.points = 100.0
    hidden_cell(nb, "timing").metadata.nbgrader.points = 0.0
    hidden_cell(nb, "correctness").source = "60.0"


def reorder(nb):
    """The grade cells first, the solution cell last."""
    graded = [c for c in nb.cells if nbb.parse_hidden_grade_id(
        c.get("metadata", {}).get("nbgrader", {}).get("grade_id", ""))]
    (solution,) = nbb.cells_with(nb, solution=True)
    rest = [c for c in nb.cells if c not in graded and c is not solution]
    nb.cells = graded[::-1] + rest + [solution]


#: student → (solution code, extra cell, change to the notebook)
ATTACKS = {
    "patcher": ("pass", MONKEYPATCH, None),
    "silencer": ("pass", SILENCE + "\nraise RuntimeError('hidden by the student')", None),
    "forger": ("pass", FORGE, forge_outputs),
    "exiter": (CORRECT, EXIT, None),
    "spinner": (CORRECT, SPIN, None),
    "deleter": (CORRECT, None, delete_correctness),
    "editor": ("pass", None, edit_grade_cells),
    "reorderer": (CORRECT, None, reorder),
}


def run_nbgrader(course: Path, *args: str, **env) -> subprocess.CompletedProcess:
    """``nbgrader ARGS`` in ``course``, whatever its exit status."""
    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course,
                          env=kernel_env(**env), capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def attacked_course(released_course, tmp_path_factory) -> Path:
    """Every attack handed in and autograded in one run of the course as built (never run)."""
    course = Path(shutil.copytree(released_course, tmp_path_factory.mktemp("rt") / "course"))
    for student, (code, extra, change) in ATTACKS.items():
        hand_in(course, student, code, extra, change)
    start = time.monotonic()
    nbgrader(course, "autograde", ASSIGNMENT, "--log-level=WARN")
    print(f"\nautograde of {len(ATTACKS)} notebooks, never run: "
          f"{time.monotonic() - start:.1f} s")
    return course


@pytest.mark.parametrize("student", sorted(ATTACKS))
def test_each_attack_gets_its_honest_score(attacked_course, student):
    code = ATTACKS[student][0]
    got = scores(attacked_course, ASSIGNMENT, student)
    for grade_id, points in honest(code).items():
        assert got[grade_id][0] == points, (grade_id, got)
    # the grade cells are worth what the source says, whatever the notebook claimed
    assert got[HIDDEN["concept"]][1] == EX.concept.points
    assert got[HIDDEN["timing"]][1] == EX.timing.points
    nb = nbb.read(attacked_course / "autograded" / student / ASSIGNMENT / NB_NAME)
    for kind in HIDDEN:  # re-added when deleted; the source's text, our report
        cell = hidden_cell(nb, kind)
        assert cell.source.startswith("# autograder test cell")
        text = "".join(o.get("data", {}).get("text/plain", "") for o in cell.outputs
                       if o.output_type == "display_data")
        assert text.startswith(kind + ":") or text.startswith("tiled_matmul: "), text
    # nothing of the student's ran: no outputs anywhere but in grade cells we wrote
    ran = [c for c in nb.cells if c.cell_type == "code" and c.outputs
           and not nbb.parse_hidden_grade_id(c.metadata.get("nbgrader", {}).get("grade_id", ""))]
    assert ran == []


def test_feedback_and_export_say_what_a_score_is(attacked_course):
    nbgrader(attacked_course, "generate_feedback", ASSIGNMENT, "--log-level=WARN")
    nbgrader(attacked_course, "export", "--log-level=WARN")
    nb = json.loads((attacked_course / "autograded" / "reorderer" / ASSIGNMENT /
                     NB_NAME).read_text())
    full = nb["metadata"]["kernelgrade"]["results"]["tiled_matmul"]  # for the instructor
    html = (attacked_course / "feedback" / "reorderer" / ASSIGNMENT /
            NB_NAME.replace(".ipynb", ".html")).read_text()
    assert str(full["seed"]) not in html
    hidden_names = [t["name"] for t in full["tests"] if t["visibility"] == "hidden"
                    and t["kind"] == "correctness"]
    assert hidden_names and not [n for n in hidden_names if n in html]
    assert "grade_this_notebook" not in html and "autograder.nbgrader.cells" not in html
    assert "hidden test 1" in html and "correctness: " in html
    # the grade cells' HTML reports survive generate_feedback: patcher's kernel writes nothing,
    # so the failed public cases show heatmaps (nbconvert may reorder an <img>'s attributes)
    patcher = (attacked_course / "feedback" / "patcher" / ASSIGNMENT /
               NB_NAME.replace(".ipynb", ".html")).read_text()
    assert patcher.count('<div class="kg-report">') == 3 and "What went wrong" in patcher
    assert re.search(r'<img [^>]*src="data:image/png;base64,[A-Za-z0-9+/]', patcher)
    assert "first wrong at [0, 0]" in patcher and "never written" in patcher
    pfull = json.loads((attacked_course / "autograded" / "patcher" / ASSIGNMENT /
                        NB_NAME).read_text())["metadata"]["kernelgrade"]["results"]["tiled_matmul"]
    assert str(pfull["seed"]) not in patcher and not [n for n in hidden_names if n in patcher]
    with open(attacked_course / "grades.csv", newline="") as fh:
        rows = {r["student_id"]: r for r in csv.DictReader(fh) if r["assignment"] == ASSIGNMENT}
    assert set(ATTACKS) <= set(rows)
    if TEST_DEVICE == "sim":
        note = f"provisional: {full['pending_points']:g} points need a GPU"
        assert note in html  # in the grade cells and the comment under the student's code
        assert note in rows["reorderer"]["notes"]
        assert float(rows["reorderer"]["score"]) == sum(honest(CORRECT).values())
    else:
        assert "provisional" not in html and rows["reorderer"]["notes"] == ""


def test_after_execute_the_kernels_outputs_are_overwritten(released_course, tmp_path):
    """With --run-notebooks nbgrader runs the notebooks; a forged grade cell output and a
    monkeypatched module still earn nothing."""
    course = Path(shutil.copytree(released_course, tmp_path / "course"))
    text = (course / "nbgrader_config.py").read_text()
    from autograder.nbgrader.course import AFTER_EXECUTE, NEVER_EXECUTE
    old = "".join(f"    {p!r},\n" for p in NEVER_EXECUTE)
    assert old in text
    (course / "nbgrader_config.py").write_text(
        text.replace(old, "".join(f"    {p!r},\n" for p in AFTER_EXECUTE)))
    for student in ("patcher", "forger", "silencer"):
        hand_in(course, student, *ATTACKS[student])
    nbgrader(course, "autograde", ASSIGNMENT, "--log-level=WARN")
    for student in ("patcher", "forger", "silencer"):
        got = scores(course, ASSIGNMENT, student)
        assert {g: got[g][0] for g in HIDDEN.values()} == honest("pass"), (student, got)
    nb = nbb.read(course / "autograded" / "forger" / ASSIGNMENT / NB_NAME)
    assert any(o.get("text") == "60.0\n" for c in nb.cells if c.cell_type == "code"
               for o in c.get("outputs", []))  # the notebook did run


def stored_nothing(course: Path, student: str) -> bool:
    """No score in the gradebook (no submission row at all, when nbgrader stopped before its
    first student, or one with no score) and no autograded notebook for ``student``."""
    from nbgrader.api import MissingEntry

    try:
        got = scores(course, ASSIGNMENT, student)
    except MissingEntry:
        got = {}
    return (all(score is None for score, _ in got.values())
            and not (course / "autograded" / student / ASSIGNMENT / NB_NAME).exists())


@pytest.mark.skipif(TEST_DEVICE != "sim", reason="provisional grades come from the simulator")
def test_simulator_grades_need_the_opt_in(released_course, tmp_path):
    course = Path(shutil.copytree(released_course, tmp_path / "course"))
    hand_in(course, "alice", CORRECT)
    run = run_nbgrader(course, "autograde", ASSIGNMENT,
                       "--GradeWithAutograder.allow_provisional=False")
    assert run.returncode != 0
    assert "--allow-provisional" in run.stderr and "provisional" in run.stderr
    assert stored_nothing(course, "alice")


def test_a_grader_setup_error_fails_autograde_and_stores_no_zero(released_course, tmp_path):
    """GraderSetupError inside grade() (here: patched in through sitecustomize in nbgrader's
    process) makes nbgrader fail for the notebook; no zero is stored."""
    course = Path(shutil.copytree(released_course, tmp_path / "course"))
    hand_in(course, "alice", CORRECT)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import autograder.grader\n"
        "from autograder.errors import GraderSetupError\n"
        "def grade(*args, **kwargs):\n"
        "    raise GraderSetupError('--device gpu, but no GPU is visible (red-team test)')\n"
        "autograder.grader.grade = grade\n")
    path = os.pathsep.join([str(site)] + [p for p in os.environ.get("PYTHONPATH", "").split(
        os.pathsep) if p])
    run = run_nbgrader(course, "autograde", ASSIGNMENT, PYTHONPATH=path)
    assert run.returncode != 0
    assert "GraderSetupError" in run.stderr and "no GPU is visible (red-team test)" in run.stderr
    assert stored_nothing(course, "alice")
