"""Write an nbgrader course directory for the exercises of this kernelgrade.

``autograder course build DIR`` (see :func:`build_course`) makes::

    DIR/nbgrader_config.py           database, device, how notebooks are graded (CONFIG_TEMPLATE)
    DIR/instructor/solutions/<name>.py   the instructor solutions the grader times against and
                                     checks itself with (``$KERNELGRADE_SOLUTIONS``, set by the
                                     config: an installed kernelgrade carries none)
    DIR/instructor/class_seed        the class's secret seed (kept on a rebuild): every student
                                     is graded with one seed per exercise derived from it
                                     (:mod:`autograder.host.class_seed`)
    DIR/source/<assignment>/<name>.ipynb   the instructor notebooks, built at build time from the
                                     exercise folders (:mod:`autograder.nbgrader.authoring`)
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

import shlex
import shutil
import sys
from pathlib import Path
from typing import Sequence

from .. import exercises, settings
from ..errors import GraderSetupError
from ..exercises.base import Exercise
from ..host import class_seed as seeds
from . import notebook as nbb
from . import one_notebook
from .authoring import AuthoringError, build_source_notebook, notebook_file

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
os.environ.setdefault({device_env!r}, {device!r})
# The instructor solutions (copied here by `course build`; never released to students).
os.environ.setdefault({solutions_env!r}, os.path.join(HERE, "instructor", "solutions"))
{sim_line}
# `nbgrader autograde` grades with autograder's GradeWithAutograder, outside any kernel the
# student's code ran in: it grades the submitted notebook's code cells in the grader's sandboxed
# child processes and writes each hidden grade cell's report and points.
{mode_comment}
c.Autograde.autograde_preprocessors = [
{preprocessors}]
# A malformed notebook (JSON of the wrong type, not JSON, not UTF-8) is graded 0 with a message
# instead of failing that student's autograde.
c.Autograde.exporter_class = "autograder.nbgrader.reader.ReadAnyNotebook"

# Simulator grades are provisional (timing and the largest sizes need a GPU). Without this
# setting, autograde refuses to store them (`autograder course build --allow-provisional`).
c.GradeWithAutograder.allow_provisional = {allow_provisional!r}

# Seconds before nbgrader interrupts a cell when it runs the notebooks (--run-notebooks only;
# grading has its own time limits).
CELL_TIMEOUT = int(os.environ.get({cell_timeout_env!r}, {cell_timeout}))
c.ExecutePreprocessor.timeout = CELL_TIMEOUT
c.Execute.timeout = CELL_TIMEOUT
c.Execute.interrupt_on_timeout = True
c.Execute.raise_on_iopub_timeout = False

# `nbgrader export` writes grades.csv with `provisional` and `notes` columns (provisional grades
# say so).
c.ExportApp.plugin_class = "autograder.nbgrader.export.ExportGradesWithNotes"
# `nbgrader generate_feedback`'s page header says "provisional: N points need a GPU" beside a
# score that is not final.
c.GenerateFeedback.exporter_class = "autograder.nbgrader.feedback.FeedbackExporter"
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

Written by `autograder course build`: each `source/` notebook is built from its assignment's
folder (`assignments/<name>/`: `notebook.py` and `exercise.py`) and the instructor's
`solutions/<name>.py`, or from the one notebook `solutions/<name>.ipynb` where the instructor
wrote one (skeleton, written answers); the solutions are copied to `instructor/solutions/` (a
course's own assignments to `instructor/assignments/`).
Run the commands below in this folder, with the Python environment where kernelgrade and
nbgrader are installed *activated* (this course was built with the one at `{prefix}`):
nbgrader runs `alembic` from `PATH`, and nbgrader must be able to `import autograder`.
To rebuild the course after changing an assignment (the class's seed is kept):
`{rebuild}`

Assignments: {assignments}

1. Release: `nbgrader generate_assignment ASSIGNMENT` turns `source/ASSIGNMENT/` into
   `release/ASSIGNMENT/`: solution code replaced by `raise NotImplementedError()`, read-only
   cells locked by checksums. Hand out the release notebooks. `nbgrader validate NOTEBOOK` (the
   students' Validate button) fails a notebook whose public-test cell raises: a public test or
   the concept test failed (the untouched release notebook fails; the solution passes).
2. Collect: put each student's notebook at `submitted/STUDENT/ASSIGNMENT/NOTEBOOK.ipynb`
   (or `nbgrader collect ASSIGNMENT` with an exchange, or `nbgrader zip_collect`).
3. Grade: `nbgrader autograde ASSIGNMENT`. {mode_text} Each notebook's code cells (test cells
   and magics left out) are graded by kernelgrade in separate processes with time limits
   (device: `KERNELGRADE_DEVICE`, set in `nbgrader_config.py`, now `{device}`); each hidden
   grade cell gets its part's report and points, stored in `gradebook.db`. {provisional_text}
4. Feedback and grades: `nbgrader generate_feedback ASSIGNMENT` writes `feedback/` (each grade
   cell's test report; hidden sizes and the seed are not shown; a provisional score says so in
   the page's header), and `nbgrader export` writes `grades.csv` (its `provisional` and `notes`
   columns say which grades are provisional). The full results, with
   the seed to replay a run (`autograder grade NOTEBOOK --exercise NAME --seed N`), are in the
   `kernelgrade` metadata of the notebooks in `autograded/`.

Seeds: every student faces the same hidden inputs for an exercise, at every autograde. Its
secret seed derives from the class's seed in `instructor/class_seed` (kept when the course is
rebuilt; never released) and the exercise's name, by the rule `autograder batch` uses:
`autograder batch --seed $(cat instructor/class_seed)` grades with the same seeds.
"""

MODE_TEXTS = {
    False: "The students' notebooks are not run.",
    True: ("nbgrader runs every notebook top to bottom in a kernel (a cell is interrupted after "
           "{cell_timeout} s; `KERNELGRADE_CELL_TIMEOUT` overrides it for one run), then grades "
           "it."),
}
PROVISIONAL_TEXTS = {
    False: ("Simulator grades are provisional and refused: where there is no GPU, autograde "
            "stops before grading anyone, with one line that says so (exit status 2; set "
            "`c.GradeWithAutograder.allow_provisional = True` in `nbgrader_config.py`, or "
            "rebuild with `--allow-provisional --force`, to store them)."),
    True: ("Simulator grades are stored, marked \"provisional: N points need a GPU\" in the "
           "grade cells, the gradebook comments, the feedback and `grades.csv`."),
}


def _solution_folder(name: str) -> Path:
    """The folder ``--solutions`` names for exercise ``name``'s solution (``<d>/<name>.py`` or
    ``<d>/<name>/solution.py``: ``d``), resolved."""
    path = exercises.solution_path(name).resolve()
    return path.parent if path.name == f"{name}.py" else path.parent.parent


def rebuild_command(root: Path, names: Sequence[str] | None, device: str, run_notebooks: bool,
                    allow_provisional: bool) -> str:
    """The ``autograder course build`` command line that rebuilds the course at ``root`` from
    where it was built: its exercises, device and switches, the folders of the course's own
    assignments and of the solutions it read (absolute: it works from any folder; the course's
    ``instructor/solutions`` when they came from several), and ``--force``. Shell-quoted."""
    chosen = course_exercises(names)
    parts = ["autograder", "course", "build", str(root)]
    for name in names or ():
        parts += ["--exercise", name]
    if device != "auto":
        parts += ["--device", device]
    if allow_provisional:
        parts.append("--allow-provisional")
    if run_notebooks:
        parts.append("--run-notebooks")
    folders = list(dict.fromkeys(_solution_folder(ex.name) for ex in chosen))
    parts += ["--solutions", str(folders[0] if len(folders) == 1
                                 else root / "instructor" / "solutions")]
    for own in dict.fromkeys(exercises.folder(ex.name).parent.resolve() for ex in chosen
                             if not exercises.is_builtin(ex.name)):
        parts += ["--assignments", str(own)]
    return shlex.join(parts + ["--force"])


class CourseError(Exception):
    """The course directory cannot be written (the message says why)."""


def course_exercises(names: Sequence[str] | None = None) -> list[Exercise]:
    """The exercises of a course, in course order (:attr:`Exercise.number`): every registered
    exercise, or those in ``names``. Raises :class:`CourseError` for an unknown name or an
    empty list."""
    if names is None:
        chosen = exercises.all_exercises()
    else:
        try:
            wanted = {exercises.get(n).name for n in names}
        except exercises.UnknownExercise as exc:
            raise CourseError(str(exc)) from None
        chosen = [ex for ex in exercises.all_exercises() if ex.name in wanted]
    if not chosen:
        raise CourseError("no exercises for the course")
    return chosen


def source_notebooks(names: Sequence[str] | None = None) -> dict[Path, str]:
    """``{source/<assignment>/<name>.ipynb (relative): notebook JSON}`` of the course's
    exercises (:func:`course_exercises`), built from their folders.

    Raises :class:`CourseError` for a folder whose ``notebook.py`` cannot be built, and
    :class:`autograder.errors.GraderSetupError` when an instructor solution is missing (an
    installed kernelgrade without ``$KERNELGRADE_SOLUTIONS``).
    """
    found = {}
    for ex in course_exercises(names):
        try:
            nb = build_source_notebook(ex.name)
        except AuthoringError as exc:
            raise CourseError(f"cannot build the notebook of {ex.name}: {exc}") from None
        except GraderSetupError as exc:
            if names is None:  # every exercise: the course may teach only some of them
                raise GraderSetupError(
                    f"{exc}. A course of some exercises only: name them, `autograder course "
                    "build DIR --exercise NAME` (repeatable)") from None
            raise
        found[Path("source") / ex.assignment / notebook_file(ex.name)] = nbb.dumps(nb)
    return found


def build_course(directory: str | Path, *, names: Sequence[str] | None = None,
                 course_id: str = "kernelgrade", device: str = "auto",
                 cell_timeout: int = 120, run_notebooks: bool = False,
                 allow_provisional: bool = False,
                 submitted: str | Path | None = None, force: bool = False,
                 seed: int | None = None) -> Path:
    """Write an nbgrader course directory at ``directory``; returns its absolute path.

    ``names``: the exercises (default: every registered one); each becomes the assignment
    ``EXERCISE.assignment`` (``01_tiled_matmul``) with its source notebook built from its folder
    (:func:`source_notebooks`). ``device``: where students' kernels are graded (``auto``,
    ``gpu`` or ``sim``; ``sim`` also makes notebooks run by nbgrader use Numba's CUDA
    simulator).
    ``run_notebooks``: nbgrader runs each notebook in a kernel before it is graded (default: the
    notebook is never run; see :data:`NEVER_EXECUTE`). ``cell_timeout``: seconds before nbgrader
    interrupts a cell when it runs notebooks. ``allow_provisional``: store simulator grades
    (marked provisional) instead of refusing them. ``submitted``: an optional folder in
    nbgrader's ``submitted/<student>/<assignment>/`` layout to copy in (e.g.
    ``examples/submitted``). ``seed``: the class's secret seed (default: drawn at random), kept
    in ``instructor/class_seed``; a rebuild keeps the seed there (every exercise's seed derives
    from it: the same code gets the same grade at every autograde, and ``autograder batch
    --seed`` with the same number grades with the same seeds).

    Raises :class:`CourseError` when ``directory`` already has a ``source/`` or
    ``nbgrader_config.py`` and ``force`` is False, for an unknown exercise or a notebook that
    cannot be built, for a bad device or timeout, or a ``seed`` that differs from the one the
    course already keeps; and
    :class:`autograder.errors.GraderSetupError` when the instructor solutions are missing (set
    ``$KERNELGRADE_SOLUTIONS``). Nothing is written then.
    """
    if device not in DEVICES:
        raise CourseError(f"device must be one of {', '.join(DEVICES)}, not {device!r}")
    if cell_timeout <= 0:
        raise CourseError("the cell timeout must be a positive number of seconds")
    root = Path(directory).resolve()
    existing = [p for p in (root / "source", root / "nbgrader_config.py") if p.exists()]
    if existing and not force:
        raise CourseError(f"{root} already holds a course ({existing[0].name}); "
                          "pass --force to overwrite it")
    if submitted is not None and not Path(submitted).is_dir():
        raise CourseError(f"{submitted} is not a folder of submitted/<student>/<assignment>/")
    notebooks = source_notebooks(names)  # all built before anything is written
    rebuild = rebuild_command(root, names, device, run_notebooks, allow_provisional)
    seed_file = root / "instructor" / seeds.SEED_FILE
    try:
        kept = seeds.read(seed_file)
    except GraderSetupError as exc:
        raise CourseError(str(exc)) from None
    if seed is not None and kept is not None and kept != seed:
        raise CourseError(f"{seed_file} already keeps this course's secret seed, which is not "
                          "--seed; drop --seed to keep it (delete the file to change it: the "
                          "grades autograde stored would then not be replayed)")
    root.mkdir(parents=True, exist_ok=True)
    if (root / "source").exists():
        shutil.rmtree(root / "source")
    for rel, text in notebooks.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    assignments = [rel.parts[1] for rel in notebooks]
    solutions = root / "instructor" / "solutions"
    solutions.mkdir(parents=True, exist_ok=True)
    seeds.read_or_create(seed_file, seed)
    own = root / "instructor" / "assignments"  # a course's own assignments, beside solutions
    for ex in course_exercises(names):
        solution = exercises.solution_path(ex)
        if solution.resolve() != (solutions / f"{ex.name}.py").resolve():
            shutil.copyfile(solution, solutions / f"{ex.name}.py")
        blockdim = exercises.timing_solution_path(ex, bounds_at_run_time=True)
        if blockdim != solution:
            shutil.copyfile(blockdim, solutions / f"{ex.name}_blockdim.py")
        authored = one_notebook.notebook_path(ex.name)  # a rebuild from there finds it
        if authored and authored.resolve() != (solutions / f"{ex.name}.ipynb").resolve():
            shutil.copyfile(authored, solutions / f"{ex.name}.ipynb")
        folder = exercises.folder(ex.name)
        if not exercises.is_builtin(ex.name) and folder.parent.resolve() != own.resolve():
            shutil.copytree(folder, own / ex.name, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__"))
            for shared in exercises.shared_helpers(ex.name):
                shutil.copyfile(shared, own / shared.name)
    if submitted is not None:
        shutil.copytree(Path(submitted), root / "submitted", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    sim_line = ('os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")  # notebooks run on the '
                'simulator\n' if device == "sim" else "")
    if own.is_dir():
        sim_line += ('# The course\'s own assignments (copied here by `course build`).\n'
                     f'os.environ.setdefault({settings.ASSIGNMENTS!r}, '
                     'os.path.join(HERE, "instructor", "assignments"))\n')
    steps = AFTER_EXECUTE if run_notebooks else NEVER_EXECUTE
    (root / "nbgrader_config.py").write_text(CONFIG_TEMPLATE.format(
        course_id=course_id, device=device, sim_line=sim_line, cell_timeout=int(cell_timeout),
        device_env=settings.DEVICE, solutions_env=settings.SOLUTIONS,
        cell_timeout_env=settings.CELL_TIMEOUT,
        mode_comment=MODE_COMMENTS[bool(run_notebooks)],
        preprocessors="".join(f"    {p!r},\n" for p in steps),
        allow_provisional=bool(allow_provisional)), encoding="utf-8")
    (root / "README.md").write_text(README_TEMPLATE.format(
        course_id=course_id, assignments=", ".join(assignments), device=device,
        prefix=sys.prefix, rebuild=rebuild,
        mode_text=MODE_TEXTS[bool(run_notebooks)].format(cell_timeout=int(cell_timeout)),
        provisional_text=PROVISIONAL_TEXTS[bool(allow_provisional)]), encoding="utf-8")
    return root
