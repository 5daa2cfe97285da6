"""numba-cuda's libdevice functions (``numba.cuda.libdevice``) in Python, for Numba's simulator.

On a GPU ``libdevice.fmaf(a, b, acc)`` compiles to CUDA's ``__nv_fmaf``; Numba's simulator
(numba-cuda 0.30.4) has only the documentation stubs, which return None, so an honest kernel
computed NaN there and was told its outputs were wrong (issue 30, red team g7).
:func:`functions` gives, for every name of ``numba.cuda.libdevice``:

* a Python function computing what the GPU computes, where IEEE arithmetic and NumPy do: the
  math functions (``sinf``, ``expf``, ``sqrt``, ``pow``, ``erf``, ...; their ``fast_`` forms),
  the arithmetic rounded to nearest (``fadd_rn``, ``fmaf``, ``fma_rn``, ``frcp_rn``, ...), the
  conversions that round to nearest or toward zero, down or up (``float2int_rz``,
  ``double2float_rn``, ``float_as_int``, ...), the tests (``isnanf``, ``signbitd``, ...) and the
  integer functions (``popc``, ``clz``, ``ffs``, ``brev``, ``min``, ``umax``, ``mulhi``, ...).
  A ``float32`` function takes and returns ``numpy.float32`` and computes in single precision
  (the approximate ones may differ from the GPU's in the last bits, as ``math`` does); a
  ``float64`` one returns a Python ``float``, an integer one a Python ``int``. Domain errors
  give NaN or an infinity, as on a GPU, never Python's ``ValueError``;
* for the rest (arithmetic rounded up, down or toward zero, Bessel functions, ``erfinv``,
  ``normcdfinv``, ...), a function raising
  :class:`~autograder.simulator.adapter.SimulatorLimit`: the case needs a GPU, and the grader
  says so as its own limit, never as the kernel's error.

A kernel calls these with its own values, so the child's audit hook judges what runs here by the
kernel's frames beneath (:data:`autograder.child.guard.KERNEL_SIDE`); the instrumented run wraps
them to keep their arguments' taint (:mod:`autograder.instrument.launch`).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .adapter import SimulatorLimit

_f32, _f64 = np.float32, np.float64
_QUIET = {"all": "ignore"}

#: float64 name -> NumPy ufunc (or a function of one float64 or float32 value); the float32
#: function is the name + ``f`` where libdevice has one.
_UNARY = {
    "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh,
    "atan": np.arctan, "atanh": np.arctanh, "cbrt": np.cbrt, "ceil": np.ceil, "cos": np.cos,
    "cosh": np.cosh, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "fabs": np.fabs,
    "floor": np.floor, "log": np.log, "log10": np.log10, "log1p": np.log1p, "log2": np.log2,
    "sin": np.sin, "sinh": np.sinh, "sqrt": np.sqrt, "tan": np.tan, "tanh": np.tanh,
    "trunc": np.trunc, "rint": np.rint, "nearbyint": np.rint,
    "exp10": lambda x: np.power(type(x)(10), x),
    "rsqrt": lambda x: type(x)(1) / np.sqrt(x),
    "rcbrt": lambda x: type(x)(1) / np.cbrt(x),
    "sinpi": lambda x: np.sin(type(x)(np.pi) * x),
    "cospi": lambda x: np.cos(type(x)(np.pi) * x),
    "round": lambda x: type(x)(_round_half_away(float(x))),
    "logb": lambda x: type(x)(_logb(float(x))),
    "erf": lambda x: type(x)(math.erf(x)),
    "erfc": lambda x: type(x)(math.erfc(x)),
    "normcdf": lambda x: type(x)(0.5 * math.erfc(-float(x) / math.sqrt(2.0))),
    "lgamma": lambda x: type(x)(_lgamma(float(x))),
    "tgamma": lambda x: type(x)(_gamma(float(x))),
}
#: float64 name -> NumPy ufunc of two values; the float32 function is the name + ``f``.
_BINARY = {
    "atan2": np.arctan2, "copysign": np.copysign, "fmod": np.fmod, "hypot": np.hypot,
    "pow": np.power, "fmax": np.fmax, "fmin": np.fmin, "nextafter": np.nextafter,
    "fdim": lambda x, y: x - y if x > y or np.isnan(x - y) else type(x)(0),
    "remainder": lambda x, y: type(x)(_remainder(float(x), float(y))),
}
#: Names whose float32 function keeps the float64 name's ``f`` form but is written otherwise.
_FAST = {"fast_cosf": "cos", "fast_expf": "exp", "fast_exp10f": "exp10", "fast_log10f": "log10",
         "fast_log2f": "log2", "fast_logf": "log", "fast_sinf": "sin", "fast_tanf": "tan"}


def _round_half_away(x: float) -> float:
    """To the nearest integer, halves away from zero (``round``): ``x - trunc(x)`` is exact."""
    if not math.isfinite(x):
        return x
    t = float(math.trunc(x))
    return t + math.copysign(1.0, x) if abs(x - t) >= 0.5 else math.copysign(t, x)


def _logb(x: float) -> float:
    if x == 0:
        return -math.inf
    if not math.isfinite(x):
        return abs(x)
    return float(math.frexp(x)[1] - 1)


def _lgamma(x: float) -> float:
    try:
        return math.lgamma(x)
    except (OverflowError, ValueError):   # huge, or a pole (0 or a negative integer)
        return math.inf


def _remainder(x: float, y: float) -> float:
    try:
        return math.remainder(x, y)
    except ValueError:   # x infinite or y zero
        return math.nan


def _gamma(x: float) -> float:
    try:
        return math.gamma(x)
    except OverflowError:
        return math.inf
    except ValueError:   # a pole: 0 (signed) or a negative integer
        return math.copysign(math.inf, x) if x == 0 else math.nan


def _finish(r, kind):
    """A NumPy result as the function's type: ``float32``, or a Python float."""
    return kind(r) if kind is _f32 else float(r)


def _ilogb(x) -> int:
    """The unbiased exponent of ``x`` as an int32 (CUDA: ``INT_MIN`` for 0 and NaN,
    ``INT_MAX`` for an infinity)."""
    x = float(x)
    if x == 0 or math.isnan(x):
        return -(1 << 31)
    if math.isinf(x):
        return (1 << 31) - 1
    return math.frexp(x)[1] - 1


def _unary(ufunc, kind):
    def fn(x):
        with np.errstate(**_QUIET):
            r = ufunc(kind(x))
        return kind(r) if kind is _f32 else float(r)
    return fn


def _binary(ufunc, kind):
    def fn(x, y):
        with np.errstate(**_QUIET):
            r = ufunc(kind(x), kind(y))
        return kind(r) if kind is _f32 else float(r)
    return fn


def _arith(op, kind):
    """``x op y`` rounded to nearest in ``kind``'s precision (``fadd_rn``, ``dmul_rn``, ...)."""
    def fn(x, y):
        with np.errstate(**_QUIET):
            r = op(kind(x), kind(y))
        return kind(r) if kind is _f32 else float(r)
    return fn


def _fma(kind):
    """``x * y + z`` rounded once: exactly for float64 (fractions), and for float32 through
    float64, where the product of two float32 values is exact."""
    def fn(x, y, z):
        x, y, z = float(kind(x)), float(kind(y)), float(kind(z))
        if kind is _f32:
            with np.errstate(**_QUIET):
                return _f32(_f64(x) * _f64(y) + _f64(z))
        if not all(map(math.isfinite, (x, y, z))):
            return x * y + z
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        try:
            return float(exact) if exact else x * y + z   # x * y + z keeps the sign of a zero
        except OverflowError:
            return math.copysign(math.inf, exact)
    return fn


def _to_int(rounding, bits, signed):
    """A float to an integer of ``bits`` bits, rounded by ``rounding``; NaN gives 0 and the
    out-of-range values saturate, as CUDA's conversions do."""
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)

    def fn(x):
        x = float(x)
        if math.isnan(x):
            return 0
        if math.isinf(x):
            return hi if x > 0 else lo
        return min(hi, max(lo, int(rounding(x))))
    return fn


def _round_half_even(x: float) -> int:
    return round(x)


def _to_float(kind):
    def fn(x):
        return kind(x) if kind is _f32 else float(x)
    return fn


def _bits(mask):
    def popc(x):
        return bin(int(x) & mask).count("1")

    def clz(x):
        return mask.bit_length() - (int(x) & mask).bit_length()

    def ffs(x):
        v = int(x) & mask
        return (v & -v).bit_length()

    def brev(x):
        width = mask.bit_length()
        return int(format(int(x) & mask, f"0{width}b")[::-1], 2)
    return popc, clz, ffs, brev


def _signed(bits):
    def fn(v):
        v &= (1 << bits) - 1
        return v - (1 << bits) if v >> (bits - 1) else v
    return fn


def _mulhi(bits, signed):
    mask = (1 << bits) - 1

    def fn(x, y):
        x, y = int(x), int(y)
        if not signed:
            x, y = x & mask, y & mask
        r = (x * y) >> bits
        return _signed(bits)(r) if signed else r & mask
    return fn


def _limited(name):
    def fn(*args, **kwargs):
        raise SimulatorLimit(
            f"libdevice.{name} is not run by Numba's CUDA simulator (it has no libdevice "
            "implementation of it); a GPU runs it")
    fn.__name__ = name
    return fn


def _implemented() -> dict:
    out = {}
    for name, ufunc in _UNARY.items():
        out[name] = _unary(ufunc, _f64)
        out[name + "f"] = _unary(ufunc, _f32)
    for fast, name in _FAST.items():
        out[fast] = _unary(_UNARY[name], _f32)
    for name, ufunc in _BINARY.items():
        out[name] = _binary(ufunc, _f64)
        out[name + "f"] = _binary(ufunc, _f32)
    out["fast_powf"] = _binary(np.power, _f32)
    out["fast_fdividef"] = _arith(np.divide, _f32)
    for op, f, d in ((np.add, "fadd_rn", "dadd_rn"), (np.subtract, "fsub_rn", None),
                     (np.multiply, "fmul_rn", "dmul_rn"), (np.divide, "fdiv_rn", "ddiv_rn")):
        out[f] = _arith(op, _f32)
        if d:
            out[d] = _arith(op, _f64)
    out["fsqrt_rn"], out["dsqrt_rn"] = _unary(np.sqrt, _f32), _unary(np.sqrt, _f64)
    out["frcp_rn"] = _unary(lambda x: type(x)(1) / x, _f32)
    out["drcp_rn"] = _unary(lambda x: type(x)(1) / x, _f64)
    out["frsqrt_rn"] = _unary(_UNARY["rsqrt"], _f32)
    for name, kind in (("ldexp", _f64), ("ldexpf", _f32), ("scalbn", _f64), ("scalbnf", _f32)):
        out[name] = (lambda k: lambda x, n: _finish(np.ldexp(k(x), int(n)), k))(kind)
    for name, kind in (("powi", _f64), ("powif", _f32)):
        out[name] = (lambda k: lambda x, n: _finish(np.power(k(x), k(int(n))), k))(kind)
    for name, kind in (("frexp", _f64), ("frexpf", _f32)):
        out[name] = (lambda k: lambda x: (_finish(np.frexp(k(x))[0], k),
                                          int(np.frexp(k(x))[1])))(kind)
    out["ilogb"] = out["ilogbf"] = _ilogb
    out["fma"] = out["fma_rn"] = _fma(_f64)
    out["fmaf"] = out["fmaf_rn"] = _fma(_f32)
    out["sincos"] = lambda x: (out["sin"](x), out["cos"](x))
    out["sincosf"] = lambda x: (out["sinf"](x), out["cosf"](x))
    out["fast_sincosf"] = out["sincosf"]
    out["sincospi"] = lambda x: (out["sinpi"](x), out["cospi"](x))
    out["sincospif"] = lambda x: (out["sinpif"](x), out["cospif"](x))
    out["saturatef"] = lambda x: _f32(min(max(float(_f32(x)), 0.0), 1.0)) \
        if not math.isnan(x) else _f32(0)
    for name, test in (("isnan", math.isnan), ("isinf", math.isinf),
                       ("isfinite", math.isfinite)):
        out[name + "d"] = out[name + "f"] = (lambda t: lambda x: int(t(float(x))))(test)
    out["finitef"] = out["isfinitef"]
    out["signbitd"] = out["signbitf"] = lambda x: int(math.copysign(1.0, float(x)) < 0)
    for rounding, suffix in ((math.trunc, "rz"), (math.floor, "rd"), (math.ceil, "ru"),
                             (_round_half_even, "rn")):
        for src in ("float", "double"):
            out[f"{src}2int_{suffix}"] = _to_int(rounding, 32, True)
            out[f"{src}2uint_{suffix}"] = _to_int(rounding, 32, False)
            out[f"{src}2ll_{suffix}"] = _to_int(rounding, 64, True)
            out[f"{src}2ull_{suffix}"] = _to_int(rounding, 64, False)
    for name in ("llrint", "llrintf"):
        out[name] = _to_int(_round_half_even, 64, True)
    for name in ("llround", "llroundf"):
        out[name] = _to_int(_round_half_away, 64, True)
    out["double2float_rn"] = _to_float(_f32)
    for src in ("int", "uint", "ll", "ull"):
        out[f"{src}2float_rn"] = _to_float(_f32)
        out[f"{src}2double_rn"] = _to_float(_f64)
    out["int2double_rn"] = _to_float(_f64)
    out["float_as_int"] = lambda x: int(np.array(x, dtype=np.float32).view(np.int32)[()])
    out["int_as_float"] = lambda x: np.array(x, dtype=np.int64).astype(np.uint32).view(
        np.float32)[()]
    out["double_as_longlong"] = lambda x: int(np.array(x, dtype=np.float64).view(np.int64)[()])
    out["longlong_as_double"] = lambda x: float(np.array(x, dtype=np.int64).view(
        np.float64)[()])
    for mask, suffix in ((0xFFFFFFFF, ""), (0xFFFFFFFFFFFFFFFF, "ll")):
        popc, clz, ffs, brev = _bits(mask)
        out["popc" + suffix], out["clz" + suffix] = popc, clz
        out["ffs" + suffix], out["brev" + suffix] = ffs, brev
    out["abs"] = out["llabs"] = lambda x: abs(int(x))
    out["min"] = out["llmin"] = lambda x, y: min(int(x), int(y))
    out["max"] = out["llmax"] = lambda x, y: max(int(x), int(y))
    out["umin"] = lambda x, y: min(int(x) & 0xFFFFFFFF, int(y) & 0xFFFFFFFF)
    out["umax"] = lambda x, y: max(int(x) & 0xFFFFFFFF, int(y) & 0xFFFFFFFF)
    out["ullmin"] = lambda x, y: min(int(x) & (2 ** 64 - 1), int(y) & (2 ** 64 - 1))
    out["ullmax"] = lambda x, y: max(int(x) & (2 ** 64 - 1), int(y) & (2 ** 64 - 1))
    out["mulhi"], out["umulhi"] = _mulhi(32, True), _mulhi(32, False)
    out["mul64hi"], out["umul64hi"] = _mulhi(64, True), _mulhi(64, False)
    out["mul24"] = lambda x, y: _signed(32)(_signed(24)(int(x)) * _signed(24)(int(y)))
    out["umul24"] = lambda x, y: ((int(x) & 0xFFFFFF) * (int(y) & 0xFFFFFF)) & 0xFFFFFFFF
    out["hadd"] = lambda x, y: (int(x) + int(y)) >> 1
    out["rhadd"] = lambda x, y: (int(x) + int(y) + 1) >> 1
    out["uhadd"] = lambda x, y: ((int(x) & 0xFFFFFFFF) + (int(y) & 0xFFFFFFFF)) >> 1
    out["urhadd"] = lambda x, y: ((int(x) & 0xFFFFFFFF) + (int(y) & 0xFFFFFFFF) + 1) >> 1
    out["sad"] = lambda x, y, z: abs(int(x) - int(y)) + (int(z) & 0xFFFFFFFF)
    out["usad"] = lambda x, y, z: abs((int(x) & 0xFFFFFFFF) - (int(y) & 0xFFFFFFFF)) \
        + (int(z) & 0xFFFFFFFF)
    return out


def functions(names) -> dict:
    """For each libdevice name in ``names`` (the public names of ``numba.cuda.libdevice``), its
    simulator function: computed as described in the module docstring, or raising
    :class:`~autograder.simulator.adapter.SimulatorLimit`."""
    implemented = _implemented()
    return {name: implemented.get(name) or _limited(name) for name in names}
