"""Winnowing fingerprints of a token stream (MOSS's algorithm; the window selection is
copydetect's).

A fingerprint is a hash of ``k`` consecutive tokens; winnowing keeps the smallest hash of
every window of ``window`` consecutive k-grams, so any shared run of ``k + window - 1`` tokens
or more is seen in both files (Schleimer, Wilkerson and Aiken, SIGMOD 2003). The hashes are
ours and deterministic (BLAKE2b of each token, combined polynomially modulo 2**64), so a score
is the same on every run and machine; copydetect's own hashes are Python's salted string
hashes, which change from one process to the next and would change which k-grams winnowing
keeps.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np
from copydetect.utils import winnow

from .tokens import Tokens

#: Tokens per fingerprint, and the winnowing window (in k-grams). A kernel's canonical stream
#: is 100-400 tokens; 10 tokens are about one index expression or one short statement.
K = 10
WINDOW = 3

_BASE = np.uint64(1_000_003)


@lru_cache(maxsize=65536)
def _token_hash(kind: str) -> int:
    return int.from_bytes(hashlib.blake2b(kind.encode(), digest_size=8).digest(), "little")


def kgram_hashes(tokens: Tokens, k: int = K) -> np.ndarray:
    """The hash of every run of ``k`` tokens (int64, ``len(tokens) - k + 1`` of them; empty
    for a shorter stream)."""
    n = len(tokens) - k + 1
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    values = np.array([_token_hash(t) for t in tokens.kinds], dtype=np.uint64)
    out = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for i in range(k):
            out = out * _BASE + values[i:i + n]
    return out.view(np.int64)


def fingerprints(tokens: Tokens, k: int = K, window: int = WINDOW,
                 boilerplate=frozenset()) -> dict[int, list[int]]:
    """``{hash: [index of its first token, ...]}`` of the winnowed k-grams of ``tokens``,
    those in ``boilerplate`` (a set of hashes) left out. Empty for a stream shorter than
    ``k``."""
    hashes = kgram_hashes(tokens, k)
    if len(hashes) == 0:
        return {}
    selected, where = winnow(hashes, window, remove_duplicates=False)
    out: dict[int, list[int]] = {}
    for h, i in zip(selected.tolist(), where.tolist()):
        if h not in boilerplate:
            out.setdefault(h, []).append(i)
    return out
