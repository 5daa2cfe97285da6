"""The nbgrader preprocessor that grades a submitted notebook outside the student's kernel.

:class:`GradeWithAutograder` runs inside ``nbgrader autograde`` (nbgrader's own process), in the
list ``c.Autograde.autograde_preprocessors`` that ``autograder course build`` writes into
``nbgrader_config.py``. Two ways to use it:

* **in Execute's place** (what ``autograder course build`` configures): the student's notebook
  is never run in the instructor's process or a kernel of it; nothing the student wrote runs
  except inside the grader's sandboxed child processes::

      c.Autograde.autograde_preprocessors = [
          "autograder.nbgrader.preprocessor.GradeWithAutograder",
          "nbgrader.preprocessors.IgnorePattern",
          "nbconvert.preprocessors.ClearMetadataPreprocessor",
          "nbgrader.preprocessors.LimitOutput", "nbgrader.preprocessors.SaveAutoGrades",
          "autograder.nbgrader.savenotes.SaveGradingNotes",
          "nbgrader.preprocessors.AssignLatePenalties", "nbgrader.preprocessors.CheckCellMetadata"]

* **after Execute** (``autograder course build --run-notebooks``): nbgrader runs the notebook in
  a kernel as usual (the feedback then shows the outputs of the student's cells), and this
  preprocessor then replaces whatever that kernel put in the grade cells.

Either way, for each grade cell whose nbgrader ``grade_id`` is ``<exercise>-hidden-<part>``
(:func:`autograder.nbgrader.notebook.parse_hidden_grade_id`; nbgrader's sanitizing step has
already checked every grade_id, the points and the locked cells' source against the gradebook),
it grades the student's code of the notebook (its code cells in order, test cells and magics left
out: :func:`autograder.source.submission.notebook_source`) once per exercise with
:func:`autograder.grader.grade`, and sets the cell's outputs to the part's report (standard
output) in one ``display_data`` output, as ``text/plain`` and in HTML with its pictures
(``text/html``: :func:`autograder.report.html.render_part_fragment`, which ``nbgrader
generate_feedback`` and formgrader show; a terminal shows the text), and its points (an
``execute_result``, last, which nbgrader's ``SaveAutoGrades`` stores as partial credit; the
feedback page leaves it out: :mod:`autograder.nbgrader.feedback`). A hidden grade cell the
student deleted is put back from the gradebook's source and scored. The whole result, with
the hidden sizes and the seed, goes into the autograded notebook's metadata (``kernelgrade``)
for the instructor, never into the feedback.

Every student of the course is graded with one secret seed per exercise, the same at every
autograde: it derives from the class's seed (``instructor/class_seed`` in the course folder,
written by ``autograder course build`` or at the first autograde) by the rule ``autograder
batch`` grades by (:mod:`autograder.host.class_seed`). The same code gets the same grade.

A student's notebook that is a symbolic link in ``submitted/`` (or whose ``<student>/`` or
``<assignment>/`` folder there is one), or is not a regular file, is never graded, although
nbgrader has read it through the link (``cp -r`` keeps links): it scores 0 in every hidden grade
cell with a message that names the link and not its target, and the cells a student could write
are emptied, so the feedback shows nothing of the target (the instructor's source notebook,
another student's).

A grade from the simulator is provisional (timing and the largest sizes need a GPU): it is stored
only when ``allow_provisional`` is set (``autograder course build --allow-provisional``); else
the preprocessor raises :class:`autograder.errors.GraderSetupError` and nbgrader stores nothing for
the notebook. A :class:`~autograder.errors.GraderSetupError` from the grader is raised the same
way: never a zero.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import nbformat
from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Unicode

from .. import exercises, grader
from ..host import class_seed as seeds
from ..errors import GraderSetupError
from ..report.html import load_source_quietly, render_part_fragment
from autograder.judge.cases import all_tests
from autograder.wire.results import ExerciseResult, Kind, Status
from autograder.source.submission import Source, SubmissionError, linked_part, not_a_regular_file
from . import notebook as nbb
from ..report.parts import part_points, render_part
from .cells import DEVICE_ENV
from .reader import submitted_bytes

#: Metadata key (notebook level) of the autograded notebook that holds the full results.
METADATA_KEY = "kernelgrade"
#: Key in nbgrader's ``resources`` where the results go for the next steps
#: (:class:`autograder.nbgrader.savenotes.SaveGradingNotes`).
RESOURCES_KEY = "kernelgrade"
#: Where a course keeps its class's secret seed, relative to its folder (``course build`` writes
#: it; students never see the course folder, and no grading child is shown it).
COURSE_SEED_FILE = Path("instructor") / seeds.SEED_FILE
#: How to allow provisional grades, named in the refusal.
ALLOW_PROVISIONAL = ("set c.GradeWithAutograder.allow_provisional = True in nbgrader_config.py "
                     "(or rebuild the course: autograder course build DIR --allow-provisional "
                     "--force)")


class GradeWithAutograder(NbGraderPreprocessor):
    """Grade the submitted notebook's code with the sandboxed grader and write each hidden grade
    cell's report and points as its outputs (see the module's docstring).

    Raises :class:`autograder.errors.GraderSetupError` when the grader cannot grade here (no
    bubblewrap, unless ``KERNELGRADE_SANDBOX=off``: :func:`autograder.sandbox.mode.for_class`),
    and when the grade would be provisional (the simulator) without ``allow_provisional``.
    """

    device = Unicode(
        "", help="auto, gpu or sim; empty: the KERNELGRADE_DEVICE environment variable, else "
                 "auto (a GPU when there is one, else the CUDA simulator)").tag(config=True)
    allow_provisional = Bool(
        False, help="Store grades that are not final (the simulator cannot run the timing test "
                    "and the largest sizes); each says 'provisional: N points need a "
                    "GPU'.").tag(config=True)
    seed_file = Unicode(
        "", help="The file that keeps the class's secret seed (one per class; each exercise's "
                 "seed derives from it and the exercise's name, as `autograder batch` does); "
                 "empty: instructor/class_seed in the course folder, drawn at the first "
                 "autograde when `autograder course build` did not write it").tag(config=True)

    def _device(self) -> str:
        return self.device or os.environ.get(DEVICE_ENV, "").strip() or "auto"

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict
                   ) -> tuple[NotebookNode, ResourcesDict]:
        parts = self._hidden_cells(nb, resources)
        if not parts:
            return nb, resources
        unknown = sorted({ex for ex, _ in parts} - set(exercises.names()))
        if unknown:
            raise GraderSetupError(
                f"{self._name(resources)}: hidden grade cells name exercise(s) "
                f"{', '.join(unknown)}, which kernelgrade does not have (`autograder exercises` "
                "lists them)")
        device = self._device()
        backend = self._backend(device, self._name(resources))
        results: dict[str, ExerciseResult] = {}
        source = None
        class_seed = self._class_seed()
        refused = self._refusal(resources)
        if refused is not None:
            self._blank_student_cells(nb)
        for exercise in dict.fromkeys(ex for ex, _ in parts):
            if refused is not None:
                results[exercise] = self._refuse(exercise, backend, refused, resources)
                continue
            seed = None if class_seed is None else seeds.exercise_seed(class_seed, exercise)
            result, source = self._grade(nb, exercise, device, resources, seed)
            if result.provisional and not self.allow_provisional:
                raise GraderSetupError(
                    f"{self._name(resources)}: {result.provisional_note} ({exercise} on "
                    f"{result.device}); nothing stored. To store it anyway: {ALLOW_PROVISIONAL}")
            results[exercise] = result
        self._defuse_zero_point_cells(nb)
        first, hand = set(), hand_graded_points(nb)
        for (exercise, kind), cell in parts.items():
            self._write(cell, results[exercise], kind, with_header=exercise not in first,
                        hand_points=hand)
            self._add_html(cell, results[exercise], kind, source, resources,
                           with_header=exercise not in first, hand_points=hand)
            first.add(exercise)
        nb.metadata[METADATA_KEY] = {"results": {ex: r.to_dict() for ex, r in results.items()}}
        resources[RESOURCES_KEY] = {"results": results}
        return nb, resources

    def _backend(self, device: str, who: str) -> str:
        """``device`` resolved (``gpu`` or ``sim``). Raises
        :class:`autograder.errors.GraderSetupError` for a bad device, ``gpu`` without a GPU, and
        the simulator without :attr:`allow_provisional` (the message names the flag and the
        config line, and ``who``: the notebook, or the autograde before any)."""
        try:
            backend = grader.resolve_device(device)
        except ValueError as exc:
            raise GraderSetupError(f"KERNELGRADE_DEVICE or c.GradeWithAutograder.device: {exc}"
                                   ) from None
        if backend == "sim" and not self.allow_provisional:
            where = (f"no GPU here ({grader.no_gpu_reason()}), so grading would run on the CUDA "
                     "simulator" if device == "auto" else
                     f"the course grades on the CUDA simulator (device {device!r})")
            raise GraderSetupError(
                f"{who}: {where}, whose grades are provisional (timing and the largest sizes "
                "need a GPU), and this course does not store provisional grades: nothing was "
                f"graded or stored. To store them, marked provisional: {ALLOW_PROVISIONAL}. "
                "For final grades, run autograde where a GPU is")
        return backend

    @staticmethod
    def check_before_grading(exporter) -> None:
        """The run's pre-check (:func:`check_before_grading`), as the notebook reader
        (:class:`autograder.nbgrader.reader.ReadAnyNotebook`) finds it on the configured step."""
        check_before_grading(exporter)

    def check_setup(self) -> str:
        """What ``nbgrader autograde`` needs before any student is graded
        (:func:`check_before_grading`): a device that grades (a GPU, or the simulator with
        :attr:`allow_provisional`), the sandbox a class is graded in (bubblewrap, unless
        ``KERNELGRADE_SANDBOX=off``), the class's seed. Returns the backend (``gpu`` or
        ``sim``); raises :class:`autograder.errors.GraderSetupError` naming what to change."""
        from autograder.sandbox import mode as sandbox_mode

        backend = self._backend(self._device(), "nbgrader autograde")
        try:
            sandbox_mode.for_class()
        except ValueError as exc:  # a bad KERNELGRADE_SANDBOX
            raise GraderSetupError(str(exc)) from None
        self._class_seed()
        return backend

    # -- steps ------------------------------------------------------------------------------

    @staticmethod
    def _name(resources: ResourcesDict) -> str:
        info = resources.get("nbgrader", {})
        if {"student", "assignment", "notebook"} <= set(info):
            return f"{info['student']}/{info['assignment']}/{info['notebook']}.ipynb"
        return "this notebook"

    def _hidden_cells(self, nb: NotebookNode, resources: ResourcesDict
                      ) -> dict[tuple[str, Kind], NotebookNode]:
        """``{(exercise, part): cell}`` of the notebook's hidden grade cells, in notebook order;
        hidden grade cells the gradebook knows and the notebook lacks are appended to it."""
        found = {}
        for cell in nb.cells:
            if cell.cell_type == "code" and utils.is_grade(cell):
                parsed = nbb.parse_hidden_grade_id(cell.metadata.nbgrader.get("grade_id", ""))
                if parsed:
                    found[parsed] = cell
        for cell in self._missing_cells(set(found), resources):
            nb.cells.append(cell)
            found[nbb.parse_hidden_grade_id(cell.metadata.nbgrader.grade_id)] = cell
        return found

    def _missing_cells(self, present: set, resources: ResourcesDict) -> list[NotebookNode]:
        """The gradebook's hidden grade cells of this notebook that are not in ``present``, made
        from their source version (as nbgrader's ``OverwriteCells.add_missing_cells`` does)."""
        info = resources.get("nbgrader", {})
        if not {"db_url", "notebook", "assignment"} <= set(info):
            return []  # not run by nbgrader autograde: no gradebook to compare with
        from nbgrader.api import Gradebook

        cells = []
        with Gradebook(info["db_url"]) as gb:
            notebook = gb.find_notebook(info["notebook"], info["assignment"])
            sources = {c.name: c for c in notebook.source_cells}
            for grade_cell in notebook.grade_cells:
                parsed = nbb.parse_hidden_grade_id(grade_cell.name)
                if not parsed or parsed in present or grade_cell.name not in sources:
                    continue
                self.log.warning("%s: grade cell %s was deleted; adding it back from the "
                                 "source", self._name(resources), grade_cell.name)
                cell = nbformat.v4.new_code_cell(sources[grade_cell.name].source)
                cell.metadata = {"editable": False, "deletable": False, "nbgrader": {
                    "grade": True, "grade_id": grade_cell.name, "locked": True,
                    "points": float(grade_cell.max_score), "schema_version": nbb.SCHEMA_VERSION,
                    "solution": False, "task": False,
                    "checksum": sources[grade_cell.name].checksum}}
                cells.append(cell)
        return cells

    def _coursedir(self):
        """nbgrader's ``CourseDirectory`` of the command this preprocessor runs in, or None
        outside one (``nbgrader autograde`` is its parent's parent)."""
        owner = self.parent
        while owner is not None and not hasattr(owner, "coursedir"):
            owner = getattr(owner, "parent", None)
        return None if owner is None else owner.coursedir

    def _class_seed(self) -> int | None:
        """The class's secret seed (:mod:`autograder.host.class_seed`): kept in
        :attr:`seed_file`, else in the course's ``instructor/class_seed`` (written by ``course
        build``, or drawn here at the first autograde); None outside a course (then each grading
        draws its own). Raises :class:`autograder.errors.GraderSetupError` when the file cannot
        be read or written."""
        if self.seed_file:
            path = Path(self.seed_file)
        else:
            course = self._coursedir()
            if course is None or not course.root:
                return None
            path = Path(course.root) / COURSE_SEED_FILE
        return seeds.read_or_create(path)

    def _submitted(self, resources: ResourcesDict) -> tuple[Path, Path] | None:
        """``(submitted folder, student's notebook)`` of this notebook, from the course folder
        of the nbgrader command this preprocessor runs in (its ``coursedir``); None outside
        ``nbgrader autograde``."""
        info = resources.get("nbgrader", {})
        course = self._coursedir()
        if course is None or not {"student", "assignment", "notebook"} <= set(info):
            return None
        folder = course.format_path(course.submitted_directory, info["student"],
                                    info["assignment"])
        return (Path(course.root, course.submitted_directory),
                Path(folder, f"{info['notebook']}.ipynb"))

    def _refusal(self, resources: ResourcesDict) -> SubmissionError | None:
        """The refusal of this notebook when, in ``submitted/``, the student's notebook or a
        folder of theirs above it (``<student>/``, ``<assignment>/``) is a symbolic link, which
        nbgrader followed (the notebook it read is someone else's file: the instructor's source,
        another student's), or the notebook is not a regular file (a pipe, a device: what a
        reader that opens nothing else left, see
        :func:`autograder.source.submission.read_submission_bytes`). The ``submitted/`` folder itself
        is the instructor's and may be a link (:func:`autograder.source.submission.linked_part`)."""
        found = self._submitted(resources)
        if found is None:
            return None
        root, notebook = found
        try:
            part = linked_part(root, notebook)
        except ValueError:  # a directory_structure that puts it outside submitted/
            root, part = notebook.parent, (notebook if notebook.is_symlink() else None)
        if part is not None:
            return not_a_regular_file(str(part.relative_to(root)), stat.S_IFLNK)
        try:
            mode = os.lstat(notebook).st_mode
        except OSError:
            return None
        if not stat.S_ISREG(mode):
            return not_a_regular_file(str(notebook.relative_to(root)), mode)
        return None

    @staticmethod
    def _blank_student_cells(nb: NotebookNode) -> None:
        """Empty every cell a student could write (the unlocked ones, with their outputs) and
        drop the notebook's metadata but its kernel's: in a refused notebook they hold the link's
        target, which neither the feedback nor the autograded notebook may show."""
        nb.metadata = NotebookNode({k: v for k, v in nb.metadata.items()
                                    if k in ("kernelspec", "language_info")})
        for cell in nb.cells:
            if not cell.get("metadata", {}).get("nbgrader", {}).get("locked", False):
                cell.source = ""
                if cell.cell_type == "code":
                    cell.outputs = []
                    cell.execution_count = None

    def _refuse(self, exercise: str, backend: str, refused: SubmissionError,
                resources: ResourcesDict) -> ExerciseResult:
        """``exercise``'s result for a refused notebook: every test an error with the refusal as
        its message, 0 points, nothing run."""
        result = ExerciseResult(exercise, self._name(resources), backend, seed=None)
        result.tests = all_tests(exercises.get(exercise), Status.ERROR, str(refused))
        self.log.warning("%s: %s: 0 points", result.submission, refused)
        return result

    def _grade(self, nb: NotebookNode, exercise: str, device: str,
               resources: ResourcesDict, seed: int | None = None
               ) -> tuple[ExerciseResult, Source | None]:
        """Grade the code cells of ``nb`` for ``exercise`` in the grader's child processes, with
        the secret ``seed`` (None: a random one); returns the result and the graded
        :class:`~autograder.source.submission.Source` (None when it cannot be read: the HTML
        then shows no source lines). A stand-in for a malformed file
        (:mod:`autograder.nbgrader.reader`) is graded as the file it stands for."""
        with tempfile.TemporaryDirectory(prefix="kernelgrade-nbgrader-") as tmp:
            path = Path(tmp) / f"{exercise}.ipynb"
            kept = submitted_bytes(nb)  # a malformed file: grade what was submitted
            if kept is not None:
                path.write_bytes(kept)
            else:
                path.write_text(nbformat.writes(nb), encoding="utf-8")
            from autograder.sandbox import mode as sandbox_mode

            # A class: in the sandbox, or plain only under KERNELGRADE_SANDBOX=off (said so)
            with sandbox_mode.chosen(sandbox_mode.for_class()):
                result = grader.grade(path, exercise, device=device, seed=seed)
            source = load_source_quietly(path)
        result.submission = self._name(resources)
        for t in result.tests:  # a refusal names the file: the student's, not our copy
            t.message = t.message.replace(str(path), result.submission)
        self.log.info("%s: %s %g / %g on %s, seed %s%s", result.submission, exercise,
                      result.score, result.max_score, result.device, result.seed,
                      f" ({result.provisional_note})" if result.provisional else "")
        return result, source

    @staticmethod
    def _defuse_zero_point_cells(nb: NotebookNode) -> None:
        """Drop the ``execute_result`` outputs of grade cells worth 0 points (the public tests):
        when nbgrader ran the notebook, a value the student's code made such a cell show (an
        input transformer appending ``15.0``) would make nbgrader fail the whole notebook
        ("partial credit cannot be greater than maximum points"); the cell earns 0 either way."""
        for cell in nb.cells:
            if (cell.cell_type == "code" and utils.is_grade(cell) and not utils.is_solution(cell)
                    and not float(cell.metadata.nbgrader.get("points", 0.0))):
                cell.outputs = [o for o in cell.get("outputs", [])
                                if o.output_type != "execute_result"]

    @staticmethod
    def _write(cell: NotebookNode, result: ExerciseResult, kind: Kind, *,
               with_header: bool, hand_points: float = 0.0) -> None:
        """Replace ``cell``'s outputs by the report of part ``kind`` and its points, scaled to
        the cell's points when the instructor changed them (the header names ``hand_points``,
        the notebook's points graded by hand: :func:`hand_graded_points`)."""
        points, max_points = part_points(result, kind)
        cell_points = float(cell.metadata.nbgrader.get("points", 0.0))
        score = points if max_points == cell_points else (
            points / max_points * cell_points if max_points else 0.0)
        text = render_part(result, kind, with_header=with_header, hand_points=hand_points)
        if score != points:
            text += f"(scaled to this cell's {cell_points:g} points: {score:g})\n"
        cell.execution_count = None
        cell.outputs = [
            nbformat.v4.new_output("stream", name="stdout", text=text),
            nbformat.v4.new_output("execute_result", data={"text/plain": repr(round(score, 4))},
                                   execution_count=None),
        ]

    def _add_html(self, cell: NotebookNode, result: ExerciseResult, kind: Kind,
                  source: Source | None, resources: ResourcesDict, *,
                  with_header: bool = False, hand_points: float = 0.0) -> None:
        """Make the text report of part ``kind`` (the ``stream`` output :meth:`_write` wrote)
        one ``display_data`` output that holds it twice over: as ``text/plain`` and as the
        student's HTML report (``text/html``: :func:`autograder.report.html.render_part_fragment`,
        with the header when ``with_header``: heatmaps of the failed public cases, the
        diagnostics with their source lines and the hints, the timing chart). A page shows the
        HTML, a terminal the text: each grade cell's report once. The points stay in the
        ``execute_result`` after it, which nbgrader's ``determine_grade`` reads. A failure to
        draw the HTML costs the picture, never the grade: it is logged and the cell keeps its
        text and points."""
        try:
            fragment = render_part_fragment(result, kind, source, with_header=with_header,
                                            hand_points=hand_points)
        except Exception as exc:  # noqa: BLE001  (a picture is never worth a grade)
            self.log.warning("%s: no HTML report for the %s part: %s: %s",
                             self._name(resources), kind.value, type(exc).__name__, exc)
            return
        text = "".join(o.text for o in cell.outputs if o.output_type == "stream")
        html = nbformat.v4.new_output("display_data", data={"text/html": fragment,
                                                            "text/plain": text})
        cell.outputs = [html] + [o for o in cell.outputs if o.output_type != "stream"]


def hand_graded_points(nb: NotebookNode) -> float:
    """The points of ``nb``'s cells that nbgrader leaves to a person: its manually graded
    answers (a grade cell that is also a solution cell, a written answer of a one-notebook
    exercise) and its manually graded tasks. nbgrader adds them to the notebook's maximum
    (``Score: 55 / 105``); kernelgrade's grade cells hold only the autograder's 100, so their
    header names these (:func:`autograder.report.parts.total_line`). A cell whose points do
    not read as a number counts 0."""
    total = 0.0
    for cell in nb.cells:
        if (utils.is_grade(cell) and utils.is_solution(cell)) or utils.is_task(cell):
            try:
                total += max(float(cell.metadata.nbgrader.get("points", 0.0) or 0.0), 0.0)
            except (TypeError, ValueError):
                continue
    return round(total, 4)


#: Exit status of ``nbgrader autograde`` when the pre-check fails: a fault of the grader's setup.
SETUP_EXIT = GraderSetupError.exit_code


def check_before_grading(exporter) -> None:
    """The pre-check of ``nbgrader autograde``, run once before the first student is graded
    (by :class:`autograder.nbgrader.reader.ReadAnyNotebook`, the exporter nbgrader makes once per
    run): when ``c.Autograde.autograde_preprocessors`` holds :class:`GradeWithAutograder`, its
    :meth:`GradeWithAutograder.check_setup` with the course's config. Where it fails (no GPU
    and no ``allow_provisional``, no bubblewrap, a bad device), one line goes to nbgrader's log
    and the process exits with status 2 (``SystemExit``): nothing graded, nothing stored, no
    traceback, instead of every student failing in turn. Outside autograde it does nothing."""
    from traitlets.utils.importstring import import_item

    converter = exporter.parent
    steps = getattr(converter, "autograde_preprocessors", None)
    if not steps:
        return
    for step in steps:
        cls = import_item(step) if isinstance(step, str) else step
        if isinstance(cls, type) and issubclass(cls, GradeWithAutograder):
            try:
                cls(parent=exporter).check_setup()
            except GraderSetupError as exc:
                exporter.log.error("%s", exc)
                raise SystemExit(SETUP_EXIT) from None
            return
