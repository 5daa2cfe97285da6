"""Timing: the student's kernel against the instructor's, interleaved in one process.

:func:`time_interleaved` runs inside the child (it needs both kernels on one GPU);
:func:`verdict` runs in the grader on the raw samples. Times are in milliseconds (CUDA events).
"""

from __future__ import annotations

import statistics


def time_interleaved(cuda, launch_student, launch_instructor, rounds: int = 15,
                     warmup: int = 2) -> dict:
    """Warm up both launches, then time ``rounds`` rounds of one launch each, alternating which
    goes first. Returns ``{"student_ms": [...], "instructor_ms": [...]}``."""
    for _ in range(warmup):
        launch_student()
        launch_instructor()
    cuda.synchronize()
    samples = {"student_ms": [], "instructor_ms": []}
    order = [("student_ms", launch_student), ("instructor_ms", launch_instructor)]
    for r in range(rounds):
        for key, launch in (order if r % 2 == 0 else order[::-1]):
            start, end = cuda.event(), cuda.event()
            start.record()
            launch()
            end.record()
            end.synchronize()
            samples[key].append(cuda.event_elapsed_time(start, end))
    return samples


def verdict(student_ms: list[float], instructor_ms: list[float], full_ratio: float,
            zero_ratio: float, max_points: float) -> tuple[float, float, str]:
    """Points for the median time ratio (student / instructor): full at ≤ ``full_ratio``, none
    at ≥ ``zero_ratio``, linear in between. Returns (points, ratio, message)."""
    s, i = statistics.median(student_ms), statistics.median(instructor_ms)
    ratio = s / i if i > 0 else float("inf")
    if ratio <= full_ratio:
        points = max_points
    elif ratio >= zero_ratio:
        points = 0.0
    else:
        points = max_points * (zero_ratio - ratio) / (zero_ratio - full_ratio)
    msg = (f"your kernel: {s:.3f} ms, instructor's: {i:.3f} ms (median of {len(student_ms)}), "
           f"ratio {ratio:.2f}x; full points at ≤ {full_ratio:.2f}x, none at ≥ {zero_ratio:.2f}x")
    return round(points, 2), ratio, msg
