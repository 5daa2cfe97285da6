"""Exports of results (``autograder export``, the Gradescope runner): CSV of the class,
Gradescope ``results.json``, or all results as one JSON list.

Every format says when a score is not final, in the one wording of
:func:`autograder.wire.results.provisional_note` ("provisional: 40 points need a GPU"), and lists
every entry of the class folder that was not graded, with its reason (``skipped``: the dicts of
:meth:`autograder.batch.store.ResultStore.skipped`), so an export read alone shows them. Rows come
from :meth:`autograder.batch.store.ResultStore.rows`; each holds a ``result`` dict
(:meth:`autograder.wire.results.ExerciseResult.to_dict`). Results stored before ``pending_points``
existed lack it: it is then derived from the skipped tests' ``max_points``.

A CSV is safe to open in a spreadsheet (OWASP's advice on CSV injection): every cell whose text
comes from a student or a file (names, keys, paths, reasons, notes) is written as quoted text, and
one that a spreadsheet would take as a formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab
or a carriage return, also after spaces or as a full-width form) starts with a single quote
(:func:`safe_cell`); numbers stay numbers, unquoted (:func:`write_csv`).
"""

from __future__ import annotations

import csv
import io
import json
import math
import unicodedata
from pathlib import Path
from typing import Iterable, Sequence

from autograder.wire.results import WITHHELD_NOTE, provisional_note

CSV_COLUMNS = ["student", "exercise", "score", "max_score", "provisional", "device", "key",
               "pending_points", "note"]

# Gradescope's test visibility for ours: hidden tests appear once grades are published.
_GS_VISIBILITY = {"hidden": "after_published", "public": "visible"}


#: The characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection"),
#: and a line feed, which some readers take as a cell's start.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")


def safe_cell(value) -> str:
    """``value`` as text that a spreadsheet shows and never evaluates: ``str(value)``, with a
    single quote put before it when it starts with one of :data:`FORMULA_STARTS`, or, after
    leading spaces, with one of them or a full-width form of one (``＝``, ``＋``, ``－``,
    ``＠``). The quote is what the spreadsheet's user sees first; nothing else changes."""
    text = "" if value is None else str(value)
    first = text.lstrip(" \u00a0\u3000")[:1]
    if text.startswith(FORMULA_STARTS) or (
            first and unicodedata.normalize("NFKC", first) in FORMULA_STARTS):
        return "'" + text
    return text


def _number(x: float | int) -> float | int:
    """A score as a CSV cell: an int when it is whole (``40``, not ``40.0``)."""
    if isinstance(x, float) and math.isfinite(x) and x.is_integer():
        return int(x)
    return x


def write_csv(rows: Iterable[Sequence], out=None) -> str:
    """Write ``rows`` as CSV (to the text stream ``out``, and return the text when ``out`` is
    None). A cell that is an ``int`` or ``float`` (not a ``bool``) is written as a number,
    unquoted (a whole float as an int); every other cell, ``None`` as empty, is text:
    :func:`safe_cell`, always in double quotes (a tab or a separator inside it cannot start a
    cell of its own)."""
    buf = io.StringIO() if out is None else out
    w = csv.writer(buf, quoting=csv.QUOTE_NONNUMERIC)
    for row in rows:
        w.writerow([_number(c) if isinstance(c, (int, float)) and not isinstance(c, bool)
                    else safe_cell(c) for c in row])
    return buf.getvalue() if out is None else ""


def pending_points(result: dict) -> float:
    """Points of the skipped tests of ``result`` (an ``ExerciseResult.to_dict()``): its
    ``pending_points``, or, for an older stored result without it, the sum of the skipped
    tests' ``max_points``."""
    if result.get("pending_points") is not None:
        return float(result["pending_points"])
    return round(sum(t["max_points"] for t in result.get("tests", [])
                     if t["status"] == "skipped"), 4)


def is_provisional(result: dict) -> bool:
    """True when skipped tests of ``result`` carry points (its score is not final); see
    :attr:`autograder.wire.results.ExerciseResult.provisional`."""
    return pending_points(result) > 0


def note(result: dict) -> str:
    """``"provisional: N points need a GPU"`` for a provisional ``result`` dict, and
    ``"graded without the sandbox"`` for one graded plain, joined by ``"; "``; else ``""``."""
    from autograder.sandbox.mode import UNSANDBOXED_NOTE

    said = [provisional_note(pending_points(result))] if is_provisional(result) else []
    if result.get("sandbox") == "plain":
        said.append(UNSANDBOXED_NOTE)
    return "; ".join(said)


def not_graded_note(item: dict) -> str:
    """``"not graded: PATH: REASON"`` for one entry of :meth:`ResultStore.skipped`."""
    return f"not graded: {item['path']}: {item['reason']}"


def to_csv(rows: list[dict], skipped: list[dict] = ()) -> str:
    """One line per submission; columns :data:`CSV_COLUMNS` (the first seven as before, then
    ``pending_points`` and ``note``, the provisional wording or empty). Then one line per entry
    not graded (``skipped``): its student, exercise and key where known, no score, and the
    note ``"not graded: PATH: REASON"``. Written by :func:`write_csv`: scores and points are
    numbers, every other cell quoted text that no spreadsheet evaluates."""
    table: list[list] = [CSV_COLUMNS]
    for r in rows:
        res = r["result"]
        table.append([r["student"], r["exercise"], r["score"], r["max_score"],
                      str(is_provisional(res)), r["device"], r["key"],
                      pending_points(res), note(res)])
    for item in skipped:
        table.append([item.get("student") or "", item.get("exercise") or "", "", "", "", "",
                      item.get("key") or "", "", not_graded_note(item)])
    return write_csv(table)


def _device_words(device: str) -> str:
    if device == "sim":
        return "the Numba CUDA simulator (no GPU)"
    return device.removeprefix("gpu:") if device.startswith("gpu:") else device


def _gs_status(status: str) -> str:
    # Gradescope knows "passed" and "failed" only; error and timeout lost points: failed.
    return "passed" if status == "passed" else "failed"


def _gs_shown(result: dict) -> list[tuple[dict, str, str]]:
    """``(test, name, output)`` of each test of ``result`` as a student may read it in
    results.json: a hidden correctness test is ``hidden test N`` with a few words on how it
    ended (the wording of nbgrader's feedback, :func:`autograder.report.parts.
    hidden_text`): no size, index, value or grader message, before or after grades are
    published. Every other test keeps its name and message."""
    from .parts import hidden_text

    shown, hidden_no = [], 0
    for t in result["tests"]:
        if t["kind"] == "correctness" and t.get("visibility", "hidden") == "hidden":
            hidden_no += 1
            text = hidden_text(t["status"], t.get("details"), result["device"])
            shown.append((t, f"hidden test {hidden_no}", text))
        else:
            shown.append((t, t["name"], t["message"]))
    return shown


def _pending_parts(skipped: list[tuple[dict, str, str]]) -> str:
    """The tests of ``skipped`` (:func:`_gs_shown`'s triples) in a few words: ``"the timing
    test and 3 hidden tests"``; ``"the tests that need a GPU"`` when there is none."""
    hidden = sum(1 for t, name, _ in skipped if name.startswith("hidden test"))
    words = [("the timing test" if t["kind"] == "timing" else name)
             for t, name, _ in skipped if not name.startswith("hidden test")]
    if hidden:
        words.append(f"{hidden} hidden test{'s' if hidden != 1 else ''}")
    if not words:
        return "the tests that need a GPU"
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def to_gradescope(result: dict, execution_time: float | None = None) -> dict:
    """Gradescope's ``results.json`` (its autograder specification) for one result dict.

    ``execution_time``: the grading's wall time in seconds (default: the child processes' wall
    time recorded in ``phases_s["total"]``, else 0); written as whole seconds, as in the spec.
    Tests have ``name``, ``score``, ``max_score``, ``status`` (``passed`` or ``failed``: error
    and timeout are failed), ``output``, ``visibility`` (public tests ``visible``, the others
    ``after_published``) and ``tags`` (the test's kind). A provisional score's ``output`` starts
    with ``Provisional score: ...`` and names the tests that need a GPU (the first line a
    student reads under Gradescope's bare "55.0 / 100.0"). Hidden correctness tests are named
    ``hidden test N`` and say only how they ended (:func:`_gs_shown`), in ``tests``, in
    ``output`` and in ``extra_data``. Skipped tests are left out of ``tests``: they earned
    nothing and lost nothing; the top-level ``output`` names them with the provisional wording,
    and ``extra_data`` (stored, not shown to students) carries ``provisional``,
    ``pending_points``, ``skipped``, ``device``, the secret ``seed`` an instructor replays the
    run with and the ``instructor_notes`` (sandbox mode, skipped statements), which ``output``
    leaves out; notes said while hidden inputs were present (:data:`WITHHELD_NOTE`) are left
    out of the file altogether and stay on the instructor's stdout. No ``stdout_visibility``: the console report (every test as graded) stays the
    instructor's.
    """
    if execution_time is None:
        execution_time = float(result.get("phases_s", {}).get("total", 0.0))
    shown = _gs_shown(result)
    skipped = [(t, name, text) for t, name, text in shown if t["status"] == "skipped"]
    lines = [f"Graded on {_device_words(result['device'])}: "
             f"{result['score']:g} of {result['max_score']:g} points."]
    if is_provisional(result):  # the first line a student reads names what is missing
        lines = [f"Provisional score: {result['score']:g} of {result['max_score']:g} points. "
                 f"{pending_points(result):g} more points need a GPU: "
                 f"{_pending_parts(skipped)} cannot run on {_device_words(result['device'])}, "
                 "so they are not graded yet."]
    if skipped:
        lines.append(f"This score is {note(result)}: these tests were not graded here and are "
                     "not part of it:")
        lines += [f"- {name} ({t['max_points']:g} points): {text}" for t, name, text in skipped]
    lines += list(result.get("notes", []))
    return {
        "score": result["score"],
        "execution_time": int(round(execution_time)),
        "output": "\n".join(lines),
        "extra_data": {
            "provisional": is_provisional(result),
            "pending_points": pending_points(result),
            "skipped": [name for _, name, _ in skipped],
            "device": result["device"],
            "seed": result.get("seed"),
            "instructor_notes": [n for n in result.get("instructor_notes", [])
                                 if not n.startswith(WITHHELD_NOTE)],
        },
        "tests": [
            {
                "name": name,
                "score": t["points"],
                "max_score": t["max_points"],
                "status": _gs_status(t["status"]),
                "output": text,
                "visibility": _GS_VISIBILITY.get(t["visibility"], "after_published"),
                "tags": [t["kind"]],
            }
            for t, name, text in shown if t["status"] != "skipped"
        ],
    }


def gradescope_grader_failure(message: str, execution_time: float) -> dict:
    """Gradescope's ``results.json`` when the grader itself could not grade (a
    :class:`autograder.errors.GraderSetupError` or a crash of the grader): no ``score`` at all,
    so that no number is given to Gradescope to record as the student's grade, an ``output``
    saying the grader failed and that this is not the score, and one informational test (no
    points, status ``failed``) naming the cause. ``extra_data["grader_failed"]`` is true."""
    text = ("The autograder could not grade this submission because of a problem with the "
            "grader's own setup, not with your code. This is not your score: please tell your "
            "instructor, who will regrade this submission once the grader is fixed (your code "
            "does not need to change).\n"
            f"Cause (for the instructor): {message}")
    return {
        "execution_time": int(round(execution_time)),
        "output": text,
        "extra_data": {"grader_failed": True, "final": False, "cause": message},
        "tests": [{"name": "grader setup", "status": "failed", "output": text,
                   "visibility": "visible"}],
    }


def gradescope_not_graded(items: list[dict]) -> dict:
    """Gradescope's ``results.json`` for a submission key that was not graded (``items``: its
    entries of :meth:`ResultStore.skipped`, e.g. the two files of a student who handed in
    both): no ``score``, an ``output`` with each file and its reason, ``extra_data`` with
    ``not_graded`` true and the entries."""
    lines = ["This submission was not graded, so there is no score yet:"]
    lines += [f"- {Path(i['path']).name}: {i['reason']}" for i in items]
    lines.append("Please tell your instructor.")
    return {"execution_time": 0, "output": "\n".join(lines),
            "extra_data": {"not_graded": True, "final": False, "entries": list(items)},
            "tests": []}


#: The file of :func:`write_gradescope` that lists every entry not graded.
NOT_GRADED_FILE = "not_graded.json"


def write_gradescope(rows: list[dict], out_dir: Path, skipped: list[dict] = ()) -> list[Path]:
    """Write ``<out_dir>/<student>/<assignment>/results.json`` for every row; for each key of
    ``skipped`` that has no row, one made by :func:`gradescope_not_graded`; and
    ``<out_dir>/not_graded.json``: every entry not graded (a list, empty when none)."""
    written = []
    for r in rows:
        path = Path(out_dir) / r["key"] / "results.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(to_gradescope(r["result"]), indent=2))
        written.append(path)
    graded = {r["key"] for r in rows}
    by_key: dict[str, list[dict]] = {}
    for item in skipped:
        if item.get("key") and item["key"] not in graded:
            by_key.setdefault(item["key"], []).append(item)
    for key, items in sorted(by_key.items()):
        path = Path(out_dir) / key / "results.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(gradescope_not_graded(items), indent=2))
        written.append(path)
    listing = Path(out_dir) / NOT_GRADED_FILE
    listing.parent.mkdir(parents=True, exist_ok=True)
    listing.write_text(json.dumps(list(skipped), indent=2))
    return written + [listing]


def to_json(rows: list[dict], skipped: list[dict] = ()) -> str:
    """All results as one JSON list: each result dict with ``student``, ``key``,
    ``pending_points``, ``provisional_note`` (the wording, or empty) and ``graded`` true; then
    one object per entry not graded (``skipped``), with ``graded`` false, ``score`` null and
    its ``path``, ``kind``, ``reason``, ``student``, ``exercise`` and ``key``."""
    return json.dumps([dict(r["result"], student=r["student"], key=r["key"],
                            pending_points=pending_points(r["result"]),
                            provisional_note=note(r["result"]), graded=True) for r in rows]
                      + [dict(item, graded=False, score=None, max_score=None)
                         for item in skipped],
                      indent=2)
