"""Divergent barriers: an episode in which not every live thread of the block waits at the same
``cuda.syncthreads()`` call site, because some wait at another line or returned without reaching
it. On a GPU that is undefined behaviour (a hang or a silent wrong result); the simulator's
barrier simply releases whoever is waiting, so only this record shows it.
"""

from __future__ import annotations

from .analysis import Analysis


class DivergentBarriers(Analysis):
    key = "divergent_barriers"

    def __init__(self):
        self._found = {}   # sorted locations -> entry

    def episode(self, rec, episode, arrived, exited):
        if not arrived:
            return
        counts = {}
        for _, loc in arrived:
            counts[loc] = counts.get(loc, 0) + 1
        if len(counts) == 1 and not exited:
            return
        key = tuple(sorted(counts))
        entry = self._found.get(key)
        if entry is None:
            self._found[key] = entry = {
                "lines": [rec.where(loc)["line"] for loc in key],
                "arrivals": [{**rec.where(loc), "threads": counts[loc]} for loc in key],
                "exited": len(exited),
                "live_threads": len(arrived) + len(exited),
                "block_threads": rec.nthreads,
                "example": {"block": list(rec.block), "episode": episode,
                            "exited_thread": rec.thread_index(exited[0]) if exited else None},
                "fewest_threads": len(arrived),
                "episodes": 0,
                "blocks": [],
            }
        entry["episodes"] += 1
        entry["fewest_threads"] = min(entry["fewest_threads"], len(arrived))
        if list(rec.block) not in entry["blocks"]:
            entry["blocks"].append(list(rec.block))

    def result(self, rec):
        out = []
        for entry in self._found.values():
            e = dict(entry)
            e["blocks"] = len(e["blocks"])
            out.append(e)
        return out
