"""Global memory traffic: loads of the kernel's array arguments, per output element written (a
naive matmul loads 2n values per element of C; a tiled one 2n / TILE_WIDTH), and how well each
warp's loads coalesce.

Every read of global memory counts as a load, whatever makes it: a plain load, an atomic (any
of them reads the element, ``cuda.atomic.add(A, i, 0.0)`` included), a method of the array that
reads it. An output element is one the kernel stored (a plain store, or an atomic that changed
it). Coalescing is measured on plain loads and stores only.

A *warp request* is one load instruction executed by the lanes of a warp together: within a
barrier interval, each lane's k-th load at a site (an instruction) lined up with the other
lanes' k-th load there (when all lanes took the same path, simply the i-th load of each). Its
cost is the number of distinct 32-byte sectors its lanes' addresses fall in (what the memory
system moves; a 128-byte line is four sectors): 32 consecutive float32 elements are 4 sectors,
32 elements of one column of a row-major matrix are 32. Its *ideal* is the fewest sectors that
could hold the distinct elements it reads (lanes reading one element share it).

``blocks``: per block run, its index, its loads per array and the output elements it stored: an
edge block loads for fewer outputs (a matmul's corner block of one output loads a row and a
column), so a bound on loads is judged block by block where the exercise says what the
instructor's kernel loads in each (``Use.block_loads``).

Addresses are byte offsets from each array's element 0, which is taken as sector-aligned (the
driver aligns allocations to 256 bytes; a guarded view's start may not be, which can add one
sector per row a warp touches).
"""

from __future__ import annotations

import numpy as np

from .analysis import Analysis, kth_groups, uniform_lanes
from .trace import ARRAYS, ATOMIC, READ, SAME, WRITE

SECTOR = 32
LINE = 128


def _lanes_by_warp(log: list) -> list[list[list]]:
    """The log's loads as [warp][lane][event]: each thread's loads are contiguous (it ran alone
    until its barrier), in thread-id order."""
    warps, lanes, lane, tid = [], [], None, None
    for e in log:
        if e[0] != tid:
            if lanes and (e[0] >> 5) != (tid >> 5):
                warps.append(lanes)
                lanes = []
            tid = e[0]
            lane = []
            lanes.append(lane)
        lane.append(e)
    if lanes:
        warps.append(lanes)
    return warps


class GlobalLoads(Analysis):
    key = "global_loads"

    def __init__(self):
        self._req = {}   # loc * ARRAYS + array id -> [requests, sectors, ideal, lines]
        self._blocks = []      # per block run: {"block", "loads": {name: n}, "outputs"}
        self._block_loads = {}  # array id -> loads in the block now running

    def _count(self, key, requests, sectors, ideal, lines):
        s = self._req.get(key)
        if s is None:
            s = self._req[key] = [0, 0, 0, 0]
        s[0] += requests
        s[1] += sectors
        s[2] += ideal
        s[3] += lines

    def interval(self, rec, iv):
        counts = rec.global_loads
        site_loc = rec.site_loc
        block_loads = self._block_loads
        log = []
        for e in iv.global_log:
            kind = e[4]
            if kind == READ or kind == ATOMIC:
                key = e[1] * ARRAYS + e[2]
                counts[key] = counts.get(key, 0) + 1
                block_loads[e[2]] = block_loads.get(e[2], 0) + 1
                if kind == READ:
                    # Lined up by (line, array), the unit the report counts loads in.
                    log.append((e[0], site_loc(e[1]) * ARRAYS + e[2], e[2], e[3]))
        for lanes in _lanes_by_warp(log):
            if uniform_lanes(lanes):
                self._uniform(rec, lanes)
            else:
                for (key, _k), events in kth_groups(lanes).items():
                    item = rec.arrays[events[0][2]].itemsize
                    addrs = {e[3] for e in events}
                    sectors = len({a // SECTOR for a in addrs})
                    lines = len({a // LINE for a in addrs})
                    ideal = -(-len(addrs) * item // SECTOR)
                    self._count(key, 1, sectors, ideal, lines)

    def _uniform(self, rec, lanes):
        """Every lane took the same path: column i of the lanes' loads is one warp request."""
        head = lanes[0]
        addrs = np.array([[e[3] for e in lane] for lane in lanes], dtype=np.int64)
        addrs.sort(axis=0)
        distinct = 1 + (addrs[1:] != addrs[:-1]).sum(axis=0)
        secs = addrs // SECTOR
        sectors = 1 + (secs[1:] != secs[:-1]).sum(axis=0)
        lns = addrs // LINE
        lines = 1 + (lns[1:] != lns[:-1]).sum(axis=0)
        for i, e in enumerate(head):
            item = rec.arrays[e[2]].itemsize
            self._count(e[1], 1, int(sectors[i]),
                        -(-int(distinct[i]) * item // SECTOR), int(lines[i]))

    def block_end(self, rec):
        self._blocks.append({"block": [int(b) for b in rec.block],
                             "loads": {rec.arrays[a].name: n
                                       for a, n in sorted(self._block_loads.items())},
                             "outputs": len(rec.outputs)})
        self._block_loads = {}

    def result(self, rec):
        by_array, by_line = {}, {}
        for key, n in rec.global_loads.items():
            site, array = divmod(key, ARRAYS)
            loc = rec.site_loc(site)
            name = rec.arrays[array].name
            by_array[name] = by_array.get(name, 0) + n
            by_line[loc] = by_line.get(loc, 0) + n
        coalescing = {}
        for key, counts in self._req.items():
            loc, array = divmod(key, ARRAYS)
            s = coalescing.setdefault((loc, rec.arrays[array].name), [0, 0, 0, 0])
            for i, v in enumerate(counts):
                s[i] += v
        written = {}
        for array, _ in rec.global_stores:
            name = rec.arrays[array].name
            written[name] = written.get(name, 0) + 1
        total = sum(by_array.values())
        outputs = sum(written.values())
        return {"loads": total,
                "by_array": dict(sorted(by_array.items())),
                "by_line": [{**rec.where(loc), "loads": n} for loc, n in sorted(by_line.items())],
                "coalescing": [
                    {**rec.where(loc), "array": name, "requests": n, "sectors": sec,
                     "ideal_sectors": ideal, "lines_128": lines,
                     "sectors_per_request": round(sec / n, 3)}
                    for (loc, name), (n, sec, ideal, lines) in sorted(coalescing.items())],
                "outputs_written": dict(sorted(written.items())),
                "per_output": round(total / outputs, 4) if outputs else None,
                "blocks": self._blocks}


class GlobalStores(GlobalLoads):
    """How well each warp's global *stores* coalesce, counted as :class:`GlobalLoads` counts
    loads (a warp request is the lanes' k-th plain store at one line; atomics are left out):
    ``{"coalescing": [{"line", "array", "requests", "sectors", "ideal_sectors", "lines_128",
    "sectors_per_request"}, ...]}``. A transpose that writes B down a column moves 32 sectors
    per warp store, where 4 would hold its 32 float32 elements."""

    key = "global_stores"

    def block_end(self, rec):
        pass

    def interval(self, rec, iv):
        site_loc = rec.site_loc
        log = [(e[0], site_loc(e[1]) * ARRAYS + e[2], e[2], e[3]) for e in iv.global_log
               if e[4] == WRITE or e[4] == SAME]
        for lanes in _lanes_by_warp(log):
            if uniform_lanes(lanes):
                self._uniform(rec, lanes)
            else:
                for (key, _k), events in kth_groups(lanes).items():
                    item = rec.arrays[events[0][2]].itemsize
                    addrs = {e[3] for e in events}
                    self._count(key, 1, len({a // SECTOR for a in addrs}),
                                -(-len(addrs) * item // SECTOR), len({a // LINE for a in addrs}))

    def result(self, rec):
        coalescing = {}
        for key, counts in self._req.items():
            loc, array = divmod(key, ARRAYS)
            s = coalescing.setdefault((loc, rec.arrays[array].name), [0, 0, 0, 0])
            for i, v in enumerate(counts):
                s[i] += v
        return {"coalescing": [
            {**rec.where(loc), "array": name, "requests": n, "sectors": sec,
             "ideal_sectors": ideal, "lines_128": lines, "sectors_per_request": round(sec / n, 3)}
            for (loc, name), (n, sec, ideal, lines) in sorted(coalescing.items())]}
