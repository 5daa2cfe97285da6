"""The ``autograder`` command line (typer).

``autograder grade SUBMISSION --exercise NAME [--device auto|gpu|sim] [--json]`` grades one
submission. Exit status (:data:`EXIT_STATUS`, README "Exit status"): 0 whenever it was graded,
whatever the score, a student's file that is not a submission (a ``.txt``, an empty or binary
file, a link, a folder, a pipe or device) included: it scores 0 with a message; 2, with one line
on standard error and no grade, when the grader could not grade: bad arguments (an unknown
exercise or option), nothing at the submission's path or a path it may not read, or
:class:`autograder.errors.GraderSetupError` (no GPU for ``--device gpu``, an instructor solution
that loses points here, a sandbox that imports other packages); 1 where a command that checks
many things found a wrong one (``solutions``, ``mutants``, ``batch``'s grader errors).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Optional

from autograder.host.blas import one_thread_at_load

one_thread_at_load()  # before NumPy loads OpenBLAS (see autograder.host.blas)

import typer  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.markup import escape  # noqa: E402

from . import exercises  # noqa: E402
from .errors import GraderSetupError  # noqa: E402
from .mutation.operators import OPERATORS  # noqa: E402
from .report import console as console_report  # noqa: E402
from .report import json_report  # noqa: E402

#: The exit-status rule every command keeps, shown under ``--help`` (README, "Exit status").
EXIT_STATUS = ("Exit status: 0 graded, whatever the score (a student's file that is not a "
               "submission, such as a .txt, an empty or binary file, a link, a folder or a pipe, "
               "scores 0 with a message; links are never followed); 2 not graded: bad arguments, "
               "nothing at the submission's path, a grader fault (one line on standard error); "
               "1 solutions, mutants or batch found a wrong verdict or a grader error. "
               "README, 'Exit status'.")

#: Help is click's plain layout (``rich_markup_mode=None``): it wraps the help text and never cuts
#: an option's name, where rich's tables cut ``--allow-provisional`` to ``--allow-provisio…`` at
#: 80 columns (issue 32; tests/test_help_width.py).
app = typer.Typer(add_completion=False, no_args_is_help=True, epilog=EXIT_STATUS,
                  rich_markup_mode=None,
                  help="Grade Numba CUDA kernel exercises on a GPU or the CUDA simulator.")
err = Console(stderr=True)


#: ``--preflight-cache/--no-preflight-cache`` of the commands that grade.
PREFLIGHT_CACHE_OPTION = typer.Option(
    True, "--preflight-cache/--no-preflight-cache",
    help="Remember a passed preflight (the instructor solution graded here first) on disk; "
         "--no-preflight-cache grades it again (as KERNELGRADE_PREFLIGHT_CACHE=off).")


def _entries(n: int) -> str:
    return f"{n} entry" if n == 1 else f"{n} entries"


def _use_preflight_cache(use: bool) -> None:
    """``--no-preflight-cache``: switch the cache off for this process and its workers."""
    if not use:
        from autograder.grading.preflight import CACHE_SWITCH_ENV

        os.environ[CACHE_SWITCH_ENV] = "off"


def _fail(message: str) -> None:
    """Print ``error: MESSAGE`` on standard error (one line: no wrapping, no markup in the
    message) and exit with status 2: the grader could not run, no grade was given."""
    err.print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)
    raise typer.Exit(2)


#: ``--solutions DIR`` of the commands that grade: where an installed kernelgrade (which carries
#: no instructor solutions) finds them.
SOLUTIONS_OPTION = typer.Option(
    None, "--solutions", metavar="DIR", help="Folder of instructor solutions (<exercise>.py or "
    "<exercise>/solution.py) for an installed kernelgrade, which carries none (sets "
    "$KERNELGRADE_SOLUTIONS); a source checkout uses its solutions/ folder.")


#: ``--assignments DIR`` (repeatable) of every command that reads exercises: a course's own
#: folder of assignments, in the layout of the built-in ``assignments/``.
ASSIGNMENTS_OPTION = typer.Option(
    None, "--assignments", metavar="DIR", help="A course's own folder of assignments "
    "(<name>/exercise.py, notebook.py, mutants/; solutions in the solutions/ folder beside "
    "it), added to the built-in ones; an exercise of a built-in name replaces it (sets "
    "$KERNELGRADE_ASSIGNMENTS; repeatable).")


def _use_assignments(folders: Optional[list[Path]]) -> None:
    """Apply ``--assignments DIR...``: add each folder to ``$KERNELGRADE_ASSIGNMENTS``, which
    the registry reads here and in the processes this run starts (batch workers, nbgrader).
    Exit 2 when one is not a folder."""
    if not folders:
        return
    for folder in folders:
        if not folder.is_dir():
            _fail(f"--assignments {folder}: no such folder (it should hold <name>/exercise.py "
                  "folders)")
    known = [p for p in os.environ.get(exercises.ASSIGNMENTS_ENV, "").split(os.pathsep) if p]
    known += [str(folder.resolve()) for folder in folders]
    os.environ[exercises.ASSIGNMENTS_ENV] = os.pathsep.join(dict.fromkeys(known))


def _use_solutions(folder: Optional[Path]) -> None:
    """Apply ``--solutions DIR``: set ``$KERNELGRADE_SOLUTIONS`` for this run and the processes
    it starts (:func:`autograder.exercises.solution_path` reads it). Exit 2 when ``folder`` is
    not a folder; None leaves the environment as it is."""
    if folder is None:
        return
    if not folder.is_dir():
        _fail(f"--solutions {folder}: no such folder (it should hold <exercise>.py or "
              "<exercise>/solution.py files)")
    os.environ[exercises.SOLUTIONS_ENV] = str(folder.resolve())


def _nothing_to_grade(path: Path) -> str | None:
    """Why ``path`` names nothing the grader can judge (the caller exits 2), or None.

    Nothing at ``path`` (an instructor's typo) and a path the grader may not look at or read
    are the grader's problem. Anything else that is there is the student's, and is graded: a
    link, a folder, a pipe, a device or a file that is not source scores 0 with a message
    (:func:`autograder.source.submission.read_submission_bytes`); nothing here opens or follows it."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return f"{path}: no such file"
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror or exc}"
    if stat.S_ISREG(mode):
        try:
            os.close(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC))
        except PermissionError as exc:
            return f"cannot read {path}: {exc.strerror or exc}"
        except OSError:
            return None  # replaced since the lstat: the grading describes what is there now
    return None


@app.command(epilog=EXIT_STATUS, short_help="Grade one submission.")
def grade(
    submission: Path = typer.Argument(..., help="A .py file or an .ipynb notebook."),
    exercise: str = typer.Option(..., "--exercise", "-e", help="Exercise name."),
    device: str = typer.Option("auto", help="auto (GPU if there is one), gpu or sim."),
    as_json: bool = typer.Option(False, "--json", help="Print exactly one JSON object."),
    html: Optional[Path] = typer.Option(None, "--html", help="Also write a self-contained HTML "
                                                             "report to this file."),
    seed: Optional[int] = typer.Option(None, help="Replay a run with the seed it reported."),
    sanitize: bool = typer.Option(True, help="On a GPU, also run compute-sanitizer "
                                             "(racecheck, synccheck, memcheck) if installed."),
    solutions_dir: Optional[Path] = SOLUTIONS_OPTION,
    assignments_dir: Optional[list[Path]] = ASSIGNMENTS_OPTION,
    public: bool = typer.Option(False, "--public", help="Only the public tests, the concept "
                                "test and the diagnostics, as a notebook's public-test cell "
                                "runs them: no instructor solution needed (a student's "
                                "install)."),
    preflight_cache: bool = PREFLIGHT_CACHE_OPTION,
) -> None:
    """Grade one submission and print its tests, points and messages."""
    _use_assignments(assignments_dir)
    _use_solutions(solutions_dir)
    from .grader import grade as grade_one
    from .nbgrader import public as public_run

    if exercise not in exercises.names():
        _fail(str(exercises.UnknownExercise(exercise)))
    _use_preflight_cache(preflight_cache)
    nothing = _nothing_to_grade(submission)
    if nothing:
        _fail(nothing)
    try:
        if public:
            result = public_run.public_file_result(submission, exercise, device=device)
        else:
            result = grade_one(submission, exercise, device=device, seed=seed,
                               sanitize=sanitize)
    except (ValueError, GraderSetupError) as exc:
        _fail(str(exc))
    if html is not None:
        from .report import html as html_report

        try:
            html_report.write_result(result, html)
        except OSError as exc:
            _fail(f"cannot write {html}: {exc.strerror or exc}")
        err.print(f"wrote {html}")
    if as_json:
        sys.stdout.write(json_report.render(result) + "\n")
    elif public:
        print(public_run.report(result))
    else:
        console_report.print_result(result)


@app.command(short_help="Grade the instructor solutions and known-bad files.")
def solutions(
    device: str = typer.Option("auto", help="auto (GPU if there is one), gpu or sim."),
    exercise: Optional[list[str]] = typer.Option(None, "--exercise", "-e", metavar="NAME",
                                                 help="Only these exercises (repeatable)."),
    seed: Optional[int] = typer.Option(None, help="Seed for every grading run."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1,
                                       help="Gradings at once (default: 8 on a GPU, half the "
                                            "cores on the simulator)."),
    solutions_dir: Optional[Path] = SOLUTIONS_OPTION,
    assignments_dir: Optional[list[Path]] = ASSIGNMENTS_OPTION,
) -> None:
    """Grade every instructor solution and known-bad submission; exit 1 if any verdict is wrong.
    A line per exercise on standard error as its gradings end; the table at the end."""
    _use_assignments(assignments_dir)
    _use_solutions(solutions_dir)
    from rich.table import Table

    from .grader import resolve_device
    from autograder.authoring.solutions import DEFAULT_GPU_JOBS, check_all, progress_line

    names = exercise or exercises.names()
    for name in names:
        if name not in exercises.names():
            _fail(str(exercises.UnknownExercise(name)))
    for name in names:  # an installed kernelgrade has none unless told where they are
        try:
            exercises.solution_path(name)
        except FileNotFoundError as exc:
            _fail(str(exc))
    out = Console(width=None if sys.stdout.isatty() else 160)
    table = Table(title="Instructor solutions and known-bad submissions")
    for col in ("exercise", "submission", "expected", "got", "verdict", "s"):
        table.add_column(col, overflow="fold")
    bad = 0
    try:
        backend = resolve_device(device)  # --device gpu without a GPU: exit 2 before grading
        if jobs is None:
            jobs = DEFAULT_GPU_JOBS if backend == "gpu" else max(1, (os.cpu_count() or 2) // 2)
        finished: list[str] = []

        def progress(rows) -> None:
            finished.append(rows[0].exercise)
            err.print(escape(progress_line(len(finished), len(names), rows[0].exercise, rows)),
                      highlight=False, soft_wrap=True)

        for row in check_all(names, device, seed, jobs=jobs, on_exercise=progress):
            bad += not row.ok
            table.add_row(row.exercise, row.submission, row.expected, row.got,
                          "[green]ok[/green]" if row.ok else "[red]WRONG[/red]",
                          f"{row.seconds:.1f}")
    except (ValueError, GraderSetupError) as exc:
        _fail(str(exc))
    out.print(table)
    out.print(f"{bad} wrong verdict(s)")
    raise typer.Exit(1 if bad else 0)


@app.command(short_help="Grade a whole class; a rerun resumes.")
def batch(
    submissions: Path = typer.Argument(..., help="nbgrader's submitted/ folder, or a flat "
                                                 "folder of files (then give --exercise)."),
    exercise: Optional[str] = typer.Option(None, "--exercise", "-e",
                                           help="Exercise name (default: from the folders)."),
    db: Path = typer.Option(Path("results.sqlite"), help="SQLite file; a rerun resumes."),
    device: str = typer.Option("auto", help="auto (GPU if there is one), gpu or sim."),
    workers: Optional[int] = typer.Option(None, help="Local Dask workers (default: one per "
                                                     "GPU, or one per core on the simulator)."),
    scheduler: Optional[str] = typer.Option(
        None, help="A running Dask scheduler: its address (tls://host:8786) or scheduler file. "
                   "Its workers get each submission's source, not its path (no shared "
                   "filesystem needed); give --device gpu or sim. See docs/batch.md."),
    tls_ca_file: Optional[str] = typer.Option(
        None, "--tls-ca-file", help="With a tls:// --scheduler: the certificate authority's "
                                    "file (default: Dask's distributed.comm.tls.ca-file)."),
    tls_cert: Optional[str] = typer.Option(
        None, "--tls-cert", help="With a tls:// --scheduler: this client's certificate "
                                 "(default: Dask's distributed.comm.tls.client.cert)."),
    tls_key: Optional[str] = typer.Option(
        None, "--tls-key", help="With a tls:// --scheduler: this client's private key "
                                "(default: Dask's distributed.comm.tls.client.key)."),
    insecure_scheduler: bool = typer.Option(
        False, "--insecure-scheduler", help="Use a --scheduler without TLS (tcp://) although "
                                            "anyone who can reach it can run code as you."),
    seed: Optional[int] = typer.Option(None, help="The batch's secret seed (first run only)."),
    seed_per_student: bool = typer.Option(
        False, "--seed-per-student", help="One secret seed per submission (first run only); "
                                          "by default every student of an exercise faces the "
                                          "same hidden inputs."),
    workers_per_gpu: Optional[int] = typer.Option(
        None, min=1, help="Workers sharing each GPU (timing runs still have the GPU alone; "
                          "default: 3 per 4 cores of this host, shared among its GPUs, at "
                          "most 12, and one per 4 GiB of the smallest GPU's memory)."),
    sanitize: bool = typer.Option(True, help="On a GPU, also run compute-sanitizer."),
    html: Optional[Path] = typer.Option(None, "--html", help="Also write one HTML report per "
                                                             "submission and an index.html "
                                                             "into this folder."),
    sandbox: bool = typer.Option(
        True, "--sandbox/--no-sandbox",
        help="Grade in the sandbox (bubblewrap: refused where it cannot run). --no-sandbox "
             "grades plain child processes on purpose (KERNELGRADE_SANDBOX=off); every result "
             "then says so."),
    solutions_dir: Optional[Path] = SOLUTIONS_OPTION,
    assignments_dir: Optional[list[Path]] = ASSIGNMENTS_OPTION,
    preflight_cache: bool = PREFLIGHT_CACHE_OPTION,
) -> None:
    """Grade a whole class; each result is committed as it arrives, and a rerun resumes.
    Everything in the folder that is not graded (a link, two files for one student, an
    assignment that names no exercise, ...) is listed at the end with its reason, and stored
    for `export` and `report`. Workers of a --scheduler find the solutions through their own
    $KERNELGRADE_SOLUTIONS."""
    _use_assignments(assignments_dir)
    _use_solutions(solutions_dir)
    from autograder.batch.run import run_batch
    from autograder.batch.cluster import client_security

    if exercise is not None and exercise not in exercises.names():
        _fail(str(exercises.UnknownExercise(exercise)))
    _use_preflight_cache(preflight_cache)
    if not sandbox:
        from autograder import settings

        os.environ[settings.SANDBOX] = "off"
    try:
        if scheduler is None and (tls_ca_file or tls_cert or tls_key or insecure_scheduler):
            raise ValueError("--tls-ca-file, --tls-cert, --tls-key and --insecure-scheduler "
                             "go with --scheduler; a local batch makes its own credentials")
        security = client_security(tls_ca_file, tls_cert, tls_key) if scheduler else None
        store, failures = run_batch(submissions, db, exercise, device, workers, scheduler, seed,
                                    progress=True,
                                    workers_per_gpu=workers_per_gpu, sanitize=sanitize,
                                    seed_per_student=True if seed_per_student else None,
                                    scheduler_security=security,
                                    insecure_scheduler=insecure_scheduler)
    except (ValueError, GraderSetupError) as exc:  # setup errors: nothing of theirs stored
        _fail(str(exc))
    rows, skipped = store.rows(), store.skipped()
    if html is not None:
        from .report import html as html_report

        try:
            written = html_report.write_batch(rows, html, skipped)
        except OSError as exc:
            _fail(f"cannot write the HTML reports under {html}: {exc.strerror or exc}")
        err.print(f"wrote {len(written)} HTML files under {html} (index.html)")
    out = Console(width=None if sys.stdout.isatty() else 160)
    out.print(console_report.class_table([
        dict(r, summary=console_report.summary(r["result"])) for r in rows],
        title=f"Class scores ({len(rows)} submissions, {db})"))
    if skipped:
        out.print(console_report.skipped_table(
            skipped, title=f"Not graded: {_entries(len(skipped))} of {submissions}"))
    else:
        out.print(f"Every entry of {submissions} was graded.", markup=False, highlight=False)
    for f in failures:
        err.print(f"[red]grader error[/red] {f} (not stored; a rerun retries it)")
    raise typer.Exit(1 if failures else 0)


@app.command(short_help="Rank a class's pairs by shared own work (possible copies).")
def similarity(
    class_dir: Path = typer.Argument(..., help="nbgrader's submitted/ folder, or a flat "
                                               "folder of files (then give --exercise)."),
    exercise: Optional[str] = typer.Option(None, "--exercise", "-e",
                                           help="Only this exercise (needed for a flat folder)."),
    against: Optional[list[Path]] = typer.Option(
        None, "--against", help="An archive to compare with (an earlier term's folder, same "
                                "layouts); repeatable."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per pair."),
    html: Optional[Path] = typer.Option(None, "--html", help="Folder for side-by-side pages "
                                                             "of the flagged pairs."),
    assignments_dir: Optional[list[Path]] = ASSIGNMENTS_OPTION,
) -> None:
    """Compare each exercise's submissions pairwise, with the archives and with the instructor's
    solutions and variants, and print the pairs ranked by how much of their own work they
    share (the released skeleton, names, constants, comments and statement order set aside).
    A score is a reason to look, never a verdict. Nothing is sent anywhere."""
    from .similarity import view
    from .similarity.run import similarity as compare_class

    _use_assignments(assignments_dir)
    if exercise is not None and exercise not in exercises.names():
        _fail(f"unknown exercise {exercise!r}; `autograder exercises` lists them")
    for folder in [class_dir, *(against or [])]:
        if not folder.is_dir():
            _fail(f"{folder} is not a folder")
    try:
        result = compare_class(class_dir, exercise, against or [])
    except ValueError as exc:
        _fail(str(exc))
    if as_json:
        for line in view.json_lines(result):
            typer.echo(line)
    else:
        for line in view.text_lines(result):
            typer.echo(line)
    if html is not None:
        try:
            index = view.write_html(result, html)
        except OSError as exc:
            _fail(f"cannot write {html}: {exc.strerror or exc}")
        (err if as_json else Console()).print(f"wrote {escape(str(index))}", soft_wrap=True)


@app.command(short_help="Write the instructor's class view (HTML).")
def report(
    db: Path = typer.Option(..., help="SQLite file written by `autograder batch`."),
    html: Path = typer.Option(..., "--html", help="Folder for the class view (class.html)."),
    similarity_dir: Optional[Path] = typer.Option(
        None, "--similarity", help="Folder written by `autograder similarity --html` (default: "
                                   "HTML/similarity when it holds a run)."),
) -> None:
    """The instructor's class view: score distributions, common failures, timing ratios, and
    the possible copies when a similarity run is there."""
    from .report import class_view
    from .similarity.summary import SUMMARY
    from autograder.batch.store import ResultStore

    if not db.is_file():
        _fail(f"{db} does not exist")
    if similarity_dir is not None and not (similarity_dir / SUMMARY).is_file():
        _fail(f"{similarity_dir} holds no similarity run (no {SUMMARY}); write one with "
              f"`autograder similarity CLASS_DIR --html {similarity_dir}`")
    try:
        store = ResultStore(db)
        path = class_view.write_class_view(store.rows(), html, store.skipped(), similarity_dir)
    except OSError as exc:
        _fail(f"cannot write {html}: {exc.strerror or exc}")
    typer.echo(f"wrote {path}")


@app.command(short_help="Export a batch's results (CSV, Gradescope, JSON).")
def export(
    db: Path = typer.Option(..., help="SQLite file written by `autograder batch`."),
    fmt: str = typer.Option("csv", "--format", help="csv, gradescope or json."),
    out: Optional[Path] = typer.Option(None, help="Output file (csv/json) or folder "
                                                  "(gradescope); default: standard output."),
) -> None:
    """Export a batch's results as CSV, Gradescope results.json files, or JSON."""
    from .report import export as exporter
    from autograder.batch.store import ResultStore

    if not db.is_file():
        _fail(f"{db} does not exist")
    store = ResultStore(db)
    rows, skipped = store.rows(), store.skipped()
    if fmt not in ("csv", "gradescope", "json"):
        _fail(f"--format must be csv, gradescope or json, not {fmt!r}")
    if fmt == "gradescope":
        folder = out or Path("gradescope")
        written = exporter.write_gradescope(rows, folder, skipped)
        typer.echo(f"wrote {len(written) - 1} results.json files and "
                   f"{exporter.NOT_GRADED_FILE} under {folder}")
    else:
        text = (exporter.to_csv(rows, skipped) if fmt == "csv"
                else exporter.to_json(rows, skipped))
        if out:
            out.write_text(text)
        else:
            sys.stdout.write(text)
    provisional = sum(bool(exporter.note(r["result"])) for r in rows)
    if provisional:  # on standard error: the CSV / JSON on standard output stays clean
        err.print(f"{provisional} of {len(rows)} scores are provisional: some points need a "
                  "GPU (each row says how many)")
    if skipped:
        err.print(f"{_entries(len(skipped))} of the class folder "
                  f"{'was' if len(skipped) == 1 else 'were'} not graded (listed in the export, "
                  "each with its reason)", soft_wrap=True)


@app.command("mutants", short_help="Grade an exercise's mutants; list survivors.")
def mutants_command(
    exercise: str = typer.Argument(..., help="Exercise name."),
    device: str = typer.Option("auto", help="auto (GPU if there is one), gpu or sim."),
    workers: Optional[int] = typer.Option(None, help="Local Dask workers, as for batch."),
    operator: Optional[list[str]] = typer.Option(
        None, "--operator", "-o", metavar="NAME", help="Only this mutation operator (repeatable): "
        f"{', '.join(OPERATORS)} (docs/mutants.md)."),
    only_list: bool = typer.Option(False, "--list", help="Make the mutants and list them; "
                                                         "grade nothing."),
    out: Optional[Path] = typer.Option(None, help="Keep the mutants and their results "
                                                  "(results.sqlite) in this folder; a rerun "
                                                  "grades only what changed."),
    equivalent_file: Optional[Path] = typer.Option(
        None, "--equivalent", help="The list of equivalent mutants (default: the exercise "
                                   "folder's mutants/equivalent.toml)."),
    strict: bool = typer.Option(False, "--strict",
                                help="Count an unlisted mutant that lost nothing as a survivor "
                                     "even when points were skipped (the simulator as a gate)."),
    sanitize: bool = typer.Option(True, help="On a GPU, also run compute-sanitizer."),
    as_json: bool = typer.Option(False, "--json", help="Print exactly one JSON object."),
    solutions_dir: Optional[Path] = SOLUTIONS_OPTION,
    assignments_dir: Optional[list[Path]] = ASSIGNMENTS_OPTION,
    preflight_cache: bool = PREFLIGHT_CACHE_OPTION,
) -> None:
    """Grade the one-edit mutants of an exercise's solution and list the survivors; exit 1 if
    one is not in the exercise's list of equivalent mutants (docs/mutants.md)."""
    _use_assignments(assignments_dir)
    _use_solutions(solutions_dir)
    import json

    from rich.table import Table

    from .mutation import equivalent, run
    from .mutation.operators import mutants as make_mutants

    if exercise not in exercises.names():
        _fail(str(exercises.UnknownExercise(exercise)))
    _use_preflight_cache(preflight_cache)
    try:
        source = exercises.solution_path(exercise).read_text(encoding="utf-8")
        every = make_mutants(source)
        chosen = make_mutants(source, operator) if operator else every
        listed = equivalent.load(equivalent_file or equivalent.path(exercise))
    except (FileNotFoundError, ValueError, SyntaxError) as exc:
        _fail(str(exc))
    out_console = Console(width=None if sys.stdout.isatty() else 200)
    if only_list:
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            for m in chosen:
                (out / f"{m.id}.py").write_text(m.source, encoding="utf-8")
        if as_json:
            sys.stdout.write(json.dumps({"exercise": exercise, "mutants": [
                {"id": m.id, "operator": m.operator, "line": m.line,
                 "description": m.description, "equivalent": listed.get(m.id)}
                for m in chosen]}, indent=1) + "\n")
            return
        table = Table(title=f"{len(chosen)} mutants of {exercise}")
        for col in ("mutant", "change", "listed as equivalent"):
            table.add_column(col, overflow="fold")
        for m in chosen:
            table.add_row(m.id, escape(m.description), escape(listed.get(m.id, "")))
        out_console.print(table)
        return
    try:
        results, errors = run.grade(exercise, chosen, device, workers, sanitize, out,
                                    progress=sys.stderr.isatty() and not as_json)
    except (ValueError, GraderSetupError) as exc:
        _fail(str(exc))
    backend = next((r["device"] for r in results.values()), device)
    analysis = run.analyse(exercise, chosen, listed, results, errors, backend,
                           {m.id for m in every}, strict)
    if as_json:
        sys.stdout.write(json.dumps(analysis.to_dict(), indent=1) + "\n")
    else:
        colour = {run.KILLED: "green", run.SURVIVED: "red", run.EQUIVALENT: "cyan",
                  run.NOT_JUDGED: "yellow", run.NOT_GRADED: "red"}
        table = Table(title=f"Mutants of {exercise} on {backend}")
        for col in ("mutant", "verdict", "score", "change", "why"):
            table.add_column(col, overflow="fold")
        order = {v: i for i, v in enumerate(run.VERDICTS)}
        for o in sorted(analysis.outcomes, key=lambda o: order[o.verdict]):
            score = "" if o.score is None else f"{o.score:g}/{o.max_score:g}"
            table.add_row(o.mutant.id, f"[{colour[o.verdict]}]{o.verdict}[/]", score,
                          escape(o.mutant.description), escape(o.reason or o.why))
        out_console.print(table)
        out_console.print(analysis.summary())
    for warning in analysis.warnings:
        err.print(f"[yellow]warning:[/yellow] {escape(warning)}", soft_wrap=True)
    for o in analysis.outcomes:
        if o.verdict == run.SURVIVED:
            err.print(f"[red]survivor not listed as equivalent[/red] {o.mutant.id}: "
                      f"{escape(o.mutant.description)}", soft_wrap=True)
    raise typer.Exit(1 if analysis.failed else 0)


@app.command("exercises", short_help="List the exercises and where they come from.")
def list_exercises(assignments_dir: Optional[list[Path]] = ASSIGNMENTS_OPTION) -> None:
    """List the exercises and where they come from; exit 2 when a definition does not load
    (each one that does not is listed with why)."""
    _use_assignments(assignments_dir)
    broken = 0
    for name in exercises.names():
        try:
            ex = exercises.get(name)
        except exercises.DefinitionError as exc:
            broken += 1
            err.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True)
            continue
        typer.echo(f"{name:18} {ex.title} — {ex.source}")
    if broken:
        raise typer.Exit(2)


# --- a course's own assignments (issue 23) ------------------------------------------------------
@app.command("new", short_help="Write a working starter assignment.")
def new_assignment(
    name: str = typer.Argument(..., help="The assignment's name (lower case, digits, _): it "
                                         "names its folder and the kernel."),
    assignments_dir: Path = typer.Option(..., "--assignments", help="The course's folder of "
                                         "assignments to write it into (created if needed)."),
    solutions_dir: Optional[Path] = typer.Option(
        None, "--solutions", help="Where its solution goes (default: the solutions/ folder "
                                  "beside --assignments)."),
    number: Optional[int] = typer.Option(None, help="Its place in the course (default: after "
                                                    "every exercise known)."),
    title: Optional[str] = typer.Option(None, help="Its title."),
    notebook: bool = typer.Option(False, "--notebook", help="Author the student notebook as "
                                  "one notebook (solutions/NAME.ipynb: text, a skeleton, "
                                  "cells of the student's own, written answers) instead of "
                                  "notebook.py."),
) -> None:
    """Write a working starter assignment (definition, notebook text, solution, two known-bad
    submissions) that `autograder check NAME --assignments DIR` passes; docs/authoring.md."""
    from autograder.authoring.new import write_starter

    if assignments_dir.is_dir():
        _use_assignments([assignments_dir])
    try:
        if number is None:
            number = 1 + max((exercises.get(n).number for n in exercises.names()), default=0)
        written = write_starter(name, assignments_dir, solutions_dir, number, title, notebook)
    except (ValueError, FileExistsError, OSError, GraderSetupError) as exc:
        _fail(str(exc))
    for path in written:
        typer.echo(f"wrote {path}")
    typer.echo(f"next: autograder check {name} --assignments {assignments_dir}")


@app.command("check", short_help="Check an assignment before handing it out.")
def check_assignment(
    name: str = typer.Argument(..., help="Exercise name."),
    device: str = typer.Option("auto", help="auto (GPU if there is one), gpu or sim."),
    mutation: Optional[bool] = typer.Option(
        None, "--mutants/--no-mutants", help="Run the mutation analysis (default: on a GPU "
                                             "only; on the simulator it is slow)."),
    jobs: int = typer.Option(2, "--jobs", "-j", min=1, help="Gradings at once."),
    solutions_dir: Optional[Path] = SOLUTIONS_OPTION,
    assignments_dir: Optional[list[Path]] = ASSIGNMENTS_OPTION,
) -> None:
    """Check an assignment before handing it out: its definition, full marks for its solution,
    the stated verdicts for its known-bad submissions, its notebook, its contract text and (on
    a GPU) its mutation analysis. Exit 1 when a step fails."""
    _use_assignments(assignments_dir)
    _use_solutions(solutions_dir)
    from autograder.authoring.check import check, verdict

    if name not in exercises.names():
        _fail(str(exercises.UnknownExercise(name)))
    try:
        steps = check(name, device, mutation, jobs)
    except (ValueError, FileNotFoundError, GraderSetupError) as exc:
        _fail(str(exc))
    marks = {True: "[green]ok[/green]", False: "[red]FAILED[/red]", None: "[yellow]skipped[/yellow]"}
    out = Console(width=None if sys.stdout.isatty() else 160)
    for step in steps:
        out.print(f"{marks[step.ok]} {escape(step.name)}", soft_wrap=True)
        for line in step.detail.splitlines():
            out.print(f"    {escape(line)}", soft_wrap=True, highlight=False)
    failed = [s.name for s in steps if s.ok is False]
    from autograder.grading.devices import resolve_device

    out.print(escape(verdict(name, steps, resolve_device(device))), soft_wrap=True,
              highlight=False)
    raise typer.Exit(1 if failed else 0)


# --- nbgrader course (issue 2) -----------------------------------------------------------------
course_app = typer.Typer(no_args_is_help=True, help="nbgrader course directories.")
app.add_typer(course_app, name="course")


@course_app.command("build", short_help="Write an nbgrader course folder.")
def course_build(
    directory: Path = typer.Argument(..., help="Course folder to write (nbgrader's root)."),
    exercise: Optional[list[str]] = typer.Option(
        None, "--exercise", "-e", metavar="NAME",
        help="An exercise the course teaches (repeatable; default: every exercise known, the "
             "built-in ones and those of --assignments)."),
    device: str = typer.Option("auto", help="Where students' kernels are graded: auto, gpu "
                                            "or sim."),
    submitted: Optional[Path] = typer.Option(None, help="Copy in a submitted/<student>/"
                                                        "<assignment>/ folder (e.g. "
                                                        "examples/submitted)."),
    allow_provisional: bool = typer.Option(
        False, "--allow-provisional",
        help="Store simulator grades (marked 'provisional: N points need a GPU'); without it, "
             "nbgrader autograde refuses them."),
    run_notebooks: bool = typer.Option(
        False, "--run-notebooks",
        help="Have nbgrader run each notebook in a kernel before grading (the feedback then "
             "shows its outputs); by default notebooks are never run."),
    cell_timeout: int = typer.Option(120, help="With --run-notebooks: seconds before nbgrader "
                                               "interrupts a cell."),
    force: bool = typer.Option(False, "--force",
                               help="Overwrite an existing course's source/ and config."),
    seed: Optional[int] = typer.Option(
        None, min=0, help="The class's secret seed (default: drawn), kept in "
                          "instructor/class_seed; a rebuild keeps it."),
    solutions_dir: Optional[Path] = SOLUTIONS_OPTION,
    assignments_dir: Optional[list[Path]] = ASSIGNMENTS_OPTION,
) -> None:
    """Write an nbgrader course (config, and source/ notebooks built from the exercise folders;
    an installed kernelgrade needs --solutions); see its README.md."""
    from .nbgrader.course import CourseError, build_course

    _use_assignments(assignments_dir)
    _use_solutions(solutions_dir)
    try:
        root = build_course(directory, names=exercise or None, device=device,
                            submitted=submitted, cell_timeout=cell_timeout,
                            run_notebooks=run_notebooks, allow_provisional=allow_provisional,
                            force=force, seed=seed)
    except (CourseError, GraderSetupError) as exc:
        _fail(str(exc))
    assignments = sorted(p.name for p in (root / "source").iterdir() if p.is_dir())
    first = assignments[0]
    typer.echo(f"wrote the nbgrader course {root} ({', '.join(assignments)}); next, in that "
               "folder:\n"
               f"  nbgrader generate_assignment {first}   # source/ -> release/\n"
               f"  nbgrader autograde {first}             # submitted/ -> gradebook.db\n"
               f"(see {root / 'README.md'})")


# --- Gradescope (issue 10) ---------------------------------------------------------------------
gradescope_app = typer.Typer(no_args_is_help=True, help="Gradescope autograder bundles.")
app.add_typer(gradescope_app, name="gradescope")


@gradescope_app.command("build", short_help="Write a Gradescope autograder zip.")
def gradescope_build(
    exercise: str = typer.Argument(..., help="Exercise name (see `autograder exercises`)."),
    out: Path = typer.Option(Path("autograder.zip"), help="The zip to write."),
    seed: Optional[int] = typer.Option(
        None, min=0, help="The class's secret seed the zip keeps (default: drawn); every "
                          "submission is graded with the seed derived from it."),
    solutions_dir: Optional[Path] = SOLUTIONS_OPTION,
    assignments_dir: Optional[list[Path]] = ASSIGNMENTS_OPTION,
) -> None:
    """Write the autograder zip Gradescope asks for (setup.sh, run_autograder, this kernelgrade
    as a wheel, the exercise's instructor solution beside it); see the README.md inside it."""
    _use_assignments(assignments_dir)
    _use_solutions(solutions_dir)
    from .gradescope.bundle import build_bundle

    if exercise not in exercises.names():
        _fail(str(exercises.UnknownExercise(exercise)))
    try:
        path = build_bundle(exercise, out, seed)
    except (LookupError, FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    typer.echo(f"wrote {path}: upload it as the {exercise} assignment's autograder on "
               "Gradescope (Configure Autograder)")


if __name__ == "__main__":
    app()
