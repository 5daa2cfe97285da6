"""nbgrader's notebook reader for ``nbgrader autograde``: any submitted file becomes a notebook
nbgrader can process, so a malformed one is graded 0 with a message instead of failing the
student's autograde.

nbgrader reads a submission with ``nbformat.read`` and its own helpers, which crash on JSON of
the wrong type (a cell's ``metadata`` that is a list, a ``source`` holding a number, nbgrader
metadata that is a string) and on text that is not JSON or not UTF-8: nbgrader then stores
nothing for that student. :class:`ReadAnyNotebook` (``c.Autograde.exporter_class``, written by
``autograder course build``) reads a well-formed notebook exactly as nbgrader does; any other
file becomes a *stand-in*: a valid notebook of the cells that are objects, with metadata of the
wrong type dropped and sources that are not text emptied, whose notebook metadata keeps the
submitted file's bytes (base64) under :data:`SUBMITTED_KEY`.
:class:`autograder.nbgrader.preprocessor.GradeWithAutograder` grades those bytes (not the
stand-in), so the student gets the same 0 and the same message as from ``autograder grade``
(:func:`autograder.source.submission.notebook_source`).
"""

from __future__ import annotations

import base64
import json
import os

import nbformat
from nbconvert.exporters import NotebookExporter
from nbformat.notebooknode import NotebookNode

#: Notebook-metadata key of a stand-in: the submitted file's bytes, base64.
SUBMITTED_KEY = "kernelgrade_submitted"

_CELL_TYPES = ("code", "markdown", "raw")


def _well_formed(nb) -> bool:
    """Whether nbgrader's helpers can read every cell of ``nb`` (a parsed notebook)."""
    if not isinstance(nb, dict) or not isinstance(nb.get("metadata", {}), dict):
        return False
    cells = nb.get("cells")
    if not isinstance(cells, list):
        return False
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") not in _CELL_TYPES:
            return False
        meta = cell.get("metadata", {})
        if not isinstance(meta, dict) or not isinstance(meta.get("nbgrader", {}), dict):
            return False
        src = cell.get("source", "")
        if not (isinstance(src, str) or (isinstance(src, list)
                                         and all(isinstance(s, str) for s in src))):
            return False
        if cell["cell_type"] == "code" and not isinstance(cell.get("outputs", []), list):
            return False
    return True


def _stand_in_cell(cell) -> NotebookNode | None:
    if not isinstance(cell, dict) or cell.get("cell_type") not in _CELL_TYPES:
        return None
    src = cell.get("source")
    if isinstance(src, list) and all(isinstance(s, str) for s in src):
        src = "".join(src)
    src = src if isinstance(src, str) else ""
    meta = cell.get("metadata")
    meta = {k: v for k, v in meta.items() if k != "nbgrader" or isinstance(v, dict)} \
        if isinstance(meta, dict) else {}
    make = {"code": nbformat.v4.new_code_cell, "markdown": nbformat.v4.new_markdown_cell,
            "raw": nbformat.v4.new_raw_cell}[cell["cell_type"]]
    try:
        return make(src.encode("utf-8", "replace").decode("utf-8"),
                    metadata=json.loads(json.dumps(meta, allow_nan=True)))
    except (ValueError, RecursionError, TypeError):
        return make("")


def read_any(data: bytes, keep_submitted: bool = False) -> NotebookNode:
    """``data`` (a submitted file) as nbformat reads it when it is a well-formed notebook in
    UTF-8, else as a stand-in (see the module's docstring). Never raises.

    ``keep_submitted``: keep a :data:`SUBMITTED_KEY` that a well-formed notebook holds (the
    stand-in that nbgrader's sanitizing pass wrote, read again by its autograding pass); else it
    is dropped, so a student cannot choose the bytes that are graded."""
    parsed = None
    try:
        text = data.decode("utf-8")
        parsed = json.loads(text)
        if _well_formed(parsed):
            nb = nbformat.reads(text, as_version=4)
            if not keep_submitted:
                nb.metadata.pop(SUBMITTED_KEY, None)
            return nb
    except Exception:  # noqa: BLE001  (whatever nbformat trips on: the stand-in below)
        pass
    cells = parsed.get("cells") if isinstance(parsed, dict) else None
    kept = [c for c in map(_stand_in_cell, cells if isinstance(cells, list) else [])
            if c is not None]
    nb = nbformat.v4.new_notebook(cells=kept)
    nb.metadata[SUBMITTED_KEY] = base64.b64encode(data).decode("ascii")
    return nb


def submitted_bytes(nb: NotebookNode) -> bytes | None:
    """The submitted file's bytes kept in a stand-in notebook ``nb`` (None for a notebook
    read as it was)."""
    kept = nb.get("metadata", {}).get(SUBMITTED_KEY)
    if not isinstance(kept, str):
        return None
    try:
        return base64.b64decode(kept.encode("ascii"), validate=True)
    except ValueError:
        return None


def _check_before_grading(exporter) -> None:
    """Run the pre-check of the first configured autograde step that has one (its class's
    ``check_before_grading``; :class:`autograder.nbgrader.preprocessor.GradeWithAutograder`)."""
    from traitlets.utils.importstring import import_item

    for step in getattr(exporter.parent, "autograde_preprocessors", None) or ():
        cls = import_item(step) if isinstance(step, str) else step
        check = getattr(cls, "check_before_grading", None)
        if isinstance(cls, type) and callable(check):
            check(exporter)
            return


class ReadAnyNotebook(NotebookExporter):
    """nbgrader's ``NotebookExporter`` that reads any file with :func:`read_any`; the bytes a
    stand-in keeps are trusted only in autograde's second pass (``NBGRADER_EXECUTION`` is
    ``autograde`` then), which reads what the first pass wrote, never a student's file.

    nbgrader makes it once per ``nbgrader autograde``, after finding the submissions and before
    grading any: it then runs the grader's pre-check
    (:func:`autograder.nbgrader.preprocessor.check_before_grading`, found through the configured
    autograde step: this module imports nothing of that one), which ends the run with one
    line and exit status 2 where no student could be graded (no GPU and provisional grades not
    allowed, no bubblewrap)."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        if hasattr(self.parent, "autograde_preprocessors"):  # made by nbgrader's Autograde
            _check_before_grading(self)

    def from_file(self, file_stream, resources=None, **kw):
        buffer = getattr(file_stream, "buffer", None)
        data = buffer.read() if buffer is not None else file_stream.read()
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogatepass")
        second_pass = os.environ.get("NBGRADER_EXECUTION") == "autograde"
        return self.from_notebook_node(read_any(data, keep_submitted=second_pass),
                                       resources=resources, **kw)
