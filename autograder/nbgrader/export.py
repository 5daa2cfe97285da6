"""The nbgrader export plugin that says which grades are provisional, and writes a CSV that is
safe to open.

``c.ExportApp.plugin_class = "autograder.nbgrader.export.ExportGradesWithNotes"`` (written by
``autograder course build``) makes ``nbgrader export`` write nbgrader's usual ``grades.csv`` (the
same columns and rows as its ``CsvExportPlugin``) with two more columns: ``provisional``, beside
``max_score`` as in ``autograder export``'s CSV (``True`` when a grade of the submission is not
final, else ``False``), and ``notes``: for each
submission, the grading notes that :class:`autograder.nbgrader.savenotes.SaveGradingNotes`
stored in the gradebook's comments and that say a grade is not final (``"tiled_matmul: 40 / 100
on the CUDA simulator; provisional: 40 points need a GPU"``), joined by `` | ``; empty for final
grades.

The rows are written here, not by nbgrader's plugin, which joins the cells with commas unquoted:
a student's name with a comma in it shifted every later cell, and one that starts with ``=`` was
a formula. Here every cell that holds text (assignment, student id, names, email, dates, notes)
is quoted text that no spreadsheet evaluates, and the scores are numbers
(:func:`autograder.report.export.write_csv`). Student ids that are one name in two Unicode forms
(:func:`autograder.batch.discovery.nfc`: ``josé`` with a composed ``é`` and with ``e`` and a
combining accent), which nbgrader keeps as two students, get no score: both rows say why
(:func:`unicode_twins`), so that no grade is counted twice or picked by row order.
"""

from __future__ import annotations

from collections import defaultdict

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins.export import CsvExportPlugin

from autograder.batch.discovery import nfc
from autograder.report.export import write_csv

#: The word every provisional note starts with (:func:`autograder.wire.results.provisional_note`).
PROVISIONAL = "provisional:"
#: nbgrader's columns (``CsvExportPlugin``), then ours.
COLUMNS = ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name",
           "email", "raw_score", "late_submission_penalty", "score", "max_score", "provisional",
           "notes"]


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


def unicode_twins(student_ids: list[str]) -> dict[str, list[str]]:
    """``{id: every id of its group}`` for the ids of ``student_ids`` that share their NFC form
    with another (two spellings of one name); ids with a form of their own are left out."""
    groups: dict[str, list[str]] = defaultdict(list)
    for sid in student_ids:
        groups[nfc(sid)].append(sid)
    return {sid: group for group in groups.values() if len(group) > 1 for sid in group}


def twins_note(group: list[str]) -> str:
    """Why the rows of ``group`` (student ids that are one name in different Unicode forms)
    carry no score; the ids are shown with their code points escaped."""
    return (f"not counted: the student ids {', '.join(ascii(s) for s in group)} are one name "
            "in two Unicode forms, which nbgrader keeps as two students; keep one of their "
            "folders under submitted/, remove the other student from the gradebook and "
            "autograde again")


def grade_rows(gradebook: Gradebook, assignments: list[str] = (),
               students: list[str] = ()) -> list[list]:
    """The rows of ``grades.csv`` in :data:`COLUMNS` order, as nbgrader's ``CsvExportPlugin``
    makes them (every assignment × every student, or only those named; a student without a
    submission scores 0; score = max(0, raw score − late penalty)), scores as floats, dates as
    text, plus ``provisional`` (whether a provisional note was stored for the submission) and
    ``notes``. Rows of :func:`unicode_twins` have empty scores and ``provisional`` and
    :func:`twins_note` as their note."""
    everyone = [s.id for s in gradebook.students]
    twins = unicode_twins(everyone)
    rows = []
    for assignment in gradebook.assignments:
        if assignments and assignment.name not in assignments:
            continue
        for student in gradebook.students:
            if students and student.id not in students:
                continue
            try:
                sub = gradebook.find_submission(assignment.name, student.id)
            except MissingEntry:
                timestamp, raw, penalty = None, 0.0, 0.0
            else:
                timestamp, raw = sub.timestamp, sub.score
                penalty = sub.late_submission_penalty
            score = max(0.0, raw - penalty)
            notes = submission_notes(gradebook, assignment.name, student.id)
            provisional = bool(notes)
            if student.id in twins:
                raw = penalty = score = provisional = None
                notes = " | ".join(n for n in (twins_note(twins[student.id]), notes) if n)
            rows.append([assignment.name, assignment.duedate, timestamp, student.id,
                         student.last_name, student.first_name, student.email,
                         raw, penalty, score, assignment.max_score, provisional, notes])
    return rows


class ExportGradesWithNotes(CsvExportPlugin):
    """nbgrader's CSV export (``grades.csv``, same columns and rows) plus a ``notes`` column
    (:func:`grade_rows`), written safe to open in a spreadsheet."""

    def export(self, gradebook: Gradebook) -> None:
        dest = self.to or "grades.csv"
        self.log.info("Exporting grades to %s", dest)
        rows = grade_rows(gradebook, [str(a) for a in self.assignment],
                          [str(s) for s in self.student])
        with open(dest, "w", newline="", encoding="utf-8") as fh:
            write_csv([COLUMNS] + rows, fh)
