"""The instructor's class view (``autograder report --db results.sqlite --html DIR``): per
exercise, the score distribution, the most common failure categories (students per category)
and the class's timing ratios; provisional scores marked with their
:attr:`ExerciseResult.provisional_note`; and, when a similarity run is there
(``autograder similarity --html DIR/similarity``), the possible copies.

Categories are read off each stored result's tests (kind, status, message and the hints test's
``details``), with labels that say only what the test saw: an ``IndexError`` on the simulator is
"an out-of-bounds index", not a guess at its cause.
"""

from __future__ import annotations

import os
import statistics
from collections import Counter, defaultdict
from pathlib import Path

from autograder.judge.cases import NOT_RUN_CONTRACT, NOT_RUN_IMPORT, NOT_RUN_NO_CODE
from autograder.similarity.summary import DEFAULT_FOLDER, read_summary
from autograder.wire.results import ExerciseResult, Kind, Status
from . import charts
from .html import _ENV, not_graded_view, page_name


def _not_run(t) -> str:
    """Why none of the code ran (``details["not_run"]``, :func:`autograder.judge.cases.
    all_tests`), or ``""``."""
    why = (t.details or {}).get("not_run")
    return why if isinstance(why, str) else ""


# (label, test) → True when the test shows that category. First match per test wins.
_RULES = [
    ("no code to grade (an empty notebook or file)",
     lambda t: _not_run(t) == NOT_RUN_NO_CODE or (
         t.status is Status.ERROR and ("has no code cells" in t.message
                                       or t.message.endswith(" is empty")))),
    ("does not import or does not fit the exercise's contract",
     lambda t: t.status is Status.ERROR and (_not_run(t) in (NOT_RUN_IMPORT, NOT_RUN_CONTRACT)
                                             or "importing your code failed" in t.message
                                             or "does not fit the exercise" in t.message
                                             or "does not parse" in t.message)),
    ("not run: refused before it ran, or unreadable (see its message)",
     lambda t: bool(_not_run(t))),
    ("does not compile for a real GPU",
     lambda t: "does not compile for a real GPU" in t.message),
    ("out-of-bounds index in a kernel (a boundary check missing?)",
     lambda t: t.kind is Kind.CORRECTNESS and t.status is Status.ERROR
     and ("IndexError" in t.message or "out of bounds" in t.message)),
    ("writes outside the output (a boundary check on writes missing)",
     lambda t: t.kind is Kind.CORRECTNESS and "wrote outside" in t.message),
    ("race or divergent barrier: every correctness case counted as failed",
     lambda t: t.kind is Kind.CORRECTNESS and (t.details or {}).get("decided_by") == "race"),
    ("output elements never written",
     lambda t: t.kind is Kind.CORRECTNESS and t.status is Status.FAILED
     and ("never written" in t.message or "are NaN" in t.message
          or any(m.get("unwritten") for m in (t.details or {}).get("wrong_masks") or []))),
    ("wrong values in the output",
     lambda t: t.kind is Kind.CORRECTNESS and t.status is Status.FAILED),
    ("kernel timed out (an endless loop, or a barrier some threads never reach?)",
     lambda t: t.status is Status.TIMEOUT),
    ("kernel raised an error",
     lambda t: t.kind is Kind.CORRECTNESS and t.status is Status.ERROR),
    ("divergent barrier (cuda.syncthreads() in a branch)",
     lambda t: t.name == "diagnostic: barriers" and t.status is Status.FAILED),
    ("shared-memory race",
     lambda t: t.name == "diagnostic: shared-memory races" and t.status is Status.FAILED),
    ("out-of-bounds access in the instrumented run (a boundary check missing)",
     lambda t: t.name == "diagnostic: boundary checks" and t.status is Status.FAILED),
    ("memory errors in the instrumented run or compute-sanitizer",
     lambda t: t.name == "diagnostic: memory accesses" and t.status is Status.FAILED),
    ("bank conflicts or divergent warps beyond the exercise's limit",
     lambda t: t.name.startswith("diagnostic: warps") and t.status is Status.FAILED),
    ("concept: no shared memory, or too few barriers, atomics or fences",
     lambda t: t.kind is Kind.CONCEPT and t.status is Status.FAILED
     and ("shared memory" in t.message.split(". The exercise")[0]
          or "barrier(s)" in t.message or "atomic" in t.message or "fence" in t.message)),
    ("slower than the instructor's kernel (timing lost points)",
     lambda t: t.kind is Kind.TIMING and t.status in (Status.PASSED, Status.FAILED)
     and t.points < t.max_points and "counts only for a kernel" not in t.message),
]

_HINT_LABELS = {"float64": "hint: float64 arithmetic in a float32 kernel",
                "bank_conflict": "hint: shared-memory bank conflicts",
                "divergence": "hint: divergent warp branches",
                "occupancy_shared": "hint: occupancy limited by shared memory",
                "few_blocks": "hint: too few blocks to fill the GPU",
                "uncoalesced": "hint: uncoalesced global loads",
                "uncoalesced_store": "hint: uncoalesced global stores",
                "no_reuse": "hint: no reuse through shared memory",
                "runtime_loop_bound": "hint: loop bound from cuda.blockDim (not unrolled)"}


def categories(result: ExerciseResult) -> set[str]:
    """The failure categories one result shows (each counted once per submission)."""
    found = set()
    for t in result.tests:
        for label, rule in _RULES:
            if rule(t):
                found.add(label)
                break
        for h in (t.details or {}).get("hints") or []:
            found.add(_HINT_LABELS.get(h.get("kind"), f"hint: {h.get('kind')}"))
    return found


def _ratio(result: ExerciseResult) -> tuple[float, float, float] | None:
    for t in result.tests:
        tm = (t.details or {}).get("timing")
        if t.kind is Kind.TIMING and tm:
            return tm["ratio"], tm["full_ratio"], tm["zero_ratio"]
    return None


def summarize(rows: list[dict], skipped: list[dict] = ()) -> dict:
    """What the page shows, from :meth:`autograder.batch.store.ResultStore.rows`: per exercise the
    scores, the categories by number of students, the timing ratios; the class's rows; and
    what was not graded (``skipped``: :meth:`autograder.batch.store.ResultStore.skipped`, as
    :func:`autograder.report.html.not_graded_view`)."""
    by_ex: dict[str, list] = defaultdict(list)
    for row in rows:
        by_ex[row["exercise"]].append((row, ExerciseResult.from_dict(row["result"])))
    exercises, ratios, thresholds = [], {}, (None, None)
    for name in sorted(by_ex):
        items = by_ex[name]
        scores = [r.score for _, r in items]
        maxima = [r.max_score for _, r in items]
        provisional = [r.provisional for _, r in items]
        counts = Counter()
        for _, r in items:
            counts.update(categories(r))
        ex_ratios = [x for x in (_ratio(r) for _, r in items) if x]
        if ex_ratios:
            ratios[name] = [x[0] for x in ex_ratios]
            thresholds = ex_ratios[0][1:]
        notes = Counter(r.provisional_note for _, r in items if r.provisional)
        exercises.append({
            "name": name, "n": len(items), "max_score": max(maxima) if maxima else 0,
            "mean": statistics.fmean(scores) if scores else 0.0,
            "median": statistics.median(scores) if scores else 0.0,
            "provisional": sum(provisional), "provisional_notes": notes.most_common(),
            "histogram": charts.score_histogram(name, scores, max(maxima or [1]), provisional),
            "categories": counts.most_common(),
            "students": [{"row": row, "result": r, "href": page_name(row["key"])}
                         for row, r in items],
        })
    strip = charts.ratio_strip(ratios, *thresholds) if ratios else None
    return {"exercises": exercises, "ratio_chart": strip, "total": len(rows),
            "not_graded": not_graded_view(list(skipped))}


def possible_copies(folder: Path, directory: Path) -> dict | None:
    """The "possible copies" section from the similarity run in ``folder`` (what
    ``autograder similarity --html folder`` wrote), its links relative to the class view's
    ``directory``; None when ``folder`` holds no run. A summary that cannot be read is a
    section that says so (``error``), not an exception."""
    try:
        data = read_summary(folder)
    except ValueError as exc:
        return {"error": str(exc)}
    if data is None:
        return None
    where = Path(os.path.relpath(folder, directory)).as_posix()
    exercises = [{"name": ex["name"], "submissions": ex.get("submissions"),
                  "highest": ex.get("highest"),
                  "pairs": [{**p, "href": f"{where}/{p['page']}"} for p in ex["flagged"]]}
                 for ex in data["exercises"]]
    return {"index": f"{where}/index.html", "threshold": data.get("threshold"),
            "caveat": data.get("caveat", ""), "exercises": exercises,
            "not_read": len(data.get("notes") or [])}


def write_class_view(rows: list[dict], directory: str | Path,
                     skipped: list[dict] = (), similarity: str | Path | None = None) -> Path:
    """Write ``class.html`` into ``directory`` (created); returns its path. Links go to the
    per-submission pages ``autograder batch --html`` writes into the same folder; what was not
    graded (``skipped``) is listed first. A similarity run in ``similarity`` (default:
    ``directory/similarity`` when it holds one) adds the "possible copies" section, linked to
    its side-by-side pages."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "class.html"
    view = summarize(rows, skipped)
    view["copies"] = possible_copies(
        Path(similarity) if similarity is not None else directory / DEFAULT_FOLDER, directory)
    for ex in view["exercises"]:
        for s in ex["students"]:
            if not (directory / s["href"]).is_file():
                s["href"] = None
    path.write_text(_ENV.get_template("class.html").render(**view), encoding="utf-8")
    return path
