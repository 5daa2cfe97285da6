"""Proxies for the arrays a kernel touches: shared arrays (``cuda.shared.array``) and the global
arrays handed to it as arguments. Each element access does the real NumPy access first (so
errors are the simulator's own), then tells the recorder (array id, byte address, read/write,
the caller's frame for the line).

Shared arrays live in one flat, made-up shared address space (each allocation 16-byte aligned
after the previous one), so a byte address identifies an element for races and gives its bank.
Global addresses are byte offsets from the argument's own first element.
"""

from __future__ import annotations

import linecache
import operator
import re
import sys
from dataclasses import dataclass

import numpy as np

from .trace import ATOMIC, READ, WRITE

_getframe = sys._getframe
_index = operator.index
_ASSIGNED = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*[\w.]*shared\.array\b")


@dataclass
class ArrayInfo:
    name: str
    space: str          # "shared" or "global"
    shape: tuple
    dtype: str
    itemsize: int
    base: int           # byte address of element 0 (shared space; 0 for globals)
    line: int | None    # allocation line (shared)

    def index_of(self, addr: int) -> list[int]:
        """Index tuple of the element at byte address ``addr`` (C order)."""
        flat = (addr - self.base) // self.itemsize
        if not self.shape:
            return []
        return [int(i) for i in np.unravel_index(flat % max(1, int(np.prod(self.shape))),
                                                 self.shape)]


class ArrayProxy:
    """Element access recorded; anything else (shape, size, dtype, len) passes through.
    ``make_proxy`` picks the subclass with the fast path for 1-d and 2-d arrays."""

    __slots__ = ("_a", "_id", "_base", "_strides", "_shape", "_hook", "_meta", "shape")

    def __init__(self, ary: np.ndarray, array_id: int, base: int, hook, meta=None):
        self._a = ary
        self._id = array_id
        self._base = base
        self._strides = ary.strides
        self._shape = ary.shape
        self._hook = hook
        self._meta = meta if meta is not None else ary
        self.shape = self._meta.shape

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
        return make_proxy(sub, self._id, self._base + delta, self._hook)

    def _write_many(self, idx, frame) -> None:   # a slice, a row, fancy indexing
        for o in self._offsets(idx):
            self._hook(self._id, int(o), WRITE, frame)

    def __getitem__(self, idx):
        value = self._a[idx]
        if type(value) is np.ndarray:   # a view (a[row]): no memory access yet
            return self._view(value)
        self._hook(self._id, self._offset(idx), READ, _getframe(1))
        return value

    def __setitem__(self, idx, value):
        self._a[idx] = value
        try:
            off = self._offset(idx)
        except TypeError:
            return self._write_many(idx, _getframe(1))
        self._hook(self._id, off, WRITE, _getframe(1))

    def record_atomic(self, idx, frame) -> None:
        self._hook(self._id, self._offset(idx), ATOMIC, frame)

    def __len__(self):
        return len(self._a)

    def __getattr__(self, name):
        return getattr(self._meta, name)

    def __repr__(self):
        return f"<instrumented {self._a!r}>"


class _Proxy1D(ArrayProxy):
    __slots__ = ()

    def __getitem__(self, idx):
        value = self._a[idx]
        if type(value) is np.ndarray:
            return self._view(value)
        try:
            off = self._base + (idx if idx >= 0 else idx + self._shape[0]) * self._strides[0]
        except TypeError:   # (i,) and other spellings
            off = self._offset(idx)
        self._hook(self._id, off, READ, _getframe(1))
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
        self._hook(self._id, off, WRITE, _getframe(1))


class _Proxy2D(ArrayProxy):
    __slots__ = ()

    def _offset2(self, idx):
        i, j = idx   # TypeError / ValueError unless a pair
        if i < 0:
            i += self._shape[0]
        if j < 0:
            j += self._shape[1]
        s0, s1 = self._strides
        return self._base + i * s0 + j * s1

    def __getitem__(self, idx):
        value = self._a[idx]
        if type(value) is np.ndarray:
            return self._view(value)
        self._hook(self._id, self._offset2(idx), READ, _getframe(1))
        return value

    def __setitem__(self, idx, value):
        self._a[idx] = value
        try:
            off = self._offset2(idx)
        except (TypeError, ValueError):
            return self._write_many(idx, _getframe(1))
        self._hook(self._id, off, WRITE, _getframe(1))


def make_proxy(ary: np.ndarray, array_id: int, base: int, hook, meta=None) -> ArrayProxy:
    cls = {1: _Proxy1D, 2: _Proxy2D}.get(ary.ndim, ArrayProxy)
    return cls(ary, array_id, base, hook, meta)


def _name_at(filename: str, line: int) -> str | None:
    m = _ASSIGNED.match(linecache.getline(filename, line))
    return m.group(1) if m else None


class SharedMemory:
    """Stands in for the simulator's ``FakeCUDAShared``: same allocation rule (one array per
    source line, kept for the whole launch, as the simulator does), proxies handed out."""

    ALIGN = 16

    def __init__(self, rec, dynshared_size: int):
        self._rec = rec
        self._allocs = {}
        self._next = 0
        self._dyn_size = dynshared_size
        self._dyn = np.zeros(dynshared_size, dtype=np.byte)
        self._dyn_id = None

    def _register(self, name, shape, dtype, line) -> tuple[int, int]:
        base = self._next
        nbytes = int(np.prod(shape)) * dtype.itemsize if shape else dtype.itemsize
        self._next = -(-(base + nbytes) // self.ALIGN) * self.ALIGN
        self._rec.arrays.append(ArrayInfo(name, "shared", tuple(shape), str(dtype),
                                          dtype.itemsize, base, line))
        return len(self._rec.arrays) - 1, base

    def array(self, shape, dtype, alignment=None):
        from numba.cuda import types
        from numba.cuda.np import numpy_support

        if alignment is not None:
            raise RuntimeError("Array alignment is not supported in cudasim")
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        dtype = np.dtype(dtype)
        frame = _getframe(1)
        filename, line = frame.f_code.co_filename, frame.f_lineno
        name = _name_at(filename, line) or f"shared array of line {line}"
        if shape == 0:
            count = self._dyn_size // dtype.itemsize
            ary = np.frombuffer(self._dyn.data, dtype=dtype, count=count)
            if self._dyn_id is None:
                self._dyn_id = self._register(name, (self._dyn_size,), np.dtype(np.byte), line)
            array_id, base = self._dyn_id
            return make_proxy(ary, array_id, base, self._rec.shared)
        key = (filename, line)
        if key not in self._allocs:
            shape_t = (shape,) if isinstance(shape, int) else tuple(shape)
            array_id, base = self._register(name, shape_t, dtype, line)
            self._allocs[key] = (np.empty(shape, dtype), array_id, base)
        ary, array_id, base = self._allocs[key]
        return make_proxy(ary, array_id, base, self._rec.shared)


def global_proxy(rec, fake_array, name: str) -> ArrayProxy:
    """Wrap a kernel argument (the simulator's ``FakeCUDAArray``) for recording. Attribute
    access goes through the simulator's in-kernel wrapper, so ``A.shape`` behaves as there."""
    from numba.cuda.simulator.cudadrv.devicearray import FakeWithinKernelCUDAArray

    ary = fake_array._ary
    rec.arrays.append(ArrayInfo(name, "global", tuple(ary.shape), str(ary.dtype),
                                ary.dtype.itemsize, 0, None))
    return make_proxy(ary, len(rec.arrays) - 1, 0, rec.global_,
                      FakeWithinKernelCUDAArray(fake_array))


class Atomics:
    """Stands in for ``FakeCUDAAtomic``: an atomic on a proxy is recorded as one atomic access
    (atomics do not race with each other) and performed on the raw array."""

    def __init__(self):
        from numba.cuda.simulator.kernelapi import FakeCUDAAtomic

        self._orig = FakeCUDAAtomic()

    def __getattr__(self, name):
        op = getattr(self._orig, name)

        def atomic(array, *args):
            if isinstance(array, ArrayProxy):
                idx = (0,) * array._a.ndim if name == "compare_and_swap" else args[0]
                result = op(array._a, *args)
                array.record_atomic(idx, _getframe(1))
                return result
            return op(array, *args)

        setattr(self, name, atomic)
        return atomic
