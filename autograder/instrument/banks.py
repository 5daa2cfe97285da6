"""Shared-memory bank conflicts, counted per warp instruction.

Lanes are grouped into warps of 32 by linear thread id; within a barrier interval, a lane's k-th
shared access at an instruction (a site) is lined up with the other lanes' k-th access there as
one warp instruction (when all lanes took the same path, simply the i-th access of each,
vectorised). Its cost is the largest number of distinct 4-byte words that fall in one of the 32
banks (lanes reading the same word are a broadcast, counted once); a conflict-free instruction
costs what its width needs (1 for 4-byte elements). Atomics are left out.

For a conflicting access to an array of two or more dimensions, the same lanes' elements are
also laid out with the inner dimension one element longer (``tile[32, 33]`` for ``tile[32,
32]``) and costed again: ``padded_max_ways`` says whether padding by one removes the conflict
(1) or not (a 16x16 block reading an 18-wide tile is 2-way either way).
"""

from __future__ import annotations

import numpy as np

from .analysis import Analysis, kth_groups, uniform_lanes
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


def costs(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised ``ways`` for many warp instructions: ``words`` is (lanes x instructions) of
    4-byte word numbers; returns (cost, ideal) per instruction."""
    n = words.shape[1]
    ws = np.sort(words, axis=0)
    new = np.ones(ws.shape, dtype=bool)
    new[1:] = ws[1:] != ws[:-1]
    cols = np.nonzero(new)[1]
    per_bank = np.bincount(cols * BANKS + ws[new] % BANKS, minlength=n * BANKS)
    cost = per_bank.reshape(n, BANKS).max(axis=1)
    ideal = (new.sum(axis=0) + BANKS - 1) // BANKS
    return cost, ideal


def padded(addrs, info) -> np.ndarray | None:
    """The byte addresses ``addrs`` (of elements of the shared array ``info``, a
    ``memory.ArrayInfo``) were its inner dimension one element longer; None for an array of
    fewer than two dimensions."""
    if len(info.shape) < 2:
        return None
    width = int(info.shape[-1])
    flat = (np.asarray(addrs, dtype=np.int64) - info.base) // info.itemsize
    row, col = np.divmod(flat, width)
    return info.base + (row * (width + 1) + col) * info.itemsize


class BankConflicts(Analysis):
    key = "bank_conflicts"

    def __init__(self):
        # (loc, array, kind) -> [instructions, conflicted, max ways, extra, max ways padded by
        # one (0: not known)]
        self._stats = {}

    def _count(self, loc, array, kind, cost, ideal, padded_ways=0):
        s = self._stats.get((loc, array, kind))
        if s is None:
            s = self._stats[(loc, array, kind)] = [0, 0, 1, 0, 0]
        s[0] += 1
        if cost > ideal:
            s[1] += 1
            s[2] = max(s[2], cost // ideal)
            s[3] += cost - ideal
            s[4] = max(s[4], padded_ways)

    def interval(self, rec, iv):
        log = iv.log
        for _warp, segs in iv.warps():
            lanes = [log[s0:s1] for _, s0, s1, _, _ in segs if s1 > s0]
            if not lanes:
                continue
            if uniform_lanes(lanes):
                self._uniform(rec, lanes)
            else:
                for (site, _k), events in kth_groups(lanes).items():
                    _, _, array, _, kind = events[0]
                    if kind != ATOMIC:
                        info = rec.arrays[array]
                        addrs = [e[3] for e in events]
                        cost, ideal = ways(addrs, info.itemsize)
                        pad = padded(addrs, info) if cost > ideal else None
                        if pad is not None:
                            c, i = ways([int(a) for a in pad], info.itemsize)
                            pad = c // i
                        self._count(rec.site_loc(site), array, kind, cost, ideal, pad or 0)

    def _uniform(self, rec, lanes):
        """Every lane took the same path: column i of the lanes' events is one instruction."""
        head = lanes[0]
        addrs = np.array([[e[3] for e in lane] for lane in lanes], dtype=np.int64)
        width = {}
        for i, e in enumerate(head):
            if e[4] != ATOMIC:
                width.setdefault(max(1, rec.arrays[e[2]].itemsize // WORD), []).append(i)
        for per, cols in width.items():
            words = addrs[:, cols] // WORD
            words = np.concatenate([words + j for j in range(per)]) if per > 1 else words
            cost, ideal = costs(words)
            pads = self._padded_ways(rec, head, addrs, cols, per, cost > ideal)
            for c, i in enumerate(cols):
                _, site, array, _, kind = head[i]
                self._count(rec.site_loc(site), array, kind, int(cost[c]), int(ideal[c]),
                            pads.get(c, 0))

    @staticmethod
    def _padded_ways(rec, head, addrs, cols, per, conflicted) -> dict[int, int]:
        """Column c of ``cols`` -> the ways of its instruction were its array's inner dimension
        one element longer, for the conflicted columns of arrays of two or more dimensions."""
        by_array = {}
        for c in np.nonzero(conflicted)[0]:
            by_array.setdefault(head[cols[c]][2], []).append(int(c))
        out = {}
        for array, chosen in by_array.items():
            moved = padded(addrs[:, [cols[c] for c in chosen]], rec.arrays[array])
            if moved is None:
                continue
            words = moved // WORD
            words = np.concatenate([words + j for j in range(per)]) if per > 1 else words
            cost, ideal = costs(words)
            out.update(zip(chosen, (cost // ideal).tolist()))
        return out

    def result(self, rec):
        out = []
        for (loc, array, kind), (n, bad, worst, extra, pad) in sorted(self._stats.items()):
            if bad:
                info = rec.arrays[array]
                entry = {**rec.where(loc), "array": info.name, "shape": list(info.shape),
                         "access": ACCESS_NAMES[kind], "max_ways": worst,
                         "conflicted_instructions": bad, "instructions": n,
                         "extra_wavefronts": extra}
                if pad:
                    entry["padded_max_ways"] = pad
                out.append(entry)
        return out
