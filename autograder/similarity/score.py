"""Pairs of submissions ranked by how much of their own work they share (pure).

Each document's fingerprints (:mod:`autograder.similarity.fingerprints`) count by how rare
they are among the sources compared (the class's files, the archives' files, and the
instructor's files together as one source): a fingerprint that ``df`` sources hold weighs
``1 / (df - 1)`` (1 when only the two of a pair hold it, 1/2 when three do), and nothing when
more than :data:`COMMON_SHARE` of the documents hold it (the lesson's canonical lines, the
contract, the launch convention: what every correct solution shares). The skeleton's
fingerprints weigh nothing.

Documents of one ``group`` (the instructor's solution, its other versions and the textbook
variants: one author's versions of one kernel) are one source: in the document frequency a
fingerprint several of them hold counts once (two versions of the solution do not halve the
weight of the solution's lines), and a file is paired with the group once, through the member
it matches best.

The score of a pair is the weight of the fingerprints they share over the weight of the
smaller of the two (at least :data:`MIN_WEIGHT`): in [0, 1], 1 when all of one file's own work
is in the other. A score is a reason to look at two files, never a verdict.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from .fingerprints import K, WINDOW, fingerprints
from .tokens import Tokens

#: A fingerprint held by more than this share of the documents (and more than
#: :data:`COMMON_AT_LEAST` of them) counts for no pair.
COMMON_SHARE = 1.0
COMMON_AT_LEAST = 4

#: The least weight a document's own work is taken to have: a tiny file matching a large one
#: in a few places is not thereby all copied.
MIN_WEIGHT = 8.0

#: The score from which a pair is flagged (shown first, with its matched lines, in the HTML).
THRESHOLD = 0.6


@dataclass
class Document:
    """One file compared: ``key`` (``student/assignment`` or ``archive:<name>``), where it is,
    its text, its token stream, and whether it is an archive's (an earlier term's, the
    instructor's): two archive documents are never paired. ``group``: the source it is a
    version of (``"instructor"`` for the instructor's files), or None for a file of its own."""

    key: str
    path: str
    text: str
    tokens: Tokens
    archive: bool = False
    prints: dict[int, list[int]] = field(default_factory=dict)
    group: str | None = None


@dataclass
class Pair:
    """Two documents, their score in [0, 1] and the line ranges (1-based, inclusive) of each
    that the shared fingerprints cover."""

    a: Document
    b: Document
    score: float
    a_lines: list[tuple[int, int]]
    b_lines: list[tuple[int, int]]
    shared: tuple[int, ...] = ()

    def to_dict(self) -> dict:
        """The JSON object of a pair: both keys and paths, the score, the matched lines."""
        return {"a": self.a.key, "b": self.b.key, "a_path": self.a.path, "b_path": self.b.path,
                "score": round(self.score, 4), "b_is_archive": self.b.archive,
                "a_lines": [list(r) for r in self.a_lines],
                "b_lines": [list(r) for r in self.b_lines]}


def weights(docs: list[Document]) -> dict[int, float]:
    """The weight of every fingerprint held by two sources or more (see the module; the
    documents of one group are one source)."""
    holders: dict[int, set] = defaultdict(set)
    for i, d in enumerate(docs):
        for h in d.prints:
            holders[h].add(d.group if d.group is not None else i)
    df = {h: len(who) for h, who in holders.items()}
    common = max(COMMON_AT_LEAST, COMMON_SHARE * len(docs))
    return {h: (1.0 / (n - 1) if n <= common else 0.0) for h, n in df.items() if n >= 2}


def _own_weight(doc: Document, w: dict[int, float]) -> float:
    return sum(w.get(h, 1.0) for h in doc.prints)


def fingerprint_all(docs: list[Document], skeleton: Tokens | None = None, k: int = K,
                    window: int = WINDOW) -> None:
    """Set each document's ``prints``, the skeleton's fingerprints left out."""
    boiler = set(fingerprints(skeleton, k, 1)) if skeleton is not None else set()
    for d in docs:
        d.prints = fingerprints(d.tokens, k, window, boiler)


def line_coverage(doc: Document, shared, k: int = K) -> dict[int, bool]:
    """Each line (1-based) that holds a token of the fingerprints ``shared`` with the other
    file: True when every token of the line lies in a shared run, False when only some do
    (the line differs in part: a changed bound, an added term)."""
    covered = {i for h in shared for start in doc.prints.get(h, ())
               for i in range(start, min(start + k, len(doc.tokens)))}
    lines = doc.tokens.lines
    out = {lines[i]: True for i in covered}
    for i, ln in enumerate(lines):
        if i not in covered and ln in out:
            out[ln] = False
    return out


def _ranges(doc: Document, shared: list[int], k: int) -> list[tuple[int, int]]:
    lines = sorted({doc.tokens.lines[i] for h in shared for start in doc.prints[h]
                    for i in range(start, min(start + k, len(doc.tokens)))})
    out: list[tuple[int, int]] = []
    for ln in lines:
        if out and ln <= out[-1][1] + 1:
            out[-1] = (out[-1][0], ln)
        else:
            out.append((ln, ln))
    return out


def rank_pairs(docs: list[Document], k: int = K, least: float = 0.0) -> list[Pair]:
    """Every pair of ``docs`` (not two archive documents, not two of one group) whose score
    is above ``least``, highest first (ties by keys); a document and a group make one pair,
    with the group's best-matching member. ``docs`` must be fingerprinted
    (:func:`fingerprint_all`)."""
    w = weights(docs)
    own = [_own_weight(d, w) for d in docs]
    holders: dict[int, list[int]] = defaultdict(list)
    for i, d in enumerate(docs):
        for h in d.prints:
            if w.get(h, 0.0) > 0:
                holders[h].append(i)
    shared: dict[tuple[int, int], list[int]] = defaultdict(list)
    for h, who in holders.items():
        for x in range(len(who)):
            for y in range(x + 1, len(who)):
                shared[who[x], who[y]].append(h)
    pairs = []
    best: dict[tuple[int, str], Pair] = {}
    for (i, j), hashes in shared.items():
        a, b = docs[i], docs[j]
        if a.archive and b.archive or a.group is not None and a.group == b.group:
            continue
        if a.archive or b.group is None and a.group is not None:
            a, b, i, j = b, a, j, i
        score = min(1.0, sum(w[h] for h in hashes) / max(MIN_WEIGHT, min(own[i], own[j])))
        if score <= least:
            continue
        pair = Pair(a, b, score, _ranges(a, hashes, k), _ranges(b, hashes, k), tuple(hashes))
        if b.group is None:
            pairs.append(pair)
        else:
            held = best.get((i, b.group))
            if held is None or (-score, b.key) < (-held.score, held.b.key):
                best[i, b.group] = pair
    pairs += best.values()
    pairs.sort(key=lambda p: (-p.score, p.a.key, p.b.key))
    return pairs
