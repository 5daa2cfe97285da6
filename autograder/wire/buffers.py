"""Guarded buffers: every array a kernel sees is a view into a larger buffer with margins.

Inputs' margins hold NaN (floats) or a sentinel (integers), so a stray read poisons the result;
outputs are poisoned the same way before the launch (or zeroed: an output the contract names in
``zeroed``, an accumulator) and their margins hold a marked sentinel, so a write outside the
output is caught on the GPU too (the simulator raises ``IndexError``).
The buffers are flat, so each view is C-contiguous, as the contract promises.

Every dtype a kernel may take has its values here (:func:`sentinel`, :func:`poison`,
:func:`start_value`): float32 and float64, and the signed and unsigned integers of 8 to 64 bits.
This is the one place that picks them: the cases, the instrumented runs and the timed launches
(:mod:`autograder.timing.outputs`) all ask it.
"""

from __future__ import annotations

import numpy as np

MIN_MARGIN = 1024
# A NaN with a payload a kernel is unlikely to produce: margins are compared bit for bit.
FLOAT32_SENTINEL_BITS = np.uint32(0x7FA5A5A5)
FLOAT64_SENTINEL_BITS = np.uint64(0x7FF4A5A5A5A5A5A5)
INT_SENTINEL = -0x5EEDBEE
#: The byte an integer sentinel repeats where :data:`INT_SENTINEL` does not fit the dtype
#: (int8 -91, int16 -23131, uint8 165, uint16 42405, uint32 0xA5A5A5A5, uint64 0xA5A5...).
INT_SENTINEL_BYTE = 0xA5


def margin_for(shape: tuple[int, ...]) -> int:
    """Margin, in elements, on each side of an array of ``shape``: enough for a grid that
    overruns every dimension by up to a 32-wide tile (plus one more) to land in the margin.
    A 1×70 output indexed as [row, col] by a 32×96 grid reaches flat index 31·70 + 95."""
    reach = 1
    for d in shape:
        reach *= -(-int(d) // 32) * 32 + 32
    return max(MIN_MARGIN, reach)


def sentinel(dtype: np.dtype) -> np.ndarray:
    """A one-element array holding the sentinel value for ``dtype``: a NaN with a payload for
    float32 and float64; :data:`INT_SENTINEL` for an integer dtype it fits (int32, int64), else
    :data:`INT_SENTINEL_BYTE` in every byte. Raises ``TypeError`` for any other dtype."""
    dtype = np.dtype(dtype)
    if dtype == np.float32:
        return np.array([FLOAT32_SENTINEL_BITS], np.uint32).view(np.float32)
    if dtype == np.float64:
        return np.array([FLOAT64_SENTINEL_BITS], np.uint64).view(np.float64)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        if info.min <= INT_SENTINEL <= info.max:
            return np.array([INT_SENTINEL], dtype)
        return np.frombuffer(bytes([INT_SENTINEL_BYTE]) * dtype.itemsize, dtype).copy()
    raise TypeError(f"no sentinel for dtype {dtype}: kernels here take float32, float64 and "
                    "signed or unsigned integers of 8 to 64 bits")


def poison(dtype: np.dtype) -> np.ndarray:
    """The value an output holds before the launch: quiet NaN for floats, the sentinel for ints."""
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.floating):
        return np.array([np.nan], dtype)
    return sentinel(dtype)


def start_value(dtype: np.dtype, zeroed: bool = False) -> np.ndarray:
    """What an output holds before every launch (a case's, an instrumented run's, a timed
    one's): zero for an output that starts at zero (the contract's ``zeroed``), else
    :func:`poison`."""
    return np.zeros(1, np.dtype(dtype)) if zeroed else poison(dtype)


def guarded_input(values: np.ndarray) -> tuple[np.ndarray, int]:
    """A flat host buffer holding ``values`` between poisoned margins; returns (buffer, margin)."""
    m = margin_for(values.shape)
    buf = np.empty(values.size + 2 * m, values.dtype)
    buf[:] = poison(values.dtype)[0]
    buf[m:m + values.size] = values.ravel()
    return buf, m


def guarded_output(shape: tuple[int, ...], dtype: str, zeroed: bool = False
                   ) -> tuple[np.ndarray, int]:
    """A flat host buffer for an output of ``shape``: poisoned inside (zeros with ``zeroed``),
    sentinel margins."""
    size = int(np.prod(shape))
    m = margin_for(shape)
    buf = np.empty(size + 2 * m, np.dtype(dtype))
    buf[:] = sentinel(dtype)[0]
    buf[m:m + size] = start_value(dtype, zeroed)[0]
    return buf, m


def inner(buf, margin: int, shape: tuple[int, ...]):
    """The array a kernel sees in a guarded buffer (host or device): ``shape`` elements after
    ``margin``, reshaped."""
    size = int(np.prod(shape))
    return buf[margin:margin + size].reshape(shape)


def margin_of(buf: np.ndarray, shape: tuple[int, ...]) -> int:
    """The margin of a guarded buffer holding an array of ``shape``."""
    return (buf.size - int(np.prod(shape))) // 2


def split_guarded(buf: np.ndarray, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Split a guarded output buffer into (the output, reshaped; the margins, concatenated)."""
    m = margin_of(buf, shape)
    size = int(np.prod(shape))
    return inner(buf, m, shape), np.concatenate([buf[:m], buf[m + size:]])


def margin_writes(margins: np.ndarray) -> np.ndarray:
    """Boolean mask of margin elements that no longer hold the sentinel (bitwise)."""
    s = sentinel(margins.dtype)
    if np.issubdtype(margins.dtype, np.floating):
        ints = np.dtype(f"u{margins.dtype.itemsize}")
        return margins.view(ints) != s.view(ints)[0]
    return margins != s[0]
