"""Divergent branches per warp: each lane's k-th outcome of the branch at a line (an ``if``,
``while`` or ternary test, or a ``for`` loop going round once more) is lined up with the other
lanes' k-th outcome there; the warp branch diverges when its lanes went both ways."""

from __future__ import annotations

from .analysis import Analysis


class DivergentBranches(Analysis):
    key = "divergent_branches"

    def __init__(self):
        self._stats = {}   # loc -> [warp branches, divergent]

    def block_end(self, rec):
        outcome = {}
        for tid, loc, k, taken in rec.branch_log:
            key = (tid >> 5, loc, k)
            outcome[key] = outcome.get(key, 0) | (2 if taken else 1)
        for (_w, loc, _k), mask in outcome.items():
            s = self._stats.setdefault(loc, [0, 0])
            s[0] += 1
            if mask == 3:
                s[1] += 1

    def result(self, rec):
        lines = [{**rec.where(loc), "divergent": d, "warp_branches": n}
                 for loc, (n, d) in sorted(self._stats.items()) if d]
        return {"total": sum(d for _, d in self._stats.values()),
                "warp_branches": sum(n for n, _ in self._stats.values()),
                "by_line": lines}
