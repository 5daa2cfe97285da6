"""``nbgrader generate_feedback``'s page says "provisional" in the score's own place.

nbgrader's feedback page opens with the notebook's score, ``occupancy (Score: 80.0 / 100.0)``,
from the gradebook; that a grade from the simulator is not final was said only in the grade
cells below it. :class:`FeedbackExporter` (``c.GenerateFeedback.exporter_class``, written by
``autograder course build``) is nbgrader's HTML exporter with that header made
``occupancy (Score: 80.0 / 100.0, provisional: 20 points need a GPU)`` when the autograded
notebook's results (its ``kernelgrade`` metadata, :mod:`autograder.nbgrader.preprocessor`) are
provisional, in the one wording of :func:`autograder.wire.results.provisional_note`. A final
grade's page is nbgrader's, unchanged.
"""

from __future__ import annotations

import re

from nbconvert.exporters import HTMLExporter
from nbformat.notebooknode import NotebookNode

from autograder.wire.results import provisional_note

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


def mark_provisional(html: str, note: str) -> tuple[str, bool]:
    """``html`` (a feedback page) with ``, NOTE`` inside its score header's parentheses, and
    whether the header was found."""
    marked, found = HEADER.subn(
        lambda m: f'{m.group(1)}, <span class="kernelgrade-provisional" '
                  f'style="color: #a94442">{note}</span>){m.group(2)}', html, count=1)
    return marked, bool(found)


class FeedbackExporter(HTMLExporter):
    """nbgrader's feedback exporter (an ``HTMLExporter`` with its ``feedback`` template) whose
    score header says when the grade is provisional (see the module's docstring)."""

    def from_notebook_node(self, nb: NotebookNode, resources=None, **kw):
        output, resources = super().from_notebook_node(nb, resources, **kw)
        pending = pending_points(nb)
        if pending > 0:
            output, found = mark_provisional(output, provisional_note(pending))
            if not found:
                self.log.warning("the feedback page has no score header to mark "
                                 "'%s' in (a template other than nbgrader's)",
                                 provisional_note(pending))
        return output, resources
