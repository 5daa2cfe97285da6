"""Array proxies: element access recorded, anything else (shape, size, dtype, len) passed
through. Each access does the real NumPy access first, so errors are the simulator's own.

The hot path is kept short: the offset is computed inline for 1-d and 2-d arrays, and the
caller is recorded as a *site* (``Recorder.site``: the instruction's offset and the code
object's index), not a line: computing a line number (``f_lineno``) and hashing a code object
both cost more than the rest of the access.
``Recorder.site_loc`` turns sites into lines later, once per distinct site.

Shared proxies append ``(tid, site, array id, byte address, kind)`` to the recorder's log;
global proxies append each load, store and atomic as ``(tid, site, array id, byte offset,
kind)`` to the recorder's ``global_log`` (counted per site and coalesced per warp request by
``loads``, raced by ``races``) and remember which elements were stored. A method of the array
that reads it (``A.sum()``, ``A.copy()``, NumPy reading it through ``__array__``) counts as a
read of every element.

Values read come back tainted (``taint``): a global element's bit, or the taint of the value a
thread of the block wrote there; each shared element remembers the taint of the value written
and its writer, and a read of an element no thread of the block wrote in this launch is
recorded (``Recorder.record_unwritten``).

Every element index is checked against the array's logical shape before the access, one
dimension at a time and negative indices included (NumPy and Numba wrap ``x[-1]`` to the last
element, and ``A[row, n]`` of an ``(m, n)`` array may lie inside the allocation): an index out
of bounds is recorded (``Recorder.out_of_bounds``) and raises :class:`OutOfBounds`, whatever
the value read would have been. Slices and index arrays are left to NumPy; a negative literal
subscript (``x[-1]``: :class:`NegativeLiteral`, marked by ``rewrite``) is wrap-around asked
for, not a stray index.
"""

from __future__ import annotations

import operator
import os
import sys

import numpy as np

from .taint import tainted
from .trace import ARRAYS, ATOMIC, READ, SAME, SITE, WRITE

_getframe = sys._getframe
_index = operator.index
_ndarray = np.ndarray
#: The grader's package (``autograder/``): a frame of a file under it is never the student's.
_GRADER = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class OutOfBounds(IndexError):
    """An element index outside the array's shape (the finding is on the recorder)."""


class NegativeLiteral(int):
    """A negative integer written as a literal subscript (``x[-1]``, ``A[i, -2]``): the kernel
    asks for NumPy's and Numba's wrap-around on purpose, so it is not out of bounds. The
    kernel's rewrite (``rewrite``) marks such subscripts; any arithmetic gives a plain int."""

    __slots__ = ()


def _caller(frame):
    """The innermost frame outside the grader's own code (the student's line): not the
    proxies' or the memory hooks', nor the loop hook's (``trace``), through which a rewritten
    kernel's ``for`` reaches an array, nor a taint wrapper's."""
    while frame is not None and frame.f_code.co_filename.startswith(_GRADER):
        frame = frame.f_back
    return frame


class ArrayProxy:
    __slots__ = ("_a", "_id", "_base", "_strides", "_shape", "_rec", "_codes", "_sink",
                 "_meta", "shape")

    def __init__(self, ary: np.ndarray, array_id: int, base: int, rec, meta=None):
        self._a = ary
        self._id = array_id
        self._base = base
        self._strides = ary.strides
        self._shape = ary.shape
        self._rec = rec
        self._codes = rec.code_ids
        self._sink = self._make_sink(rec)
        self._meta = meta if meta is not None else ary
        self.shape = self._meta.shape

    def _site(self, f) -> int:
        """The site of the access made at frame ``f`` (``Recorder.site``, inlined: hot path)."""
        entry = self._codes.get(id(f.f_code))
        if entry is None:
            entry = self._rec.code_entry(f.f_code)
        return entry[1][f.f_lasti >> 1] * SITE + entry[0]

    # -- bounds -------------------------------------------------------------------------------
    def _check(self, idx, kind):
        """``idx``, or its in-bounds form (:class:`NegativeLiteral` components wrapped); raises
        :class:`OutOfBounds` when an integer of ``idx`` lies outside its dimension."""
        t = idx if type(idx) is tuple else (idx,)
        shape = self._shape
        for d, i in enumerate(t):
            if d >= len(shape) or i is None or i is Ellipsis:
                return idx   # NumPy's own rules (too many indices, new axes)
            if type(i) is slice or isinstance(i, (bool, np.bool_)):
                continue
            try:
                i = _index(i)
            except TypeError:   # an index array: NumPy checks it
                continue
            if i < 0 or i >= shape[d]:
                return self._out_of_bounds(idx, kind)
        return idx

    def _out_of_bounds(self, idx, kind):
        """``idx`` with its :class:`NegativeLiteral` components wrapped, when that puts every
        integer inside its dimension; else record the access and raise :class:`OutOfBounds`."""
        single = type(idx) is not tuple
        t = (idx,) if single else idx
        shape = self._shape
        fixed, index, inside = [], [], True
        for d, i in enumerate(t):
            if type(i) is NegativeLiteral and d < len(shape) and i >= -shape[d]:
                i = int(i) + shape[d]
            fixed.append(i)
            try:
                v = int(_index(i))
            except TypeError:
                index.append(":" if type(i) is slice else str(i))
                continue
            index.append(v)
            if d < len(shape) and not 0 <= v < shape[d]:
                inside = False
        if inside:
            return fixed[0] if single else tuple(fixed)
        name = self._rec.arrays[self._id].name
        self._rec.record_out_of_bounds(self._id, self._space, kind, index, shape,
                                       _caller(_getframe(1)))
        shown = ", ".join(str(i) for i in index)
        raise OutOfBounds(f"{name}[{shown}] is out of bounds for shape {tuple(shape)}")

    # -- generic paths ----------------------------------------------------------------------
    def _offset(self, idx) -> int:
        """Byte address of the single element ``idx`` names; TypeError if it names more."""
        shape, strides = self._shape, self._strides
        if type(idx) is not tuple:
            idx = (idx,)
        if len(idx) != len(shape):
            raise TypeError("not a single element")
        off = self._base
        for n, i in enumerate(idx):
            i = _index(i)
            if i < 0:
                i += shape[n]
            off += i * strides[n]
        return off

    def _offsets(self, idx) -> np.ndarray:
        """Byte addresses of every element ``idx`` selects (slices, fancy indexing)."""
        offs = np.full(self._shape, self._base, dtype=np.int64)
        for d, (n, s) in enumerate(zip(self._shape, self._strides)):
            shape = [1] * len(self._shape)
            shape[d] = n
            offs = offs + (np.arange(n, dtype=np.int64) * s).reshape(shape)
        return np.atleast_1d(offs[idx]).ravel()

    def _view(self, sub: np.ndarray) -> "ArrayProxy":
        delta = sub.__array_interface__["data"][0] - self._a.__array_interface__["data"][0]
        return make_proxy(self._space, sub, self._id, self._base + delta, self._rec)

    def _write_many(self, idx, value, frame) -> None:   # a slice, a row, fancy indexing
        for o in self._offsets(idx):
            self._store(int(o), value, frame)

    def _read_all(self, frame) -> None:
        """Every element read at once (a method such as ``A.sum()``, NumPy's ``__array__``)."""
        for o in self._offsets(Ellipsis):
            self._record(int(o), READ, frame)

    def __getitem__(self, idx):
        idx = self._check(idx, READ)
        value = self._a[idx]
        if type(value) is _ndarray:   # a view (a[row]): no memory access yet
            return self._view(value)
        return self._load(self._offset(idx), value, _getframe(1))

    def __setitem__(self, idx, value):
        idx = self._check(idx, WRITE)
        self._a[idx] = value
        try:
            off = self._offset(idx)
        except TypeError:
            return self._write_many(idx, value, _getframe(1))
        self._store(off, value, _getframe(1))

    def check_atomic(self, idx):
        """``idx`` in bounds (literal negatives wrapped), or :class:`OutOfBounds`."""
        return self._check(idx, ATOMIC)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        """``for v in x`` / ``enumerate(x)``: the elements (rows, for more dimensions) 0 to
        ``len(x) - 1``, each read as ``x[i]`` at the student's ``for`` line, as Numba's GPU target
        iterates an array. Without it Python iterated by ``x[0], x[1], ...`` until an
        ``IndexError``, so the read of ``x[len(x)]`` was recorded as out of bounds."""
        if not self._shape:
            raise TypeError("iteration over a 0-d array")
        for i in range(self._shape[0]):
            value = self._a[i]
            if type(value) is _ndarray:   # a row: no memory access yet
                yield self._view(value)
                continue
            frame = _caller(_getframe(1)) or _getframe(1)   # who resumed us: the student's for
            yield self._load(self._base + i * self._strides[0], value, frame)

    def __getattr__(self, name):
        value = getattr(self._meta, name)
        if name.startswith("__array"):   # NumPy reading the whole array
            self._read_all(_caller(_getframe(1)))
            return value
        if callable(value) and not isinstance(value, type):
            # A.reshape(...), A.ravel(): a view they return is A, its accesses A's; any other
            # result (A.sum(), A.copy(), A.item(i)) was computed from A's elements
            def method(*args, **kwargs):
                out = value(*args, **kwargs)
                aliased = self._alias(out)
                if aliased is out:
                    self._read_all(_caller(_getframe(1)))
                return aliased
            return method
        return self._alias(value)   # A.T

    def _alias(self, value):
        """``value`` as a proxy of this array when it is a view of its memory, else as is."""
        ary = value
        if type(ary) is not _ndarray:   # the simulator's FakeCUDAArray, or its in-kernel wrapper
            inner = getattr(value, "__dict__", {})
            ary = inner.get("_ary", getattr(inner.get("_item"), "_ary", None))
        if type(ary) is not _ndarray or not np.may_share_memory(ary, self._a):
            return value
        delta = ary.__array_interface__["data"][0] - self._a.__array_interface__["data"][0]
        return make_proxy(self._space, ary, self._id, self._base + delta, self._rec,
                          None if ary is value else value)

    def __repr__(self):
        return f"<instrumented {self._a!r}>"


class _Fast1D(ArrayProxy):
    __slots__ = ()

    def __getitem__(self, idx):
        try:
            inside = 0 <= idx < self._shape[0]
        except (TypeError, ValueError):   # (i,), a slice, an index array
            idx = self._check(idx, READ)
            value = self._a[idx]
            if type(value) is _ndarray:
                return self._view(value)
            off = self._offset(idx)
        else:
            if not inside:
                idx = self._out_of_bounds(idx, READ)
            value = self._a[idx]
            off = self._base + _index(idx) * self._strides[0]
        return self._load(off, value, _getframe(1))

    def __setitem__(self, idx, value):
        try:
            inside = 0 <= idx < self._shape[0]
        except (TypeError, ValueError):
            idx = self._check(idx, WRITE)
            self._a[idx] = value
            try:
                off = self._offset(idx)
            except TypeError:
                return self._write_many(idx, value, _getframe(1))
        else:
            if not inside:
                idx = self._out_of_bounds(idx, WRITE)
            self._a[idx] = value
            off = self._base + _index(idx) * self._strides[0]
        self._store(off, value, _getframe(1))


class _Fast2D(ArrayProxy):
    __slots__ = ()

    def __getitem__(self, idx):
        try:
            i, j = idx
            n0, n1 = self._shape
            inside = 0 <= i < n0 and 0 <= j < n1
        except (TypeError, ValueError):   # a[row], slices
            idx = self._check(idx, READ)
            value = self._a[idx]
            if type(value) is _ndarray:
                return self._view(value)
            return self._load(self._offset(idx), value, _getframe(1))
        if not inside:
            i, j = idx = self._out_of_bounds(idx, READ)
        value = self._a[idx]
        s0, s1 = self._strides
        return self._load(self._base + _index(i) * s0 + _index(j) * s1, value, _getframe(1))

    def __setitem__(self, idx, value):
        try:
            i, j = idx
            n0, n1 = self._shape
            inside = 0 <= i < n0 and 0 <= j < n1
        except (TypeError, ValueError):
            idx = self._check(idx, WRITE)
            self._a[idx] = value
            try:
                off = self._offset(idx)
            except TypeError:
                return self._write_many(idx, value, _getframe(1))
            return self._store(off, value, _getframe(1))
        if not inside:
            i, j = idx = self._out_of_bounds(idx, WRITE)
        self._a[idx] = value
        s0, s1 = self._strides
        self._store(self._base + _index(i) * s0 + _index(j) * s1, value, _getframe(1))


class _SharedRecord:
    """Appends (tid, site, array id, byte address, kind) to the interval log; keeps each
    element's taint and writer (``Recorder.shared_taint``)."""
    __slots__ = ()
    _space = "shared"

    @staticmethod
    def _make_sink(rec):
        return rec.shared_log.append   # the log is cleared in place, never replaced

    def _record(self, off, kind, f):
        self._sink((self._rec.tid, self._site(f), self._id, off, kind))

    def _load(self, off, value, f):
        rec = self._rec
        tid = rec.tid
        site = self._site(f)
        self._sink((tid, site, self._id, off, READ))
        t = rec.shared_taint.get(off)
        if t is None:
            rec.record_unwritten(self._id, site, off, READ)
            return value
        d, c, h, w = t
        if w != tid:   # written by another thread of the block: what it carries crossed
            return tainted(value, 0, c | d, h)
        return tainted(value, d, c, h)

    def _store(self, off, value, f):
        rec = self._rec
        tid = rec.tid
        self._sink((tid, self._site(f), self._id, off, WRITE))
        rec.shared_stored(off, value)
        t = rec.taint_of(value)
        rec.shared_taint[off] = (t[0], t[1], t[2], tid) if t else (0, 0, 0, tid)

    def record_atomic(self, idx, frame, result, changed, value):
        """An atomic on element ``idx`` (a read and a write); returns ``result`` (the old
        value) as a read of it."""
        rec = self._rec
        tid = rec.tid
        off = self._offset(idx)
        site = self._site(frame)
        self._sink((tid, site, self._id, off, ATOMIC))
        t = rec.shared_taint.get(off)
        if t is None:
            rec.record_unwritten(self._id, site, off, ATOMIC)
            d = c = h = 0
        else:
            d, c, h, w = t
            if w != tid:
                d, c = 0, c | d
        v = rec.taint_of(value)
        if v is None:
            rec.shared_taint[off] = (d, c, h, tid)
        else:
            step = 1 if (d or c) else 0
            rec.shared_taint[off] = (d | v[0], c | v[1], max(h, v[2]) + step, tid)
        return tainted(result, d, c, h)


class _GlobalRecord:
    """Logs loads, stores and atomics as (tid, site, array id, byte offset, kind), for the
    per-site counts, the per-warp-request coalescing (``loads``) and the races (``races``);
    remembers the elements stored and the taint of what was stored (``Recorder.outputs``)."""
    __slots__ = ()
    _space = "global"

    @staticmethod
    def _make_sink(rec):
        return rec.global_log.append   # the log is cleared in place, never replaced

    def __getitem__(self, idx):
        if type(idx) is int and len(self._shape) == 1:
            if not 0 <= idx < self._shape[0]:
                self._out_of_bounds(idx, READ)   # a plain int: it raises
            value = self._a[idx]
            off = self._base + idx * self._strides[0]
        elif type(idx) is tuple and len(idx) == 2 and len(self._shape) == 2 \
                and type(idx[0]) is int and type(idx[1]) is int:
            i, j = idx
            if not (0 <= i < self._shape[0] and 0 <= j < self._shape[1]):
                self._out_of_bounds(idx, READ)   # plain ints: it raises
            value = self._a[idx]
            off = self._base + i * self._strides[0] + j * self._strides[1]
        else:
            idx = self._check(idx, READ)
            value = self._a[idx]
            if type(value) is _ndarray:
                return self._view(value)
            off = self._offset(idx)
        rec = self._rec
        self._sink((rec.tid, self._site(_getframe(1)), self._id, off, READ))
        return rec.global_value(self._id, off, value)

    def _load(self, off, value, f):
        rec = self._rec
        self._sink((rec.tid, self._site(f), self._id, off, READ))
        return rec.global_value(self._id, off, value)

    def __setitem__(self, idx, value):
        idx = self._check(idx, WRITE)
        a = self._a
        try:
            off = self._offset(idx)
        except TypeError:   # a slice, a row, an index array
            a[idx] = value
            return self._write_many(idx, value, _getframe(1))
        try:
            same = bool(a[idx] == value)
        except (TypeError, ValueError):
            same = False
        a[idx] = value
        self._store(off, value, _getframe(1), same)

    def _record(self, off, kind, f):
        self._sink((self._rec.tid, self._site(f), self._id, off, kind))

    def _store(self, off, value, f, same=False):
        rec = self._rec
        self._sink((rec.tid, self._site(f), self._id, off, SAME if same else WRITE))
        rec.global_stores.add((self._id, off))
        key = off * ARRAYS + self._id
        t = rec.taint_of(value)
        # a constant stored (t None) depends on nothing: not even the element's old value
        rec.global_taint[key] = rec.outputs[key] = t or (0, 0, 0)

    def record_atomic(self, idx, frame, result, changed, value):
        """An atomic on element ``idx``: a load, and a store when it changed the element;
        returns ``result`` (the old value) as a load of it."""
        rec = self._rec
        off = self._offset(idx)
        self._sink((rec.tid, self._site(frame), self._id, off, ATOMIC))
        key = off * ARRAYS + self._id
        old = rec.global_taint.get(key) or (rec.label(key), 0, 0)
        if changed:
            rec.global_stores.add((self._id, off))
            v = rec.taint_of(value) or (0, 0, 0)
            out = rec.outputs.get(key)
            if out is None or not (out[0] or out[1]):
                rec.outputs[key] = v
            elif v[0] or v[1]:   # one more operation on the same element: a serial chain
                rec.outputs[key] = (out[0] | v[0], out[1] | v[1], max(out[2], v[2]) + 1)
            rec.global_taint[key] = (old[0] | v[0], old[1] | v[1], max(old[2], v[2]))
        return tainted(result, *old)


_CLASSES = {}
for _space, _mixin in (("shared", _SharedRecord), ("global", _GlobalRecord)):
    for _ndim, _layout in ((None, ArrayProxy), (1, _Fast1D), (2, _Fast2D)):
        _CLASSES[(_space, _ndim)] = type(f"{_space.title()}Proxy{_ndim or ''}",
                                          (_mixin, _layout), {"__slots__": ()})


def make_proxy(space: str, ary: np.ndarray, array_id: int, base: int, rec,
               meta=None) -> ArrayProxy:
    """A proxy for ``ary`` in ``space`` ("shared" or "global")."""
    cls = _CLASSES.get((space, ary.ndim)) or _CLASSES[(space, None)]
    return cls(ary, array_id, base, rec, meta)
