"""The recorder: what every hook writes to during one instrumented launch.

Only one simulated CUDA thread runs at a time (see ``scheduler``), so the hooks need no locks:
``Recorder.tid`` is the linear id (x + y*bx + z*bx*by) of the thread now running, set by the
scheduler through ``switch`` before it hands over, which also marks where that thread's events
start in the logs. The hooks (``proxies``, ``branch_hooks``) only append tuples or count; the
analyses (``barriers``, ``races``, ``banks``, ``divergence``, ``loads``) turn them into
findings at interval and block ends.

A source location (*loc*) is one int: the line number, plus ``FILE_STRIDE * i`` for the i-th
other file (0 is the kernel's own file). Memory hooks record a *site* instead, the instruction:
``offset * SITE + code index``, the offset being that of ``f_lasti``'s instruction
(``instruction_starts``); ``site_loc`` maps it to a loc once per distinct site. Code objects
are looked up by ``id``: hashing a code object hashes its whole contents.
"""

from __future__ import annotations

import dis

import numpy as np

from .taint import TAINTED, tainted

READ, WRITE, ATOMIC = 0, 1, 2
# Global log only: a device-wide fence (``cuda.threadfence()``, ``threadfence_system()``; array
# id -1), and a plain store that left the element's value as it was (a WAW race of two such
# stores of one value cannot change any output).
FENCE, SAME = 3, 4
ACCESS_NAMES = ("read", "write", "atomic", "fence", "write")
FILE_STRIDE = 10_000_000
SITE = 4096     # code objects per launch, at most
ARRAYS = 1024   # arrays per launch, at most (global load counters are keyed by one int)
_DIFFER = object()   # ``Recorder.shared_stored``: two stores of different values
_POP_TOP = dis.opmap["POP_TOP"]
#: Atomic operations whose updates commute (any order leaves one final value, and each thread's
#: returned value is one of a fixed set: a ticket), by family; exch and compare-and-swap commute
#: with nothing.
ATOMIC_FAMILY = {"add": "add", "sub": "add", "inc": "inc", "dec": "dec", "max": "max",
                 "nanmax": "max", "min": "min", "nanmin": "min", "and_": "and", "or_": "or",
                 "xor": "xor"}


_CACHE = dis.opmap.get("CACHE", -1)


def instruction_starts(code) -> tuple[int, ...]:
    """For each 2-byte code unit of ``code``, the offset of the instruction it belongs to.

    CPython 3.11 and later follow some instructions with inline ``CACHE`` units, and a frame's
    ``f_lasti`` may point at the instruction or, once the interpreter has specialized it, at
    one of its caches (3.12: ``BINARY_SUBSCR`` at 6 for a thread's first reads of a proxy, at
    8 for later threads'). The instruction's own offset names it on every version."""
    raw = code.co_code
    starts, start = [], 0
    for offset in range(0, len(raw), 2):
        if raw[offset] != _CACHE:
            start = offset
        starts.append(start)
    return tuple(starts)


def _line_at(code, lasti: int) -> int:
    for start, end, line in code.co_lines():
        if start <= lasti < end and line is not None:
            return line
    return code.co_firstlineno


class Interval:
    """The events of one barrier interval of one block.

    ``log``: shared accesses (tid, site, array id, byte address, kind); ``branches``: branch
    outcomes (tid, loc, outcome: True/False for a test, the trip count for a for-loop);
    ``segments``: (tid, log start, log end, branches start, branches end) per thread, in
    execution order (thread-id order). Each thread's events are contiguous, because it ran
    alone until its barrier or its end. ``global_log``: global memory events (tid, site, array
    id, byte offset from the array's element 0, kind), in the same thread order and each
    thread's in program order: loads (``READ``), plain stores (``WRITE``, or ``SAME`` when the
    value stored was already there), atomics (``ATOMIC``, on any array: an atomic reads) and
    device-wide fences (``FENCE``, array -1). ``shared_differ``: the shared byte addresses that
    plain stores of two different values reached in this interval (a write-after-write race
    there can change an output). ``shared_atomics``, ``global_atomics``: index of an atomic's
    event in ``log`` / ``global_log`` -> (family, changed, used): its operation's
    :data:`ATOMIC_FAMILY` (None: exch, compare-and-swap), whether it changed the element, and
    whether the kernel uses the value it returned (not an expression statement)."""

    def __init__(self, log: list, branches: list, segments: list, global_log: list = (),
                 shared_differ=frozenset(), shared_atomics=None, global_atomics=None):
        self.log, self.branches, self.segments = log, branches, segments
        self.global_log = global_log
        self.shared_differ = shared_differ
        self.shared_atomics = shared_atomics or {}
        self.global_atomics = global_atomics or {}

    def warps(self):
        """(warp, [segments of its lanes]) for each warp that ran in this interval."""
        out, cur, warp = [], [], None
        for seg in self.segments:
            w = seg[0] >> 5
            if w != warp and cur:
                out.append((warp, cur))
                cur = []
            warp = w
            cur.append(seg)
        if cur:
            out.append((warp, cur))
        return out


class Recorder:
    def __init__(self, kernel_file: str, block_dim: tuple[int, int, int], analyses):
        self.block_dim = block_dim
        self.nthreads = block_dim[0] * block_dim[1] * block_dim[2]
        self.files = [kernel_file]
        self.code_ids = {}        # id(code) -> (code index, instruction_starts(code))
        self._codes = []          # code index -> (code, file offset); keeps the ids valid
        self._site_loc = {}
        self.analyses = analyses
        self.tid = 0
        self.block = (0, 0, 0)
        self.arrays = []          # ArrayInfo, indexed by array id
        self.shared_log = []
        self.branch_log = []
        self._marks = []          # (tid, shared_log length, branch_log length) at each switch
        self.global_loads = {}    # site * ARRAYS + array id -> count (loads and atomics)
        self.global_log = []      # (tid, site, array id, byte offset, kind) per global event
        self.global_stores = set()  # (array id, byte offset) stored (atomics that changed it)
        self.out_of_bounds = []   # the first out-of-bounds access (the proxy raises after it)
        # Data flow (``taint``), per block: global element key (offset * ARRAYS + array id) ->
        # its bit; the taint (d, c, h) of values stored to global elements; shared address ->
        # (d, c, h, writer tid) of its latest write (every element written in the block is
        # there, tainted or not); the last tainted value made, and by which thread.
        self.labels = {}
        self.global_taint = {}
        self.shared_taint = {}
        self.outputs = {}         # global element key -> (d, c, h) of what was stored there
        self.last_tainted = None
        self.last_tid = -1
        # Shared reads of elements no thread of the block wrote in this launch:
        # (array id, site) -> [count, first (tid, block, byte address, kind)]; the reads of this
        # barrier interval are kept apart until it ends (``_settle_unwritten``)
        self.unwritten = {}
        self._unwritten_now = []
        self._stored = {}         # shared address -> value stored this interval, or _DIFFER
        self._atomics = ({}, {})  # (global, shared): log index -> (family, changed, used)
        self._used_sites = {}     # site of an atomic call -> whether its result is used

    # -- locations --------------------------------------------------------------------------
    def file_offset(self, filename: str) -> int:
        if filename not in self.files:
            self.files.append(filename)
        return FILE_STRIDE * self.files.index(filename)

    def add_array(self, info) -> int:
        """Register an array (``memory.ArrayInfo``); returns its id."""
        if len(self.arrays) >= ARRAYS:
            raise RuntimeError("too many arrays for one instrumented launch")
        self.arrays.append(info)
        return len(self.arrays) - 1

    def code_entry(self, code) -> tuple[int, tuple[int, ...]]:
        """(code index, :func:`instruction_starts`) of ``code``, registered on first use."""
        entry = self.code_ids.get(id(code))
        if entry is None:
            if len(self._codes) >= SITE:
                raise RuntimeError("too many code objects for one instrumented launch")
            entry = self.code_ids[id(code)] = (len(self._codes), instruction_starts(code))
            self._codes.append((code, self.file_offset(code.co_filename)))
        return entry

    def code_index(self, code) -> int:
        return self.code_entry(code)[0]

    def site(self, frame) -> int:
        """The instruction ``frame`` is at, as a site (the proxies inline this)."""
        ci, starts = self.code_entry(frame.f_code)
        return starts[frame.f_lasti >> 1] * SITE + ci

    def loc(self, frame) -> int:
        return frame.f_lineno + self._codes[self.code_index(frame.f_code)][1]

    def site_loc(self, site: int) -> int:
        loc = self._site_loc.get(site)
        if loc is None:
            lasti, ci = divmod(site, SITE)
            code, offset = self._codes[ci]
            loc = self._site_loc[site] = _line_at(code, lasti) + offset
        return loc

    def where(self, loc: int) -> dict:
        """JSON form of a location: ``{"line": n}``, plus ``"file"`` outside the kernel's file."""
        i, line = divmod(loc, FILE_STRIDE)
        return {"line": line} if i == 0 else {"line": line, "file": self.files[i]}

    def thread_index(self, tid: int) -> list[int]:
        bx, by, _ = self.block_dim
        return [tid % bx, (tid // bx) % by, tid // (bx * by)]

    # -- data flow ----------------------------------------------------------------------------
    def label(self, key: int) -> int:
        """The bit of global element ``key`` (offset * ARRAYS + array id) in this block."""
        bit = self.labels.get(key)
        if bit is None:
            bit = self.labels[key] = 1 << len(self.labels)
        return bit

    def taint_of(self, value):
        """(d, c, h) of ``value`` about to be stored, or None for a value that depends on no
        loaded element. A plain value equal to the last tainted value this thread made, once
        cast to the value's type, takes its taint (a cast, ``float32(acc)``, returns a plain
        scalar)."""
        t = type(value)
        if t in TAINTED:
            return value._d, value._c, value._h
        v = self.last_tainted
        if v is None or self.last_tid != self.tid or t is bool:
            return None
        try:
            if bool(v == value) or (isinstance(value, np.generic) and bool(t(v) == value)):
                return v._d, v._c, v._h
        except (TypeError, ValueError, OverflowError):
            pass
        return None

    def global_value(self, array_id: int, off: int, value):
        """``value``, loaded from global element (``array_id``, ``off``) by the thread now
        running, with its taint: what was stored there in this block, else the element's bit."""
        key = off * ARRAYS + array_id
        t = self.global_taint.get(key)
        if t is not None:
            return tainted(value, *t)
        return tainted(value, self.label(key), 0, 0)

    def shared_stored(self, addr: int, value) -> None:
        """A plain store of ``value`` to shared byte address ``addr`` in this barrier interval
        (the proxies call it): remembers whether two stores to the element put different
        values (``Interval.shared_differ``). Values that cannot be compared count as different."""
        seen = self._stored
        old = seen.get(addr, seen)
        if old is seen:
            seen[addr] = value
        elif old is not _DIFFER:
            try:
                same = bool(old == value)
            except (TypeError, ValueError):
                same = False
            if not same:
                seen[addr] = _DIFFER

    def atomic_note(self, shared: bool, name: str, changed: bool, frame) -> None:
        """The atomic ``cuda.atomic.<name>`` just logged (the last event of the shared or the
        global log), called at ``frame``: its family, whether it ``changed`` the element, and
        whether the kernel uses its returned value (the instruction after the call is not a
        ``POP_TOP``). Kept for the interval (``Interval.shared_atomics``/``global_atomics``)."""
        site = self.site(frame)
        used = self._used_sites.get(site)
        if used is None:
            raw = frame.f_code.co_code
            i = (site // SITE) + 2
            while i < len(raw) and raw[i] == _CACHE:
                i += 2
            used = self._used_sites[site] = not (i < len(raw) and raw[i] == _POP_TOP)
        log = self.shared_log if shared else self.global_log
        self._atomics[1 if shared else 0][len(log) - 1] = (ATOMIC_FAMILY.get(name), changed, used)

    def record_unwritten(self, array_id: int, site: int, addr: int, kind: int) -> None:
        """A shared read (or atomic) of an element no thread of the block has written yet."""
        self._unwritten_now.append((array_id, site, addr, kind, self.tid))

    def _settle_unwritten(self) -> None:
        """At the end of a barrier interval: the reads of elements unwritten at the time that
        a thread of the block wrote later in the same interval are races (``races`` reports
        them); the others read what no thread of the block had written, whatever the thread
        order: findings."""
        written = self.shared_taint
        for array_id, site, addr, kind, tid in self._unwritten_now:
            if addr in written:
                continue
            entry = self.unwritten.get((array_id, site))
            if entry is None:
                self.unwritten[(array_id, site)] = [1, (tid, self.block, addr, kind)]
            else:
                entry[0] += 1
        self._unwritten_now = []

    def record_out_of_bounds(self, array_id: int, space: str, kind: int, index: list,
                             shape: tuple, frame) -> None:
        """An element access outside the array's shape, by the thread now running, at
        ``frame``'s line (None: unknown). Kept in ``out_of_bounds`` (JSON form)."""
        entry = {"array": self.arrays[array_id].name, "space": space,
                 "access": ACCESS_NAMES[kind], "index": list(index),
                 "shape": [int(n) for n in shape],
                 "thread": self.thread_index(self.tid), "block": [int(b) for b in self.block]}
        if frame is not None:
            entry.update(self.where(self.loc(frame)))
        else:
            entry["line"] = None
        self.out_of_bounds.append(entry)

    # -- hooks (hot paths) ------------------------------------------------------------------
    def branch_hooks(self, filename: str):
        """The two functions a rewritten kernel calls: ``br(line, test)`` for if/while/ternary
        tests (records the outcome) and ``loop(line, iterable)`` for for-loops (records the
        trip count: ``len`` of a range up front, else counted as the loop runs)."""
        offset = self.file_offset(filename)
        log = self.branch_log
        rec = self

        def br(line, value):
            taken = bool(value)
            log.append((rec.tid, line + offset, taken))
            return taken

        def counted(loc, iterable):
            n = 0
            try:
                for item in iterable:
                    n += 1
                    yield item
            finally:   # exhausted, or closed by a break / an exception
                log.append((rec.tid, loc, n))

        def loop(line, iterable):
            if type(iterable) is range:
                log.append((rec.tid, line + offset, len(iterable)))
                return iterable
            return counted(line + offset, iterable)

        return br, loop

    # -- structure events, from the scheduler ----------------------------------------------
    def switch(self, tid: int) -> None:
        """Thread ``tid`` runs next (called by whoever hands over, before it does)."""
        self.tid = tid
        self._marks.append((tid, len(self.shared_log), len(self.branch_log)))

    def block_start(self, block: tuple[int, int, int]) -> None:
        self.block = block
        self.shared_log.clear()
        self.branch_log.clear()
        self.global_log.clear()
        self._marks.clear()
        self.labels = {}
        self.global_taint = {}
        self.shared_taint.clear()   # in place: the shared proxies hold it
        self._unwritten_now = []
        self._stored = {}
        self._atomics = ({}, {})
        self.outputs = {}
        self.last_tainted = None

    def episode_end(self, episode: int, arrived: list, exited: list) -> None:
        """All live lanes are parked: ``arrived`` [(tid, loc)] wait at a barrier, ``exited``
        [tid] returned since the last episode. Closes one barrier interval."""
        self._settle_unwritten()
        marks = self._marks
        ends = marks[1:] + [(None, len(self.shared_log), len(self.branch_log))]
        segments = [(tid, s0, e[1], b0, e[2]) for (tid, s0, b0), e in zip(marks, ends)]
        stored, self._stored = self._stored, {}
        atomics, self._atomics = self._atomics, ({}, {})
        iv = Interval(list(self.shared_log), list(self.branch_log), segments,
                      list(self.global_log),
                      frozenset(a for a, v in stored.items() if v is _DIFFER),
                      atomics[1], atomics[0])
        self.shared_log.clear()   # in place: the hooks hold these lists
        self.branch_log.clear()
        self.global_log.clear()
        self._marks = []
        for a in self.analyses:
            a.interval(self, iv)
            a.episode(self, episode, arrived, exited)

    def block_end(self) -> None:
        for a in self.analyses:
            a.block_end(self)
