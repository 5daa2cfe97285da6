"""Readable tables for a terminal: one submission's tests, or a class's scores."""

from __future__ import annotations

import sys
from collections import defaultdict

from rich.console import Console
from rich.table import Table
from rich.text import Text

from autograder.batch.discovery import ROUTINE_KINDS
from autograder.wire.results import ExerciseResult, Status
from .export import note

STATUS_STYLE = {
    Status.PASSED: "green", Status.FAILED: "red", Status.ERROR: "red",
    Status.TIMEOUT: "magenta", Status.SKIPPED: "yellow",
}


def result_table(result: ExerciseResult) -> Table:
    """One row per test: name, kind, status, points, and what went wrong. Names and messages
    are plain text (``Text``), never rich markup: quoted code such as ``sA[ty, tx]`` stays."""
    title = (f"{result.exercise} — {result.submission} on {result.device}: "
             f"{result.score:g} / {result.max_score:g}"
             + (f" ({result.provisional_note})" if result.provisional else ""))
    table = Table(title=Text(title), show_lines=False, expand=False)
    for col in ("test", "kind", "status", "points", "message"):
        table.add_column(col, overflow="fold")
    for t in result.tests:
        table.add_row(Text(t.name), t.kind.value,
                      Text(t.status.value, style=STATUS_STYLE[t.status]),
                      f"{t.points:g}/{t.max_points:g}", Text(t.message))
    return table


def print_result(result: ExerciseResult, console: Console | None = None) -> None:
    console = console or Console(width=None if sys.stdout.isatty() else 160)
    console.print(result_table(result))
    if result.seed is not None:
        console.print(f"seed {result.seed} (replay with --seed {result.seed})", style="dim")
    for text in result.notes:
        console.print(Text(text, style="dim"))
    for text in result.instructor_notes:  # `grade` on a console is the instructor's view
        console.print(Text("instructor: " + text, style="dim"))


def summary(result: dict) -> str:
    """One line for a class table: the first problem a student should look at."""
    for t in result["tests"]:
        if t["status"] not in ("passed", "skipped"):
            return f"{t['name']}: {t['status']}: {t['message']}"[:160]
    return "all graded tests passed" + (" (some skipped)" if result.get("provisional") else "")


def class_table(rows: list[dict], title: str = "Class scores") -> Table:
    """``rows``: dicts with student, exercise, score, max_score, provisional, summary and
    ``result`` (the stored result dict, for the points still pending); a provisional score
    reads "60 / 100 (provisional: 40 points need a GPU)"."""
    table = Table(title=title)
    for col in ("student", "exercise", "score", "summary"):
        table.add_column(col, overflow="fold")
    for r in rows:
        pending = note(r["result"]) if "result" in r else (
            "provisional" if r.get("provisional") else "")
        score = f"{r['score']:g} / {r['max_score']:g}" + (f" ({pending})" if pending else "")
        table.add_row(Text(r["student"]), Text(r["exercise"]), score,
                      Text(r.get("summary", "")))
    return table


def skipped_table(items: list[dict], title: str = "Not graded") -> Table:
    """What a batch did not grade (:meth:`autograder.batch.store.ResultStore.skipped`): one row per
    entry (path, reason), except the routine kinds (:data:`autograder.batch.discovery.ROUTINE_KINDS`:
    hidden files, Jupyter checkpoints, nbgrader's timestamps), counted in one row per kind with
    an example where there are several. Paths and reasons are plain text, never markup."""
    table = Table(title=Text(title))
    table.add_column("path", overflow="fold")
    table.add_column("why it was not graded", overflow="fold")
    routine: dict[str, list[dict]] = defaultdict(list)
    for item in items:
        if item["kind"] in ROUTINE_KINDS:
            routine[item["kind"]].append(item)
        else:
            table.add_row(Text(item["path"]), Text(item["reason"]))
    for kind, group in sorted(routine.items()):
        if len(group) == 1:
            table.add_row(Text(group[0]["path"]), Text(group[0]["reason"]))
            continue
        table.add_row(Text(f"{len(group)} {ROUTINE_KINDS[kind]}"),
                      Text(f"{group[0]['reason']} (e.g. {group[0]['path']}; each is listed in "
                           "the store and in every export)"))
    return table
