"""The recorder: what every hook writes to during one instrumented launch.

Only one simulated CUDA thread runs at a time (see ``scheduler``), so the hooks need no locks:
``Recorder.tid`` is the linear id (x + y*bx + z*bx*by) of the thread now running, set by the
scheduler before it hands over. The recorder keeps raw events; the analyses (``barriers``,
``races``, ``warps``, ``loads``) turn them into findings at interval, episode and block ends.

A source location is one int: the line number, plus ``FILE_STRIDE * i`` for the i-th other file
(0 is the kernel's own file), so a hot path stores an int, not a tuple.
"""

from __future__ import annotations

READ, WRITE, ATOMIC = 0, 1, 2
ACCESS_NAMES = ("read", "write", "atomic")
FILE_STRIDE = 10_000_000


class Recorder:
    def __init__(self, kernel_file: str, block_dim: tuple[int, int, int], analyses):
        self.block_dim = block_dim
        self.nthreads = block_dim[0] * block_dim[1] * block_dim[2]
        self.files = [kernel_file]
        self._code_loc = {}
        self.analyses = analyses
        self.tid = 0
        self.block = (0, 0, 0)
        self.arrays = []          # ArrayInfo, indexed by array id
        self.shared_log = []      # this interval: (tid, loc, k, array id, byte address, kind)
        self.branch_log = []      # this block: (tid, loc, k, taken)
        self.global_loads = {}    # (array id, loc) -> count
        self.global_stores = set()  # (array id, byte offset)
        self._acc_k = []
        self._br_k = []

    # -- locations --------------------------------------------------------------------------
    def file_offset(self, filename: str) -> int:
        if filename not in self.files:
            self.files.append(filename)
        return FILE_STRIDE * self.files.index(filename)

    def loc(self, frame) -> int:
        code = frame.f_code
        off = self._code_loc.get(code)
        if off is None:
            off = self._code_loc[code] = self.file_offset(code.co_filename)
        return frame.f_lineno + off

    def where(self, loc: int) -> dict:
        """JSON form of a location: ``{"line": n}``, plus ``"file"`` outside the kernel's file."""
        i, line = divmod(loc, FILE_STRIDE)
        return {"line": line} if i == 0 else {"line": line, "file": self.files[i]}

    def thread_index(self, tid: int) -> list[int]:
        bx, by, _ = self.block_dim
        return [tid % bx, (tid // bx) % by, tid // (bx * by)]

    # -- hooks (hot paths) ------------------------------------------------------------------
    def shared(self, array: int, addr: int, kind: int, frame) -> None:
        code = frame.f_code
        off = self._code_loc.get(code)
        if off is None:
            off = self._code_loc[code] = self.file_offset(code.co_filename)
        loc = frame.f_lineno + off
        tid = self.tid
        ks = self._acc_k[tid]
        k = ks.get(loc, 0)
        ks[loc] = k + 1
        self.shared_log.append((tid, loc, k, array, addr, kind))

    def global_(self, array: int, offset: int, kind: int, frame) -> None:
        if kind == READ:
            key = (array, self.loc(frame))
            self.global_loads[key] = self.global_loads.get(key, 0) + 1
        else:
            self.global_stores.add((array, offset))

    def branch_hooks(self, filename: str):
        """The two functions a rewritten kernel calls: ``br(line, test)`` for if/while/ternary
        tests and ``loop(line, iterable)`` for for-loops (True per iteration, False at exit)."""
        offset = self.file_offset(filename)
        log = self.branch_log
        rec = self

        def br(line, value):
            taken = bool(value)
            tid = rec.tid
            loc = line + offset
            ks = rec._br_k[tid]
            k = ks.get(loc, 0)
            ks[loc] = k + 1
            log.append((tid, loc, k, taken))
            return taken

        def loop(line, iterable):
            for item in iterable:
                br(line, True)
                yield item
            br(line, False)

        return br, loop

    # -- structure events, from the scheduler (main thread, all lanes parked) ---------------
    def block_start(self, block: tuple[int, int, int]) -> None:
        self.block = block
        self._acc_k = [{} for _ in range(self.nthreads)]
        self._br_k = [{} for _ in range(self.nthreads)]
        self.branch_log.clear()
        self.shared_log = []

    def episode_end(self, episode: int, arrived: list, exited: list) -> None:
        """All live lanes are parked: ``arrived`` [(tid, loc)] wait at a barrier, ``exited``
        [tid] returned since the last episode. Closes one shared-memory interval."""
        log, self.shared_log = self.shared_log, []
        for a in self.analyses:
            a.interval(self, log)
            a.episode(self, episode, arrived, exited)

    def block_end(self) -> None:
        for a in self.analyses:
            a.block_end(self)
        self.branch_log.clear()
