"""Find the submissions of a class, and account for every other entry of its folder.

Two layouts: nbgrader's ``submitted/<student>/<assignment>/<file>``, or a flat folder of
``<student>.py`` / ``<student>.ipynb`` files (then the exercise must be given). A folder with
submission files at its top *and* folders beside them is neither, and an error naming both.

Nothing here follows a link or opens a file: each entry is classified by ``lstat`` (a
``DirEntry`` that is not followed), so a symbolic link, a named pipe, a socket or a device is
listed as not graded and its target never read. :func:`read_regular` then reads a discovered
file without following a link anywhere below the class folder, in case the folder changed
since it was listed.

What is not graded comes back as :class:`Skipped` entries, each with its path and a plain
reason; nothing is dropped without a word, and nothing is decided by which file or result comes
first (two files for one student and exercise: neither is graded).

Student names (and the assignment folders' names in a key) are NFC-normalised (:func:`nfc`): a
name is the same student however its accents were encoded (``josé`` as one code point, or as
``e`` and a combining accent, as macOS and some zip tools write it). Two files or folders whose
names normalise alike are one student's two submissions: neither is graded, and the reason shows
both names with their code points (:func:`_spelled`), since they look identical on screen.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import NamedTuple

from autograder import exercises
from autograder.source.submission import NotRegular, kind_of, open_regular

SUBMISSION_SUFFIXES = (".ipynb", ".py")

#: Kinds of entries that are listed but expected in a class folder, with what to call several:
#: reports count them in one line per kind (stores and exports still list each).
ROUTINE_KINDS = {"hidden": "hidden files or folders",
                 "checkpoints": "Jupyter checkpoint folders",
                 "nbgrader_timestamp": "nbgrader timestamp.txt files"}


@dataclass(frozen=True)
class Submission:
    """One student's file for one exercise. ``path`` is None when the student's folder holds no
    notebook or ``.py`` file (graded 0 with a message, never dropped). ``root``: the class
    folder ``path`` was found under (:func:`read_regular` follows no link below it)."""

    student: str
    exercise: str
    path: Path | None
    key: str  # unique and stable: "<student>/<assignment or exercise>"
    root: Path | None = None


@dataclass(frozen=True)
class Skipped:
    """An entry of the class folder that is not graded. ``path``: as found (the class folder
    joined with the entry's name); ``kind``: one of ``unknown_exercise``, ``other_exercise``,
    ``duplicate``, ``link``, ``special``, ``not_submission``, ``extra``, ``outside_assignment``,
    ``folder``, ``empty``, ``hidden``, ``checkpoints``, ``nbgrader_timestamp``, ``unreadable``,
    ``changed`` (a file that became a link or a special file after discovery); ``reason``:
    plain words for the instructor, never anything read from the entry itself. ``student``,
    ``exercise`` and ``key`` (the submission key it would have had) where known."""

    path: str
    kind: str
    reason: str
    student: str | None = None
    exercise: str | None = None
    key: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


class Found(NamedTuple):
    """What :func:`discover` found: the submissions to grade (sorted by key) and everything
    else (sorted by path)."""

    submissions: list[Submission]
    skipped: list[Skipped]


class NotRegularFile(Exception):
    """A discovered file that is no longer a regular file reached without links (it was
    swapped after discovery); the message says what it is now."""


def nfc(name: str) -> str:
    """``name`` in Unicode normal form C (composed): the form student names and keys take."""
    return unicodedata.normalize("NFC", name)


def _spelled(names: list[str]) -> list[str]:
    """``names`` as a reason shows them: as they are, or, where two differ only in their Unicode
    form (they look identical), each with its code points escaped (``'jos\\xe9.py'``,
    ``'jose\\u0301.py'``)."""
    if len({nfc(n) for n in names}) == len(set(names)):
        return list(names)
    return [ascii(n) if not n.isascii() else n for n in names]


def _unicode_note(names: list[str]) -> str:
    """The words that say why names that differ are one student's, or ``""``."""
    if len({nfc(n) for n in names}) == len(set(names)):
        return ""
    return (" (the same name in two Unicode forms: an accented letter written as one code point "
            "or as a letter and a combining accent; both are one student)")


def exercise_for(assignment: str, filename: str | None = None) -> str | None:
    """The exercise an nbgrader assignment folder (``01_tiled_matmul``) or file stem names."""
    known = exercises.names()
    for candidate in (Path(filename).stem if filename else None,
                      re.sub(r"^\d+[_-]", "", assignment), assignment):
        if candidate in known:
            return candidate
    return None


class _Entry(NamedTuple):
    name: str
    path: Path
    type: str  # "file", "dir", "link" or a special file's words ("a named pipe (FIFO)", ...)

    @property
    def hidden(self) -> bool:
        return self.name.startswith(".")

    @property
    def candidate(self) -> bool:
        """A regular, visible ``.py`` / ``.ipynb`` file."""
        return (self.type == "file" and not self.hidden
                and Path(self.name).suffix in SUBMISSION_SUFFIXES)

    @property
    def folder(self) -> bool:
        return self.type == "dir" and not self.hidden


def _type(entry: os.DirEntry) -> str:
    if entry.is_symlink():
        return "link"
    mode = entry.stat(follow_symlinks=False).st_mode
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return kind_of(mode)


def _entries(folder: Path) -> list[_Entry] | str:
    """The entries of ``folder``, sorted by name, classified without following links; or why it
    cannot be listed."""
    try:
        with os.scandir(folder) as it:
            found = []
            for e in it:
                try:
                    found.append(_Entry(e.name, folder / e.name, _type(e)))
                except OSError:  # gone between the listing and its lstat
                    continue
    except OSError as exc:
        return f"cannot be listed: {exc.strerror or exc}"
    return sorted(found)


def _skip(e: _Entry, **who) -> Skipped:
    """Why ``e`` (not a candidate here) is not graded."""
    if e.type == "link":
        return Skipped(str(e.path), "link", "a symbolic link: links are never followed and "
                       "what they point to is never read", **who)
    if e.type not in ("file", "dir"):
        return Skipped(str(e.path), "special", f"{e.type}, not a regular file: never opened",
                       **who)
    if e.name == ".ipynb_checkpoints":
        return Skipped(str(e.path), "checkpoints",
                       "Jupyter's autosaved checkpoints (not searched)", **who)
    if e.hidden:
        return Skipped(str(e.path), "hidden", "a hidden "
                       + ("folder (not searched)" if e.type == "dir" else "file"), **who)
    if e.type == "dir":
        return Skipped(str(e.path), "folder", "a folder where files are expected (not "
                       "searched)", **who)
    return Skipped(str(e.path), "not_submission", "not a .py or .ipynb file", **who)


def _names(items: list, most: int = 3) -> str:
    names = [str(x) for x in items]
    if len(names) <= most:
        return ", ".join(names)
    return f"{', '.join(names[:most])} and {len(names) - most} more"


def _both(names: list[str]) -> str:
    return " and ".join(names) if len(names) == 2 else f"{len(names)} files: {', '.join(names)}"


def discover(root: str | Path, exercise: str | None = None) -> Found:
    """All submissions under ``root``, and every entry that is not graded, with its reason.

    A folder that holds only folders (hidden entries and other files aside) is taken as
    nbgrader's ``submitted/`` layout; one that holds no folder is a flat folder of files, and
    ``exercise`` must be given. With ``exercise`` in nbgrader's layout, only that exercise's
    assignment folders are graded (an assignment folder that names no exercise is graded as
    ``exercise``). Raises ``ValueError`` when ``root`` is not a folder, for a flat folder
    without ``exercise``, and for a folder with ``.py`` / ``.ipynb`` files at its top beside
    folders (both are named).
    """
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"{root} is not a folder")
    entries = _entries(root)
    if isinstance(entries, str):
        raise ValueError(f"{root} {entries}")
    files = [e.name for e in entries if e.candidate]
    folders = [e.name + "/" for e in entries if e.folder]
    if files and folders:
        raise ValueError(
            f"{root} mixes two layouts: submission files at its top ({_names(files)}) beside "
            f"folders ({_names(folders)}). A flat class folder holds only <student>.py or "
            "<student>.ipynb files (give --exercise); nbgrader's submitted/ folder holds only "
            "<student>/<assignment>/ folders. Move one of them out and run again.")
    if folders:
        return _discover_nbgrader(root, entries, exercise)
    if exercise is None:
        raise ValueError(f"{root} is a flat folder of files: give --exercise")
    return _discover_flat(root, entries, exercise)


def _discover_flat(root: Path, entries: list[_Entry], exercise: str) -> Found:
    by_student: dict[str, list[_Entry]] = defaultdict(list)
    skipped = []
    for e in entries:
        stem, suffix = nfc(Path(e.name).stem), Path(e.name).suffix
        if e.candidate:
            by_student[stem].append(e)
        elif suffix in SUBMISSION_SUFFIXES and not e.hidden:  # a link or special file
            skipped.append(_skip(e, student=stem, exercise=exercise, key=f"{stem}/{exercise}"))
        else:
            skipped.append(_skip(e))
    subs = []
    for student, files in sorted(by_student.items()):
        key = f"{student}/{exercise}"
        if len(files) == 1:
            subs.append(Submission(student, exercise, files[0].path, key, root))
            continue
        names = [f.name for f in files]
        reason = (f"{_both(_spelled(names))} for one student ({student}) and exercise "
                  f"({exercise}){_unicode_note(names)}: none of them is graded; leave one")
        skipped += [Skipped(str(f.path), "duplicate", reason, student, exercise, key)
                    for f in files]
    return Found(subs, sorted(skipped, key=lambda s: s.path))


def _discover_nbgrader(root: Path, entries: list[_Entry], only: str | None) -> Found:
    subs: list[Submission] = []
    skipped: list[Skipped] = []
    found: list[tuple[Submission, Path]] = []  # with its assignment folder as found
    for student in entries:
        name = nfc(student.name)
        if not student.folder:
            skipped.append(_skip(student))
            continue
        inside = _entries(student.path)
        if isinstance(inside, str):
            skipped.append(Skipped(str(student.path), "unreadable", inside, name))
            continue
        if not inside:
            skipped.append(Skipped(str(student.path), "empty", "an empty student folder: "
                                   "nothing submitted", name))
        for e in inside:
            if e.folder:
                sub, more = _assignment(root, name, e, only)
                found += [(sub, e.path)] if sub else []
                skipped += more
            elif e.candidate:
                skipped.append(Skipped(
                    str(e.path), "outside_assignment", "a file directly in a student's folder, "
                    "outside any assignment folder (nbgrader's layout is "
                    "<student>/<assignment>/<file>)", name))
            else:
                skipped.append(_skip(e, student=name))
    by_pair: dict[tuple[str, str], list[tuple[Submission, Path]]] = defaultdict(list)
    for s, folder in found:
        by_pair[(s.student, s.exercise)].append((s, folder))
    graded = []
    for (student, exercise), group in by_pair.items():
        if len(group) == 1:
            graded.append(group[0][0])
            continue
        folders = [str(folder.relative_to(root)) for _, folder in group]
        reason = (f"{len(group)} assignment folders for one student ({student}) and exercise "
                  f"({exercise}){_unicode_note(folders)}: {', '.join(_spelled(folders))}; none "
                  "of them is graded; leave one")
        skipped += [Skipped(str(s.path or folder), "duplicate", reason, student, exercise, s.key)
                    for s, folder in group]
    return Found(sorted(graded, key=lambda s: s.key), sorted(skipped, key=lambda s: s.path))


def _assignment(root: Path, student: str, folder: _Entry,
                only: str | None) -> tuple[Submission | None, list[Skipped]]:
    """The submission of one assignment folder (or None) and what else it holds."""
    inside = _entries(folder.path)
    key = f"{student}/{nfc(folder.name)}"
    if isinstance(inside, str):
        return None, [Skipped(str(folder.path), "unreadable", inside, student, None, key)]
    candidates = [e for e in inside if e.candidate]
    by_name = exercise_for(nfc(folder.name))
    n = ("it is empty" if not inside else "its one entry is not graded" if len(inside) == 1
         else f"its {len(inside)} entries are not graded")
    if only is not None and by_name not in (None, only):
        return None, [Skipped(str(folder.path), "other_exercise",
                              f"the assignment of the exercise {by_name}, but this batch grades "
                              f"only {only} (--exercise); {n}", student, by_name, key)]
    exercise = only or by_name
    if exercise is None:
        named = {exercise_for("", nfc(e.name)) for e in candidates} - {None}
        if len(named) == 1:
            exercise = named.pop()
        else:
            return None, [Skipped(
                str(folder.path), "unknown_exercise",
                f"no exercise is named {folder.name!r} (nor any file in it); the exercises are "
                f"{', '.join(exercises.names())}; rename the folder; {n}", student, None, key)]
    who = {"student": student, "exercise": exercise, "key": key}
    skipped = []
    for e in inside:
        if e.candidate:
            continue
        if e.name == "timestamp.txt" and e.type == "file":
            skipped.append(Skipped(str(e.path), "nbgrader_timestamp",
                                   "nbgrader's submission time (not a submission)", **who))
        else:
            skipped.append(_skip(e, **who))
    if len(candidates) > 1:
        named = [e for e in candidates if nfc(Path(e.name).stem) == exercise]
        if len(named) != 1:
            names = [e.name for e in candidates]
            reason = (f"{_both(_spelled(names))} for one student ({student}) and exercise "
                      f"({exercise}){_unicode_note(names)}: none of them is graded; leave one "
                      f"(named {exercise}.ipynb or {exercise}.py)")
            return None, skipped + [Skipped(str(e.path), "duplicate", reason, **who)
                                    for e in candidates]
        skipped += [Skipped(str(e.path), "extra", f"an extra file beside {named[0].name}, "
                            f"which is the file graded for {student} and {exercise}", **who)
                    for e in candidates if e is not named[0]]
        candidates = named
    path = candidates[0].path if candidates else None
    return Submission(student, exercise, path, key, root), skipped


def read_regular(path: str | Path, root: str | Path | None = None) -> bytes:
    """The bytes of the regular file ``path``, reached without following a symbolic link at any
    step below ``root`` (``root`` itself is opened as given; None: only ``path``'s last step is
    checked): :func:`autograder.source.submission.open_regular`. Never blocks on a named pipe and
    never opens a device.

    Raises :class:`NotRegularFile` when ``path``, or a folder on the way, is now a link, a
    special file or something else than it was; ``OSError`` when it cannot be read."""
    try:
        fd = open_regular(path, root)
    except NotRegular as exc:
        if exc.folder is not None:
            now = (f"the folder {exc.folder} on its way is now a link or not a folder (changed "
                   "since the class folder was read); links are never followed")
        elif exc.replaced:
            now = "replaced while it was being opened (changed since the class folder was read)"
        else:
            now = (("now a symbolic link" if stat.S_ISLNK(exc.mode) else
                    "no longer a regular file") + " (changed since the class folder was read); "
                   "links are never followed")
        raise NotRegularFile(f"{path}: {now}") from None
    with os.fdopen(fd, "rb") as f:
        return f.read()
