"""Array proxies: element access recorded, anything else (shape, size, dtype, len) passed
through. Each access does the real NumPy access first, so errors are the simulator's own.

The hot path is kept short: the offset is computed inline for 1-d and 2-d arrays, and the
caller is recorded as a *site* (``f_lasti * SITE + code index``), not a line: computing a line
number (``f_lineno``) and hashing a code object both cost more than the rest of the access.
``Recorder.site_loc`` turns sites into lines later, once per distinct site.

Shared proxies append ``(tid, site, array id, byte address, kind)`` to the recorder's log;
global proxies append each load as ``(tid, site, array id, byte offset)`` to the recorder's
``global_log`` (counted per site and coalesced per warp request by ``loads``) and remember which
elements were stored.
"""

from __future__ import annotations

import operator
import sys

import numpy as np

from .trace import ATOMIC, READ, SITE, WRITE

_getframe = sys._getframe
_index = operator.index
_ndarray = np.ndarray


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

    def _write_many(self, idx, frame) -> None:   # a slice, a row, fancy indexing
        for o in self._offsets(idx):
            self._record(int(o), WRITE, frame)

    def __getitem__(self, idx):
        value = self._a[idx]
        if type(value) is _ndarray:   # a view (a[row]): no memory access yet
            return self._view(value)
        self._record(self._offset(idx), READ, _getframe(1))
        return value

    def __setitem__(self, idx, value):
        self._a[idx] = value
        try:
            off = self._offset(idx)
        except TypeError:
            return self._write_many(idx, _getframe(1))
        self._record(off, WRITE, _getframe(1))

    def record_atomic(self, idx, frame) -> None:
        self._record(self._offset(idx), ATOMIC, frame)

    def __len__(self):
        return len(self._a)

    def __getattr__(self, name):
        value = getattr(self._meta, name)
        if callable(value) and not isinstance(value, type):
            # A.reshape(...), A.ravel(): a view they return is A, its accesses A's
            return lambda *args, **kwargs: self._alias(value(*args, **kwargs))
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
        value = self._a[idx]
        if type(value) is _ndarray:
            return self._view(value)
        try:
            off = self._base + (idx if idx >= 0 else idx + self._shape[0]) * self._strides[0]
        except TypeError:   # (i,) and other spellings
            off = self._offset(idx)
        self._record(off, READ, _getframe(1))
        return value

    def __setitem__(self, idx, value):
        self._a[idx] = value
        try:
            off = self._base + (idx if idx >= 0 else idx + self._shape[0]) * self._strides[0]
        except TypeError:
            try:
                off = self._offset(idx)
            except TypeError:
                return self._write_many(idx, _getframe(1))
        self._record(off, WRITE, _getframe(1))


class _Fast2D(ArrayProxy):
    __slots__ = ()

    def __getitem__(self, idx):
        value = self._a[idx]
        if type(value) is _ndarray:
            return self._view(value)
        i, j = idx
        if i < 0:
            i += self._shape[0]
        if j < 0:
            j += self._shape[1]
        s0, s1 = self._strides
        self._record(self._base + i * s0 + j * s1, READ, _getframe(1))
        return value

    def __setitem__(self, idx, value):
        self._a[idx] = value
        try:
            i, j = idx
            if i < 0:
                i += self._shape[0]
            if j < 0:
                j += self._shape[1]
        except (TypeError, ValueError):
            return self._write_many(idx, _getframe(1))
        s0, s1 = self._strides
        try:
            off = self._base + i * s0 + j * s1
        except TypeError:   # a slice in the pair
            return self._write_many(idx, _getframe(1))
        self._record(off, WRITE, _getframe(1))


class _SharedRecord:
    """Appends (tid, site, array id, byte address, kind) to the interval log."""
    __slots__ = ()
    _space = "shared"

    @staticmethod
    def _make_sink(rec):
        return rec.shared_log.append   # the log is cleared in place, never replaced

    def _record(self, off, kind, f):
        code = f.f_code
        ci = self._codes.get(id(code))
        if ci is None:
            ci = self._rec.code_index(code)
        rec = self._rec
        self._sink((rec.tid, f.f_lasti * SITE + ci, self._id, off, kind))
        if kind == READ:
            rec.last_shared_read = (rec.tid, self._a, off - self._base)


class _GlobalRecord:
    """Logs loads as (tid, site, array id, byte offset), for the per-site counts and the
    per-warp-request coalescing (``loads``); remembers stored elements."""
    __slots__ = ()
    _space = "global"

    @staticmethod
    def _make_sink(rec):
        return rec.global_log.append   # the log is cleared in place, never replaced

    def __getitem__(self, idx):
        value = self._a[idx]
        if type(value) is _ndarray:
            return self._view(value)
        if type(idx) is int:
            off = self._base + (idx if idx >= 0 else idx + self._shape[0]) * self._strides[0]
        elif type(idx) is tuple and len(idx) == 2 and len(self._shape) == 2:
            i, j = idx
            if i < 0:
                i += self._shape[0]
            if j < 0:
                j += self._shape[1]
            off = self._base + i * self._strides[0] + j * self._strides[1]
        else:
            off = self._offset(idx)
        f = _getframe(1)
        code = f.f_code
        ci = self._codes.get(id(code))
        if ci is None:
            ci = self._rec.code_index(code)
        self._sink((self._rec.tid, f.f_lasti * SITE + ci, self._id, off))
        return value

    def __setitem__(self, idx, value):
        rec = self._rec
        rec.store_from_shared = _from_shared(rec, value)
        super().__setitem__(idx, value)
        rec.store_from_shared = False

    def _record(self, off, kind, f):
        if kind == READ:
            code = f.f_code
            ci = self._codes.get(id(code))
            if ci is None:
                ci = self._rec.code_index(code)
            self._sink((self._rec.tid, f.f_lasti * SITE + ci, self._id, off))
        else:
            self._rec.global_stores.add((self._id, off))
            if self._rec.store_from_shared:
                self._rec.stores_from_shared.add((self._id, off))


def _from_shared(rec, value) -> bool:
    """Whether ``value`` equals the element the running thread read from shared memory last
    (a store of that value; the element is looked up now, so a later overwrite is missed)."""
    last = rec.last_shared_read
    if last is None or last[0] != rec.tid or type(value) is _ndarray:
        return False
    _, ary, off = last
    if not ary.flags.c_contiguous or off < 0 or off >= ary.nbytes:
        return False
    try:
        return bool(ary.reshape(-1)[off // ary.itemsize] == value)
    except (TypeError, ValueError):
        return False


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
