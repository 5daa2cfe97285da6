"""The summary a similarity run leaves beside its HTML pages (``similarity.json``), for the
class view that ``autograder report`` writes: per exercise, the flagged pairs with their pages.
Plain JSON, so that the class view needs nothing of the comparison to show them."""

from __future__ import annotations

import json
from pathlib import Path

#: The summary's file name in the folder ``autograder similarity --html DIR`` writes.
SUMMARY = "similarity.json"

#: The folder below the class view's folder where ``report`` looks for a run by default.
DEFAULT_FOLDER = "similarity"

_KIND = "kernelgrade-similarity"


def write_summary(folder: Path, threshold: float, caveat: str, exercises: list[dict],
                  notes: list[str]) -> Path:
    """Write ``folder/similarity.json``. ``exercises``: one dict per exercise with ``name``,
    ``submissions`` (int), ``highest`` (the top pair's score or None) and ``flagged`` (dicts
    with ``a``, ``b``, ``score``, ``b_is_archive`` and ``page``, the pair's page in
    ``folder``). Returns the path; raises ``OSError`` as writing does."""
    path = folder / SUMMARY
    path.write_text(json.dumps({"kind": _KIND, "version": 1, "threshold": threshold,
                                "caveat": caveat, "exercises": exercises, "notes": notes},
                               indent=1), encoding="utf-8")
    return path


def read_summary(folder: Path) -> dict | None:
    """The summary in ``folder``, or None when there is none. Raises ``ValueError`` (with a
    sentence) for a file that is not a similarity run's summary."""
    path = Path(folder) / SUMMARY
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} cannot be read ({exc})") from None
    if not isinstance(data, dict) or data.get("kind") != _KIND or \
            not isinstance(data.get("exercises"), list):
        raise ValueError(f"{path} is not the summary of `autograder similarity --html`")
    for ex in data["exercises"]:
        if not isinstance(ex, dict) or not isinstance(ex.get("name"), str) or \
                not isinstance(ex.get("flagged"), list) or \
                not all(isinstance(p, dict) and {"a", "b", "score", "page"} <= set(p)
                        for p in ex["flagged"]):
            raise ValueError(f"{path}: an exercise entry is malformed")
    return data
