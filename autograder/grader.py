"""Grade one submission for one exercise: the data flow of DESIGN.md in one function.

submission → source → child process(es) on the GPU or the simulator → raw outputs and timings
over the private channel → comparison with the float64 reference here → typed results.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import os
import secrets
import shutil
import subprocess
import threading
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from . import diagnostics, exercises, gpulock, ptx, shapes
from . import preflight as preflight_mod
from .compare import check_margins, compare_output, wrong_mask
from .errors import GraderSetupError
from .exercises.base import Exercise
from .results import ExerciseResult, Kind, Status, TestResult
from .sandbox import ChildRun, Limits, run_child, scratch_dir
from .submission import Source, SubmissionError, load_source
from .timing import self_check_problem, timing_details, verdict

SIM_SKIP = ("the simulator runs one Python thread per CUDA thread, so this size runs on a GPU "
            "only")
TIMING_SKIP = "timing needs a GPU: the simulator gives no timing"


def gpu_count() -> int | None:
    """GPUs ``nvidia-smi -L`` lists (no CUDA context created here); None without nvidia-smi."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    if out.returncode != 0:
        return 0
    return sum(1 for ln in out.stdout.splitlines() if ln.startswith("GPU "))


def no_gpu_reason() -> str | None:
    """Why no NVIDIA GPU is visible here (one short phrase), or None when one is (checked
    without creating a CUDA context here)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", None)
    if visible in ("", "-1"):
        return f"CUDA_VISIBLE_DEVICES={visible!r} hides every GPU"
    if not glob.glob("/dev/nvidia[0-9]*"):
        return "this machine has no NVIDIA device node /dev/nvidia0"
    if gpu_count() == 0:
        return "nvidia-smi lists none"
    return None


def gpu_available() -> bool:
    """True when an NVIDIA GPU is visible (checked without creating a CUDA context here)."""
    return no_gpu_reason() is None


def resolve_device(device: str) -> str:
    """``"auto"`` → ``"gpu"`` when a GPU is visible, else ``"sim"``; other values pass through.
    Raises ``ValueError`` for anything but auto, gpu and sim, and
    :class:`autograder.errors.GraderSetupError` for ``gpu`` where no GPU is visible."""
    if device not in ("auto", "gpu", "sim"):
        raise ValueError(f"--device must be auto, gpu or sim, not {device!r}")
    if device == "auto":
        return "gpu" if gpu_available() else "sim"
    if device == "gpu":
        reason = no_gpu_reason()
        if reason:
            raise GraderSetupError(f"--device gpu, but no GPU is visible here ({reason})")
    return device


def default_limits(backend: str) -> Limits:
    """The children's deadlines for ``backend`` (``sim`` or ``gpu``); see
    :class:`autograder.sandbox.Limits`.

    Simulator and compile children count seconds of CPU time, so a busy grader never fails a
    correct kernel. A case's CPU budget is 10 s plus 15 ms per input element, at most 60 s:
    measured in the harness, the costliest simulator case of a correct solution at a legal but
    small tile (``matmul_any_size`` 37×41×43, 3,280 input elements, ``TILE_WIDTH`` 4) used
    17–27 s of CPU time with Python's default thread switch interval and about 3 s with the
    harness's shorter one (budget 59 s); a 16×16 case uses under 1 s (budget 17.7 s, so a kernel
    that spins there is stopped after 17.7 s of CPU time). A child that uses no CPU for 60 s
    (blocked) or runs 10 times its budget in wall time is stopped too. GPU children count
    wall time: a spinning kernel (a grid barrier that never opens) burns the GPU, not the
    host's CPU, and is stopped after ``case_timeout`` seconds.
    """
    if backend == "sim":
        return Limits(import_timeout=30.0, case_timeout=60.0, total_timeout=240.0,
                      case_cpu_per_element=0.015)
    return Limits(import_timeout=30.0, case_timeout=15.0, total_timeout=90.0)


@dataclass
class _Case:
    id: int
    spec: object  # exercises.base.Case
    inputs: dict
    outputs: dict


def _make_cases(exercise: Exercise, seed: int) -> list[_Case]:
    # One child seed per case, so a case's inputs don't depend on which other cases run.
    seqs = np.random.SeedSequence(seed).spawn(len(exercise.cases))
    made = []
    for i, (case, seq) in enumerate(zip(exercise.cases, seqs)):
        rng = np.random.default_rng(seq)
        made.append(_Case(i, case, exercise.make_inputs(case.params, rng), exercise.outputs(case.params)))
    return made


def _request(exercise, backend, phases, source_file, cases, timing, diagnose=None,
             lineinfo=False) -> dict:
    return {
        "diagnose": diagnose,
        "lineinfo": lineinfo,
        "backend": backend,
        "phases": phases,
        "source_path": str(source_file),
        # The harness compiles this text, not the file: a sibling child cannot swap the code.
        "source_text": Path(source_file).read_text(encoding="utf-8"),
        "contract": exercise.contract.to_dict(),
        "cases": [{"id": c.id, "params": c.spec.params, "inputs": c.inputs,
                   "outputs": c.outputs} for c in cases],
        "timing": timing,
    }


@functools.lru_cache(maxsize=None)
def _timing_input_specs(name: str) -> dict:
    """Shapes and dtypes of an exercise's timing inputs (the child fills them on the GPU)."""
    ex = exercises.get(name)
    made = ex.make_inputs(ex.timing.params, np.random.default_rng(0))
    return {k: (tuple(a.shape), a.dtype.str) for k, a in made.items()}


def _timing_request(exercise: Exercise) -> dict:
    t = exercise.timing
    return {
        "params": t.params,
        "input_specs": _timing_input_specs(exercise.name),
        "outputs": exercise.outputs(t.params),
        "solution_path": str(exercises.solution_path(exercise)),
        # Sent as text: the sandbox shows no solutions folder (see autograder.sandbox).
        "solution_source": exercises.solution_path(exercise).read_text(encoding="utf-8"),
        "min_rounds": t.min_rounds,
        "budget_s": t.budget_s,
    }


def _where(source: Source, header: dict) -> str:
    lineno = header.get("lineno")
    if not lineno:
        return ""
    code = source.line_text(lineno)
    return f"{source.where(lineno)}" + (f" (`{code}`)" if code else "") + ": "


def _all_tests(exercise: Exercise, status: Status, message: str) -> list[TestResult]:
    tests = [TestResult(c.name, Kind.CORRECTNESS, c.visibility, status, 0.0, c.points, message)
             for c in exercise.cases]
    if exercise.concept:
        tests.append(TestResult("concept: " + exercise.concept.description.split(":")[0],
                                Kind.CONCEPT, "hidden", status, 0.0, exercise.concept.points, message))
    if exercise.timing:
        tests.append(TestResult("timing: against the instructor's kernel", Kind.TIMING, "hidden",
                                status, 0.0, exercise.timing.points, message))
    return tests + diagnostics.all_tests(exercise, status, message)


def _once(tests: list[TestResult], rest: str) -> list[TestResult]:
    """``tests`` that all carry one message: the first public one (else the first) keeps it,
    the others say ``rest``, so a report shows the problem once."""
    keep = next((t for t in tests if t.visibility == "public"), tests[0] if tests else None)
    for t in tests:
        if t is not keep:
            t.message = rest
    return tests


def grade(submission: str | Path, exercise_name: str, device: str = "auto",
          seed: int | None = None, limits: Limits | None = None,
          sanitize: bool = True, visibility: str | None = None,
          preflight: bool = True) -> ExerciseResult:
    """Grade ``submission`` (a ``.py`` or ``.ipynb`` path) for exercise ``exercise_name``.

    ``device``: ``auto``, ``gpu`` or ``sim``. ``seed``: the secret seed for the inputs (random
    when None; reported in the result so a run can be replayed). Never raises for a bad
    submission: every problem becomes a test result with a message and a score. ``sanitize``:
    on a GPU, also run compute-sanitizer (when installed) for the diagnostics (a few seconds).
    ``visibility``: ``"public"`` grades only the public cases (and the concept test and
    diagnostics), with no timing test, so it needs no instructor solution (a notebook's public
    tests: :mod:`autograder.nbgrader.public`); None grades everything.
    ``preflight``: first check that the instructor solution gets full marks in the same sandbox
    on the same device (:mod:`autograder.preflight`; once per process, exercise and device).
    False only for the preflight's own run and ``autograder solutions`` (which grades the
    solutions itself); a public run (``visibility``) has no solution to check and skips it.
    Raises :class:`autograder.exercises.UnknownExercise` and ``ValueError`` for bad arguments,
    and :class:`autograder.errors.GraderSetupError` when the grader cannot grade here (``gpu``
    without a GPU, a child whose packages differ from the grader's, an instructor solution that
    loses points): no result is returned for the student then.
    """
    exercise = exercises.get(exercise_name)
    if visibility is not None:  # only those cases; timing needs the instructor's solution
        exercise = replace(exercise, timing=None,
                           cases=[c for c in exercise.cases if c.visibility == visibility])
    backend = resolve_device(device)
    check = None
    if preflight and visibility is None:
        check = preflight_mod.start(exercise.name, backend, sanitize)
        if backend == "sim" or check.done():  # the simulator: first (both would share the CPU)
            check.result()
    result = _grade_submission(submission, exercise, backend, seed, limits, sanitize)
    if check is not None:
        check.result()  # on a GPU it ran beside the student's: a failure discards their result
    return result


def _grade_submission(submission, exercise, backend, seed, limits, sanitize) -> ExerciseResult:
    seed = secrets.randbits(63) if seed is None else int(seed)
    result = ExerciseResult(exercise.name, str(submission), backend, seed=seed)
    try:
        source = load_source(submission)
        compile(source.text, source.path, "exec")
    except SubmissionError as exc:
        result.tests = _all_tests(exercise, Status.ERROR, str(exc))
        return result
    except SyntaxError as exc:
        lineno = exc.lineno or 0
        code = source.line_text(lineno).strip()[:80] if lineno else ""
        msg = (f"{source.where(lineno)}: the code does not parse: {exc.msg}"
               + (f" (`{code}`)" if code else ""))
        result.tests = _once(_all_tests(exercise, Status.ERROR, msg),
                             "not run: the code does not parse (see above)")
        return result
    cases = _make_cases(exercise, seed)
    return _grade_source(exercise, source, backend, cases, limits or default_limits(backend),
                         result, sanitize)


def _grade_source(exercise, source, backend, cases, limits, result, sanitize) -> ExerciseResult:
    if exercise.needs_gpu and backend == "sim":
        result.tests = _all_tests(exercise, Status.SKIPPED,
                                  "needs a GPU: the simulator runs blocks one after another")
        return result
    runnable = [c for c in cases if backend == "gpu" or c.spec.sim]
    timing = _timing_request(exercise) if (backend == "gpu" and exercise.timing) else None
    diagnose = _diagnose_case(exercise, result.seed) if exercise.diagnose else None
    sanitized: dict = {}
    with scratch_dir() as tmp:
        work = Path(tmp)
        source_file = work / "submission.py"
        source_file.write_text(source.text, encoding="utf-8")
        timed = _TimingChild(_request(exercise, "gpu", ["time"], source_file, [], timing)
                             | {"await_go": True}, limits, work) if timing else None
        jobs = {}
        if backend == "gpu":
            # Other workers' correctness runs may share this GPU; timing runs have it alone. A
            # case that errors stops the timing child at once (``_TimingChild.watch``).
            jobs["run"] = lambda: _on_gpu(False, lambda: run_child(_request(
                exercise, "gpu", ["compile", "run"], source_file, runnable, None),
                "gpu", limits, work, on_record=timed.watch if timed else None))
            if diagnose:  # the instrumented launch runs on the simulator, beside the GPU child
                jobs["instrument"] = lambda: run_child(_request(
                    exercise, "sim", ["instrument"], source_file, [], None, diagnose),
                    "sim", limits, work)
        else:
            jobs["run"] = lambda: run_child(_request(
                exercise, "sim", ["run", "instrument"], source_file, runnable, None, diagnose),
                "sim", limits, work)
            # Simulator results count only for a kernel that also compiles for a real GPU (on
            # the simulator a kernel's body runs as Python). The compile check needs Numba's real
            # CUDA target (NVVM, no GPU); Numba picks one at import: another child, side by side.
            if exercise.concept or exercise.contract.kernel:
                jobs["compile"] = lambda: run_child(_request(
                    exercise, "compile", ["compile"], source_file, [], None), "compile",
                    limits, work)
        children = _in_parallel(jobs)
        run = children["run"]
        compiled_run = run if backend == "gpu" else children.get("compile")
        instrumented = children.get("instrument", run)
        timing_run = timed.finish(go=_passed_every_case(exercise, source, run, runnable)
                                  ) if timed else None
        # Packages other than the grader's, or a child dead before its first record: the
        # grader's fault, never the student's (GraderSetupError).
        preflight_mod.raise_for_setup(*children.values(), timing_run)
        if backend == "gpu" and diagnose and sanitize and run.first("imported"):
            sanitized = _on_gpu(False, lambda: diagnostics.run_sanitizers(_request(
                exercise, "gpu", ["run"], source_file, [], None, lineinfo=True)
                | {"cases": [diagnose]}, limits, work))
    result.phases_s = _phase_split(run, compiled_run, timing_run)
    device_rec = run.first("device")
    if device_rec:
        result.device = f"gpu:{device_rec['name']}"
    report = diagnostics.instrument_report(instrumented)
    result.tests = _collect(exercise, source, backend, cases, run, compiled_run, timing_run,
                            diagnostics.concept_problems(exercise, source, report, sanitized))
    early = _early_failure(source, run)
    if early is None:  # an early failure's diagnostics are already among _collect's tests
        result.tests += diagnostics.tests(exercise, source, report, sanitized,
                                          _instrument_failure(source, instrumented))
        from . import hints  # performance hints: a no-points diagnostic, the timing's cause
        facts = compiled_run.first("compiled") if compiled_run is not None else None
        hints.apply(result, exercise, source, facts and facts.get("ptx"), report,
                    run.first("imported")["constants"], device=device_rec,
                    kernel=run.first("kernel"))
    if backend == "sim" and compiled_run is not None:
        _void_unless_compiled(result.tests, source, run, compiled_run)
    for child in (run, compiled_run):  # the sandbox mode is the instructor's business
        for note in (child.notes if child is not None else []):
            notes = result.instructor_notes if note.startswith("sandbox:") else result.notes
            if note not in notes:
                notes.append(note)
    skipped = _skipped_note(source, run)
    if skipped:
        result.instructor_notes.append(skipped)
    if run.output.strip():
        result.notes.append("your code printed:\n" + run.output.strip()[-1500:])
    _scrub_paths(result, work)
    return result


class _TimingChild:
    """The timing child, started beside the correctness child: it compiles and warms up while
    the GPU is shared, then waits (``ready``) for :meth:`finish` to give it the GPU alone.
    :meth:`watch`, the correctness child's ``on_record`` hook, stops it as soon as a case errors
    (timing counts only for a kernel that passes every correctness test)."""

    def __init__(self, request: dict, limits: Limits, work: Path):
        self._go = threading.Event()
        self._cancel = threading.Event()
        self._decision = False
        self.stopped = False  # by :meth:`stop`: no go whatever :meth:`finish` is told
        self._lock = contextlib.ExitStack()
        self._result: dict[str, ChildRun] = {}
        self._thread = threading.Thread(target=lambda: self._result.update(run=run_child(
            request, "gpu", limits, work, on_record=self._on_record, cancel=self._cancel)))
        self._wait = limits.timing_timeout
        self._thread.start()

    def _on_record(self, header: dict, send) -> bool:
        if header.get("type") != "ready":
            return False
        self._go.wait(timeout=self._wait)
        if not self._decision:
            return True
        self._lock.enter_context(gpulock.gpu(exclusive=True))
        send(b"g")
        return False

    def stop(self) -> None:
        """Stop it now, whether it is warming up or waiting for its go (thread-safe)."""
        self.stopped = True
        self._decision = False
        self._cancel.set()
        self._go.set()

    def watch(self, header: dict, send) -> bool:
        """The correctness child's ``on_record`` hook: :meth:`stop` on a record that rules out
        timing (:func:`_spoils_timing`). Never stops the correctness child (returns False)."""
        if not self.stopped and _spoils_timing(header):
            self.stop()
        return False

    def finish(self, go: bool) -> ChildRun | None:
        """Let it measure (``go``: every case passed, see :func:`_passed_every_case`) or stop
        it; None when it did not measure."""
        go = go and not self.stopped
        self._decision = go
        if not go:
            self._cancel.set()
        self._go.set()
        self._thread.join()
        self._lock.close()
        return self._result.get("run") if go else None


def _on_gpu(exclusive: bool, job):
    """Run ``job()`` holding this worker's GPU shared (correctness) or alone (timing)."""
    with gpulock.gpu(exclusive):
        return job()


def _spoils_timing(header: dict) -> bool:
    """True for a correctness child's record after which the kernel cannot pass every case: an
    error of the environment check, the import, the contract or a case (``phase`` ``run``).
    A ``compile`` error (the PTX for the concept test) does not decide the cases."""
    return (isinstance(header, dict) and header.get("type") == "error"
            and header.get("phase") in ("environment", "import", "contract", "run"))


def _passed_every_case(exercise: Exercise, source: Source, run: ChildRun, cases) -> bool:
    """True when the GPU correctness child returned every case's outputs and each is correct
    (:func:`_judge_case`): only then is the timing child let measure. Any doubt (an error
    record, a malformed record) is False."""
    if not _ran_every_case(run, cases):
        return False
    if any(_spoils_timing(h) for h, _ in run.of_type("error")):
        return False
    outputs: dict = {}
    for h, arrays in run.of_type("case"):  # the first record per case counts, as in _collect
        outputs.setdefault(h.get("id"), arrays)
    try:
        consts = run.first("imported")["constants"]
        return all(_judge_case(exercise, source, "gpu", c, outputs, {}, run, consts)[0]
                   is Status.PASSED for c in cases)
    except Exception:  # a malformed record: _collect says what it was
        return False


def _ran_every_case(run: ChildRun, cases) -> bool:
    """True when the child returned outputs for every case (timing a broken kernel is moot)."""
    done = {h.get("id") for h, _ in run.of_type("case")}
    return run.first("imported") is not None and all(c.id in done for c in cases)


def _in_parallel(jobs: dict) -> dict[str, ChildRun]:
    """Run each job (a function returning a ChildRun) in its own thread; their results by key.
    An exception of a job (``SandboxUnavailable``, say) is raised here, once all have ended."""
    results: dict[str, ChildRun] = {}
    errors: list[BaseException] = []

    def run(key, job) -> None:
        try:
            results[key] = job()
        except BaseException as exc:  # re-raised in the caller's thread, below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(k, f)) for k, f in jobs.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def _diagnose_case(exercise: Exercise, seed: int) -> dict:
    """The small case of the instrumented run (and the sanitizers), from the secret seed."""
    d = exercise.diagnose
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(len(exercise.cases) + 1)[-1])
    return {"id": "diagnose", "params": d.params, "inputs": exercise.make_inputs(d.params, rng),
            "outputs": exercise.outputs(d.params), "max_blocks": d.max_blocks}


def _instrument_failure(source: Source, run: ChildRun | None) -> str | None:
    if run is None:
        return None
    err = next((h for h, _ in run.of_type("error") if h.get("phase") == "instrument"), None)
    if err is not None:
        return f"{_where(source, err)}the instrumented run failed: {err['message']}"
    if run.ended == "timeout" and run.last_started == "instrument":
        return "the instrumented run did not finish in time"
    return None


def _void_unless_compiled(tests, source, run, compiled_run) -> None:
    """On the simulator a kernel's body runs as Python, which could compute the answer on the
    host or tamper with the child; a body Numba compiles for a GPU can do neither. So correctness
    passed on the simulator counts only when the compile child (which runs no student code)
    compiled the same kernel, with the same constants."""
    facts = compiled_run.first("compiled")
    ran = run.first("imported")
    built = compiled_run.first("imported")
    if facts is not None and ran is not None and built is not None \
            and ran.get("constants") == built.get("constants"):
        return
    err = next((h for h, _ in compiled_run.of_type("error")
                if h.get("phase") in ("compile", "import", "contract")), None)
    if facts is None and err is not None and "NvvmSupportError" in err.get("message", ""):
        return  # NVVM missing here: nothing to check against (the concept test says so)
    why = ("it does not compile for a real GPU (see the concept test)" if facts is None
           else "the compile check built different constants")
    for i, t in enumerate(tests):
        if t.kind is Kind.CORRECTNESS and t.status is Status.PASSED:
            tests[i] = TestResult(t.name, t.kind, t.visibility, Status.ERROR, 0.0, t.max_points,
                                  f"right on the simulator, but {why}, so the simulator's "
                                  "result does not count")


def _skipped_note(source: Source, run: ChildRun) -> str:
    rec = run.first("imported") or next(
        (h for h, _ in run.of_type("error") if h.get("phase") == "contract"), None)
    items = rec.get("skipped") if rec else None
    if not items or not isinstance(items, list):
        return ""
    shown = []
    for item in items[:6]:
        try:
            lineno, reason = int(item[0]), str(item[1])[:160]
        except (TypeError, ValueError, IndexError):
            continue
        code = source.line_text(lineno)[:60]
        shown.append(f"{source.where(lineno)}" + (f" (`{code}`)" if code else "") + f": {reason}")
    more = f" and {len(items) - len(shown)} more" if len(items) > len(shown) else ""
    return ("the grader runs only your imports of numba, numpy and math, constant assignments "
            "and function definitions; it skipped " + "; ".join(shown) + more)


def _scrub_paths(result: ExerciseResult, work: Path) -> None:
    """Messages name the submission as ``submission.py``, not by the random scratch folder (so
    a replayed or resumed run gives the same messages)."""
    prefix = str(work) + os.sep
    for t in result.tests:
        if prefix in t.message:
            t.message = t.message.replace(prefix, "")
    result.notes = [n.replace(prefix, "") for n in result.notes]
    result.instructor_notes = [n.replace(prefix, "") for n in result.instructor_notes]


def _phase_split(run: ChildRun, compiled_run: ChildRun | None,
                 timing_run: ChildRun | None = None) -> dict[str, float]:
    """Seconds per phase of the child, from when its records arrived: ``startup`` (interpreter,
    numba, CUDA context), ``import``, ``compile``, ``tests``, ``timing``; ``total`` wall time."""
    marks = [("startup", "hello"), ("import", "imported"), ("compile", "compiled")]
    split, last = {}, 0.0
    for phase, kind in marks:
        rec = run.first(kind)
        if rec is not None:
            split[phase] = round(rec["_arrived"] - last, 3)
            last = rec["_arrived"]
    cases = [h["_arrived"] for h, _ in run.records if h.get("type") in ("case", "error")
             and h.get("phase") in (None, "run")]
    if cases:
        split["tests"] = round(max(cases) - last, 3)
        last = max(cases)
    if timing_run is not None:
        split["timing_child"] = round(timing_run.seconds, 3)
    split["total"] = round(run.seconds, 3)
    if compiled_run is not None and compiled_run is not run:
        split["compile_child"] = round(compiled_run.seconds, 3)
    return split


def _early_failure(source: Source, run: ChildRun) -> tuple[Status, str] | None:
    """If the child never got past import and contract checks, the status and message for all
    (a timed-out run says itself which limit ran out)."""
    if run.first("imported"):
        return None
    for header, _ in run.records:
        if header.get("type") == "error" and header.get("phase") in ("import", "contract"):
            what = ("importing your code failed" if header["phase"] == "import"
                    else "your code does not fit the exercise")
            return Status.ERROR, f"{_where(source, header)}{what}: {header['message']}"
    if run.ended == "timeout":
        return Status.TIMEOUT, ("your code's top-level statements did not finish in time "
                                + run.timeout_text("is there an endless loop outside the kernel?"))
    return Status.ERROR, (f"the grading process ended while importing your code (exit code "
                          f"{run.exit_code}); does it call exit() or kill processes?"
                          + _output_hint(run))


def _output_hint(run: ChildRun) -> str:
    tail = run.output.strip().splitlines()[-3:]
    return (" Last output: " + " | ".join(tail)) if tail else ""


def _collect(exercise, source, backend, cases, run, compiled_run, timing_run,
             findings) -> list[TestResult]:
    early = _early_failure(source, run)
    if early is not None:
        return _once(_all_tests(exercise, *early), "not run (see above)")
    outputs, errors = {}, {}
    for h, arrays in run.of_type("case"):  # the first record per case counts
        outputs.setdefault(h.get("id"),
                           arrays or {k: h.get(k) for k in ("value", "expected", "args")})
    for h, _ in run.of_type("error"):
        if h.get("phase") == "run":
            errors.setdefault(h.get("id"), h)
    consts = run.first("imported")["constants"]
    tests = []
    correct_everywhere = True
    for c in cases:
        spec = c.spec
        try:
            status, points, msg, *details = _judge_case(exercise, source, backend, c, outputs,
                                                        errors, run, consts)
        except Exception as exc:  # a malformed record from the child: never the grader's crash
            status, points, msg, details = Status.ERROR, 0.0, (
                f"the grading process sent a malformed result ({type(exc).__name__})"), []
        if status is not Status.PASSED and status is not Status.SKIPPED:
            correct_everywhere = False
        tests.append(TestResult(spec.name, Kind.CORRECTNESS, spec.visibility, status, points,
                                spec.points, msg, details[0] if details else None))
    if exercise.concept:
        tests.append(_judge_concept(exercise, source, compiled_run, findings))
    if exercise.timing:
        tests.append(_judge_timing(exercise, source, backend, timing_run, correct_everywhere))
    return tests


def _judge_case(exercise, source, backend, c, outputs, errors, run, consts):
    spec = c.spec
    if backend == "sim" and not spec.sim:
        return Status.SKIPPED, 0.0, spec.why_gpu or SIM_SKIP
    if c.id in errors:
        h = errors[c.id]
        what = "function" if exercise.contract.functions else "kernel"
        return Status.ERROR, 0.0, f"{_where(source, h)}your {what} raised {h['message']}"
    if c.id not in outputs:
        if run.ended == "timeout" and run.last_started == c.id:
            # CPU clock: the simulator, where a barrier some threads never reach does not hang
            loop = ("an endless loop?" if run.timeout_reason == "cpu"
                    else "an endless loop, or a barrier some threads never reach?")
            who = "your function" if exercise.contract.functions else "the kernel"
            return Status.TIMEOUT, 0.0, f"{who} did not finish in time {run.timeout_text(loop)}"
        if run.ended == "timeout":
            return Status.TIMEOUT, 0.0, "not run: an earlier test ran out of time"
        return Status.ERROR, 0.0, ("not run: the grading process ended early (exit code "
                                   f"{run.exit_code}) or an earlier kernel broke the GPU context"
                                   + _output_hint(run))
    if exercise.contract.functions:
        got = outputs[c.id]
        if spec.params.get("against_driver"):  # the driver's occupancy calculator, on this GPU
            return _judge_value({**spec.params, "args": got.get("args") or {}}, got["value"],
                                got.get("expected"), spec.points, "the driver's occupancy "
                                "calculator")
        expected = exercise.reference(c.inputs, spec.params)["value"]
        return _judge_value(spec.params, got["value"], expected, spec.points)
    expected = exercise.reference(c.inputs, {**spec.params, **consts})
    problems, masks = [], []
    for name, (shape, _) in c.outputs.items():
        shape = shapes.evaluate(shape, spec.params, consts)
        buf = outputs[c.id][name]
        margin_msg = check_margins(name, buf, tuple(shape))
        got = buf[(buf.size - int(np.prod(shape))) // 2:][: int(np.prod(shape))].reshape(shape)
        ok, msg = compare_output(name, got, expected[name], exercise.tolerance)
        if not ok:
            problems.append(msg)
            masks.append(wrong_mask(name, got, expected[name], exercise.tolerance))
        if margin_msg:
            problems.append(margin_msg)
    if problems:
        masks = [m for m in masks if m]
        return Status.FAILED, 0.0, "; ".join(problems), ({"wrong_masks": masks} if masks else None)
    return Status.PASSED, spec.points, "correct"


def _judge_value(params: dict, got, expected, points: float, source: str = "expected"):
    """A function exercise's case: exact for ints, relative 1e-9 for floats."""
    call = f"{params['call']}({', '.join(f'{k}={v}' for k, v in params['args'].items())})"
    if not isinstance(expected, (int, float, np.integer, np.floating)):
        return Status.ERROR, 0.0, f"{call}: no value to compare with ({source})"
    if isinstance(expected, (int, np.integer)):
        ok = got == expected
    else:
        ok = abs(got - expected) <= 1e-9 * max(1.0, abs(expected))
    if ok:
        return Status.PASSED, points, f"{call} = {got}"
    return Status.FAILED, 0.0, f"{call} returned {got}, {source} says {expected}"


def _judge_concept(exercise, source, compiled_run, findings: list[str]) -> TestResult:
    """PTX facts (shared memory, barriers, atomics, fences) and the diagnostics' findings."""
    concept = exercise.concept
    name = "concept: " + concept.description.split(":")[0]
    facts = compiled_run.first("compiled")
    if facts is None:
        err = next((h for h, _ in compiled_run.of_type("error") if h.get("phase") == "compile"),
                   None)
        if err is not None:
            msg = (f"{_where(source, err)}your kernel does not compile for a real GPU "
                   f"(Numba's CUDA target rejects it): {err['message']}")
        else:
            early = _early_failure(source, compiled_run)
            msg = early[1] if early else "the compile check did not finish"
        return TestResult(name, Kind.CONCEPT, "hidden", Status.ERROR, 0.0, concept.points, msg)
    found = ptx.facts(facts["ptx"])
    missing = []
    if found.shared_bytes < concept.min_shared_bytes:
        missing.append("declares no shared memory (cuda.shared.array)" if not found.shared_bytes
                       else f"declares only {found.shared_bytes} bytes of shared memory")
    if found.barriers < concept.min_barriers:
        missing.append(f"has {found.barriers} barrier(s) (cuda.syncthreads()) where "
                       f"{concept.min_barriers} are needed")
    if found.atomics < concept.min_atomics:
        missing.append("uses no atomic operation (cuda.atomic.*)")
    if found.fences < concept.min_fences:
        missing.append("has no memory fence (cuda.threadfence())")
    detail = (f"{found.shared_bytes} bytes of shared memory, {found.barriers} barrier(s)"
              + (f", {found.atomics} atomic(s), {found.fences} fence(s)"
                 if concept.min_atomics or concept.min_fences else ""))
    problems = [f"your kernel {' and '.join(missing)}"] if missing else []
    problems += findings[:3]
    if problems:
        return TestResult(name, Kind.CONCEPT, "hidden", Status.FAILED, 0.0, concept.points,
                          "; ".join(problems) + f". The exercise asks that {concept.description}"
                          f" ({detail})")
    return TestResult(name, Kind.CONCEPT, "hidden", Status.PASSED, concept.points,
                      concept.points, detail)


def _judge_timing(exercise, source, backend, run, correct_everywhere) -> TestResult:
    t = exercise.timing
    name = "timing: against the instructor's kernel"

    def result(status, points, msg, details=None):
        return TestResult(name, Kind.TIMING, "hidden", status, points, t.points, msg, details)

    if backend == "sim":
        return result(Status.SKIPPED, 0.0, TIMING_SKIP)
    if not correct_everywhere:
        return result(Status.FAILED, 0.0, "timing counts only for a kernel that passes every "
                                          "correctness test")
    if run is None:
        return result(Status.ERROR, 0.0, "timing did not run: a test did not return its outputs")
    rec = run.first("timing")
    if rec is None:
        err = next((h for h, _ in run.of_type("error") if h.get("phase") == "timing"), None)
        if err:
            return result(Status.ERROR, 0.0, f"{_where(source, err)}timing failed: {err['message']}")
        if run.ended == "timeout":
            return result(Status.TIMEOUT, 0.0, "timing did not finish in time")
        return result(Status.ERROR, 0.0, "timing did not run: the grading process ended early")
    unstable = self_check_problem(rec["self_a_ms"], rec["self_b_ms"])
    if unstable:
        return result(Status.ERROR, 0.0, unstable)
    points, stats, msg = verdict(rec["student_ms"], rec["instructor_ms"], t.full_ratio,
                                 t.zero_ratio, t.points)
    size = ", ".join(f"{k} {v}" for k, v in t.params.items())
    status = Status.PASSED if points >= t.points else Status.FAILED
    return result(status, points, f"at {size}: {msg}", timing_details(
        rec["student_ms"], rec["instructor_ms"], stats, t.full_ratio, t.zero_ratio, t.params))
