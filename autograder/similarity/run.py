"""One similarity run: a class folder (and archives) read, each exercise's documents compared,
the pairs ranked. Everything runs here, in this process: nothing is sent anywhere."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .classfolder import instructor_documents, read_class
from .score import THRESHOLD, Document, Pair, fingerprint_all, rank_pairs
from .tokens import token_stream


@dataclass
class Similarity:
    """Pairs per exercise (highest score first), the documents compared per exercise, and a
    line for each entry that was not read."""

    pairs: dict[str, list[Pair]] = field(default_factory=dict)
    documents: dict[str, list[Document]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    threshold: float = THRESHOLD

    def flagged(self, exercise: str) -> list[Pair]:
        """The pairs of ``exercise`` at or above the threshold."""
        return [p for p in self.pairs.get(exercise, []) if p.score >= self.threshold]


def compare(documents: list[Document], skeleton: str | None) -> list[Pair]:
    """The ranked pairs of one exercise's ``documents`` (class and archive alike)."""
    fingerprint_all(documents, token_stream(skeleton) if skeleton else None)
    return rank_pairs(documents)


def similarity(class_dir: str | Path, exercise: str | None = None,
               against: list[str | Path] = (), instructor: bool = True) -> Similarity:
    """Compare the submissions under ``class_dir`` (nbgrader's ``submitted/`` layout, or a flat
    folder with ``exercise``) pairwise, and with the archives in ``against`` (folders of the
    same layouts: earlier terms) and, with ``instructor``, the exercise's instructor solutions
    and variants. Raises ``ValueError`` for a folder ``discover`` refuses."""
    skeletons: dict[str, str | None] = {}
    docs, notes = read_class(class_dir, exercise, skeletons)
    for n, folder in enumerate(against, 1):
        name = Path(folder).name or f"archive{n}"
        for ex in list(docs):
            more, more_notes = read_class(folder, ex, skeletons, archive=True,
                                          prefix=f"archive:{name}/")
            docs[ex] += more.get(ex, [])
            notes += more_notes
    result = Similarity(notes=notes)
    for ex, group in sorted(docs.items()):
        if instructor:
            group = group + instructor_documents(ex, skeletons.get(ex))
        result.documents[ex] = group
        result.pairs[ex] = compare(group, skeletons.get(ex))
    return result
