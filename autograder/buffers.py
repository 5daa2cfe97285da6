"""Guarded buffers: every array a kernel sees is a view into a larger buffer with margins.

Inputs' margins hold NaN (floats) or a sentinel (integers), so a stray read poisons the result;
outputs are poisoned the same way before the launch and their margins hold a marked sentinel, so
a write outside the output is caught on the GPU too (the simulator raises ``IndexError``).
The buffers are flat, so each view is C-contiguous, as the contract promises.
"""

from __future__ import annotations

import numpy as np

MIN_MARGIN = 1024
# A NaN with a payload a kernel is unlikely to produce: margins are compared bit for bit.
FLOAT32_SENTINEL_BITS = np.uint32(0x7FA5A5A5)
FLOAT64_SENTINEL_BITS = np.uint64(0x7FF4A5A5A5A5A5A5)
INT_SENTINEL = -0x5EEDBEE


def margin_for(shape: tuple[int, ...]) -> int:
    """Margin, in elements, on each side of an array of ``shape``: enough for a grid that
    overruns every dimension by up to a 32-wide tile (plus one more) to land in the margin.
    A 1×70 output indexed as [row, col] by a 32×96 grid reaches flat index 31·70 + 95."""
    reach = 1
    for d in shape:
        reach *= -(-int(d) // 32) * 32 + 32
    return max(MIN_MARGIN, reach)


def sentinel(dtype: np.dtype) -> np.ndarray:
    """A one-element array holding the sentinel value for ``dtype``."""
    dtype = np.dtype(dtype)
    if dtype == np.float32:
        return np.array([FLOAT32_SENTINEL_BITS], np.uint32).view(np.float32)
    if dtype == np.float64:
        return np.array([FLOAT64_SENTINEL_BITS], np.uint64).view(np.float64)
    if np.issubdtype(dtype, np.integer):
        return np.array([INT_SENTINEL], dtype)
    raise TypeError(f"no sentinel for dtype {dtype}")


def poison(dtype: np.dtype) -> np.ndarray:
    """The value an output holds before the launch: quiet NaN for floats, the sentinel for ints."""
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.floating):
        return np.array([np.nan], dtype)
    return sentinel(dtype)


def guarded_input(values: np.ndarray) -> tuple[np.ndarray, int]:
    """A flat host buffer holding ``values`` between poisoned margins; returns (buffer, margin)."""
    m = margin_for(values.shape)
    buf = np.empty(values.size + 2 * m, values.dtype)
    buf[:] = poison(values.dtype)[0]
    buf[m:m + values.size] = values.ravel()
    return buf, m


def guarded_output(shape: tuple[int, ...], dtype: str) -> tuple[np.ndarray, int]:
    """A flat host buffer for an output of ``shape``: poisoned inside, sentinel margins."""
    size = int(np.prod(shape))
    m = margin_for(shape)
    buf = np.empty(size + 2 * m, np.dtype(dtype))
    buf[:] = sentinel(dtype)[0]
    buf[m:m + size] = poison(dtype)[0]
    return buf, m


def split_guarded(buf: np.ndarray, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Split a guarded output buffer into (the output, reshaped; the margins, concatenated)."""
    size = int(np.prod(shape))
    m = (buf.size - size) // 2
    return buf[m:m + size].reshape(shape), np.concatenate([buf[:m], buf[m + size:]])


def margin_writes(margins: np.ndarray) -> np.ndarray:
    """Boolean mask of margin elements that no longer hold the sentinel (bitwise)."""
    s = sentinel(margins.dtype)
    if np.issubdtype(margins.dtype, np.floating):
        ints = np.dtype(f"u{margins.dtype.itemsize}")
        return margins.view(ints) != s.view(ints)[0]
    return margins != s[0]
