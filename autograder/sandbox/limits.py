"""What one child process starts with: its deadlines and resource caps (:class:`Limits`), the
resource limits set in it before it runs (:func:`limiter`) and its environment
(:func:`child_env`).

Limits in both modes (bubblewrap and plain): time (the deadlines, kept by
:mod:`autograder.sandbox.watchdog`); host memory with ``RLIMIT_DATA`` for each process (heap and
private writable mappings; ``RLIMIT_AS`` would break CUDA, which reserves huge address ranges)
and the same number for the child's whole process tree, with caps on its processes and tasks
(:mod:`autograder.sandbox.caps`: a cgroup, else the watchdog); captured output with
``RLIMIT_FSIZE`` (the grader reads only its tail); and the bytes the grader accepts from the
channel (a child that sends more is stopped).
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass

from autograder import settings
from autograder.host.blas import ONE_THREAD_ENV
from autograder.sandbox import bwrap, caps, gpu_nodes

OUTPUT_LIMIT_BYTES = 64 << 20
# Measured: a simulator child grading tiled_matmul peaks near 0.6 GiB of data segment (numba,
# numpy, the simulator's threads); the compile child near 0.5 GiB. 4 GiB leaves room for real
# kernels at the simulator's sizes and stops a runaway allocation long before the host suffers.
SIM_MEMORY_BYTES = 4 << 30
# On a GPU the CUDA driver maps device memory shared and reserves address space without
# writing it, which RLIMIT_DATA does not count; host data stays small (inputs, outputs).
GPU_MEMORY_BYTES = 32 << 30
CHANNEL_BYTES = 256 << 20  # all of a GPU run's outputs (guarded) fit in a tenth of it
# The smallest CPU budget of a case scaled by its size (Limits.case_cpu_per_element): the
# harness's own work around a launch (guard bands, copies) and the simulator's start-up.
CASE_CPU_FLOOR = 10.0
_HAS_PROC = os.path.exists("/proc/self/stat")


@dataclass
class Limits:
    """Deadlines in seconds and resource caps for one child process.

    Deadlines: ``import_timeout`` (from the spawn to the submission imported and checked
    against the contract), ``case_timeout`` (each case, and the instrumented run),
    ``timing_timeout`` (the timing phase: JIT, self-check and sampling) and ``total_timeout``
    (the whole child). ``clock`` says what they count:

    * ``"cpu"``: seconds of CPU time (user + system) used by the child's whole process tree,
      every thread of every process (the simulator runs one Python thread per CUDA thread).
      A loaded machine makes a child take longer but not use more CPU, so a correct kernel
      never runs out on a busy grader, and the budget needs no slack for load. Two wall-time
      backstops catch a child that does not use its CPU: ``idle_timeout`` seconds with no CPU
      used at all (blocked: a sleep, a lock, a deadlock), and ``wall_factor`` times a deadline
      in wall time (a child that trickles CPU without finishing, or a machine overloaded
      beyond reason). With ``case_cpu_per_element`` > 0, a case's budget is
      ``min(case_timeout, CASE_CPU_FLOOR + case_cpu_per_element × its input elements)``, so a
      kernel that spins on a small case is stopped sooner than one on the largest. (Not a
      retry with a longer wall limit: that would cost every spinning kernel twice its time
      and still blame the student whenever the load outlasts the retry.)
    * ``"wall"``: seconds of wall time.
    * ``"auto"`` (the default): ``"cpu"`` for children that run only on the host (backends
      ``sim`` and ``compile``), ``"wall"`` for GPU children (a spinning kernel burns the GPU,
      not necessarily host CPU; the GPU is not shared by CPU load; and a GPU child waits,
      idle, for its turn on the GPU).

    ``memory_bytes``: ``RLIMIT_DATA`` of each of the child's processes and the cap on all of
    them together (None: the backend's default, :data:`SIM_MEMORY_BYTES` or
    :data:`GPU_MEMORY_BYTES`). ``processes``: the most processes the child's tree may hold at
    once, the sandbox's own included; ``tasks``: the most processes and threads (None: the
    backend's default, :data:`autograder.sandbox.caps.TASKS`). ``output_bytes``: the most the child
    may write to standard output and error (``RLIMIT_FSIZE``). ``channel_bytes``: the most the
    grader reads from the child's channel before it stops the child.
    """

    import_timeout: float = 30.0
    case_timeout: float = 30.0
    total_timeout: float = 120.0
    timing_timeout: float = 45.0  # the timing phase: JIT, self-check and sampling
    clock: str = "auto"
    idle_timeout: float = 60.0
    wall_factor: float = 10.0
    case_cpu_per_element: float = 0.0
    memory_bytes: int | None = None
    processes: int = caps.PROCESSES
    tasks: int | None = None
    output_bytes: int = OUTPUT_LIMIT_BYTES
    channel_bytes: int = CHANNEL_BYTES

    def case_budget(self, case: dict, clock: str) -> float:
        """Seconds for ``case`` (a request's case: ``inputs`` holds its arrays) on ``clock``."""
        if clock != "cpu" or self.case_cpu_per_element <= 0:
            return self.case_timeout
        elements = sum(int(getattr(a, "size", 1)) for a in (case.get("inputs") or {}).values())
        return round(min(self.case_timeout,
                         CASE_CPU_FLOOR + self.case_cpu_per_element * elements), 1)

    def clock_for(self, backend: str) -> str:
        """``"cpu"`` or ``"wall"``: what the deadlines count for a child of ``backend``
        (``sim``, ``compile`` or ``gpu``). Raises ``ValueError`` for a bad ``clock``."""
        if self.clock not in ("auto", "cpu", "wall"):
            raise ValueError(f"Limits.clock must be auto, cpu or wall, not {self.clock!r}")
        if self.clock == "auto":  # without /proc (not Linux) there is no CPU clock
            return "wall" if backend == "gpu" or not _HAS_PROC else "cpu"
        return self.clock


def child_env(backend: str) -> dict:
    """The child's environment: the grader's, less its own settings, with the grader's import
    path (:func:`autograder.sandbox.bwrap.import_path`, so PYTHONPATH entries, the user site
    and ``.pth`` additions are searched in the grader's order whatever the child's ``HOME``),
    the grader's user site or none, and the grader's package facts for the harness's check
    (:data:`autograder.host.environment.PACKAGES_ENV`)."""
    import json
    import site

    from autograder.host.environment import PACKAGES_ENV, package_facts

    env = {k: v for k, v in os.environ.items()
           if not k.startswith((settings.PREFIX, "NUMBA_ENABLE_CUDASIM", "DASK_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(bwrap.PROJECT_ROOT), *bwrap.import_path()])
    if site.ENABLE_USER_SITE:  # the same user site (and its .pth files), whatever HOME is
        env["PYTHONUSERBASE"] = site.getuserbase()
    else:
        env["PYTHONNOUSERSITE"] = "1"
    env[PACKAGES_ENV] = json.dumps(package_facts())
    env.update(ONE_THREAD_ENV)  # see autograder.host.blas: ~2 s of CPU per child otherwise
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTHONSTARTUP", None)
    env.pop("PYTHONINSPECT", None)
    if backend == "sim":
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    if backend == "gpu":
        for key, value in GPU_CHILD_ENV.items():
            env.setdefault(key, value)  # the host's own setting, when it has one, wins
        own = gpu_nodes.child_gpu()
        if own is not None:  # the same GPU, named so that it is device 0 with only its node
            env["CUDA_VISIBLE_DEVICES"] = own.uuid
    return env


#: Set in every GPU child's environment (unless the grader's has it). A child uses one stream,
#: so one hardware work queue per CUDA context is all it needs, and fewer queues make creating
#: a context cheaper: on an H200 host, 48 processes that each create a context, compile and
#: launch one kernel took 15.3 s at the default (8) and 8.6 s with 1 (2026-11-23). Creating
#: contexts is what a class on one host waits for (each grading creates one; four with
#: compute-sanitizer).
GPU_CHILD_ENV = {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}


def memory_limit(backend: str, limits: Limits) -> int:
    """The child's ``RLIMIT_DATA`` in bytes."""
    if limits.memory_bytes is not None:
        return int(limits.memory_bytes)
    return GPU_MEMORY_BYTES if backend == "gpu" else SIM_MEMORY_BYTES


def tree_caps(backend: str, limits: Limits) -> caps.TreeCaps:
    """The caps of a ``backend`` child's whole process tree (:mod:`autograder.sandbox.caps`)."""
    return caps.TreeCaps(memory_limit(backend, limits), int(limits.processes),
                         int(limits.tasks or caps.TASKS.get(backend, caps.TASKS["gpu"])))


def limiter(output_bytes: int, memory_bytes: int, enter=None):
    """The ``preexec_fn`` that sets a child's ``RLIMIT_FSIZE`` (``output_bytes``),
    ``RLIMIT_DATA`` (``memory_bytes``) and no core dumps, and first calls ``enter`` (moving
    the child into its cgroup, :meth:`autograder.sandbox.caps.Cgroup.enter`) when given."""
    def limit() -> None:  # runs in the forked child before exec: async-signal-safe calls only
        if enter is not None:
            enter()
        resource.setrlimit(resource.RLIMIT_FSIZE, (output_bytes, output_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_DATA, (memory_bytes, memory_bytes))
    return limit
