"""Per-value data flow: which loaded input elements a value depends on, and by which road.

Every value an instrumented kernel loads from a global array comes back *tainted*: a NumPy
scalar of a subclass (``TaintedFloat32`` for a float32 element) that carries

- ``_d``: the input elements it depends on that reached this thread directly (its own loads,
  its own writes to shared memory read back), as a bit set (a Python int, one bit per distinct
  global element loaded in the block: ``Recorder.label``);
- ``_c``: the input elements it depends on that reached this thread through shared memory
  written by *another* thread of the block (a tile element a neighbour loaded);
- ``_h``: the longest chain of operations that each combine two tainted values (a serial sum
  of n loaded values is n - 1 deep; a tree of them log2(n)).

Arithmetic between tainted values, or with constants, gives a tainted value holding the union
(``_h`` grows by one only when both operands are tainted), so the bits follow the data through
registers, shared memory (``proxies``: a shared element keeps the taint of the value written and
who wrote it; a read by another thread moves ``_d`` into ``_c``), local arrays and global memory.
A store of a value that lost its taint (a cast such as ``float32(acc)``, whose result is a plain
NumPy scalar) takes the taint of the last tainted value the thread made, when the values are
equal (:func:`Recorder.taint_of`). ``math`` functions are wrapped for the launch
(:func:`swapped_math`); a result that is a Python ``int`` or ``float`` comes back as a subclass
of it (``TaintedInt``, ``TaintedFloat``) whose every operation is the plain type's on the plain
value, so a kernel computes in the analysed launch what it computes in a graded one (a Python
int never wraps, a Python float raises on overflow), and NumPy treats it as the plain number
(``__array_ufunc__``: ``int32 + int`` stays ``int32``). ``type(v)`` in the kernel gives the
plain type (:func:`swapped_math`).

Limits: a dependence through a comparison (``if s[k] > 0:``), a NumPy cast (``np.float32(a)``;
Numba's, ``float32(a)``, keep the taint in the launch: :func:`swapped_math`), ``float()``/``int()``
or a function not wrapped here is not followed; ``x * 0`` still depends on ``x``. The bits are
only as exact as "the value was computed from": they judge how an output was made, the outputs
themselves are judged by value elsewhere.
"""

from __future__ import annotations

import math
import operator
from contextlib import contextmanager

import numpy as np

_SLOTS = ("_d", "_c", "_h")
_CLASSES: dict[type, type] = {}     # plain NumPy scalar type -> its tainted subclass
TAINTED: set[type] = set()          # the tainted subclasses
_BASE: dict[type, type] = {}        # tainted subclass -> its plain NumPy scalar type
_PY_BASE: dict[type, type] = {}     # tainted subclass of a Python number -> int or float

#: The recorder of the launch in progress (set by ``launch``): it remembers the last tainted value
#: each thread made (:meth:`autograder.instrument.trace.Recorder.taint_of`).
_current = [None]

_BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
           "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
           "pow": operator.pow, "lshift": operator.lshift, "rshift": operator.rshift,
           "and": operator.and_, "or": operator.or_, "xor": operator.xor}
_UNARY = ("neg", "pos", "abs", "invert")


def _binary(name: str, fn, base: type):
    forward = getattr(base, f"__{name}__", None)
    reflected = getattr(base, f"__r{name}__", None)
    if forward is None or reflected is None:
        return {}

    def op(self, other):
        r = forward(self, other)
        if r is NotImplemented:   # float32 + float64: NumPy leaves it to the wider type
            r = fn(_BASE[type(self)](self), other)
        return _result(r, self, other)

    def rop(self, other):
        r = reflected(self, other)
        if r is NotImplemented:
            r = fn(other, _BASE[type(self)](self))
        return _result(r, self, other)

    return {f"__{name}__": op, f"__r{name}__": rop}


def _unary(name: str, base: type):
    method = getattr(base, f"__{name}__", None)
    if method is None:
        return {}

    def op(self):
        return tainted(method(self), self._d, self._c, self._h)

    return {f"__{name}__": op}


def _class_for(t: type) -> type | None:
    """The tainted subclass of NumPy scalar type ``t`` (made on first use); None for a type
    whose values are not followed (``bool``, Python numbers, structured scalars)."""
    cls = _CLASSES.get(t)
    if cls is not None:
        return cls
    if t in TAINTED:
        return t
    if not (isinstance(t, type) and issubclass(t, (np.integer, np.floating))
            and t.__module__ == "numpy"):
        return None
    ns = {"__slots__": _SLOTS, "__array_priority__": 1000.0}
    for name, fn in _BINARY.items():
        ns.update(_binary(name, fn, t))
    for name in _UNARY:
        ns.update(_unary(name, t))
    ns["__reduce__"] = lambda self: (_BASE[type(self)], (_BASE[type(self)](self),))
    cls = type(f"Tainted{t.__name__.title()}", (t,), ns)
    _CLASSES[t] = cls
    _BASE[cls] = t
    TAINTED.add(cls)
    return cls


def _plain_of(value):
    """``value`` as its plain type when it is a tainted Python number, else as is."""
    base = _PY_BASE.get(type(value))
    return value if base is None else base(value)


def _python_class(t: type) -> type:
    """The tainted subclass of the Python number type ``t`` (``int`` or ``float``): a math
    function of a loaded value returns one, so the kernel sees the type and the arithmetic it
    sees in a graded launch (a Python int never overflows: ``2 ** 64`` is not 0). Every
    operation is the plain type's on the plain value; NumPy reaches it through
    ``__array_ufunc__``, which runs the ufunc on the plain value, as with a plain number."""

    def forward(fn):
        def op(self, other):
            return _result(fn(t(self), _plain_of(other)), self, other)
        return op

    def reflected(fn):
        def op(self, other):
            return _result(fn(_plain_of(other), t(self)), self, other)
        return op

    def unary(fn):
        def op(self):
            return tainted(fn(t(self)), self._d, self._c, self._h)
        return op

    def compare(fn):
        def op(self, other):
            return fn(t(self), _plain_of(other))
        return op

    def array_ufunc(self, ufunc, method, *inputs, **kwargs):
        d = c = h = n = 0
        for a in inputs:
            if type(a) in TAINTED:
                d, c, n = d | a._d, c | a._c, n + 1
                h = a._h if a._h > h else h
        plain_inputs = [plain(a) for a in inputs]
        r = getattr(ufunc, method)(*plain_inputs, **kwargs)
        return tainted(r, d, c, h + (1 if n > 1 else 0))

    ns = {"__array_ufunc__": array_ufunc,
          "__reduce__": lambda self: (t, (t(self),)),
          "__hash__": t.__hash__}
    for name, fn in {**_BINARY, "divmod": divmod}.items():
        if hasattr(t, f"__{name}__"):
            ns[f"__{name}__"] = forward(fn)
            ns[f"__r{name}__"] = reflected(fn)
    for name in _UNARY:
        ns[f"__{name}__"] = unary(getattr(operator, name + ("_" if name == "abs" else ""),
                                          None) or getattr(operator, name))
    for name in ("lt", "le", "eq", "ne", "gt", "ge"):
        ns[f"__{name}__"] = compare(getattr(operator, name))
    if t is float:   # an int subclass cannot have slots: its taint lives in a __dict__
        ns["__slots__"] = _SLOTS
    cls = type(f"Tainted{t.__name__.title()}", (t,), ns)
    _CLASSES[t] = cls
    _BASE[cls] = t
    _PY_BASE[cls] = t
    TAINTED.add(cls)
    return cls


def tainted(value, d: int, c: int, h: int):
    """``value`` carrying (``d``, ``c``, ``h``); ``value`` itself when it cannot carry them or
    when it depends on nothing (``d`` and ``c`` both 0)."""
    if not (d or c):
        return value
    cls = _CLASSES.get(type(value))
    if cls is None:
        cls = _class_for(type(value))
        if cls is None:
            return value
        if cls is type(value):
            value = _BASE[cls](value)
    o = cls(value)
    o._d = d
    o._c = c
    o._h = h
    rec = _current[0]
    if rec is not None:
        rec.last_tainted = o
        rec.last_tid = rec.tid
    return o


def _result(r, a, b):
    """The result ``r`` of an operation on tainted ``a`` and ``b`` (b may be plain)."""
    if type(b) in TAINTED:
        h1, h2 = a._h, b._h
        return tainted(r, a._d | b._d, a._c | b._c, (h1 if h1 > h2 else h2) + 1)
    return tainted(r, a._d, a._c, a._h)


def taint(value) -> tuple[int, int, int] | None:
    """(d, c, h) of a tainted value, or None."""
    if type(value) in TAINTED:
        return value._d, value._c, value._h
    return None


def plain(value):
    """``value`` without its taint (the plain NumPy scalar), for code that must not see it."""
    base = _BASE.get(type(value))
    return value if base is None else base(value)


class _TaintedMath:
    """Stands in for the ``math`` module inside a kernel: each function's result carries the
    union of its arguments' taint (one more step when two of them are tainted)."""

    def __getattr__(self, name):
        fn = getattr(math, name)
        if not callable(fn):
            return fn
        wrapped = _wrap_function(fn)
        setattr(self, name, wrapped)
        return wrapped


def _wrap_function(fn):
    def call(*args):
        r = fn(*args)
        d = c = h = 0
        n = 0
        for a in args:
            if type(a) in TAINTED:
                d |= a._d
                c |= a._c
                h = a._h if a._h > h else h
                n += 1
        if not n:
            return r
        h += 1 if n > 1 else 0
        if type(r) is tuple:   # math.frexp, math.modf
            return tuple(tainted(v, d, c, h) for v in r)
        return tainted(r, d, c, h)

    call.__name__ = getattr(fn, "__name__", "call")
    call.__wrapped__ = fn
    return call


@contextmanager
def recording(rec):
    """Tainted values made during the launch are remembered on ``rec`` (``last_tainted``)."""
    _current[0] = rec
    try:
        yield
    finally:
        _current[0] = None


_MATH = _TaintedMath()
_MATH_FUNCTIONS = {id(getattr(math, n)): n for n in dir(math) if callable(getattr(math, n))}


@contextmanager
def swapped_math(functions):
    """For the launch, the ``math`` module (and functions imported from it, ``from math import
    sqrt``) in the globals of ``functions`` (the kernel's and its device functions' Python
    functions) are replaced by taint-keeping ones, and ``type`` by one that gives a tainted
    value's plain type; Numba's scalar types cast keeping the taint (``float32(a)`` depends on
    ``a``: ``cast_python_value`` of ``types.Integer``, ``Float``, ``Complex``). Put back
    afterwards."""
    saved, patched = [], []
    seen = set()
    try:
        for fn in functions:
            globs = getattr(fn, "__globals__", None)
            if globs is None or id(globs) in seen:
                continue
            seen.add(id(globs))
            for name, value in list(globs.items()):
                if value is math:
                    saved.append((globs, name, value))
                    globs[name] = _MATH
                elif id(value) in _MATH_FUNCTIONS and \
                        getattr(math, _MATH_FUNCTIONS[id(value)], None) is value:
                    saved.append((globs, name, value))
                    globs[name] = getattr(_MATH, _MATH_FUNCTIONS[id(value)])
            if "type" not in globs:   # type(v) of a tainted value: its plain type
                saved.append((globs, "type", _MISSING))
                globs["type"] = _plain_type
        for cls in _casting_types():   # float32(a), int32(i): the cast keeps a's taint
            cast = vars(cls)["cast_python_value"]
            patched.append((cls, cast))
            cls.cast_python_value = _taint_keeping_cast(cast)
        yield
    finally:
        for cls, cast in reversed(patched):
            cls.cast_python_value = cast
        for globs, name, value in reversed(saved):
            if value is _MISSING:
                globs.pop(name, None)
            else:
                globs[name] = value


_MISSING = object()


def _casting_types() -> list[type]:
    """Numba's scalar type classes whose instances cast when called (``float32(a)``,
    ``int32(i)``: ``Type.__call__`` -> ``cast_python_value``)."""
    from numba.core import types

    return [c for c in (types.Integer, types.Float, types.Complex)
            if "cast_python_value" in vars(c)]


def _taint_keeping_cast(cast):
    """``cast`` (a Numba type's ``cast_python_value``) whose result keeps its argument's taint."""

    def cast_keeping_taint(self, value):
        r = cast(self, value)
        t = type(value)
        if t in TAINTED:
            return tainted(r, value._d, value._c, value._h)
        return r

    cast_keeping_taint.__wrapped__ = cast
    return cast_keeping_taint


def _plain_type(*args):
    """``type`` as a graded launch's kernel sees it: a tainted value's type is its plain one, an
    instrumented array's the simulator's (its in-kernel wrapper for a global array, a NumPy
    array for a shared or local one)."""
    if len(args) == 1:
        v = args[0]
        t = type(v)
        base = _BASE.get(t)
        if base is not None:
            return base
        from .memory import LocalArray
        from .proxies import ArrayProxy

        if isinstance(v, ArrayProxy):
            return type(v._meta)
        if isinstance(v, LocalArray):
            return type(v._a)
        return t
    return type(*args)


_python_class(int)
_python_class(float)
