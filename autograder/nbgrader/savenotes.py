"""The nbgrader preprocessor that stores what a grade is in the gradebook's comments.

:class:`SaveGradingNotes` runs in ``nbgrader autograde`` right after nbgrader's
``SaveAutoGrades`` (which resets the solution cells' automatic comments), and after
:class:`autograder.nbgrader.preprocessor.GradeWithAutograder`, whose results it reads from
nbgrader's ``resources``. For each solution cell of the student's code it sets the gradebook
comment (``Comment.auto_comment``) to one line per graded exercise, e.g.
``"tiled_matmul: 40 / 100 on the CUDA simulator; provisional: 40 points need a GPU"``, which
formgrader shows to graders and ``nbgrader generate_feedback`` shows under the student's code.
A written answer (nbgrader's manually graded answer: a solution cell that is also a grade cell)
gets none: its comment box is the grader's, for the answer, and the note there read as the
answer's grade (:func:`code_cell_ids`).
"""

from __future__ import annotations

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.wire.results import ExerciseResult
from ..report.parts import where
from .preprocessor import RESOURCES_KEY


def grading_note(result: ExerciseResult) -> str:
    """One line on ``result``: exercise, score, device, and the provisional note if any."""
    note = result.provisional_note
    return (f"{result.exercise}: {result.score:g} / {result.max_score:g} on {where(result)}"
            + (f"; {note}" if note else ""))


def code_cell_ids(nb: NotebookNode) -> list[str]:
    """The ``grade_id`` of each cell of ``nb`` that holds the student's graded code: a code
    solution cell that is not graded by hand (nbgrader's "autograded answer"). Where there is
    none, every solution cell's (the note is never lost)."""
    solutions = [c for c in nb.cells if utils.is_solution(c)]
    code = [c for c in solutions if c.cell_type == "code" and not utils.is_grade(c)]
    ids = [c.metadata.nbgrader.get("grade_id") for c in (code or solutions)]
    return [i for i in ids if isinstance(i, str)]


class SaveGradingNotes(NbGraderPreprocessor):
    """Write :func:`grading_note` of every exercise graded in this notebook into the gradebook
    comment of each solution cell of the student's code (:func:`code_cell_ids`; after any
    comment nbgrader set, such as "No response.").
    Does nothing when :class:`~autograder.nbgrader.preprocessor.GradeWithAutograder` graded
    nothing. Must come after ``SaveAutoGrades`` in ``c.Autograde.autograde_preprocessors``."""

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict
                   ) -> tuple[NotebookNode, ResourcesDict]:
        results = resources.get(RESOURCES_KEY, {}).get("results", {})
        solution_ids = code_cell_ids(nb)
        if not results or not solution_ids:
            return nb, resources
        info = resources["nbgrader"]
        text = "\n".join(grading_note(r) for r in results.values())
        with Gradebook(info["db_url"]) as gb:
            for grade_id in solution_ids:
                comment = gb.find_comment(grade_id, info["notebook"], info["assignment"],
                                          info["student"])
                before = comment.auto_comment
                comment.auto_comment = f"{before}\n{text}" if before else text
            gb.db.commit()
        return nb, resources
