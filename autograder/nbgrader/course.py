"""Write an nbgrader course directory for the assignments of this repository.

``autograder course build DIR`` (see :func:`build_course`) makes::

    DIR/nbgrader_config.py           database, device, how notebooks are graded (CONFIG_TEMPLATE)
    DIR/source/<assignment>/...      the instructor notebooks, copied from assignments/
    DIR/submitted/<student>/<assignment>/...   only with --submitted (e.g. examples/submitted)
    DIR/README.md                    the nbgrader commands, in order

and then, in ``DIR``, nbgrader's usual steps: ``nbgrader generate_assignment`` (source → release,
solutions removed), collect the students' notebooks into ``submitted/``, ``nbgrader autograde``,
``nbgrader generate_feedback`` and ``nbgrader export``.

``nbgrader autograde`` grades with :class:`autograder.nbgrader.preprocessor.GradeWithAutograder`
in nbgrader's own process, from the submitted notebook's cells. By default it takes the place of
nbgrader's ``Execute``: the student's notebook never runs in a kernel of the instructor's.
With ``run_notebooks`` nbgrader runs the notebook first (so the feedback shows the outputs of the
student's cells) and the preprocessor then overwrites the grade cells. Simulator grades are
provisional and are refused unless ``allow_provisional``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def _assignments_dir() -> Path:
    """``assignments/`` of a source checkout, else the installed copy
    (``autograder.assignments``)."""
    in_checkout = PROJECT_ROOT / "assignments"
    if in_checkout.is_dir():
        return in_checkout
    from importlib import resources
    try:
        return Path(str(resources.files("autograder.assignments")))
    except ModuleNotFoundError:
        return in_checkout


ASSIGNMENTS_DIR = _assignments_dir()
DEVICES = ("auto", "gpu", "sim")

#: ``c.Autograde.autograde_preprocessors``: nbgrader 0.9.6's list with our grading in Execute's
#: place (the notebook never runs) and our gradebook notes after SaveAutoGrades.
NEVER_EXECUTE = (
    "autograder.nbgrader.preprocessor.GradeWithAutograder",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "autograder.nbgrader.savenotes.SaveGradingNotes",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
)
#: The same with nbgrader's Execute first: the notebook runs in a kernel, then is graded.
AFTER_EXECUTE = ("nbgrader.preprocessors.Execute",) + NEVER_EXECUTE

CONFIG_TEMPLATE = '''\
"""nbgrader configuration for the kernelgrade course (written by `autograder course build`)."""
import os

c = get_config()  # noqa: F821 (nbgrader defines it)
HERE = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.root = HERE
c.CourseDirectory.course_id = {course_id!r}
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(HERE, "gradebook.db")

# Device the grader runs students' kernels on (read by autograder's GradeWithAutograder in
# nbgrader's process): auto = a GPU when there is one, else Numba's CUDA simulator.
os.environ.setdefault("KERNELGRADE_DEVICE", {device!r})
{sim_line}
# `nbgrader autograde` grades with autograder's GradeWithAutograder, outside any kernel the
# student's code ran in: it grades the submitted notebook's code cells in the grader's sandboxed
# child processes and writes each hidden grade cell's report and points.
{mode_comment}
c.Autograde.autograde_preprocessors = [
{preprocessors}]

# Simulator grades are provisional (timing and the largest sizes need a GPU). Without this
# setting, autograde refuses to store them (`autograder course build --allow-provisional`).
c.GradeWithAutograder.allow_provisional = {allow_provisional!r}

# Seconds before nbgrader interrupts a cell when it runs the notebooks (--run-notebooks only;
# grading has its own time limits).
CELL_TIMEOUT = int(os.environ.get("KERNELGRADE_CELL_TIMEOUT", {cell_timeout}))
c.ExecutePreprocessor.timeout = CELL_TIMEOUT
c.Execute.timeout = CELL_TIMEOUT
c.Execute.interrupt_on_timeout = True
c.Execute.raise_on_iopub_timeout = False

# `nbgrader export` writes grades.csv with a `notes` column (provisional grades say so).
c.ExportApp.plugin_class = "autograder.nbgrader.export.ExportGradesWithNotes"
'''

MODE_COMMENTS = {
    False: ("# The notebook is never run: GradeWithAutograder takes the place of nbgrader's "
            "Execute.\n# (`autograder course build --run-notebooks` runs it first, for "
            "feedback with the\n# outputs of the student's cells.)"),
    True: ("# nbgrader's Execute runs each notebook in a kernel first (the feedback shows its "
           "outputs);\n# GradeWithAutograder then overwrites every hidden grade cell."),
}

README_TEMPLATE = """\
# {course_id}: nbgrader course

Written by `autograder course build` from the notebooks in `assignments/` of kernelgrade.
Run the commands below in this folder, with the Python environment where kernelgrade and
nbgrader are installed (`pip install -e '.[nbgrader]'`) *activated*: nbgrader runs `alembic` from
`PATH`, and nbgrader must be able to `import autograder`.

Assignments: {assignments}

1. Release: `nbgrader generate_assignment ASSIGNMENT` turns `source/ASSIGNMENT/` into
   `release/ASSIGNMENT/`: solution code replaced by `raise NotImplementedError()`, read-only
   cells locked by checksums. Hand out the release notebooks.
2. Collect: put each student's notebook at `submitted/STUDENT/ASSIGNMENT/NOTEBOOK.ipynb`
   (or `nbgrader collect ASSIGNMENT` with an exchange, or `nbgrader zip_collect`).
3. Grade: `nbgrader autograde ASSIGNMENT`. {mode_text} Each notebook's code cells (test cells
   and magics left out) are graded by kernelgrade in separate processes with time limits
   (device: `KERNELGRADE_DEVICE`, set in `nbgrader_config.py`, now `{device}`); each hidden
   grade cell gets its part's report and points, stored in `gradebook.db`. {provisional_text}
4. Feedback and grades: `nbgrader generate_feedback ASSIGNMENT` writes `feedback/` (each grade
   cell's test report; hidden sizes and the seed are not shown), and `nbgrader export` writes
   `grades.csv` (its `notes` column says which grades are provisional). The full results, with
   the seed to replay a run (`autograder grade NOTEBOOK --exercise NAME --seed N`), are in the
   `kernelgrade` metadata of the notebooks in `autograded/`.
"""

MODE_TEXTS = {
    False: "The students' notebooks are not run.",
    True: ("nbgrader runs every notebook top to bottom in a kernel (a cell is interrupted after "
           "{cell_timeout} s; `KERNELGRADE_CELL_TIMEOUT` overrides it for one run), then grades "
           "it."),
}
PROVISIONAL_TEXTS = {
    False: ("Simulator grades are provisional and refused: autograde fails for each notebook "
            "and stores nothing (rebuild with `--allow-provisional` to store them)."),
    True: ("Simulator grades are stored, marked \"provisional: N points need a GPU\" in the "
           "grade cells, the gradebook comments, the feedback and `grades.csv`."),
}


class CourseError(Exception):
    """The course directory cannot be written (the message says why)."""


def assignment_names(assignments_dir: Path = ASSIGNMENTS_DIR) -> list[str]:
    """The assignment folders of ``assignments_dir`` that hold at least one notebook, sorted."""
    return sorted(p.name for p in Path(assignments_dir).iterdir()
                  if p.is_dir() and any(p.glob("*.ipynb")))


def build_course(directory: str | Path, *, assignments_dir: str | Path = ASSIGNMENTS_DIR,
                 course_id: str = "kernelgrade", device: str = "auto",
                 cell_timeout: int = 120, run_notebooks: bool = False,
                 allow_provisional: bool = False,
                 submitted: str | Path | None = None, force: bool = False) -> Path:
    """Write an nbgrader course directory at ``directory``; returns its absolute path.

    ``assignments_dir``: folders of source notebooks (``assignments/<nn_name>/``), copied to
    ``source/``. ``device``: where students' kernels are graded (``auto``, ``gpu`` or ``sim``;
    ``sim`` also makes notebooks run by nbgrader use Numba's CUDA simulator).
    ``run_notebooks``: nbgrader runs each notebook in a kernel before it is graded (default: the
    notebook is never run; see :data:`NEVER_EXECUTE`). ``cell_timeout``: seconds before nbgrader
    interrupts a cell when it runs notebooks. ``allow_provisional``: store simulator grades
    (marked provisional) instead of refusing them. ``submitted``: an optional folder in
    nbgrader's ``submitted/<student>/<assignment>/`` layout to copy in (e.g.
    ``examples/submitted``).

    Raises :class:`CourseError` when ``directory`` already has a ``source/`` or
    ``nbgrader_config.py`` and ``force`` is False, when there are no assignments, or for a bad
    device or timeout.
    """
    if device not in DEVICES:
        raise CourseError(f"device must be one of {', '.join(DEVICES)}, not {device!r}")
    if cell_timeout <= 0:
        raise CourseError("the cell timeout must be a positive number of seconds")
    root = Path(directory).resolve()
    src = Path(assignments_dir)
    names = assignment_names(src) if src.is_dir() else []
    if not names:
        raise CourseError(f"no assignment folders with notebooks in {src}")
    existing = [p for p in (root / "source", root / "nbgrader_config.py") if p.exists()]
    if existing and not force:
        raise CourseError(f"{root} already holds a course ({existing[0].name}); "
                          "pass --force to overwrite it")
    root.mkdir(parents=True, exist_ok=True)
    if (root / "source").exists():
        shutil.rmtree(root / "source")
    for name in names:
        shutil.copytree(src / name, root / "source" / name,
                        ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    if submitted is not None:
        sub = Path(submitted)
        if not sub.is_dir():
            raise CourseError(f"{sub} is not a folder of submitted/<student>/<assignment>/")
        shutil.copytree(sub, root / "submitted", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    sim_line = ('os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")  # notebooks run on the '
                'simulator\n' if device == "sim" else "")
    steps = AFTER_EXECUTE if run_notebooks else NEVER_EXECUTE
    (root / "nbgrader_config.py").write_text(CONFIG_TEMPLATE.format(
        course_id=course_id, device=device, sim_line=sim_line, cell_timeout=int(cell_timeout),
        mode_comment=MODE_COMMENTS[bool(run_notebooks)],
        preprocessors="".join(f"    {p!r},\n" for p in steps),
        allow_provisional=bool(allow_provisional)), encoding="utf-8")
    (root / "README.md").write_text(README_TEMPLATE.format(
        course_id=course_id, assignments=", ".join(names), device=device,
        mode_text=MODE_TEXTS[bool(run_notebooks)].format(cell_timeout=int(cell_timeout)),
        provisional_text=PROVISIONAL_TEXTS[bool(allow_provisional)]), encoding="utf-8")
    return root
