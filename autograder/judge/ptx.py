"""What the concept tests read off a kernel's PTX: shared memory, barriers, atomics, fences.

The PTX is compiled from the student's source by Numba's real CUDA target (no GPU needed), so a
kernel that aliases ``cuda.shared.array`` or hides its barriers in a device function is still
seen as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SHARED = re.compile(r"\.shared\s+\.align\s+\d+\s+\.b8\s+\S+\[(\d+)\]")
_BARRIER = re.compile(r"\b(?:bar|barrier)\.sync(?:\.aligned)?\s")
_ATOMIC = re.compile(r"\b(?:atom|red)\.")
_FENCE = re.compile(r"\b(?:membar\.(?:gl|sys)|fence\.(?:sc|acq_rel)\.(?:gpu|sys))\b")


@dataclass(frozen=True)
class PtxFacts:
    """Counts in one PTX module: static shared memory (bytes), and the source lines holding
    barriers, atomic instructions and device-wide memory fences; and where the fences stand
    around the atomics, in the PTX's order (the source's order for structured code):
    ``fence_before_atomics`` when every atomic has a fence before it, after the last barrier
    (a block's writes are ordered before it arrives), ``fence_after_atomics`` when every atomic
    has one after it, before the next barrier (what other blocks wrote is seen after the wait).
    Both False without atomics."""

    shared_bytes: int
    barriers: int
    atomics: int
    fences: int
    fence_before_atomics: bool = False
    fence_after_atomics: bool = False


_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)")


def _sites(ptx: str, pattern: re.Pattern) -> int:
    """Source lines (from ``.loc`` line info) holding an instruction that matches ``pattern``.

    Counting lines, not instructions, keeps an unrolled loop from multiplying one
    ``cuda.syncthreads()`` into several. Without line info, instructions are counted."""
    sites, loc, unlocated = set(), None, 0
    for line in ptx.splitlines():
        m = _LOC.match(line)
        if m:
            loc = (m.group(1), m.group(2))
        elif pattern.search(line):
            if loc is None:
                unlocated += 1
            else:
                sites.add(loc)
    return len(sites) + unlocated


def _fences_around_atomics(ptx: str) -> tuple[bool, bool]:
    """(every atomic has a fence before it since the last barrier, every atomic has a fence after
    it before the next barrier or the end), in PTX order. A barrier between a fence and an atomic
    breaks the chain: what the block's other threads did before the barrier is ordered only by a
    fence after it (a release), and what one thread saw before a barrier reaches the others only
    through a fence before it (an acquire)."""
    order = []
    for line in ptx.splitlines():
        if _ATOMIC.search(line):
            order.append("atomic")
        elif _FENCE.search(line):
            order.append("fence")
        elif _BARRIER.search(line):
            order.append("barrier")
    atomics = [i for i, e in enumerate(order) if e == "atomic"]
    if not atomics:
        return False, False

    def fenced(steps) -> bool:
        for e in steps:
            if e == "fence":
                return True
            if e == "barrier":
                return False
        return False

    before = all(fenced(reversed(order[:i])) for i in atomics)
    after = all(fenced(order[i + 1:]) for i in atomics)
    return before, after


def facts(ptx: str) -> PtxFacts:
    """Facts of a PTX module; barriers, atomics and fences count distinct source lines."""
    before, after = _fences_around_atomics(ptx)
    return PtxFacts(
        shared_bytes=sum(int(n) for n in _SHARED.findall(ptx)),
        barriers=_sites(ptx, _BARRIER),
        atomics=_sites(ptx, _ATOMIC),
        fences=_sites(ptx, _FENCE),
        fence_before_atomics=before,
        fence_after_atomics=after,
    )
