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
    sanitize: bool = typer.Option(True, help="On a GPU, also run compute-sanitizer "
                                             "(racecheck, synccheck, memcheck) if installed."),
) -> None:
    """Grade one submission and print its tests, points and messages."""
    from .grader import grade as grade_one

    if exercise not in exercises.names():
        _fail(str(exercises.UnknownExercise(exercise)))
    try:
        result = grade_one(submission, exercise, device=device, seed=seed, sanitize=sanitize)
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


@app.command()
def batch(
    submissions: Path = typer.Argument(..., help="nbgrader's submitted/ folder, or a flat "
                                                 "folder of files (then give --exercise)."),
    exercise: Optional[str] = typer.Option(None, "--exercise", "-e",
                                           help="Exercise name (default: from the folders)."),
    db: Path = typer.Option(Path("results.sqlite"), help="SQLite file; a rerun resumes."),
    device: str = typer.Option("auto", help="auto (GPU if there is one), gpu or sim."),
    workers: Optional[int] = typer.Option(None, help="Local Dask workers (default: one per "
                                                     "GPU, or one per core on the simulator)."),
    scheduler: Optional[str] = typer.Option(None, help="Address of a running Dask scheduler."),
    seed: Optional[int] = typer.Option(None, help="The batch's secret seed (first run only)."),
    workers_per_gpu: int = typer.Option(1, help="Workers sharing each GPU (timing runs still "
                                                "have the GPU alone)."),
    sanitize: bool = typer.Option(True, help="On a GPU, also run compute-sanitizer."),
) -> None:
    """Grade a whole class; each result is committed as it arrives, and a rerun resumes."""
    from .batch import run_batch

    if exercise is not None and exercise not in exercises.names():
        _fail(str(exercises.UnknownExercise(exercise)))
    try:
        store, failures = run_batch(submissions, db, exercise, device, workers, scheduler, seed,
                                    progress=sys.stderr.isatty(),
                                    workers_per_gpu=workers_per_gpu, sanitize=sanitize)
    except ValueError as exc:
        _fail(str(exc))
    rows = store.rows()
    out = Console(width=None if sys.stdout.isatty() else 160)
    out.print(console_report.class_table([
        dict(r, summary=console_report.summary(r["result"])) for r in rows],
        title=f"Class scores ({len(rows)} submissions, {db})"))
    for f in failures:
        err.print(f"[red]grader error[/red] {f} (not stored; a rerun retries it)")
    raise typer.Exit(1 if failures else 0)


@app.command()
def export(
    db: Path = typer.Option(..., help="SQLite file written by `autograder batch`."),
    fmt: str = typer.Option("csv", "--format", help="csv, gradescope or json."),
    out: Optional[Path] = typer.Option(None, help="Output file (csv/json) or folder "
                                                  "(gradescope); default: standard output."),
) -> None:
    """Export a batch's results as CSV, Gradescope results.json files, or JSON."""
    from .report import export as exporter
    from .store import ResultStore

    if not db.is_file():
        _fail(f"{db} does not exist")
    rows = ResultStore(db).rows()
    if fmt == "gradescope":
        written = exporter.write_gradescope(rows, out or Path("gradescope"))
        typer.echo(f"wrote {len(written)} results.json files under {out or 'gradescope'}")
        return
    if fmt not in ("csv", "json"):
        _fail(f"--format must be csv, gradescope or json, not {fmt!r}")
    text = exporter.to_csv(rows) if fmt == "csv" else exporter.to_json(rows)
    if out:
        out.write_text(text)
    else:
        sys.stdout.write(text)


@app.command("exercises")
def list_exercises() -> None:
    """List the exercises and where they come from."""
    for name in exercises.names():
        ex = exercises.get(name)
        typer.echo(f"{name:18} {ex.title} — {ex.source}")


# --- nbgrader course (issue 2) -----------------------------------------------------------------
course_app = typer.Typer(no_args_is_help=True, help="nbgrader course directories.")
app.add_typer(course_app, name="course")


@course_app.command("build")
def course_build(
    directory: Path = typer.Argument(..., help="Course folder to write (nbgrader's root)."),
    device: str = typer.Option("auto", help="Where hidden tests grade: auto, gpu or sim."),
    submitted: Optional[Path] = typer.Option(None, help="Copy in a submitted/<student>/"
                                                        "<assignment>/ folder (e.g. "
                                                        "examples/submitted)."),
    cell_timeout: int = typer.Option(120, help="Seconds before nbgrader interrupts a cell."),
    grading_timeout: int = typer.Option(420, help="Seconds for a hidden-test cell."),
    force: bool = typer.Option(False, help="Overwrite an existing course's source/ and config."),
) -> None:
    """Write an nbgrader course (config, source/ from assignments/); see its README.md."""
    from .nbgrader.course import CourseError, build_course

    try:
        root = build_course(directory, device=device, submitted=submitted,
                            cell_timeout=cell_timeout, grading_timeout=grading_timeout,
                            force=force)
    except CourseError as exc:
        _fail(str(exc))
    typer.echo(f"wrote the nbgrader course {root}; next, in that folder:\n"
               "  nbgrader generate_assignment 01_tiled_matmul   # source/ -> release/\n"
               "  nbgrader autograde 01_tiled_matmul             # submitted/ -> gradebook.db\n"
               f"(see {root / 'README.md'})")


if __name__ == "__main__":
    app()
