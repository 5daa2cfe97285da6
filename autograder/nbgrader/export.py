"""The nbgrader export plugin that says which grades are provisional.

``c.ExportApp.plugin_class = "autograder.nbgrader.export.ExportGradesWithNotes"`` (written by
``autograder course build``) makes ``nbgrader export`` write nbgrader's usual ``grades.csv`` with
one more column, ``notes``: for each submission, the grading notes that
:class:`autograder.nbgrader.savenotes.SaveGradingNotes` stored in the gradebook's comments and
that say a grade is not final (``"tiled_matmul: 40 / 100 on the CUDA simulator; provisional: 40
points need a GPU"``), joined by `` | ``; empty for final grades.
"""

from __future__ import annotations

import csv

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins.export import CsvExportPlugin

#: The word every provisional note starts with (:func:`autograder.wire.results.provisional_note`).
PROVISIONAL = "provisional:"


def submission_notes(gradebook: Gradebook, assignment: str, student: str) -> str:
    """The provisional grading notes of ``student``'s submission of ``assignment``, joined by
    `` | ``; ``""`` when there is none or no submission."""
    try:
        submission = gradebook.find_submission(assignment, student)
    except MissingEntry:
        return ""
    notes = []
    for notebook in submission.notebooks:
        for comment in notebook.comments:
            notes += [ln for ln in (comment.auto_comment or "").splitlines()
                      if PROVISIONAL in ln]
    return " | ".join(dict.fromkeys(notes))


class ExportGradesWithNotes(CsvExportPlugin):
    """nbgrader's CSV export (``grades.csv``, same columns and rows) plus a ``notes`` column:
    :func:`submission_notes` of each row."""

    def export(self, gradebook: Gradebook) -> None:
        super().export(gradebook)
        dest = self.to or "grades.csv"
        with open(dest, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        if not rows:
            return
        head = rows[0]
        a, s = head.index("assignment"), head.index("student_id")
        out = [head + ["notes"]] + [row + [submission_notes(gradebook, row[a], row[s])]
                                     for row in rows[1:]]
        with open(dest, "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh, lineterminator="\n").writerows(out)
