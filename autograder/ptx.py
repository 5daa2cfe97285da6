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
    """Counts in one PTX module: static shared memory (bytes), barrier instructions, atomic
    instructions and device-wide memory fences."""

    shared_bytes: int
    barriers: int
    atomics: int
    fences: int


def facts(ptx: str) -> PtxFacts:
    return PtxFacts(
        shared_bytes=sum(int(n) for n in _SHARED.findall(ptx)),
        barriers=len(_BARRIER.findall(ptx)),
        atomics=len(_ATOMIC.findall(ptx)),
        fences=len(_FENCE.findall(ptx)),
    )
