"""Use of shared memory, not its presence: how data moves between the threads of a block.

Per block, every shared element remembers its last writer (thread, barrier interval) and the
threads that read it since. From that, over the blocks run:

- ``arrays``: per shared array, the accesses (``reads``, ``writes``) and ``cross_thread_reads``:
  reads of a value another thread of the block wrote (a tile element loaded by one thread and
  used by the others; a partial sum one step of a tree hands to the next);
- ``max_reads_by_one_thread``: the most shared reads one thread made in one block (a serial
  sum in thread 0 reads the whole block; a tree about 2 log2 of it);
- ``ordering_barriers``: per ``cuda.syncthreads()`` line, ``dependences``: accesses by two
  different threads to one element (a write then a read, a read then a write, two writes) that
  this barrier was the first to separate. A barrier that separates none orders nothing the data
  flow needs (both barriers at the kernel's start, a barrier around a scratch variable);
- from the data flow (``taint``), per output element (a global element the kernel stored):
  ``outputs_traced`` (how many), ``shared_inputs``: over them, the sum of the distinct input
  elements each one's value depends on that reached it through shared memory written by
  *another* thread of its block (a tiled matmul: each C element depends on 2n inputs, all but
  the few its own thread loaded; a tree sum: all but the storing thread's own); that count
  does not grow with the traffic (a sum that adds two elements while it loads reaches the same
  inputs with half the shared reads); ``outputs_from_shared``: outputs whose every input came
  that way (a transpose stores B from the tile written by another thread, not from its own
  load or its own slot); ``max_output_steps``: the longest chain of operations combining two
  loaded values behind any output (a tree sum of n values log2(n), a serial sum n - 1).

Atomics count as a read and a write. Shared accesses inside one interval by different threads
are races (``races``), not dependences.
"""

from __future__ import annotations

from .analysis import Analysis
from .trace import READ, WRITE


class SharedUse(Analysis):
    key = "shared_use"

    def __init__(self):
        self._arrays = {}       # array id -> [reads, writes, cross-thread reads]
        self._ordering = {}     # barrier loc -> dependences it was the first to separate
        self._max_reads = 0
        self._outputs = 0
        self._shared_inputs = 0
        self._from_shared = 0
        self._max_steps = 0
        self._block()

    def _block(self):
        self._k = 0             # barrier interval of the block now running
        self._closing = []      # interval -> loc of the barrier that closed it
        self._credits = {}      # interval -> dependences first separated by its closing barrier
        self._writer = {}       # address -> (tid, interval) of its latest write
        # address -> [interval, tid] of its latest read, then of the latest read by another
        # thread than that one (None, None): the latest read by any thread but a writer's
        self._readers = {}
        self._reads = {}        # tid -> shared reads in this block

    def interval(self, rec, iv):
        k = self._k
        writer, readers, reads = self._writer, self._readers, self._reads
        credits, arrays = self._credits, self._arrays
        counts, counted = None, None
        for tid, _site, array, addr, kind in iv.log:
            if array != counted:
                counts = arrays.get(array)
                if counts is None:
                    counts = arrays[array] = [0, 0, 0]
                counted = array
            if kind != WRITE:   # a read, or an atomic (a read and a write)
                counts[0] += 1
                reads[tid] = reads.get(tid, 0) + 1
                w = writer.get(addr)
                if w is not None and w[0] != tid:
                    counts[2] += 1
                    if w[1] < k:
                        credits[w[1]] = credits.get(w[1], 0) + 1
                r = readers.get(addr)
                if r is None:
                    readers[addr] = [k, tid, None, None]
                elif r[1] == tid:
                    r[0] = k
                else:
                    r[2], r[3], r[0], r[1] = r[0], r[1], k, tid
            if kind != READ:
                counts[1] += 1
                w = writer.get(addr)
                if w is not None and w[0] != tid and w[1] < k:
                    credits[w[1]] = credits.get(w[1], 0) + 1
                r = readers.pop(addr, None)
                if r is not None:
                    k0 = r[0] if r[1] != tid else r[2]
                    if k0 is not None and k0 < k:
                        credits[k0] = credits.get(k0, 0) + 1
                writer[addr] = (tid, k)

    def episode(self, rec, episode, arrived, exited):
        locs = {}
        for _, loc in arrived:
            locs[loc] = locs.get(loc, 0) + 1
        self._closing.append(max(locs, key=locs.get) if locs else None)
        self._k += 1

    def block_end(self, rec):
        for d, c, h in rec.outputs.values():
            self._outputs += 1
            if c:
                self._shared_inputs += c.bit_count()
                if not d & ~c:
                    self._from_shared += 1
            if h > self._max_steps:
                self._max_steps = h
        if self._reads:
            self._max_reads = max(self._max_reads, max(self._reads.values()))
        for k, n in self._credits.items():
            loc = self._closing[k] if k < len(self._closing) else None
            self._ordering[loc] = self._ordering.get(loc, 0) + n
        self._block()

    def result(self, rec):
        arrays = []
        for array, (reads, writes, cross) in sorted(self._arrays.items()):
            info = rec.arrays[array]
            arrays.append({"name": info.name, "line": info.line, "reads": reads,
                           "writes": writes, "cross_thread_reads": cross})
        return {"arrays": arrays,
                "cross_thread_reads": sum(a["cross_thread_reads"] for a in arrays),
                "max_reads_by_one_thread": self._max_reads,
                "ordering_barriers": [{**rec.where(loc), "dependences": n}
                                      for loc, n in sorted(self._ordering.items())
                                      if loc is not None],
                "outputs_traced": self._outputs,
                "shared_inputs": self._shared_inputs,
                "outputs_from_shared": self._from_shared,
                "max_output_steps": self._max_steps}
