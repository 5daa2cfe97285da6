"""Shared-memory bank conflicts, counted per warp instruction.

Lanes are grouped into warps of 32 by linear thread id; a lane's k-th shared access at a line is
lined up with the other lanes' k-th access at that line as one warp instruction. Its cost is
the largest number of distinct 4-byte words that fall in one of the 32 banks (lanes reading the
same word are a broadcast, counted once); a conflict-free instruction costs what its width needs
(1 for 4-byte elements). Atomics are left out.
"""

from __future__ import annotations

from .analysis import Analysis
from .trace import ACCESS_NAMES, ATOMIC

BANKS = 32
WORD = 4


def ways(addrs, itemsize: int) -> tuple[int, int]:
    """(cost, ideal) of one warp instruction touching byte addresses ``addrs``."""
    words = set()
    per = max(1, itemsize // WORD)
    for a in addrs:
        w = a // WORD
        for i in range(per):
            words.add(w + i)
    per_bank = {}
    for w in words:
        b = w % BANKS
        per_bank[b] = per_bank.get(b, 0) + 1
    cost = max(per_bank.values())
    ideal = -(-len(words) // BANKS)
    return cost, ideal


class BankConflicts(Analysis):
    key = "bank_conflicts"

    def __init__(self):
        self._groups = {}   # (warp, loc, k) -> [array, kind, [addr...]]
        self._stats = {}    # (loc, array, kind) -> [instructions, conflicted, max ways, extra]

    def interval(self, rec, log):
        groups = self._groups
        for tid, loc, k, array, addr, kind in log:
            if kind == ATOMIC:
                continue
            key = (tid >> 5, loc, k)
            g = groups.get(key)
            if g is None:
                groups[key] = [array, kind, [addr]]
            else:
                g[2].append(addr)

    def block_end(self, rec):
        for (_w, loc, _k), (array, kind, addrs) in self._groups.items():
            cost, ideal = ways(addrs, rec.arrays[array].itemsize)
            s = self._stats.setdefault((loc, array, kind), [0, 0, 1, 0])
            s[0] += 1
            if cost > ideal:
                s[1] += 1
                s[2] = max(s[2], cost // ideal)
                s[3] += cost - ideal
        self._groups = {}

    def result(self, rec):
        out = []
        for (loc, array, kind), (n, bad, worst, extra) in sorted(self._stats.items()):
            if bad:
                out.append({**rec.where(loc), "array": rec.arrays[array].name,
                            "access": ACCESS_NAMES[kind], "max_ways": worst,
                            "conflicted_instructions": bad, "instructions": n,
                            "extra_wavefronts": extra})
        return out
