"""Divergent branches per warp: within a barrier interval, each lane's k-th outcome of the branch
at a line (an ``if``, ``while`` or ternary test; for a ``for`` loop, its trip count) is lined up
with the other lanes' k-th outcome there; the warp branch diverges when its lanes' outcomes
differ (both sides taken, or different trip counts)."""

from __future__ import annotations

import numpy as np

from .analysis import Analysis, kth_groups, uniform_lanes


class DivergentBranches(Analysis):
    key = "divergent_branches"

    def __init__(self):
        self._stats = {}   # loc -> [warp branches, divergent]

    def _count(self, loc, divergent):
        s = self._stats.get(loc)
        if s is None:
            s = self._stats[loc] = [0, 0]
        s[0] += 1
        if divergent:
            s[1] += 1

    def interval(self, rec, iv):
        br = iv.branches
        for _warp, segs in iv.warps():
            lanes = [br[b0:b1] for _, _, _, b0, b1 in segs if b1 > b0]
            if not lanes:
                continue
            if uniform_lanes(lanes):
                outcomes = np.array([[e[2] for e in lane] for lane in lanes], dtype=np.int64)
                split = (outcomes != outcomes[0]).any(axis=0)
                for e, d in zip(lanes[0], split.tolist()):
                    self._count(e[1], d)
            else:
                for (loc, _k), events in kth_groups(lanes).items():
                    self._count(loc, len({e[2] for e in events}) > 1)

    def result(self, rec):
        lines = [{**rec.where(loc), "divergent": d, "warp_branches": n}
                 for loc, (n, d) in sorted(self._stats.items()) if d]
        return {"total": sum(d for _, d in self._stats.values()),
                "warp_branches": sum(n for n, _ in self._stats.values()),
                "by_line": lines}
