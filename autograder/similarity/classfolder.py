"""The documents to compare: a class folder read as ``batch`` reads it
(:func:`autograder.batch.discovery.discover`: nbgrader's ``submitted/`` or a flat folder,
notebooks and ``.py`` files alike), archives of earlier terms in the same layouts, and the
instructor's solution and variants of the exercise."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from .. import exercises
from ..batch.discovery import discover, read_regular
from ..source.submission import SubmissionError, load_source, notebook_source, python_text
from .score import Document
from .tokens import token_stream


def _document(key: str, path: Path, skeleton: str | None, archive: bool,
              root: Path | None = None) -> Document | str:
    """The document of one file, or why it cannot be read (a sentence). With ``root``, the
    file is read without following a link below it (:func:`read_regular`)."""
    try:
        if root is None:
            text = load_source(path).text
        else:
            data = read_regular(path, root)
            text = (notebook_source(data.decode("utf-8-sig"), str(path)).text
                    if path.suffix == ".ipynb" else python_text(data, str(path)))
    except UnicodeDecodeError:
        return f"{path}: not UTF-8 text"
    except SubmissionError as exc:
        return str(exc)
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    return Document(key=key, path=str(path), text=text,
                    tokens=token_stream(text, skeleton), archive=archive)


def read_class(root: str | Path, exercise: str | None, skeletons: dict[str, str | None],
               archive: bool = False, prefix: str = "") -> tuple[dict[str, list[Document]],
                                                                 list[str]]:
    """Each exercise's documents under ``root`` (``{exercise: [Document, ...]}``) and a line
    for every entry not read, with its reason. ``skeletons``: each exercise's released code
    (filled in as exercises are met, ``None`` when unknown). ``prefix`` goes before each key
    (an archive's name). Raises ``ValueError`` as :func:`discover` does."""
    found = discover(root, exercise)
    docs: dict[str, list[Document]] = defaultdict(list)
    notes = [f"{s.path}: {s.reason}" for s in found.skipped
             if s.kind not in ("hidden", "checkpoints", "nbgrader_timestamp")]
    for sub in found.submissions:
        if sub.path is None:
            notes.append(f"{sub.key}: no notebook or .py file")
            continue
        if sub.exercise not in skeletons:
            skeletons[sub.exercise] = _skeleton(sub.exercise)
        try:
            doc = _document(prefix + sub.key, sub.path, skeletons[sub.exercise], archive,
                            sub.root)
        except Exception as exc:  # noqa: BLE001 - a file that changed is listed, not fatal
            doc = f"{sub.path}: not read ({exc})"
        if isinstance(doc, str):
            notes.append(doc)
        else:
            docs[sub.exercise].append(doc)
    return dict(docs), notes


def _skeleton(exercise: str) -> str | None:
    from .skeleton import released_code
    try:
        return released_code(exercise)
    except exercises.UnknownExercise:
        return None


def instructor_documents(exercise: str, skeleton: str | None) -> list[Document]:
    """The instructor's solutions (``<exercise>.py``, ``<exercise>_*.py`` beside it) and the
    exercise's textbook variants, as archive documents of the group ``"instructor"`` (one
    author's versions of one kernel: one source, paired once with each file); empty where this
    kernelgrade has none (an installed one)."""
    paths: list[Path] = []
    try:
        first = exercises.solution_path(exercise)
        paths.append(first)
        paths += sorted(p for p in first.parent.glob(f"{exercise}_*.py") if p != first)
    except (FileNotFoundError, exercises.UnknownExercise):
        pass
    try:
        paths += exercises.variants(exercise)
    except exercises.UnknownExercise:
        pass
    out = []
    for p in paths:
        doc = _document(f"instructor:{p.name}" if p.parent.name != "variants"
                        else f"instructor:variants/{p.name}", p, skeleton, True)
        if isinstance(doc, Document):
            doc.group = "instructor"
            out.append(doc)
    return out
