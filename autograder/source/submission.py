"""Turn a submission file (``.py`` or ``.ipynb``) into Python source for the harness.

For a notebook, the source is its code cells in order, with IPython magics (``%``, ``%%``, ``!``)
and the autograder's own test cells (nbgrader grade cells that are not solution cells) left out.
Each source line remembers where it came from, so messages can say "cell 3, line 12".

A ``.py`` file is read as CPython reads a source file (:func:`python_text`): its encoding from a
UTF-8 byte-order mark or a coding line (PEP 263), else UTF-8, the mark dropped, and ``\r\n``
and ``\r`` line endings read as ``\n``. Lines are what Python counts as lines (only those
three end one; a form feed or U+2028 in a comment does not), so line numbers match the file.
"""

from __future__ import annotations

import codecs
import errno
import io
import json
import os
import re
import stat
import tokenize
from dataclasses import dataclass, field
from pathlib import Path


class SubmissionError(Exception):
    """The submission cannot be read as Python source; the message is written for the student."""


class EmptySubmission(SubmissionError):
    """The submission was read and holds no code: an empty ``.py`` file, a notebook whose code
    cells are empty (or hold only magics and the autograder's test cells)."""


@dataclass
class Source:
    """Python source of a submission.

    ``origins[i]`` describes line ``i + 1`` of ``text``: ``(cell_number, line_in_cell)`` for a
    notebook (both 1-based), ``(None, line)`` for a ``.py`` file. ``given_cells``: the numbers
    of the notebook's code cells that the instructor gave read-only (nbgrader's locked cells that
    are not the student's answers, such as the setup cell): what the grader skips there is not
    the student's to hear about.
    """

    text: str
    path: str
    origins: list[tuple[int | None, int]] = field(default_factory=list)
    given_cells: frozenset = frozenset()

    def where(self, lineno: int) -> str:
        """Human description of source line ``lineno`` (1-based), e.g. ``"cell 3, line 12"``."""
        if 1 <= lineno <= len(self.origins):
            cell, line = self.origins[lineno - 1]
            if cell is not None:
                return f"cell {cell}, line {line}"
            return f"line {line}"
        return f"line {lineno}"

    def line_text(self, lineno: int) -> str:
        """Source line ``lineno`` (1-based, as Python numbers it), stripped; ``""`` past the
        end."""
        lines = python_lines(self.text)
        return lines[lineno - 1].strip() if 1 <= lineno <= len(lines) else ""


_NEWLINE = re.compile(r"\r\n|\r|\n")


def python_lines(text: str) -> list[str]:
    """``text``'s lines as Python's tokenizer counts them: only ``\r\n``, ``\r`` and ``\n``
    end a line (``str.splitlines`` also splits at a form feed, U+2028 and others, which Python
    reads as whitespace or as part of a comment or string). No trailing empty line for text
    that ends with a newline, as ``str.splitlines``."""
    lines = _NEWLINE.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def python_text(data: bytes, shown: str) -> str:
    """The source CPython reads from the bytes ``data`` of a ``.py`` file (``shown``: its name
    in messages): decoded in the encoding that a UTF-8 byte-order mark or a coding line in
    the first two lines declares (PEP 263, :func:`tokenize.detect_encoding`), else UTF-8; the
    byte-order mark dropped; ``\r\n`` and ``\r`` line endings turned into ``\n`` (what
    ``importlib`` does, so line numbers do not change). Raises :class:`SubmissionError` for
    bytes that are not text in that encoding and for a coding line Python refuses."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # an unknown codec; or bytes of the first lines not UTF-8
        encoding, problem = "utf-8", exc.msg
    else:
        problem = None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        name = codecs.lookup(encoding).name
        if name in ("utf-8", "utf-8-sig"):
            raise SubmissionError(f"{shown} is not UTF-8 text (byte {exc.start}); save it "
                                  "with UTF-8 encoding") from None
        raise SubmissionError(f"{shown} is not {encoding} text as its coding line says (byte "
                              f"{exc.start}); save it with UTF-8 encoding") from None
    if problem is not None:
        raise SubmissionError(f"{shown} cannot be read as Python: {problem}; save it with "
                              "UTF-8 encoding")
    text = text.removeprefix("\ufeff")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _is_autograder_test_cell(cell: dict) -> bool:
    """A grade cell that is not a solution cell. Metadata of the wrong JSON type (a list, a
    string, ...) is read as no metadata: the cell is the student's."""
    meta = cell.get("metadata")
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    if not isinstance(meta, dict):
        return False
    return bool(meta.get("grade")) and not meta.get("solution")


def _is_given_cell(cell: dict) -> bool:
    """A read-only cell of the instructor's (nbgrader ``locked``, not a solution cell)."""
    meta = cell.get("metadata")
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    return isinstance(meta, dict) and bool(meta.get("locked")) and not meta.get("solution")


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
    given: set[int] = set()
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        code_cell_no += 1
        if _is_autograder_test_cell(cell):
            continue
        if _is_given_cell(cell):
            given.add(code_cell_no)
        src = _cell_text(cell.get("source"), path, code_cell_no)
        lines = _strip_magics(python_lines(src))
        for i, ln in enumerate(lines, start=1):
            text_lines.append(ln)
            origins.append((code_cell_no, i))
        text_lines.append("")
        origins.append((code_cell_no, len(lines) + 1))
    if not any(ln.strip() for ln in text_lines):
        raise EmptySubmission(f"{path} has no code cells with code in them")
    text = "\n".join(text_lines) + "\n"
    if len(text.encode("utf-8")) > MAX_SUBMISSION_BYTES:
        raise SubmissionError(
            f"the code cells of {path} hold over {_size(MAX_SUBMISSION_BYTES)} of code, more "
            "than the grader reads: submit the exercise's code alone")
    return Source(text, path, origins, frozenset(given))


#: The most code graded, in bytes: a ``.py`` file, or the code cells of a notebook together
#: (UTF-8). A kernel exercise's code is a few KiB; a larger ``.py`` file is refused unread.
MAX_SUBMISSION_BYTES = 8 * 1024 * 1024

#: The largest notebook file read, in bytes. Only its code cells are graded, so its outputs and
#: attachments (an embedded plot is megabytes of base64) do not count against
#: :data:`MAX_SUBMISSION_BYTES`; this bound keeps the grader's reading finite.
MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024

#: The most JSON values (bounded by the count of ``,``, ``[`` and ``{``) a notebook over
#: :data:`MAX_SUBMISSION_BYTES` may hold: a plot is one long string, and this bound keeps the
#: memory that parsing takes proportional (tens of bytes a value) on any file.
MAX_NOTEBOOK_VALUES = 4_000_000

#: What :func:`read_submission_bytes` calls each kind of file it refuses (``stat.S_IFMT``).
_KINDS = {stat.S_IFLNK: "a symbolic link", stat.S_IFIFO: "a named pipe (FIFO)",
          stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device"}


def kind_of(mode: int) -> str:
    """What a thing of mode ``mode`` (``os.lstat``'s) that is neither a regular file nor a folder
    is called in messages: "a symbolic link", "a named pipe (FIFO)", ..."""
    return _KINDS.get(stat.S_IFMT(mode), "a special file")


def not_a_regular_file(shown: str, mode: int) -> SubmissionError:
    """The refusal of ``shown``, a thing of mode ``mode`` (``os.lstat``'s) that is not a regular
    file: it says what the thing is, never where a link leads."""
    if stat.S_ISDIR(mode):
        return SubmissionError(f"{shown} is a folder, not a .py or .ipynb file")
    advice = ("the grader never follows links: submit the file itself" if stat.S_ISLNK(mode)
              else "submit the .py or .ipynb file itself")
    return SubmissionError(f"{shown} is {kind_of(mode)}, not a regular file; {advice}")


def _size(n: int) -> str:
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n} bytes"


class NotRegular(Exception):
    """:func:`open_regular` found no regular file reached without a link: ``folder``, the step
    below ``root`` that is a link or not a folder (None when the file itself is at fault);
    ``mode``, the file's mode (``os.lstat``'s or, when ``replaced``, the opened one's);
    ``replaced``: it changed between its ``lstat`` and its opening."""

    def __init__(self, mode: int | None = None, folder: str | None = None,
                 replaced: bool = False):
        super().__init__(folder or mode)
        self.mode, self.folder, self.replaced = mode, folder, replaced


def open_regular(path: str | Path, root: str | Path | None = None) -> int:
    """A read-only descriptor of the regular file ``path``, reached without following a symbolic
    link at any step below ``root`` (``root`` itself, or with None ``path``'s folder, is opened
    as given: the grader chose it). The file is checked with ``lstat`` first and opened with
    ``O_NOFOLLOW | O_NONBLOCK``, then ``fstat`` must show the same regular file: a link, a pipe,
    a socket or a device is never opened for reading, and a pipe never blocks. The caller closes
    the descriptor. Raises :class:`NotRegular`, and ``OSError`` as ``os`` does (a missing path:
    ``FileNotFoundError``)."""
    path = Path(path)
    if root is None:
        parent, steps = path.parent, (path.name,)
    else:
        parent, steps = Path(root), path.relative_to(root).parts
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for step in steps[:-1]:
            try:
                inner = os.open(step, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                                dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise NotRegular(folder=step) from None
                raise
            os.close(fd)
            fd = inner
        before = os.stat(steps[-1], dir_fd=fd, follow_symlinks=False)
        if not stat.S_ISREG(before.st_mode):
            raise NotRegular(before.st_mode)
        try:
            file = os.open(steps[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                           dir_fd=fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise NotRegular(stat.S_IFLNK) from None
            raise
    finally:
        os.close(fd)
    now = os.fstat(file)
    if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (before.st_dev,
                                                                     before.st_ino):
        os.close(file)
        raise NotRegular(now.st_mode, replaced=True)
    return file


def read_submission_bytes(path: str | Path, max_bytes: int = MAX_SUBMISSION_BYTES) -> bytes:
    """The bytes of the submission file ``path``, read without following a link
    (:func:`open_regular`).

    Only a regular file is read: a symbolic link (to the instructor's solution, to
    ``/etc/passwd``, or dangling), a folder, a named pipe, a socket or a device is refused
    without a byte of it (or of a link's target) being read, and a pipe never blocks.
    The folders above ``path`` are the grader's choice (the command line's, Gradescope's
    ``/autograder/submission``, nbgrader's ``submitted/``) and may be links; a caller that lets
    a student supply folders checks them with :func:`linked_part`.
    Raises :class:`SubmissionError` (naming ``path`` as given and what it is, never a link's
    target) for a missing path, any file that is not regular, a file over ``max_bytes``
    bytes, and a file the grader may not read.
    """
    shown = str(path)
    try:
        fd = open_regular(path)
    except NotRegular as exc:
        if exc.replaced and stat.S_ISREG(exc.mode):
            raise SubmissionError(f"{shown} changed while it was being read; submit it again")
        raise not_a_regular_file(shown, exc.mode) from None
    except FileNotFoundError:
        raise SubmissionError(f"{shown} does not exist") from None
    except OSError as exc:
        raise SubmissionError(f"cannot read {shown}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise SubmissionError(
            f"{shown} is over {_size(max_bytes)}, more than the grader reads: "
            "submit the source alone (for a notebook: clear its outputs and save it again)")
    return data


def linked_part(root: str | Path, path: str | Path) -> Path | None:
    """The first of the folders and file from below ``root`` down to ``path`` that is a link
    (as ``root / part``), or None. ``root``: a folder the grader chose (trusted, may itself be
    a link); ``path``: a path inside it whose parts below ``root`` a student may have supplied
    (nbgrader's ``submitted/<student>/<assignment>/<notebook>.ipynb``). A part that does not
    exist ends the walk (None)."""
    root, path = Path(root), Path(path)
    here = root
    for part in path.relative_to(root).parts:
        here = here / part
        try:
            if stat.S_ISLNK(os.lstat(here).st_mode):
                return here
        except OSError:
            return None
    return None


def load_source(path: str | Path) -> Source:
    """Read ``path`` (``.py`` or ``.ipynb``) as :class:`Source`, without following a link
    (:func:`read_submission_bytes`): a ``.py`` file as CPython reads it (:func:`python_text`:
    a byte-order mark, a coding line, CRLF or CR line endings), a notebook as UTF-8 JSON (a
    byte-order mark before it allowed).

    Raises :class:`SubmissionError` for a missing file, a folder, a symbolic link, a named pipe,
    a socket or a device, a ``.py`` file or a notebook's code over :data:`MAX_SUBMISSION_BYTES`
    (a notebook's outputs and attachments do not count: the file may be up to
    :data:`MAX_NOTEBOOK_BYTES`, :data:`MAX_NOTEBOOK_VALUES`), a file that is not text in
    its encoding (UTF-8 unless a ``.py`` file's coding line says otherwise), a malformed
    notebook, a notebook without code, or another file type.
    """
    p = Path(path)
    shown = str(path)
    data = read_submission_bytes(p, MAX_NOTEBOOK_BYTES if p.suffix == ".ipynb"
                                 else MAX_SUBMISSION_BYTES)
    if p.suffix not in (".py", ".ipynb"):
        raise SubmissionError(f"{shown} is neither a .py file nor an .ipynb notebook")
    if p.suffix == ".ipynb":
        if len(data) > MAX_SUBMISSION_BYTES and \
                sum(data.count(c) for c in (b",", b"[", b"{")) > MAX_NOTEBOOK_VALUES:
            raise SubmissionError(
                f"{shown} is over {_size(MAX_SUBMISSION_BYTES)} and holds over "
                f"{MAX_NOTEBOOK_VALUES:,} values, more than the grader reads: clear its outputs "
                "and save it again")
        try:  # a byte-order mark before the JSON is no reason to refuse it
            raw = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise SubmissionError(
                f"{shown} is not UTF-8 text (byte {exc.start}); save it with UTF-8 encoding"
            ) from None
        return notebook_source(raw, shown)
    raw = python_text(data, shown)
    if not raw.strip():
        raise EmptySubmission(f"{shown} is empty")
    n = raw.count("\n") + 1
    return Source(raw, shown, [(None, i) for i in range(1, n + 1)])
