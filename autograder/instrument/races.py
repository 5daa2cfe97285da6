"""Shared-memory hazards: within one barrier interval of one block, an element that one thread
writes and another thread reads (RAW / WAR) or also writes (WAW). Between two barriers a GPU
orders nothing, so the hazard is in the *set* of accesses, whatever values the run happened to
see. The label follows the fixed execution order of the scheduler (thread-id order): "RAW" when
the write was recorded first. Atomics do not race with atomics.
"""

from __future__ import annotations

from .analysis import Analysis
from .trace import ACCESS_NAMES, ATOMIC, READ, WRITE

# (kind of the later access, kind of the earlier one) -> hazard name
_HAZARD = {(READ, WRITE): "RAW", (READ, ATOMIC): "RAW",
           (WRITE, READ): "WAR", (ATOMIC, READ): "WAR",
           (WRITE, WRITE): "WAW", (WRITE, ATOMIC): "WAW", (ATOMIC, WRITE): "WAW"}
_CONFLICTS = {READ: (WRITE, ATOMIC), WRITE: (READ, WRITE, ATOMIC), ATOMIC: (READ, WRITE)}


class SharedRaces(Analysis):
    key = "races"

    def __init__(self):
        self._found = {}   # (hazard, array, loc first, loc second) -> entry

    def interval(self, rec, iv):
        log = iv.log
        # Elements written (or updated atomically) in this interval, and by which threads;
        # then which of them another thread also touched. Only those are looked at closely.
        touched = {}
        for e in log:
            if e[4] != READ:
                s = touched.get(e[3])
                if s is None:
                    touched[e[3]] = {e[0]}
                else:
                    s.add(e[0])
        if not touched:
            return
        for e in log:
            s = touched.get(e[3])
            if s is not None:
                s.add(e[0])
        shared_by_threads = {addr for addr, s in touched.items() if len(s) > 1}
        if shared_by_threads:
            self._pairs(rec, [e for e in log if e[3] in shared_by_threads])

    def _pairs(self, rec, log):
        # element address -> [per kind: {site: [up to two distinct tids]}]
        elems = {}
        for tid, loc, array, addr, kind in log:   # loc: a site here
            slots = elems.get(addr)
            if slots is None:
                elems[addr] = slots = ({}, {}, {})
            for other in _CONFLICTS[kind]:
                for loc0, tids in slots[other].items():
                    t0 = tids[0] if tids[0] != tid else (tids[1] if len(tids) > 1 else None)
                    if t0 is not None:
                        self._hazard(rec, _HAZARD[(kind, other)], array, addr,
                                     (t0, loc0, other), (tid, loc, kind))
            tids = slots[kind].setdefault(loc, [])
            if len(tids) < 2 and tid not in tids:
                tids.append(tid)

    def _hazard(self, rec, hazard, array, addr, first, second):
        first = (first[0], rec.site_loc(first[1]), first[2])
        second = (second[0], rec.site_loc(second[1]), second[2])
        key = (hazard, array, first[1], second[1])
        entry = self._found.get(key)
        if entry is None:
            info = rec.arrays[array]
            self._found[key] = entry = {
                "kind": hazard,
                "array": info.name,
                "first": {**rec.where(first[1]), "access": ACCESS_NAMES[first[2]],
                          "thread": rec.thread_index(first[0])},
                "second": {**rec.where(second[1]), "access": ACCESS_NAMES[second[2]],
                           "thread": rec.thread_index(second[0])},
                "block": list(rec.block),
                "index": info.index_of(addr),
                "count": 0,
            }
        entry["count"] += 1

    def result(self, rec):
        return sorted(self._found.values(),
                      key=lambda e: (e["first"]["line"], e["second"]["line"], e["kind"],
                                     e["array"]))
