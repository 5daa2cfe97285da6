"""The ``autograder`` command line (typer).

``autograder grade SUBMISSION --exercise NAME [--device auto|gpu|sim] [--json]`` grades one
submission; exit status 0 whenever grading finished, whatever the score.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from . import exercises
from .report import console as console_report
from .report import json_report

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Grade Numba CUDA kernel exercises on a GPU or the CUDA simulator.")
err = Console(stderr=True)


def _fail(message: str) -> None:
    err.print(f"[red]error:[/red] {message}")
    raise typer.Exit(2)


@app.command()
def grade(
    submission: Path = typer.Argument(..., help="A .py file or an .ipynb notebook."),
    exercise: str = typer.Option(..., "--exercise", "-e", help="Exercise name."),
    device: str = typer.Option("auto", help="auto (GPU if there is one), gpu or sim."),
    as_json: bool = typer.Option(False, "--json", help="Print exactly one JSON object."),
    seed: Optional[int] = typer.Option(None, help="Replay a run with the seed it reported."),
) -> None:
    """Grade one submission and print its tests, points and messages."""
    from .grader import grade as grade_one

    if exercise not in exercises.names():
        _fail(str(exercises.UnknownExercise(exercise)))
    try:
        result = grade_one(submission, exercise, device=device, seed=seed)
    except ValueError as exc:
        _fail(str(exc))
    if as_json:
        sys.stdout.write(json_report.render(result) + "\n")
    else:
        console_report.print_result(result)


@app.command()
def solutions(
    device: str = typer.Option("auto", help="auto (GPU if there is one), gpu or sim."),
    exercise: Optional[list[str]] = typer.Option(None, "--exercise", "-e",
                                                 help="Only these exercises (repeatable)."),
    seed: Optional[int] = typer.Option(None, help="Seed for every grading run."),
) -> None:
    """Grade every instructor solution and known-bad submission; exit 1 if any verdict is wrong."""
    from rich.table import Table

    from .self_check import check_exercise

    names = exercise or exercises.names()
    for name in names:
        if name not in exercises.names():
            _fail(str(exercises.UnknownExercise(name)))
    out = Console(width=None if sys.stdout.isatty() else 160)
    table = Table(title="Instructor solutions and known-bad submissions")
    for col in ("exercise", "submission", "expected", "got", "verdict", "s"):
        table.add_column(col, overflow="fold")
    bad = 0
    for name in names:
        for row in check_exercise(name, device, seed):
            bad += not row.ok
            table.add_row(row.exercise, row.submission, row.expected, row.got,
                          "[green]ok[/green]" if row.ok else "[red]WRONG[/red]",
                          f"{row.seconds:.1f}")
    out.print(table)
    out.print(f"{bad} wrong verdict(s)")
    raise typer.Exit(1 if bad else 0)


@app.command("exercises")
def list_exercises() -> None:
    """List the exercises and where they come from."""
    for name in exercises.names():
        ex = exercises.get(name)
        typer.echo(f"{name:18} {ex.title} — {ex.source}")


if __name__ == "__main__":
    app()
