"""Exports of a batch's results (``autograder export``): CSV of the class, Gradescope
``results.json`` per submission, or all results as one JSON list."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path


def to_csv(rows: list[dict]) -> str:
    """One line per submission: student, exercise, score, max_score, provisional, device, key."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["student", "exercise", "score", "max_score", "provisional", "device", "key"])
    for r in rows:
        w.writerow([r["student"], r["exercise"], r["score"], r["max_score"],
                    bool(r["provisional"]), r["device"], r["key"]])
    return out.getvalue()


def to_gradescope(result: dict) -> dict:
    """Gradescope's ``results.json`` for one result; hidden tests are ``after_published``."""
    return {
        "score": result["score"],
        "output": (f"Graded on {result['device']}"
                   + (" (provisional: some tests were skipped)" if result["provisional"] else "")),
        "tests": [
            {
                "name": t["name"],
                "score": t["points"],
                "max_score": t["max_points"],
                "status": "passed" if t["status"] == "passed" else "failed",
                "output": t["message"],
                "visibility": "after_published" if t["visibility"] == "hidden" else "visible",
                "tags": [t["kind"]],
            }
            for t in result["tests"]
        ],
    }


def write_gradescope(rows: list[dict], out_dir: Path) -> list[Path]:
    """Write ``<out_dir>/<student>/<assignment>/results.json`` for every row."""
    written = []
    for r in rows:
        path = Path(out_dir) / r["key"] / "results.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(to_gradescope(r["result"]), indent=2))
        written.append(path)
    return written


def to_json(rows: list[dict]) -> str:
    return json.dumps([dict(r["result"], student=r["student"], key=r["key"]) for r in rows],
                      indent=2)
