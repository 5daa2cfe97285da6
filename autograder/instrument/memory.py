"""Where the proxies come from: shared arrays (``cuda.shared.array``), the global arrays handed
to the kernel as arguments, and atomics on either; local arrays (``cuda.local.array``) that
keep the taint of what is stored in them (``taint``), and device-wide fences.

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

from autograder.simulator import adapter as sim

from .proxies import ArrayProxy, make_proxy
from .taint import tainted
from .trace import FENCE

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
    ary = fake_array._ary
    info = ArrayInfo(name, "global", tuple(ary.shape), str(ary.dtype), ary.dtype.itemsize, 0,
                     None)
    return make_proxy("global", ary, rec.add_array(info), 0, rec,
                      sim.FakeWithinKernelCUDAArray(fake_array))


class Atomics:
    """Stands in for ``FakeCUDAAtomic``: an atomic on a proxy is recorded as one atomic access
    (atomics do not race with each other; on a global array it is a load, and a store when it
    changed the element) and performed on the raw array; the old value it returns is a read of
    the element (``taint``)."""

    def __init__(self):
        self._orig = sim.FakeCUDAAtomic()

    def __getattr__(self, name):
        op = getattr(self._orig, name)

        def atomic(array, *args):
            if isinstance(array, ArrayProxy):
                raw = array._a
                idx = (0,) * raw.ndim if name == "compare_and_swap" else args[0]
                if name != "compare_and_swap":
                    idx = array.check_atomic(idx)
                    args = (idx, *args[1:])
                before = raw[idx]
                result = op(raw, *args)
                after = raw[idx]
                try:
                    changed = not (bool(before == after) or (before != before and after != after))
                except (TypeError, ValueError):
                    changed = True
                frame = _getframe(1)
                out = array.record_atomic(idx, frame, result, changed, args[-1])
                array._rec.atomic_note(array._space == "shared", name, changed, frame)
                return out
            return op(array, *args)

        setattr(self, name, atomic)
        return atomic


class LocalArray:
    """A ``cuda.local.array``: a NumPy array whose elements keep the taint of the values stored
    in them (a plain array would drop it: a register tile of partial sums). Element access
    only; anything else is the array's."""

    __slots__ = ("_a", "_t", "_rec")

    def __init__(self, ary: np.ndarray, rec):
        self._a = ary
        self._t = {}
        self._rec = rec

    def _key(self, idx):
        t = idx if type(idx) is tuple else (idx,)
        try:
            return tuple(int(i) % n for i, n in zip(t, self._a.shape)) \
                if len(t) == self._a.ndim else None
        except TypeError:   # a slice, an index array
            return None

    def __getitem__(self, idx):
        value = self._a[idx]
        if type(value) is np.ndarray:
            return value
        t = self._t.get(self._key(idx))
        return value if t is None else tainted(value, *t)

    def __setitem__(self, idx, value):
        self._a[idx] = value
        key = self._key(idx)
        if key is None:
            self._t.clear()
            return
        t = self._rec.taint_of(value)
        if t is None:
            self._t.pop(key, None)
        else:
            self._t[key] = t

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        """The elements 0 to ``len - 1``, each with its taint (``x[i]``), as a GPU iterates."""
        for i in range(len(self._a)):
            yield self[i]

    def __getattr__(self, name):
        return getattr(self._a, name)


class Local:
    """Stands in for ``FakeCUDALocal``: the same arrays, as :class:`LocalArray`."""

    def __init__(self, rec):
        self._orig = sim.FakeCUDALocal()
        self._rec = rec

    def array(self, shape, dtype, alignment=None):
        return LocalArray(self._orig.array(shape, dtype, alignment), self._rec)


def fence_hooks(rec):
    """``cuda.threadfence`` and ``cuda.threadfence_system`` for the launch: each records a
    device-wide fence in the global log (``races`` orders accesses of different blocks by
    fences and atomics). ``threadfence_block`` orders nothing across blocks: left as it is."""

    def threadfence():
        frame = _getframe(1)
        rec.global_log.append((rec.tid, rec.site(frame), -1, 0, FENCE))

    return threadfence, threadfence
