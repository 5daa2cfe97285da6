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
    ``fence_before_atomics`` when a fence comes before the first atomic (a block's writes are
    ordered before it arrives), ``fence_after_atomics`` when one comes after the last (what
    other blocks wrote is seen after the wait). Both False without atomics."""

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
    """(a fence before the first atomic instruction, a fence after the last one), in PTX order."""
    order = [("atomic" if _ATOMIC.search(line) else "fence") for line in ptx.splitlines()
             if _ATOMIC.search(line) or _FENCE.search(line)]
    if "atomic" not in order:
        return False, False
    first = order.index("atomic")
    last = len(order) - 1 - order[::-1].index("atomic")
    return "fence" in order[:first], "fence" in order[last + 1:]


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
