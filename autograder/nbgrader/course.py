"""Write an nbgrader course directory for the assignments of this repository.

``autograder course build DIR`` (see :func:`build_course`) makes::

    DIR/nbgrader_config.py           timeouts, database, device (see CONFIG_TEMPLATE)
    DIR/source/<assignment>/...      the instructor notebooks, copied from assignments/
    DIR/submitted/<student>/<assignment>/...   only with --submitted (e.g. examples/submitted)
    DIR/README.md                    the nbgrader commands, in order

and then, in ``DIR``, nbgrader's usual steps: ``nbgrader generate_assignment`` (source → release,
solutions and hidden tests removed), collect the students' notebooks into ``submitted/``,
``nbgrader autograde`` (runs each notebook; its hidden-test cells call
:func:`autograder.nbgrader.cells.grade_this_notebook`, whose returned points nbgrader stores as
partial credit in ``gradebook.db``), ``nbgrader generate_feedback`` and ``nbgrader export``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS_DIR = PROJECT_ROOT / "assignments"
DEVICES = ("auto", "gpu", "sim")

CONFIG_TEMPLATE = '''\
"""nbgrader configuration for the kernelgrade course (written by `autograder course build`)."""
import os

c = get_config()  # noqa: F821 (nbgrader defines it)
HERE = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.root = HERE
c.CourseDirectory.course_id = {course_id!r}
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(HERE, "gradebook.db")

# Device for the hidden tests (read by autograder.nbgrader.cells in the notebook's kernel):
# auto = a GPU when there is one, else Numba's CUDA simulator.
os.environ.setdefault("KERNELGRADE_DEVICE", {device!r})
{sim_line}
# Timeouts. Grading runs the student's code in child processes with their own hard limits, so a
# grade cell always ends; the first grade cell of a notebook grades every part and needs the
# longest. Any other cell (a student's endless loop at top level, a kernel that never ends in the
# public tests) is interrupted after CELL_TIMEOUT seconds and counts as an error.
CELL_TIMEOUT = int(os.environ.get("KERNELGRADE_CELL_TIMEOUT", {cell_timeout}))
GRADING_TIMEOUT = int(os.environ.get("KERNELGRADE_GRADING_TIMEOUT", {grading_timeout}))


def cell_timeout(cell):
    """Per-cell timeout in seconds: long for hidden-test cells, short for the others."""
    return GRADING_TIMEOUT if "grade_this_notebook" in cell.source else CELL_TIMEOUT


c.ExecutePreprocessor.timeout = GRADING_TIMEOUT
c.Execute.timeout = GRADING_TIMEOUT
c.Execute.timeout_func = cell_timeout
c.Execute.interrupt_on_timeout = True
c.Execute.raise_on_iopub_timeout = False
'''

README_TEMPLATE = """\
# {course_id}: nbgrader course

Written by `autograder course build` from the notebooks in `assignments/` of kernelgrade.
Run the commands below in this folder, with the Python environment where kernelgrade and
nbgrader are installed (`pip install -e '.[nbgrader]'`) *activated*: nbgrader runs `alembic` from
`PATH`, and the notebooks' kernel must be able to `import autograder`.

Assignments: {assignments}

1. Release: `nbgrader generate_assignment ASSIGNMENT` turns `source/ASSIGNMENT/` into
   `release/ASSIGNMENT/`: solution code replaced by `raise NotImplementedError()`, hidden tests
   removed, read-only cells locked by checksums. Hand out the release notebooks.
2. Collect: put each student's notebook at `submitted/STUDENT/ASSIGNMENT/NOTEBOOK.ipynb`
   (or `nbgrader collect ASSIGNMENT` with an exchange, or `nbgrader zip_collect`).
3. Grade: `nbgrader autograde ASSIGNMENT`. nbgrader restores the hidden tests and runs every
   notebook top to bottom; the hidden-test cells grade the code the notebook ran
   (device: `KERNELGRADE_DEVICE`, set in `nbgrader_config.py`, now `{device}`) and their output
   is the cell's partial credit, stored in `gradebook.db`.
4. Feedback and grades: `nbgrader generate_feedback ASSIGNMENT` writes `feedback/`, and
   `nbgrader export` writes `grades.csv`.

Timeouts (`nbgrader_config.py`): a hidden-test cell may take {grading_timeout} s, any other
cell {cell_timeout} s before nbgrader interrupts it (override for one run with the environment
variables `KERNELGRADE_GRADING_TIMEOUT` and `KERNELGRADE_CELL_TIMEOUT`).
"""


class CourseError(Exception):
    """The course directory cannot be written (the message says why)."""


def assignment_names(assignments_dir: Path = ASSIGNMENTS_DIR) -> list[str]:
    """The assignment folders of ``assignments_dir`` that hold at least one notebook, sorted."""
    return sorted(p.name for p in Path(assignments_dir).iterdir()
                  if p.is_dir() and any(p.glob("*.ipynb")))


def build_course(directory: str | Path, *, assignments_dir: str | Path = ASSIGNMENTS_DIR,
                 course_id: str = "kernelgrade", device: str = "auto",
                 cell_timeout: int = 120, grading_timeout: int = 420,
                 submitted: str | Path | None = None, force: bool = False) -> Path:
    """Write an nbgrader course directory at ``directory``; returns its absolute path.

    ``assignments_dir``: folders of source notebooks (``assignments/<nn_name>/``), copied to
    ``source/``. ``device``: where hidden tests grade (``auto``, ``gpu`` or ``sim``; ``sim`` also
    makes the notebooks' own cells run on Numba's CUDA simulator). ``cell_timeout`` /
    ``grading_timeout``: seconds before nbgrader interrupts an ordinary cell / a hidden-test cell
    (the grader's own limits on the simulator add up to about 4 minutes per exercise, so keep
    ``grading_timeout`` above 300). ``submitted``: an optional folder in nbgrader's
    ``submitted/<student>/<assignment>/`` layout to copy in (e.g. ``examples/submitted``).

    Raises :class:`CourseError` when ``directory`` already has a ``source/`` or
    ``nbgrader_config.py`` and ``force`` is False, when there are no assignments, or for a bad
    device or timeout.
    """
    if device not in DEVICES:
        raise CourseError(f"device must be one of {', '.join(DEVICES)}, not {device!r}")
    if cell_timeout <= 0 or grading_timeout <= 0:
        raise CourseError("timeouts must be positive numbers of seconds")
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
    (root / "nbgrader_config.py").write_text(CONFIG_TEMPLATE.format(
        course_id=course_id, device=device, sim_line=sim_line, cell_timeout=int(cell_timeout),
        grading_timeout=int(grading_timeout)), encoding="utf-8")
    (root / "README.md").write_text(README_TEMPLATE.format(
        course_id=course_id, assignments=", ".join(names), device=device,
        cell_timeout=int(cell_timeout), grading_timeout=int(grading_timeout)), encoding="utf-8")
    return root
