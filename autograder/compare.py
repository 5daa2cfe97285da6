"""Judge a kernel's outputs against the reference, in the grader's process.

Returns ``(passed, message)`` pairs whose messages a student can act on: how many elements are
wrong, the first wrong index with got/expected, NaN (never written) and writes outside the output.
"""

from __future__ import annotations

import numpy as np

from . import buffers
from .exercises.base import Tolerance


def _index(idx: tuple[int, ...]) -> str:
    return ", ".join(str(int(i)) for i in idx)


def _fmt(x) -> str:
    return f"{x:.6g}" if isinstance(x, (float, np.floating)) else str(x)


def check_margins(name: str, buf: np.ndarray, shape: tuple[int, ...]) -> str | None:
    """Message if the kernel wrote outside output ``name`` (into the guard band), else None."""
    size = int(np.prod(shape))
    margin = (buf.size - size) // 2
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


def compare_output(name: str, got: np.ndarray, expected: np.ndarray, tol: Tolerance
                   ) -> tuple[bool, str]:
    """Compare one output array (its poisoned-before-launch values included) with the reference."""
    if got.shape != expected.shape:
        return False, f"{name} has shape {got.shape}, expected {expected.shape}"
    total = got.size
    if tol.exact or np.issubdtype(got.dtype, np.integer):
        wrong = got != expected
        if not wrong.any():
            return True, f"all {total} elements exact"
        first = np.unravel_index(np.flatnonzero(wrong)[0], got.shape)
        if np.issubdtype(got.dtype, np.floating):
            unwritten = int(np.sum(np.isnan(got) & ~np.isnan(expected)))
        else:
            unwritten = int(np.sum(got == buffers.sentinel(got.dtype)[0]))
        extra = f"; {unwritten} never written" if unwritten else ""
        return False, (f"{int(wrong.sum())} of {total} elements wrong{extra}; first at "
                       f"{name}[{_index(first)}]: got {_fmt(got[first])}, "
                       f"expected {_fmt(expected[first])}")
    exp = expected.astype(np.float64)
    g = got.astype(np.float64)
    nan = np.isnan(g)
    scale = np.linalg.norm(exp) / max(1.0, np.sqrt(total))
    elem_tol = 10 * tol.rel_frobenius * (np.abs(exp) + scale) + 1e-30
    wrong = nan | (np.abs(g - exp) > elem_tol)
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
