"""``nbgrader generate_feedback``'s page says "provisional" in the score's own place.

nbgrader's feedback page opens with the notebook's score, ``occupancy (Score: 80.0 / 100.0)``,
from the gradebook; that a grade from the simulator is not final was said only in the grade
cells below it. :class:`FeedbackExporter` (``c.GenerateFeedback.exporter_class``, written by
``autograder course build``) is nbgrader's HTML exporter with that header made
``occupancy (Score: 80.0 / 100.0, provisional: 20 points need a GPU)`` when the autograded
notebook's results (its ``kernelgrade`` metadata, :mod:`autograder.nbgrader.preprocessor`) are
provisional, in the one wording of :func:`autograder.wire.results.provisional_note`. A final
grade's page is nbgrader's header, unchanged.

Each hidden grade cell shows its report once: the grading preprocessor writes it as one output
(HTML, with the text for a terminal) and its points as an ``execute_result``, which nbgrader's
gradebook reads and which the page would show as a bare ``Out[ ]: 40.0`` under the report. The
page leaves those out (:func:`without_points_outputs`): the cell's header already says
``Score: 40.0 / 60.0``. The autograded notebook keeps them.
"""

from __future__ import annotations

import copy
import re

from nbconvert.exporters import HTMLExporter
from nbformat.notebooknode import NotebookNode

from autograder.wire.results import provisional_note

from .notebook import parse_hidden_grade_id

#: nbgrader 0.9's page header (``feedback/index.html.j2``): ``<h4>NAME (Score: X / Y)</h4>``.
HEADER = re.compile(r"(<h4>[^<]*\(Score: [-0-9.]+ / [-0-9.]+)\)(</h4>)")


def pending_points(nb: NotebookNode) -> float:
    """The points of ``nb``'s provisional results that need a GPU (the sum over its
    exercises' ``pending_points`` in the ``kernelgrade`` metadata); 0 for final grades or a
    notebook without results."""
    results = nb.get("metadata", {}).get("kernelgrade", {}).get("results", {})
    total = 0.0
    for result in results.values() if isinstance(results, dict) else ():
        if isinstance(result, dict) and result.get("provisional"):
            total += float(result.get("pending_points") or 0.0)
    return round(total, 4)


def without_points_outputs(nb: NotebookNode) -> NotebookNode:
    """A copy of ``nb`` whose hidden grade cells
    (:func:`autograder.nbgrader.notebook.parse_hidden_grade_id`) have no ``execute_result``
    output (their points, which the page's cell header shows); every other cell as it is."""
    nb = copy.deepcopy(nb)
    for cell in nb.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if (cell.get("cell_type") == "code" and isinstance(meta, dict)
                and parse_hidden_grade_id(meta.get("grade_id", ""))):
            cell.outputs = [o for o in cell.get("outputs", [])
                            if o.get("output_type") != "execute_result"]
    return nb


def mark_provisional(html: str, note: str) -> tuple[str, bool]:
    """``html`` (a feedback page) with ``, NOTE`` inside its score header's parentheses, and
    whether the header was found."""
    marked, found = HEADER.subn(
        lambda m: f'{m.group(1)}, <span class="kernelgrade-provisional" '
                  f'style="color: #a94442">{note}</span>){m.group(2)}', html, count=1)
    return marked, bool(found)


class FeedbackExporter(HTMLExporter):
    """nbgrader's feedback exporter (an ``HTMLExporter`` with its ``feedback`` template) whose
    score header says when the grade is provisional and whose hidden grade cells show their
    report once, without their points' ``Out[ ]`` (see the module's docstring)."""

    def from_notebook_node(self, nb: NotebookNode, resources=None, **kw):
        output, resources = super().from_notebook_node(without_points_outputs(nb), resources,
                                                       **kw)
        pending = pending_points(nb)
        if pending > 0:
            output, found = mark_provisional(output, provisional_note(pending))
            if not found:
                self.log.warning("the feedback page has no score header to mark "
                                 "'%s' in (a template other than nbgrader's)",
                                 provisional_note(pending))
        return output, resources
