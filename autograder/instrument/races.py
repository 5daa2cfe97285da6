"""Hazards between threads, in shared and in global memory.

Shared memory (:class:`SharedRaces`): within one barrier interval of one block, an element that
one thread writes and another thread reads (RAW / WAR) or also writes (WAW). Between two barriers
a GPU orders nothing, so the hazard is in the *set* of accesses, whatever values the run
happened to see. The label follows the fixed execution order of the scheduler (thread-id order):
"RAW" when the write was recorded first. An atomic whose returned value the kernel uses
(anything but an expression statement) reads the element: it races with another thread's atomic
that changed the element, as a load does with a store, unless both are updates of one
commutative operation (``add``/``sub``, ``max``, ``min``, ``and``/``or``/``xor``, ``inc``,
``dec``: a ticket taken by every thread); atomics whose values are unused never race with each
other (a histogram, a block's partial sum added to a total). A WAW of plain
stores says whether two different values reached the element in that interval
(``"values_differ"``): then the schedule chooses the value left there, which decides
correctness as any other race does; one value stored by several threads (a halo element loaded
twice) cannot change an output.

Global memory (:class:`GlobalRaces`), the same within a block (``"scope": "block"``: two threads
of one block, one barrier interval), and across blocks (``"scope": "grid"``): two accesses of
different blocks to one element, at least one a store or an atomic and not two atomics that
cannot race (above), are a race unless a fence protocol orders them; an atomic whose value is
used against another block's atomic change is ordered when that change was a release (its thread
fenced before it: a grid barrier's arrival, a lock's release, a ticket taken after the block
fenced its results); the change compared is each earlier block's last one (what the atomic read
in the simulator's order). The simulator runs blocks one after another, so the
serial order proves nothing: only the protocol does. Block X's access *a* happens before block
Y's access *b* when X releases and Y acquires through one element S:

- release: after *a* (in *a*'s thread, or in any thread of X before a barrier), a thread of X
  runs ``cuda.threadfence()`` and then an atomic on S;
- acquire: a thread of Y runs an atomic on S and then ``cuda.threadfence()``, before *b* (in
  that thread, or in any thread of Y after a barrier);

and transitively (what X had acquired when it released is released too: block 0 relays for a
lock-free grid barrier). An atomic is both: every atomic on S reads what the atomics before it
wrote (a release sequence). ``threadfence_block`` orders nothing across blocks; a plain load
of a flag races with the atomic that sets it.

Limits: only the blocks the instrumented run ran are compared (``max_blocks``): a race with a
block left out is not seen. An acquire is taken to wait for the release it reads (a spin loop
or a ticket test does); an atomic whose result the kernel ignores orders nothing on a GPU, but
the serial order made every release come first, so such a kernel is not caught. Two plain stores
of the same value (``"values_differ": false``) are reported but cannot change an output.
"""

from __future__ import annotations

from .analysis import Analysis
from .trace import ACCESS_NAMES, ARRAYS, ATOMIC, FENCE, READ, SAME, WRITE

# (kind of the later access, kind of the earlier one) -> hazard name
_HAZARD = {(READ, WRITE): "RAW", (READ, ATOMIC): "RAW",
           (WRITE, READ): "WAR", (ATOMIC, READ): "WAR",
           (WRITE, WRITE): "WAW", (WRITE, ATOMIC): "WAW", (ATOMIC, WRITE): "WAW"}
_CONFLICTS = {READ: (WRITE, ATOMIC), WRITE: (READ, WRITE, ATOMIC), ATOMIC: (READ, WRITE)}


def _atomics_race(first, second) -> str | None:
    """The hazard between two atomics of different threads on one element, from their notes
    (``trace.Interval.shared_atomics``: family, changed, used), ``first`` logged first: "RAW"
    when the second uses the value it returned and the first changed the element, "WAR" the
    other way round; None when neither reads what the other changed, or both are updates of one
    commutative operation (tickets: ``cuda.atomic.add(count, 0, 1)`` in every thread)."""
    if first[0] is not None and first[0] == second[0]:
        return None
    if second[2] and first[1]:
        return "RAW"
    if first[2] and second[1]:
        return "WAR"
    return None


class SharedRaces(Analysis):
    """Shared-memory hazards; each entry names, as ``"barriers"``, the barrier interval where
    it was first found: ``{"after": <where>, "before": <where>}`` (``where``: ``{"line": n}``,
    with ``"file"`` outside the kernel's file; None for the kernel's start or end), so a message
    can say which barriers the two accesses ran between (a write at a line above the opening
    barrier is the next iteration's of a loop)."""

    key = "races"

    def __init__(self):
        self._found = {}   # (hazard, array, loc first, loc second) -> entry
        self._opened = None  # loc of the barrier that opened this interval (None: the start)
        self._new = []       # entries first found in this interval

    def episode(self, rec, episode, arrived, exited):
        locs = {}
        for _, loc in arrived:
            locs[loc] = locs.get(loc, 0) + 1
        closed = max(locs, key=locs.get) if locs else None
        for entry in self._new:
            entry["barriers"] = {"after": None if self._opened is None else rec.where(self._opened),
                                 "before": None if closed is None else rec.where(closed)}
        self._new = []
        self._opened = closed

    def block_end(self, rec):
        self._opened = None

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
            self._pairs(rec, [e for e in log if e[3] in shared_by_threads], iv.shared_differ)
            if iv.shared_atomics:
                self._atomic_pairs(rec, log, iv.shared_atomics, shared_by_threads)

    def _atomic_pairs(self, rec, log, notes, addrs):
        """Atomics against atomics (:func:`_atomics_race`), one interval."""
        elems = {}   # addr -> {(site, note): [up to two tids]}
        for i in sorted(notes):
            tid, site, array, addr, _kind = log[i]
            if addr not in addrs:
                continue
            note = notes[i]
            slots = elems.setdefault(addr, {})
            for (site0, note0), tids in slots.items():
                t0 = tids[0] if tids[0] != tid else (tids[1] if len(tids) > 1 else None)
                hazard = _atomics_race(note0, note) if t0 is not None else None
                if hazard:
                    self._hazard(rec, hazard, array, addr, (t0, site0, ATOMIC),
                                 (tid, site, ATOMIC), True)
            tids = slots.setdefault((site, note), [])
            if len(tids) < 2 and tid not in tids:
                tids.append(tid)

    def _pairs(self, rec, log, differ=frozenset()):
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
                                     (t0, loc0, other), (tid, loc, kind), addr in differ)
            tids = slots[kind].setdefault(loc, [])
            if len(tids) < 2 and tid not in tids:
                tids.append(tid)

    def _hazard(self, rec, hazard, array, addr, first, second, differ=False):
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
                "space": "shared",
                "values_differ": False,
            }
            self._new.append(entry)
        entry["count"] += 1
        if differ or hazard != "WAW":
            entry["values_differ"] = True

    def result(self, rec):
        return sorted(self._found.values(),
                      key=lambda e: (e["first"]["line"], e["second"]["line"], e["kind"],
                                     e["array"]))


# A vector clock: block number -> cut of that block, (interval k, {tid: seq}): the block's
# events in intervals before k, and those of each listed thread before its seq.

def _merge(into: dict, vc: dict) -> None:
    for b, (k, m) in vc.items():
        cur = into.get(b)
        if cur is None or k > cur[0]:
            into[b] = (k, dict(m))
        elif k == cur[0]:
            mine = cur[1]
            for t, seq in m.items():
                if mine.get(t, -1) < seq:
                    mine[t] = seq


def _covers(cut, k: int, tid: int, seq: int) -> bool:
    if cut is None:
        return False
    ck, m = cut
    return k < ck or (k == ck and m.get(tid, -1) > seq)


_MAX_READERS = 64   # threads remembered per element and block for the latest interval


class GlobalRaces(Analysis):
    """Global-memory hazards (see the module's docstring); ``result`` gives entries like
    :class:`SharedRaces`' with ``"space": "global"``, ``"scope"`` (``"block"`` or ``"grid"``),
    each side's ``"block"``, and ``"values_differ"`` for a WAW of plain stores."""

    key = "races"

    def __init__(self):
        self._found = {}
        self._hist = {}       # element key -> {block number: [write, reads, atomics]}
        self._released = {}   # element key -> vector clock released through it
        self._blocks = []     # block number -> block index
        self._atoms = {}      # element key -> [(block, tid, site, note, released)]: each
        #                       earlier block's last atomic change of the element
        self._new_block()

    def _new_block(self):
        self._k = 0
        self._seq = {}        # tid -> global events so far in this block
        self._tk = {}         # tid -> vector clock acquired (after its fence)
        self._pending = {}    # tid -> vector clock read by atomics, not yet fenced
        self._bk = {}         # vector clock every thread of the block has (from barriers)
        self._fence = {}      # tid -> vector clock released by an atomic after its last fence
        self._cur = {}        # element key -> [write, reads, atomics] of this block
        self._atoms_cur = {}  # element key -> (tid, site, note, released): last atomic change

    # -- structure events ----------------------------------------------------------------------
    def episode(self, rec, episode, arrived, exited):
        for tk in self._tk.values():   # a barrier: what one thread acquired, all have
            _merge(self._bk, tk)
        self._k += 1

    def block_end(self, rec):
        y = len(self._blocks)
        self._blocks.append(list(rec.block))
        for key, summary in self._cur.items():
            h = self._hist.get(key)
            if h is None:
                self._hist[key] = {y: summary}
            else:
                h[y] = summary
        for key, (tid, site, note, released) in self._atoms_cur.items():
            self._atoms.setdefault(key, []).append((y, tid, site, note, released))
        self._new_block()

    # -- the log ---------------------------------------------------------------------------------
    def interval(self, rec, iv):
        log = iv.global_log
        if not log:
            return
        y, k = len(self._blocks), self._k
        seqs, hist, cur = self._seq, self._hist, self._cur
        touched = {}   # element key -> tids that stored or updated it in this interval
        notes = iv.global_atomics
        for n, (tid, site, array, off, kind) in enumerate(log):
            seq = seqs.get(tid, 0)
            seqs[tid] = seq + 1
            if kind == FENCE:
                self._fenced(y, k, tid, seq)
                continue
            key = off * ARRAYS + array
            if kind == ATOMIC:
                note = notes.get(n)
                if note is not None:
                    self._atomic_across(rec, key, array, off, tid, site, note)
                self._atomic(key, tid)
            if kind != READ:
                t = touched.get(key)
                if t is None:
                    touched[key] = {tid}
                else:
                    t.add(tid)
            h = hist.get(key)
            if h is not None:
                self._check(rec, h, array, off, tid, site, kind, k, seq)
            summary = cur.get(key)
            if summary is None:
                summary = cur[key] = [None, None, None]
            if kind == READ or kind == ATOMIC:
                slot = 1 if kind == READ else 2
                r = summary[slot]
                if r is None or k > r[0]:
                    summary[slot] = [k, {tid: (seq, site)}]
                elif len(r[1]) < _MAX_READERS or tid in r[1]:
                    r[1][tid] = (seq, site)
            else:
                summary[0] = (k, tid, seq, site, kind)
        if touched:
            self._within_block(rec, log, touched)
            if notes:
                self._atomics_within_block(rec, log, notes, touched)

    def _atomic_across(self, rec, key, array, off, tid, site, note):
        """An atomic of this block whose value is used, against the last atomic change of its
        element in each earlier block (what it read, in the simulator's order;
        :func:`_atomics_race`): ordered when that change was a release (its thread had run a
        device-wide fence before it: a grid barrier's arrival, a lock's release, a ticket taken
        after the block's results were fenced)."""
        if note[2]:
            for x, tid0, site0, note0, released0 in self._atoms.get(key, ()):
                if not released0 and _atomics_race(note0, note) == "RAW":
                    self._hazard(rec, array, off, (tid0, site0, ATOMIC, x),
                                 (tid, site, ATOMIC), "grid", "RAW")
                    break
        if note[1]:
            self._atoms_cur[key] = (tid, site, note, tid in self._fence)

    def _atomics_within_block(self, rec, log, notes, touched):
        """Atomics against atomics of other threads of the block, one interval."""
        y = len(self._blocks)
        elems = {}   # element key -> {(site, note): [up to two tids]}
        for n in sorted(notes):
            tid, site, array, off, _kind = log[n]
            key = off * ARRAYS + array
            note = notes[n]
            slots = elems.setdefault(key, {})
            for (site0, note0), tids in slots.items():
                t0 = tids[0] if tids[0] != tid else (tids[1] if len(tids) > 1 else None)
                hazard = _atomics_race(note0, note) if t0 is not None else None
                if hazard:
                    self._hazard(rec, array, off, (t0, site0, ATOMIC, y), (tid, site, ATOMIC),
                                 "block", hazard)
            tids = slots.setdefault((site, note), [])
            if len(tids) < 2 and tid not in tids:
                tids.append(tid)

    def _fenced(self, y, k, tid, seq):
        pending = self._pending.pop(tid, None)
        tk = self._tk.get(tid)
        if pending:
            if tk is None:
                tk = self._tk[tid] = {}
            _merge(tk, pending)
        snap = {}
        _merge(snap, self._bk)
        if tk:
            _merge(snap, tk)
        snap[y] = (k, {tid: seq})   # this block's events before the fence
        self._fence[tid] = snap

    def _atomic(self, key, tid):
        released = self._released.get(key)
        if released:   # acquire: effective at this thread's next fence
            pending = self._pending.get(tid)
            if pending is None:
                pending = self._pending[tid] = {}
            _merge(pending, released)
        snap = self._fence.get(tid)
        if snap is not None:   # release: what the thread had when it fenced
            into = self._released.get(key)
            if into is None:
                into = self._released[key] = {}
            _merge(into, snap)

    def _covered(self, x, tid, k0, tid0, seq0) -> bool:
        return _covers(self._bk.get(x), k0, tid0, seq0) or \
            _covers((self._tk.get(tid) or {}).get(x), k0, tid0, seq0)

    def _check(self, rec, hist, array, off, tid, site, kind, k, seq):
        """Access (tid, site, kind) of this block against earlier blocks' accesses to its
        element (``hist``: block number -> [write, reads, atomics])."""
        later = (tid, site, kind)
        for x, (w, reads, atomics) in hist.items():
            if w is not None and not self._covered(x, tid, w[0], w[1], w[2]):
                self._hazard(rec, array, off, (w[1], w[3], w[4], x), later, "grid")
            if kind != READ and reads is not None:
                k0, threads = reads
                for tid0, (seq0, site0) in threads.items():
                    if not self._covered(x, tid, k0, tid0, seq0):
                        self._hazard(rec, array, off, (tid0, site0, READ, x), later, "grid")
                        break
            if kind != ATOMIC and atomics is not None:
                k0, threads = atomics
                for tid0, (seq0, site0) in threads.items():
                    if not self._covered(x, tid, k0, tid0, seq0):
                        self._hazard(rec, array, off, (tid0, site0, ATOMIC, x), later, "grid")
                        break

    def _within_block(self, rec, log, touched):
        """Two threads of the block, one interval: as :class:`SharedRaces` does."""
        users = {}
        for tid, _site, array, off, kind in log:
            if kind != FENCE:
                key = off * ARRAYS + array
                if key in touched:
                    u = users.get(key)
                    if u is None:
                        users[key] = {tid}
                    else:
                        u.add(tid)
        shared_by = {key for key, u in users.items() if len(u) > 1}
        if not shared_by:
            return
        elems = {}   # element key -> per kind (read, write, atomic): {site: [up to two tids]}
        y = len(self._blocks)
        for tid, site, array, off, kind in log:
            if kind == FENCE:
                continue
            key = off * ARRAYS + array
            if key not in shared_by:
                continue
            plain = WRITE if kind == SAME else kind
            slots = elems.get(key)
            if slots is None:
                elems[key] = slots = ({}, {}, {})
            for other in _CONFLICTS[plain]:
                for site0, tids in slots[other].items():
                    hit = next((t for t in tids if t[0] != tid), None)
                    if hit is not None:
                        self._hazard(rec, array, off, (hit[0], site0, hit[1], y),
                                     (tid, site, kind), "block")
            tids = slots[plain].setdefault(site, [])
            if len(tids) < 2 and all(t[0] != tid for t in tids):
                tids.append((tid, kind))

    def _hazard(self, rec, array, off, first, second, scope, hazard=None):
        tid0, site0, kind0, x = first
        tid1, site1, kind1 = second
        plain0 = WRITE if kind0 == SAME else kind0
        plain1 = WRITE if kind1 == SAME else kind1
        hazard = hazard or _HAZARD[(plain1, plain0)]
        loc0, loc1 = rec.site_loc(site0), rec.site_loc(site1)
        key = (hazard, array, loc0, loc1, scope)
        entry = self._found.get(key)
        if entry is None:
            info = rec.arrays[array]
            block0 = self._blocks[x] if x < len(self._blocks) else list(rec.block)
            self._found[key] = entry = {
                "kind": hazard,
                "array": info.name,
                "space": "global",
                "scope": scope,
                "first": {**rec.where(loc0), "access": ACCESS_NAMES[kind0],
                          "thread": rec.thread_index(tid0), "block": block0},
                "second": {**rec.where(loc1), "access": ACCESS_NAMES[kind1],
                           "thread": rec.thread_index(tid1), "block": list(rec.block)},
                "block": list(rec.block),
                "index": info.index_of(off),
                "count": 0,
                "values_differ": False,
            }
        entry["count"] += 1
        if not (plain0 == plain1 == WRITE and kind1 == SAME):
            entry["values_differ"] = True

    def result(self, rec):
        return sorted(self._found.values(),
                      key=lambda e: (e["first"]["line"], e["second"]["line"], e["kind"],
                                     e["array"], e["scope"]))
