"""A similarity run for people: ranked pairs as text, one JSON object per pair, and a
side-by-side HTML page for each flagged pair with an index page."""

from __future__ import annotations

import json
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape

from .run import Similarity
from .score import Pair, line_coverage
from .summary import write_summary

#: What every view says about a score.
CAVEAT = ("A score is a reason to look at two files, never a verdict: independent solutions "
          "of one lesson can be alike, and a copy can be rewritten past any tool. Read both "
          "files before concluding anything.")


def _ranges(ranges: list[tuple[int, int]]) -> str:
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges) or "-"


def text_lines(result: Similarity, most: int = 20) -> list[str]:
    """The console view: per exercise, the highest pairs (at most ``most``, flagged ones
    marked), with the matched line ranges of each file."""
    out = [CAVEAT, ""]
    for ex, pairs in result.pairs.items():
        n = len([d for d in result.documents[ex] if not d.archive])
        flagged = result.flagged(ex)
        out.append(f"{ex}: {n} submissions, {len(flagged)} pair(s) at or above "
                   f"{result.threshold:g}")
        for p in pairs[:most]:
            mark = "!" if p.score >= result.threshold else " "
            out.append(f" {mark} {p.score:.2f}  {p.a.key}  ~  {p.b.key}")
            out.append(f"         lines {_ranges(p.a_lines)}  ~  lines {_ranges(p.b_lines)}")
        if not pairs:
            out.append("   no pair shares any of its own work")
    out += [f"not read: {n}" for n in result.notes]
    return out


def json_lines(result: Similarity) -> list[str]:
    """One JSON object per pair (highest first within each exercise), with its exercise and
    whether it is flagged."""
    return [json.dumps({"exercise": ex, **p.to_dict(),
                        "flagged": p.score >= result.threshold})
            for ex, pairs in result.pairs.items() for p in pairs]


def _side(doc, pair: Pair) -> list[dict]:
    """Each line of ``doc``'s text with how much of it the pair shares: ``match`` "m" (all
    of its tokens), "p" (some: the line differs in part) or "" (none)."""
    cover = line_coverage(doc, pair.shared)
    return [{"no": i, "text": line,
             "match": "" if i not in cover else ("m" if cover[i] else "p")}
            for i, line in enumerate(doc.text.split("\n"), start=1)]


def write_html(result: Similarity, directory: str | Path) -> Path:
    """``index.html`` (every flagged pair of every exercise, linked), one side-by-side page
    per flagged pair and the summary the class view reads (``similarity.json``,
    :mod:`autograder.similarity.summary`) under ``directory``; returns the index's path.
    Raises ``OSError`` as writing does."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    env = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"),
                      autoescape=select_autoescape(["html"]))
    rows, summary = [], []
    for ex, pairs in result.pairs.items():
        flagged = []
        for n, p in enumerate(result.flagged(ex), start=1):
            name = f"{ex}-{n:03d}.html"
            (folder / name).write_text(env.get_template("pair.html").render(
                exercise=ex, pair=p, caveat=CAVEAT, a=_side(p.a, p),
                b=_side(p.b, p), a_ranges=_ranges(p.a_lines),
                b_ranges=_ranges(p.b_lines)), encoding="utf-8")
            rows.append({"exercise": ex, "pair": p, "page": name})
            flagged.append({"a": p.a.key, "b": p.b.key, "score": round(p.score, 4),
                            "b_is_archive": p.b.archive, "page": name})
        summary.append({"name": ex, "flagged": flagged,
                         "submissions": len([d for d in result.documents[ex]
                                             if not d.archive]),
                         "highest": round(pairs[0].score, 4) if pairs else None})
    index = folder / "index.html"
    index.write_text(env.get_template("index.html").render(
        rows=rows, caveat=CAVEAT, threshold=result.threshold, notes=result.notes),
        encoding="utf-8")
    write_summary(folder, result.threshold, CAVEAT, summary, result.notes)
    return index
