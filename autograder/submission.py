"""Turn a submission file (``.py`` or ``.ipynb``) into Python source for the harness.

For a notebook, the source is its code cells in order, with IPython magics (``%``, ``%%``, ``!``)
and the autograder's own test cells (nbgrader grade cells that are not solution cells) left out.
Each source line remembers where it came from, so messages can say "cell 3, line 12".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path


class SubmissionError(Exception):
    """The submission cannot be read as Python source; the message is written for the student."""


@dataclass
class Source:
    """Python source of a submission.

    ``origins[i]`` describes line ``i + 1`` of ``text``: ``(cell_number, line_in_cell)`` for a
    notebook (both 1-based), ``(None, line)`` for a ``.py`` file.
    """

    text: str
    path: str
    origins: list[tuple[int | None, int]] = field(default_factory=list)

    def where(self, lineno: int) -> str:
        """Human description of source line ``lineno`` (1-based), e.g. ``"cell 3, line 12"``."""
        if 1 <= lineno <= len(self.origins):
            cell, line = self.origins[lineno - 1]
            if cell is not None:
                return f"cell {cell}, line {line}"
            return f"line {line}"
        return f"line {lineno}"

    def line_text(self, lineno: int) -> str:
        lines = self.text.splitlines()
        return lines[lineno - 1].strip() if 1 <= lineno <= len(lines) else ""


def _is_autograder_test_cell(cell: dict) -> bool:
    """A grade cell that is not a solution cell. Metadata of the wrong JSON type (a list, a
    string, ...) is read as no metadata: the cell is the student's."""
    meta = cell.get("metadata")
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    if not isinstance(meta, dict):
        return False
    return bool(meta.get("grade")) and not meta.get("solution")


def _strip_magics(lines: list[str]) -> list[str]:
    if lines and lines[0].lstrip().startswith("%%"):
        return ["" for _ in lines]  # a cell magic makes the whole cell non-Python
    return ["" if ln.lstrip().startswith(("%", "!")) else ln for ln in lines]


def _json_type(value) -> str:
    """``value``'s JSON type in words, for messages: ``"a number"``, ``"a list"``..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    return {int: "a number", float: "a number", str: "text", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)


def _cell_text(src, path: str, cell_no: int) -> str:
    """The text of a code cell's ``source`` (a string, or a list of strings as nbformat writes
    it; a missing one is empty). Raises :class:`SubmissionError` for any other JSON value and
    for text that is not valid Unicode (a lone surrogate written as ``\\ud800``)."""
    if src is None:
        src = ""
    if isinstance(src, list):
        bad = next((s for s in src if not isinstance(s, str)), "")
        if not isinstance(bad, str):
            raise SubmissionError(
                f"{path}: cell {cell_no}'s source is a list holding {_json_type(bad)}, not "
                "lines of text; re-save the notebook from Jupyter")
        src = "".join(src)
    if not isinstance(src, str):
        raise SubmissionError(f"{path}: cell {cell_no}'s source is {_json_type(src)}, not text; "
                              "re-save the notebook from Jupyter")
    try:
        src.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SubmissionError(
            f"{path}: cell {cell_no} holds a character that is not valid Unicode (position "
            f"{exc.start}); re-save the notebook from Jupyter") from None
    return src


def _parse_json(raw: str, path: str):
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise SubmissionError(
            f"{path} is not a valid notebook (JSON error at line {exc.lineno}: {exc.msg}); "
            "re-save it from Jupyter"
        ) from None
    except RecursionError:
        raise SubmissionError(f"{path} is not a valid notebook: its JSON is nested too deeply; "
                              "re-save it from Jupyter") from None
    except ValueError:  # a number with more digits than Python converts (4300)
        raise SubmissionError(f"{path} is not a valid notebook: it holds a number with too "
                              "many digits; re-save it from Jupyter") from None


def notebook_source(raw: str, path: str) -> Source:
    """Source of a notebook given as JSON text. Any JSON value anywhere is either read or
    refused: raises :class:`SubmissionError` (one message for the student) for text that is not
    JSON, JSON that is not a notebook (no list ``cells``), a code cell whose ``source`` is not
    text, and a notebook without code. Cells that are not objects, cells whose ``cell_type`` is
    not ``"code"`` and metadata of the wrong type are ignored (metadata then marks no test
    cell)."""
    nb = _parse_json(raw, path)
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise SubmissionError(f"{path} is not a Jupyter notebook: it has no list of cells")
    text_lines: list[str] = []
    origins: list[tuple[int | None, int]] = []
    code_cell_no = 0
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        code_cell_no += 1
        if _is_autograder_test_cell(cell):
            continue
        src = _cell_text(cell.get("source"), path, code_cell_no)
        lines = _strip_magics(src.splitlines())
        for i, ln in enumerate(lines, start=1):
            text_lines.append(ln)
            origins.append((code_cell_no, i))
        text_lines.append("")
        origins.append((code_cell_no, len(lines) + 1))
    if not any(ln.strip() for ln in text_lines):
        raise SubmissionError(f"{path} has no code cells with code in them")
    return Source("\n".join(text_lines) + "\n", path, origins)


def load_source(path: str | Path) -> Source:
    """Read ``path`` (``.py`` or ``.ipynb``) as :class:`Source`.

    Raises :class:`SubmissionError` for a missing file, a folder, a file that is not UTF-8, a
    malformed notebook, a notebook without code, or another file type.
    """
    p = Path(path)
    shown = str(path)
    if not p.exists():
        raise SubmissionError(f"{shown} does not exist")
    if p.is_dir():
        raise SubmissionError(f"{shown} is a folder, not a .py or .ipynb file")
    if p.suffix not in (".py", ".ipynb"):
        raise SubmissionError(f"{shown} is neither a .py file nor an .ipynb notebook")
    try:
        raw = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SubmissionError(
            f"{shown} is not UTF-8 text (byte {exc.start}); save it with UTF-8 encoding"
        ) from None
    if p.suffix == ".ipynb":
        return notebook_source(raw, shown)
    if not raw.strip():
        raise SubmissionError(f"{shown} is empty")
    n = raw.count("\n") + 1
    return Source(raw, shown, [(None, i) for i in range(1, n + 1)])
