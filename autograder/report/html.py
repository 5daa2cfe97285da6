"""One self-contained HTML page per graded submission (``autograder grade --html FILE``,
``autograder batch ... --html DIR``), readable on a phone.

The page shows the tests table; for each failed correctness case a heatmap of its wrong elements
(from ``TestResult.details["wrong_masks"]``) with the first bad index; the timing test as a
chart of both kernels' times and the ratio's 95 % interval, with the achieved GFLOP/s or GB/s
beside the instructor's and the device's nominal peak; the performance hints and diagnostics
with the student's source lines. Images are inline base64 PNGs (:mod:`.charts`); templates are
package data (``autograder/report/templates``).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import statistics
from pathlib import Path

import jinja2

from .. import exercises
from autograder.batch.discovery import ROUTINE_KINDS
from .parts import part_rows, part_tests, part_title, total_line
from autograder.wire.results import ExerciseResult, Kind, Status, TestResult
from . import charts

# Nominal peaks by device name (vendor data sheets): FP32 GFLOP/s and DRAM GB/s.
PEAKS = {
    "NVIDIA H200": (67_000.0, 4_800.0),
    "NVIDIA H100 80GB HBM3": (67_000.0, 3_350.0),
    "NVIDIA H100 PCIe": (51_000.0, 2_000.0),
    "NVIDIA A100-SXM4-80GB": (19_500.0, 2_039.0),
    "NVIDIA A100-SXM4-40GB": (19_500.0, 1_555.0),
    "Tesla V100-SXM2-16GB": (15_700.0, 900.0),
    "Tesla T4": (8_100.0, 320.0),
}


def work(exercise: str, params: dict) -> tuple[float, str] | None:
    """What one launch of ``exercise`` at ``params`` does, from its definition's
    ``Timing.work``: (GFLOP, "GFLOP/s") or (GB moved to and from DRAM, "GB/s"); None when the
    exercise does not say (or is unknown)."""
    try:
        timing = exercises.get(exercise).timing
    except exercises.UnknownExercise:
        return None
    return timing.work(params) if timing and timing.work else None


_ENV = jinja2.Environment(loader=jinja2.PackageLoader("autograder.report", "templates"),
                          autoescape=jinja2.select_autoescape(["html"]),
                          trim_blocks=True, lstrip_blocks=True)

_LINE = re.compile(r"(?:cell (\d+), )?line (\d+)")


def _source_lines(source, message: str, extra: list[int] | None = None, context: int = 1
                  ) -> list[tuple[str, str, bool]]:
    """(label, text, highlighted) for the lines ``message`` names (``line N`` or ``cell C,
    line N``) and ``extra`` source line numbers, with ``context`` lines around each."""
    if source is None:
        return []
    wanted = set(extra or [])
    for cell, line in _LINE.findall(message):
        key = (int(cell) if cell else None, int(line))
        for i, origin in enumerate(source.origins or [], 1):
            if tuple(origin) == key:
                wanted.add(i)
                break
        else:
            if not cell and not source.origins:
                wanted.add(int(line))
    text = source.text.splitlines()
    wanted = {n for n in wanted if 1 <= n <= len(text)}
    shown = sorted({m for n in wanted for m in range(n - context, n + context + 1)
                    if 1 <= m <= len(text)})
    out, last = [], None
    for n in shown[:40]:
        if last is not None and n > last + 1:
            out.append(("…", "", False))
        out.append((source.where(n), text[n - 1], n in wanted))
        last = n
    return out


def _throughput(result: ExerciseResult, timing: dict) -> dict:
    """Achieved rates of both kernels and the device's peak, or why they are unavailable."""
    amount = work(result.exercise, timing.get("params") or {})
    if amount is None:
        return {"unavailable": "no work model for this exercise"}
    size, unit = amount
    values = {}
    if timing.get("student_ms"):
        values["your kernel"] = size / (statistics.median(timing["student_ms"]) / 1e3)
    if timing.get("instructor_ms"):
        values["instructor's"] = size / (statistics.median(timing["instructor_ms"]) / 1e3)
    peak = PEAKS.get(result.device[4:]) if result.device.startswith("gpu:") else None
    note = ""
    if peak:
        values["device peak (nominal)"] = peak[0] if unit == "GFLOP/s" else peak[1]
    else:
        note = f"no nominal peak known for {result.device[4:] or result.device}"
    if not values:
        return {"unavailable": "no samples"}
    return {"unit": unit, "values": values, "note": note,
            "chart": charts.throughput_chart("achieved", unit, values)}


def _view(result: ExerciseResult, source=None, tests: list[TestResult] | None = None
          ) -> dict:
    """Everything the template shows, computed here (the template only lays it out), for
    ``tests`` (default: all of ``result``'s). The caller leaves out what its reader may not
    see: :func:`render_part_fragment` passes no hidden correctness case."""
    failures, hints, diagnostics, unavailable = [], [], [], []
    timing = None
    tests = result.tests if tests is None else tests
    for t in tests:
        d = t.details or {}
        if t.kind is Kind.CORRECTNESS and t.status is not Status.PASSED:
            masks = [{"mask": m, "image": charts.wrong_heatmap(m)}
                     for m in d.get("wrong_masks") or []]
            same = next((f for f in failures if not masks and not f["masks"]
                         and f["test"].message == t.message), None)
            if same is not None:  # one card for cases that failed the same way
                same["also"].append(t.name)
                continue
            failures.append({"test": t, "masks": masks, "also": [],
                             "listing": _source_lines(source, t.message)})
        if t.kind is Kind.TIMING:
            tm = d.get("timing")
            timing = {"test": t}
            if tm:
                timing.update(chart=charts.timing_chart(tm), data=tm,
                              throughput=_throughput(result, tm))
            elif result.device == "sim":
                timing["unavailable"] = ("timing, achieved GFLOP/s or GB/s and the device's peak "
                                         "need a GPU: the simulator gives no timing")
        if t.kind is Kind.DIAGNOSTIC and "hints" in d:
            for h in d["hints"]:
                lines = ([h["line"]] if h.get("line") else []) + list(h.get("also") or [])
                hints.append({**h, "listing": _source_lines(source, "", lines)})
            unavailable = d.get("unavailable") or []
        elif t.kind in (Kind.DIAGNOSTIC, Kind.CONCEPT) and t.status is not Status.PASSED \
                and t.status is not Status.SKIPPED:
            diagnostics.append({"test": t, "listing": _source_lines(source, t.message)})
    return {"r": result, "rows": [{"name": t.name, "test": t, "message": t.message}
                                  for t in tests],
            "failures": failures, "timing": timing,
            "hints": hints, "hints_checked": any(t.name.endswith("performance hints")
                                                 for t in tests),
            "hints_unavailable": unavailable,
            "diagnostics": diagnostics, "note": result.provisional_note}


def instructor_only(result: ExerciseResult) -> str:
    """What of ``result`` a student may not see, in words (``"the hidden test sizes and the
    secret seed"``), or ``""`` when nothing: the hidden correctness cases (their names are
    their sizes, their messages the grader's) and the seed. A public run's result
    (``autograder grade --public``) has neither."""
    hidden = any(t.kind is Kind.CORRECTNESS and t.visibility == "hidden" for t in result.tests)
    what = (["the hidden test sizes"] if hidden else []) + (
        ["the secret seed"] if result.seed is not None else [])
    return " and ".join(what)


def render_result(result: ExerciseResult, source=None) -> str:
    """The HTML page (a str) for one graded submission: the instructor's (``autograder grade
    --html``, ``autograder batch --html``), with every test as the grader reported it and the
    seed, under a red "Instructor only" banner (:func:`instructor_only`; none on a public
    run's page, which holds neither). A student's feedback is :func:`render_part_fragment`.
    ``source``: its :class:`autograder.source.submission.Source`, to show the lines messages
    name (None: the page shows messages only)."""
    return _ENV.get_template("result.html").render(**_view(result, source),
                                                   instructor_only=instructor_only(result))


#: The class that scopes a fragment's CSS (:func:`render_part_fragment`).
FRAGMENT_CLASS = "kg-report"
_PAGE_SELECTORS = {":root", "html", "body", "main"}


def scoped_css(css: str, scope: str) -> str:
    """``css`` (plain rules and ``@media`` blocks, as in ``templates/style.css``) with every
    selector limited to the element of class ``scope`` and its descendants: ``:root``,
    ``html``, ``body`` and ``main`` become that element, ``*`` it and everything in it, any
    other selector ``.scope selector``. So a fragment embedded in another page (an nbgrader
    feedback file) styles itself and nothing around it."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    out, pos = [], 0
    while True:
        brace = css.find("{", pos)
        if brace < 0:
            break
        prelude = css[pos:brace].strip()
        if prelude.startswith("@"):  # @media: scope the rules inside
            depth, end = 1, brace + 1
            while depth and end < len(css):
                depth += {"{": 1, "}": -1}.get(css[end], 0)
                end += 1
            out.append(f"{prelude} {{ {scoped_css(css[brace + 1:end - 1], scope)} }}")
            pos = end
            continue
        end = css.find("}", brace)
        selectors = []
        for sel in (x.strip() for x in prelude.split(",")):
            if sel in _PAGE_SELECTORS:
                selectors.append(f".{scope}")
            elif sel == "*":
                selectors += [f".{scope}", f".{scope} *"]
            else:
                selectors.append(f".{scope} {sel}")
        out.append(f"{', '.join(selectors)} {css[brace:end + 1]}")
        pos = end + 1
    return "\n".join(out)


#: How a notebook was graded, in the first grade cell's words
#: (:func:`autograder.report.parts.header`).
GRADED_HOW = ("Graded outside this notebook: your code cells in order, in a separate process "
              "with time limits (test cells and magics left out).")


def render_part_fragment(result: ExerciseResult, kind: str | Kind, source=None, *,
                         with_header: bool = False, hand_points: float = 0.0) -> str:
    """The student's HTML of one part of ``result`` (``correctness``, ``concept`` or
    ``timing``), for an nbgrader grade cell's ``text/html`` output: one ``<div
    class="kg-report">`` (no ``<html>`` or ``<head>``) with its own CSS scoped to that class
    and its images inline (``data:image/png``).

    As the grade cell's text (:func:`autograder.report.parts.part_rows`): the part's
    points and provisional note, and its tests, hidden correctness cases as ``hidden test N``
    with how they ended. Then, for correctness, a heatmap and the first bad index of each
    failed *public* case (hidden cases get no card: no size, message or picture); for concept,
    the diagnostics that found something, with the student's source lines, and the
    performance hints; for timing, the timing chart and throughput, or on the simulator why
    there is none. ``source``: the submission's :class:`autograder.source.submission.Source` (None:
    no source lines). ``with_header`` (the exercise's first grade cell): first the total, the
    device, how the notebook was graded and the student's notes (``result.notes``, never the
    instructor's), as the text report's header says them (``hand_points``, the notebook's
    points graded by hand, named in its first line: :func:`autograder.report.parts.total_line`).
    Raises ``ValueError`` for an unknown kind."""
    kind = Kind(kind)
    shown = [t for t in part_tests(result, kind)
             if not (t.kind is Kind.CORRECTNESS and t.visibility == "hidden")]
    view = _view(result, source, shown)
    view["rows"] = [{"name": name, "test": t, "message": message}
                    for name, t, message in part_rows(result, kind)]
    view["title"] = part_title(result, kind)  # with the part's own provisional note
    if with_header:
        view.update(summary=total_line(result, hand_points), graded_how=GRADED_HOW,
                    notes=list(result.notes))
    css = _ENV.loader.get_source(_ENV, "style.css")[0]
    return _ENV.get_template("fragment.html").render(
        **view, scope=FRAGMENT_CLASS, css=scoped_css(css, FRAGMENT_CLASS))


def load_source_quietly(path: str | Path):
    """The submission's :class:`Source`, or None when it cannot be read (moved, renamed, now a
    link or a special file, which is never read): the report then shows messages without
    source lines."""
    from autograder.source.submission import SubmissionError, load_source

    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):  # a link or a special file: never read
            return None
        return load_source(path)
    except (SubmissionError, OSError, ValueError):
        return None


def write_result(result: ExerciseResult, path: str | Path, source=None) -> Path:
    """Write :func:`render_result` to ``path`` (parents created); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if source is None:
        source = load_source_quietly(result.submission)
    path.write_text(render_result(result, source), encoding="utf-8")
    return path


def page_name(key: str) -> str:
    """A file name for a submission key (``student/assignment``): its letters, digits, ``_.-``
    and, unless those alone are the key, 8 hex digits of the key's SHA-256, so keys that differ
    only in other characters (``josé`` and ``josè``) never share (and overwrite) a page."""
    plain = re.sub(r"[^A-Za-z0-9_.-]+", "_", key).strip("_")
    if plain == key:
        return plain + ".html"
    return f"{plain}-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:8]}.html"


def not_graded_view(skipped: list[dict]) -> dict:
    """What a page shows of :meth:`autograder.batch.store.ResultStore.skipped`: ``total``,
    ``entries`` (each entry but the routine kinds) and ``routine``: (what to call them, their
    entries) per routine kind (:data:`autograder.batch.discovery.ROUTINE_KINDS`)."""
    routine: dict[str, list[dict]] = {}
    for item in skipped:
        if item["kind"] in ROUTINE_KINDS:
            routine.setdefault(item["kind"], []).append(item)
    return {"total": len(skipped),
            "entries": [i for i in skipped if i["kind"] not in ROUTINE_KINDS],
            "routine": [(ROUTINE_KINDS[k], group) for k, group in sorted(routine.items())]}


def write_batch(rows: list[dict], directory: str | Path, skipped: list[dict] = ()) -> list[Path]:
    """One page per stored row (:meth:`autograder.batch.store.ResultStore.rows`) plus ``index.html``
    linking them and listing what was not graded (``skipped``: :meth:`ResultStore.skipped`),
    in ``directory``; returns the paths written."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written, entries = [], []
    for row in rows:
        result = ExerciseResult.from_dict(row["result"])
        name = page_name(row["key"])
        written.append(write_result(result, directory / name))
        entries.append({"row": row, "href": name, "result": result})
    index = directory / "index.html"
    index.write_text(_ENV.get_template("index.html").render(
        entries=entries, not_graded=not_graded_view(list(skipped))), encoding="utf-8")
    return written + [index]
