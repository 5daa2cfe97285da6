"""Judge a kernel's outputs against the reference, in the grader's process.

Returns ``(passed, message)`` pairs whose messages a student can act on: how many elements are
wrong, the first wrong index with got/expected, NaN (never written) and writes outside the output.
"""

from __future__ import annotations

import numpy as np

from autograder.wire import buffers
from autograder.exercises.base import Tolerance


def _index(idx: tuple[int, ...]) -> str:
    return ", ".join(str(int(i)) for i in idx)


def _fmt(x) -> str:
    return f"{x:.6g}" if isinstance(x, (float, np.floating)) else str(x)


def check_margins(name: str, buf: np.ndarray, shape: tuple[int, ...]) -> str | None:
    """Message if the kernel wrote outside output ``name`` (into the guard band), else None."""
    margin = buffers.margin_of(buf, shape)
    _, margins = buffers.split_guarded(buf, shape)
    hit = np.flatnonzero(buffers.margin_writes(margins))
    if hit.size == 0:
        return None
    before = int(np.sum(hit < margin))
    after = int(hit.size - before)
    where = []
    if before:
        where.append(f"{before} before its start")
    if after:
        where.append(f"{after} past its end")
    return (f"wrote outside {name}: {hit.size} elements ({', '.join(where)}); "
            "check the bounds of your writes (row < rows and col < cols)")


MASK_CELLS = 64  # a wrong-element mask has at most MASK_CELLS x MASK_CELLS cells


def wrong_elements(got: np.ndarray, expected: np.ndarray, tol: Tolerance) -> np.ndarray:
    """Boolean array of ``got``'s shape: True where an element is wrong (exact comparison for
    integers and exact tolerances; else NaN or off by more than the per-element tolerance that
    :func:`compare_output` uses to find the first bad index). Shapes must match."""
    if tol.exact or np.issubdtype(got.dtype, np.integer):
        return np.asarray(got != expected)
    exp = expected.astype(np.float64)
    g = got.astype(np.float64)
    scale = np.linalg.norm(exp) / max(1.0, np.sqrt(got.size))
    elem_tol = 10 * tol.rel_frobenius * (np.abs(exp) + scale) + 1e-30
    return np.isnan(g) | (np.abs(g - exp) > elem_tol)


def _unwritten(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """True where ``got`` still holds its poison (NaN for floats, the sentinel for ints) and
    the reference holds something else (an 8-bit sentinel is also a plausible value)."""
    if np.issubdtype(got.dtype, np.floating):
        return np.isnan(got) & ~np.isnan(expected)
    return (got == buffers.sentinel(got.dtype)[0]) & (got != expected)


def _levels(frac: np.ndarray) -> list[str]:
    """Rows of one character per cell: ``.`` none, ``1``..``9`` growing fractions, ``9`` all."""
    lv = np.where(frac > 0, 1 + np.floor(frac * 8.999).astype(int), 0)
    chars = np.array(list(".123456789"))
    return ["".join(row) for row in chars[lv]]


def _pool(a: np.ndarray, cells: int) -> tuple[np.ndarray, list[int]]:
    """Fraction of True per cell of a 2-D boolean array cut into at most ``cells`` x ``cells``
    cells; returns (fractions, [rows, cols] of elements per cell)."""
    rows, cols = a.shape
    cr, cc = -(-rows // cells), -(-cols // cells)
    pr, pc = -(-rows // cr) * cr, -(-cols // cc) * cc
    padded = np.zeros((pr, pc), dtype=np.float64)
    count = np.zeros((pr, pc), dtype=np.float64)
    padded[:rows, :cols] = a
    count[:rows, :cols] = 1
    s = padded.reshape(pr // cr, cr, pc // cc, cc).sum(axis=(1, 3))
    n = count.reshape(pr // cr, cr, pc // cc, cc).sum(axis=(1, 3))
    return s / np.maximum(n, 1), [cr, cc]


def wrong_mask(name: str, got: np.ndarray, expected: np.ndarray, tol: Tolerance,
               cells: int = MASK_CELLS) -> dict | None:
    """A small, JSON-serialisable picture of which elements of output ``name`` are wrong, for
    the HTML report's heatmap; None when the shapes differ or nothing is wrong.

    A 2-D output is cut into at most ``cells`` x ``cells`` cells of ``cell`` = [rows, cols]
    elements; a 1-D output of n elements is wrapped into rows of ``cells`` cells (element
    ``i`` lies in cell ``i // cell[1]``, row ``that // cells``), so block-sized patterns line
    up. Keys: ``array``, ``shape`` (the output's), ``layout`` ("2d" or "wrapped"), ``cell``,
    ``rows`` (one string per cell row: ``.`` no wrong element, ``1``..``9`` a growing fraction
    wrong, ``9`` all), ``unwritten_rows`` (same for elements never written; None if none),
    ``wrong``, ``unwritten`` and ``total`` (element counts) and ``first`` (the first wrong
    index, C order)."""
    if got.shape != expected.shape or got.size == 0:
        return None
    wrong = wrong_elements(got, expected, tol)
    if not wrong.any():
        return None
    unwritten = _unwritten(got, expected)
    first = [int(i) for i in np.unravel_index(np.flatnonzero(wrong)[0], got.shape)]
    if got.ndim == 2:
        layout, grids = "2d", (wrong, unwritten)
    else:
        n = got.size
        per = -(-n // (cells * cells))
        width = min(cells, -(-n // per))
        rows = -(-n // (per * width))
        grids = []
        for a in (wrong.ravel(), unwritten.ravel()):
            padded = np.zeros(rows * width * per, dtype=bool)
            padded[:n] = a
            grids.append(padded.reshape(rows, width * per))
        layout = "wrapped"
    frac, cell = _pool(grids[0], cells)
    ufrac, _ = _pool(grids[1], cells)
    if layout == "wrapped":  # the last row's padding is not part of the output
        cell = [1, cell[1]]
    return {"array": name, "shape": [int(d) for d in got.shape], "layout": layout, "cell": cell,
            "rows": _levels(frac), "unwritten_rows": _levels(ufrac) if unwritten.any() else None,
            "wrong": int(wrong.sum()), "unwritten": int(unwritten.sum()), "total": int(got.size),
            "first": first}


def compare_output(name: str, got: np.ndarray, expected: np.ndarray, tol: Tolerance
                   ) -> tuple[bool, str]:
    """Compare one output array (its poisoned-before-launch values included) with the reference."""
    if got.shape != expected.shape:
        return False, f"{name} has shape {got.shape}, expected {expected.shape}"
    total = got.size
    if tol.exact or np.issubdtype(got.dtype, np.integer):
        wrong = wrong_elements(got, expected, tol)
        if not wrong.any():
            return True, f"all {total} elements exact"
        first = np.unravel_index(np.flatnonzero(wrong)[0], got.shape)
        unwritten = int(np.sum(_unwritten(got, expected)))
        extra = f"; {unwritten} never written" if unwritten else ""
        return False, (f"{int(wrong.sum())} of {total} elements wrong{extra}; first at "
                       f"{name}[{_index(first)}]: got {_fmt(got[first])}, "
                       f"expected {_fmt(expected[first])}")
    exp = expected.astype(np.float64)
    g = got.astype(np.float64)
    nan = np.isnan(g)
    wrong = wrong_elements(got, expected, tol)
    if nan.any():
        rel = float("inf")
    else:
        denom = np.linalg.norm(exp)
        rel = float(np.linalg.norm(g - exp) / denom) if denom > 0 else float(np.linalg.norm(g))
    if rel <= tol.rel_frobenius and not nan.any():
        return True, f"relative error {rel:.2e} (≤ {tol.rel_frobenius:.0e})"
    first = np.unravel_index(np.flatnonzero(wrong)[0], got.shape) if wrong.any() else \
        np.unravel_index(int(np.argmax(np.abs(g - exp))), got.shape)
    parts = [f"{int(wrong.sum())} of {total} elements wrong"]
    if nan.any():
        parts.append(f"{int(nan.sum())} are NaN (never written, or computed from values "
                     "read outside the inputs)")
    else:
        parts.append(f"relative error {rel:.2e} > {tol.rel_frobenius:.0e}")
    parts.append(f"first at {name}[{_index(first)}]: got {_fmt(g[first])}, "
                 f"expected {_fmt(exp[first])}")
    return False, "; ".join(parts)
