"""Where the proxies come from: shared arrays (``cuda.shared.array``), the global arrays handed
to the kernel as arguments, and atomics on either.

Shared arrays live in one flat, made-up shared address space (each allocation 16-byte aligned
after the previous one), so a byte address identifies an element for races and gives its bank.
Global addresses are byte offsets from the argument's own first element.
"""

from __future__ import annotations

import linecache
import re
import sys
from dataclasses import dataclass

import numpy as np

from .proxies import ArrayProxy, make_proxy

_getframe = sys._getframe
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


def _name_at(filename: str, line: int) -> str:
    """The variable a shared array is assigned to on its line, for messages."""
    m = _ASSIGNED.match(linecache.getline(filename, line))
    return m.group(1) if m else f"shared array of line {line}"


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
        info = ArrayInfo(name, "shared", tuple(shape), str(dtype), dtype.itemsize, base, line)
        return self._rec.add_array(info), base

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
        if shape == 0:   # dynamic shared memory: every such array is the same bytes
            count = self._dyn_size // dtype.itemsize
            ary = np.frombuffer(self._dyn.data, dtype=dtype, count=count)
            if self._dyn_id is None:
                self._dyn_id = self._register(_name_at(filename, line), (self._dyn_size,),
                                              np.dtype(np.byte), line)
            array_id, base = self._dyn_id
            return make_proxy("shared", ary, array_id, base, self._rec)
        key = (filename, line)
        if key not in self._allocs:
            shape_t = (shape,) if isinstance(shape, int) else tuple(shape)
            array_id, base = self._register(_name_at(filename, line), shape_t, dtype, line)
            self._allocs[key] = (np.empty(shape, dtype), array_id, base)
        ary, array_id, base = self._allocs[key]
        return make_proxy("shared", ary, array_id, base, self._rec)


def global_proxy(rec, fake_array, name: str) -> ArrayProxy:
    """Wrap a kernel argument (the simulator's ``FakeCUDAArray``) for recording. Attribute
    access goes through the simulator's in-kernel wrapper, so ``A.shape`` behaves as there."""
    from numba.cuda.simulator.cudadrv.devicearray import FakeWithinKernelCUDAArray

    ary = fake_array._ary
    info = ArrayInfo(name, "global", tuple(ary.shape), str(ary.dtype), ary.dtype.itemsize, 0,
                     None)
    return make_proxy("global", ary, rec.add_array(info), 0, rec,
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
                if name != "compare_and_swap":
                    idx = array.check_atomic(idx)
                    args = (idx, *args[1:])
                result = op(array._a, *args)
                array.record_atomic(idx, _getframe(1))
                return result
            return op(array, *args)

        setattr(self, name, atomic)
        return atomic
