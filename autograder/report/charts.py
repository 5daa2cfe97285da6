"""The HTML reports' pictures, as base64 PNG ``data:`` URIs (matplotlib, Agg backend, no display).

Each function takes plain data (the ``details`` of a :class:`autograder.wire.results.TestResult`, or
lists of numbers) and returns ``"data:image/png;base64,..."``, so a page stays one file.
"""

from __future__ import annotations

import base64
import io
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
import numpy as np  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

_WRONG = ListedColormap(["#f4f4f4", "#fde0c5", "#fbc79a", "#f9ad70", "#f69248", "#f07325",
                         "#e0531a", "#c73a12", "#a6250c", "#7f1507"])


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _grid(rows: list[str]) -> np.ndarray:
    return np.array([[0 if ch == "." else int(ch) for ch in row] for row in rows], dtype=float)


def wrong_heatmap(mask: dict) -> str:
    """Heatmap of a wrong-element mask (:func:`autograder.judge.compare.wrong_mask`): darker cells
    hold more wrong elements, blue cells never-written ones, a ring the first bad index.
    Axes are in elements of the output (rows down, columns across; for a 1-D output, element
    index = row x width + column)."""
    levels = _grid(mask["rows"])
    cr, cc = mask["cell"]
    nrows, ncols = levels.shape
    fig, ax = plt.subplots(figsize=(4.6, 4.6 * min(1.6, max(0.25, nrows / max(1, ncols)))))
    extent = (0, ncols * cc, nrows * cr, 0)
    ax.imshow(levels, cmap=_WRONG, vmin=0, vmax=9, extent=extent, interpolation="nearest",
              aspect="auto")
    if mask.get("unwritten_rows"):
        un = _grid(mask["unwritten_rows"])
        ax.imshow(np.ma.masked_where(un == 0, un), cmap=ListedColormap(["#2f6db5"]),
                  extent=extent, interpolation="nearest", aspect="auto")
    first = mask.get("first") or []
    if mask["layout"] == "2d" and len(first) == 2:
        fy, fx = first
    elif first:
        width = ncols * cc
        fy, fx = first[0] // width, first[0] % width
    else:
        fy = fx = None
    if fy is not None:
        ax.plot([fx + 0.5 * cc], [fy + 0.5 * cr], marker="o", markersize=11, mfc="none",
                mec="#111", mew=1.8)
    name = mask.get("array", "output")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    if mask["layout"] == "2d":
        ax.set_xlabel(f"column of {name}")
        ax.set_ylabel(f"row of {name}")
    else:
        ax.set_xlabel(f"index mod {ncols * cc}")
        ax.set_ylabel(f"index ÷ {ncols * cc} (rows of {ncols * cc})")
    ax.set_title(f"{name} {tuple(mask['shape'])}: {mask['wrong']} of {mask['total']} wrong",
                 fontsize=10)
    return _png(fig)


def timing_chart(timing: dict) -> str:
    """Both kernels' per-round times (ms, dots) with medians, and the ratio student /
    instructor with its 95 % interval against the full-points and zero-points ratios."""
    s, i = timing["student_ms"], timing["instructor_ms"]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(5.2, 4.2), height_ratios=(2, 1))
    rng = np.random.default_rng(0)
    for y, data, color, label in ((1, s, "#c73a12", "your kernel"),
                                  (0, i, "#2f6db5", "instructor's")):
        if data:
            ax1.scatter(data, y + rng.uniform(-0.15, 0.15, len(data)), s=10, color=color,
                        alpha=0.6)
            med = statistics.median(data)
            ax1.plot([med, med], [y - 0.3, y + 0.3], color=color, lw=2.5)
            ax1.annotate(f"{med:.3f} ms", (med, y + 0.33), ha="center", fontsize=8)
    ax1.set_yticks([0, 1], ["instructor's", "your kernel"])
    ax1.set_ylim(-0.6, 1.7)
    ax1.set_xlabel("time per launch (ms)")
    ax1.set_title(f"{timing.get('rounds', len(s))} interleaved rounds", fontsize=10)
    ratio, low, high = timing["ratio"], timing["low"], timing["high"]
    full, zero = timing["full_ratio"], timing["zero_ratio"]
    ax2.axvspan(0, full, color="#d9f0d3", label="full points")
    ax2.axvspan(full, zero, color="#fff3c4", label="partial")
    right = max(zero, high if np.isfinite(high) else ratio) * 1.1
    ax2.axvspan(zero, right, color="#f8d0c8", label="no points")
    if np.isfinite(ratio):
        ax2.errorbar([ratio], [0], xerr=[[ratio - low], [max(0.0, high - ratio)]], fmt="o",
                     color="#111", capsize=5)
        ax2.annotate(f"{ratio:.2f}x (95% CI {low:.2f}–{high:.2f})", (ratio, 0.25),
                     ha="center", fontsize=8)
    ax2.set_xlim(min(0.8, low * 0.95) if np.isfinite(low) else 0.8, right)
    ax2.set_yticks([])
    ax2.set_ylim(-0.5, 0.6)
    ax2.set_xlabel("ratio: your time / the instructor's")
    fig.tight_layout()
    return _png(fig)


def throughput_chart(label: str, unit: str, values: dict[str, float]) -> str:
    """Horizontal bars of achieved throughput (``values``: name → value in ``unit``)."""
    fig, ax = plt.subplots(figsize=(5.2, 0.5 + 0.45 * len(values)))
    names = list(values)
    colors = ["#c73a12", "#2f6db5", "#888888"][:len(names)]
    ax.barh(names[::-1], [values[n] for n in names][::-1], color=colors[::-1])
    for y, n in enumerate(names[::-1]):
        ax.annotate(f" {values[n]:,.0f}", (values[n], y), va="center", fontsize=8)
    ax.set_xlabel(f"{label} ({unit})")
    ax.set_xlim(0, max(values.values()) * 1.25)
    fig.tight_layout()
    return _png(fig)


def score_histogram(title: str, scores: list[float], max_score: float,
                    provisional: list[bool]) -> str:
    """A class's scores for one exercise; stacked: final, and provisional (points need a GPU)."""
    fig, ax = plt.subplots(figsize=(5.2, 2.8))
    bins = np.linspace(0, max_score or 1, 11)
    final = [s for s, p in zip(scores, provisional) if not p]
    prov = [s for s, p in zip(scores, provisional) if p]
    ax.hist([final, prov], bins=bins, stacked=True, color=["#2f6db5", "#9ab8de"],
            label=["final", "provisional"], edgecolor="white")
    ax.set_xlabel("score")
    ax.set_ylabel("submissions")
    ax.set_title(title, fontsize=10)
    ax.yaxis.get_major_locator().set_params(integer=True)
    if prov:
        ax.legend(fontsize=8)
    fig.tight_layout()
    return _png(fig)


def ratio_strip(ratios: dict[str, list[float]], full: float | None, zero: float | None) -> str:
    """Each exercise's timing ratios (student / instructor), one dot per submission."""
    fig, ax = plt.subplots(figsize=(5.2, 0.9 + 0.55 * len(ratios)))
    rng = np.random.default_rng(0)
    for y, (name, values) in enumerate(ratios.items()):
        ax.scatter(values, y + rng.uniform(-0.15, 0.15, len(values)), s=14, color="#2f6db5",
                   alpha=0.7)
    if full:
        ax.axvline(full, color="#3a8a2e", ls="--", lw=1, label=f"full points ≤ {full:g}x")
    if zero:
        ax.axvline(zero, color="#c73a12", ls="--", lw=1, label=f"no points ≥ {zero:g}x")
    ax.set_yticks(range(len(ratios)), list(ratios))
    ax.set_xlabel("timing ratio: student / instructor")
    if full or zero:
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return _png(fig)
