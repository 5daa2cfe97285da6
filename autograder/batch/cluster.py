"""The Dask cluster a batch grades on: a local one that only this batch can talk to, or a remote
scheduler reached with the instructor's TLS credentials.

A local cluster (:func:`local_cluster`) listens on 127.0.0.1 only (scheduler, nannies, workers),
speaks TLS with mutual authentication, and has no dashboard. Its credentials (a key and a
self-signed certificate, made for this batch) live only in the memory of the batch process and
its worker processes, which are non-dumpable (:mod:`autograder.sandbox.nodump`): another process of the
same user, such as a grading child in a plain sandbox, can find the ports in ``/proc/net/tcp``
but cannot read the key from their environment, memory or file descriptors, and without it
every connection is refused. The key is never in an environment variable, and is handed to
OpenSSL through an anonymous in-memory file (``memfd``), not a temporary file (what Dask's own
:class:`distributed.security.Security` does for in-memory keys).

A remote scheduler (:func:`connect`) is reached over ``tls://`` with the credentials given on
the command line or in Dask's configuration (``distributed.comm.tls.*``); a ``tcp://`` one lets
anyone who can reach it run code as the instructor, and is refused unless asked for
(docs/batch.md).
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import sys
import tempfile
import weakref
from pathlib import Path

from autograder.grading import devices
from autograder.errors import GraderSetupError
from autograder.sandbox.nodump import forbid_dumps

#: The most workers a GPU gets by default.
MAX_WORKERS_PER_GPU = 12
#: GPU memory a worker may need at once: a CUDA context (about 0.5 GiB) and the largest
#: timing's inputs and outputs (``transpose``: 3.2 GB), allocated before the timing waits for
#: the GPU alone.
GPU_BYTES_PER_WORKER = 4 << 30
#: Where a local cluster listens.
LOCALHOST = "127.0.0.1"
#: Dask settings for a local cluster: its HTTP servers serve nothing (Dask starts a plain-HTTP
#: server beside each scheduler and worker whatever the dashboard setting: task names, logs,
#: call stacks, a proxy to the workers'), and a worker never spills task data to files, which
#: it would unpickle again (a file a plain grading child could replace). Nor does any process
#: of it poll the GPUs through NVML (Dask's system monitor, twice a second, when pynvml is
#: installed): that work holds no GPU lock, and on an H100 NVML queries beside a timing
#: measurement now and then slowed one of its samples (issue 22,
#: benchmarks/results/2026-11-24_H100_disturbance.md).
LOCAL_SETTINGS = {"distributed.scheduler.http.routes": [], "distributed.worker.http.routes": [],
                  "distributed.worker.memory.target": False,
                  "distributed.worker.memory.spill": False,
                  "distributed.diagnostics.nvml": False}


def _cores() -> int:
    """The cores this process may run on."""
    return (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
            else os.cpu_count()) or 1


def default_workers_per_gpu(gpus: int, cores: int, gpu_bytes: int | None = None) -> int:
    """Workers per GPU when none is asked for: three for every four of the host's cores, shared
    among its ``gpus``, at most :data:`MAX_WORKERS_PER_GPU`, at most one per
    :data:`GPU_BYTES_PER_WORKER` of ``gpu_bytes`` (the smallest GPU's memory, when known) and
    at least 1. Measured on an H200 with 16 cores, a class of 300 ``tiled_matmul`` submissions
    without the sanitizer: 8 workers 158 per minute, 12 workers 201, 16 workers 189
    (2026-11-23, ``benchmarks/results/2026-11-23_H200_session5.md``): a grading's children are
    CPU work (starting Python, importing Numba, compiling) beside short GPU work."""
    n = min(MAX_WORKERS_PER_GPU, (3 * cores) // (4 * max(1, gpus)))
    if gpu_bytes:
        n = min(n, gpu_bytes // GPU_BYTES_PER_WORKER)
    return max(1, n)


def local_cluster(backend: str, workers: int | None, workers_per_gpu: int | None = None):
    """A local Dask cluster that only this process can use: ``workers_per_gpu`` workers per GPU
    (pinned with ``CUDA_VISIBLE_DEVICES``; ``workers`` caps the GPUs used; None:
    :func:`default_workers_per_gpu`) on ``gpu``, else ``workers`` CPU workers (default and
    most: the cores this process may run on). Workers sharing a GPU take turns for timing
    (:mod:`autograder.host.gpulock`).

    Every server listens on :data:`LOCALHOST` over ``tls://`` with credentials made for it
    (:func:`autograder.batch.tls.batch_security`: the cluster's ``security``, which a
    ``Client(cluster)`` uses), with no dashboard (:data:`LOCAL_SETTINGS`). This process is made
    non-dumpable (:mod:`autograder.sandbox.nodump`) before it holds the key, each worker process as it
    starts (:func:`dask_setup`); Dask's scratch folder (a private one, removed with the
    cluster) is off their import path. Raises :class:`GraderSetupError` when no credentials
    can be made."""
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")  # workers inherit it
    import dask
    from distributed import Nanny, Scheduler, SpecCluster

    from autograder.batch.tls import batch_security

    forbid_dumps()
    security = batch_security()
    scratch = tempfile.mkdtemp(prefix="kernelgrade-dask-")
    common = {"host": LOCALHOST, "protocol": "tls", "security": security,
              "local_directory": scratch}
    worker = dict(common, nthreads=1, dashboard=False, preload=["autograder.batch.cluster"])
    if backend == "gpu":
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        count = max(1, devices.gpu_count() or 0)
        ids = visible.split(",") if visible else [str(i) for i in range(count)]
        ids = ids[: workers or len(ids)]
        per_gpu = workers_per_gpu or default_workers_per_gpu(
            len(ids), _cores(), devices.smallest_gpu_memory_bytes())
        specs = {f"gpu{i}-{j}": {"cls": Nanny, "options": dict(
                     worker, env={"CUDA_VISIBLE_DEVICES": gid})}
                 for i, gid in enumerate(ids) for j in range(max(1, per_gpu))}
    else:
        # A simulator grading keeps about one core busy (its run child: the simulator's
        # threads share one interpreter lock; the compile child beside it is brief), and its
        # deadlines count CPU time. One worker per core keeps every core busy while each child
        # still gets about half a core or more, far inside the children's wall-time backstops
        # (Limits.wall_factor); more would only queue children for the CPU, so it is the cap.
        cores = _cores()
        n = min(workers or cores, cores)
        specs = {f"cpu{i}": {"cls": Nanny, "options": worker} for i in range(n)}
    scheduler = {"cls": Scheduler, "options": dict(
        common, dashboard=False, dashboard_address=f"{LOCALHOST}:0")}
    with dask.config.set(LOCAL_SETTINGS):  # nannies hand them to the workers they start
        cluster = SpecCluster(workers=specs, scheduler=scheduler, security=security,
                              silence_logs=40)
    forget_scratch(scratch)
    weakref.finalize(cluster, shutil.rmtree, scratch, True)
    return cluster


def forget_scratch(scratch: str) -> None:
    """Take ``scratch`` and the folders under it off ``sys.path``. Dask puts its scratch folders
    first on the import path (for ``Client.upload_file``); a grading child gets the grader's
    import path, and a plain one, running as the same user, could write a module there that
    the worker or the next child would import."""
    root = os.path.realpath(scratch)
    sys.path[:] = [p for p in sys.path
                   if not (os.path.realpath(p or ".") + os.sep).startswith(root + os.sep)]


def dask_setup(worker) -> None:
    """A Dask preload hook, run in each worker process of :func:`local_cluster` as it starts:
    non-dumpable (:func:`autograder.sandbox.nodump.forbid_dumps`), its scratch folders off the import
    path (:func:`forget_scratch`)."""
    forbid_dumps()
    forget_scratch(os.path.dirname(worker.local_directory))


def client_security(ca_file: str | None = None, cert: str | None = None,
                    key: str | None = None):
    """The credentials for a remote ``tls://`` scheduler: the files given (all three, or none),
    else Dask's configuration (``distributed.comm.tls.ca-file``, ``...client.cert``,
    ``...client.key``). Raises ``ValueError`` when only some files are given, or one cannot be
    read."""
    from distributed.security import Security

    given = {"--tls-ca-file": ca_file, "--tls-cert": cert, "--tls-key": key}
    if not any(given.values()):
        return Security()
    missing = [name for name, value in given.items() if not value]
    if missing:
        raise ValueError(f"give all of --tls-ca-file, --tls-cert and --tls-key, not only some "
                         f"(missing: {', '.join(missing)})")
    for name, value in given.items():
        if not os.access(value, os.R_OK) or not Path(value).is_file():
            raise ValueError(f"{name} {value}: no such readable file")
    return Security(require_encryption=True, tls_ca_file=ca_file, tls_client_cert=cert,
                    tls_client_key=key)


def scheduler_address(scheduler: str) -> str:
    """The address named by ``scheduler``: a scheduler file's ``address`` when a file exists at
    that path, else ``scheduler`` itself. Raises ``ValueError`` for a ``.json`` path that does
    not exist or a file without an address."""
    if Path(scheduler).is_file():
        try:
            return str(json.loads(Path(scheduler).read_text())["address"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"--scheduler {scheduler}: not a Dask scheduler file "
                             f"({type(exc).__name__}: {exc})") from None
    if scheduler.endswith(".json"):
        raise ValueError(f"--scheduler {scheduler}: no such scheduler file")
    return scheduler


INSECURE = ("--scheduler {address} is not TLS: anyone who can reach it (another user of this "
            "machine or network, a grading child without bubblewrap) can run code as you and "
            "rewrite the grades. Start the scheduler and workers with TLS and give "
            "--tls-ca-file/--tls-cert/--tls-key (docs/batch.md), or pass "
            "--insecure-scheduler to use it anyway.")


def connect(scheduler: str, security=None, insecure: bool = False):
    """A ``distributed.Client`` of the running scheduler named by ``scheduler`` (a scheduler
    file when one exists at that path, else an address), with ``security`` (None:
    :func:`client_security`'s, from Dask's configuration).

    A ``tls://`` scheduler needs a client certificate. Any other address is refused with
    ``ValueError`` unless ``insecure`` (then a warning is printed on standard error). Raises
    ``ValueError`` for a bad scheduler file or missing credentials, and
    :class:`GraderSetupError` when the scheduler cannot be reached or refuses us."""
    import sys

    from distributed import Client

    address = scheduler_address(scheduler)
    security = client_security() if security is None else security
    if not address.startswith("tls://"):
        if not insecure:
            raise ValueError(INSECURE.format(address=address))
        print("warning: " + INSECURE.split(". Start")[0] + " (--insecure-scheduler)",
              file=sys.stderr)
    elif not (security.tls_client_cert and security.tls_ca_file):
        raise ValueError(f"--scheduler {address} is TLS, but no client certificate is given: "
                         "give --tls-ca-file, --tls-cert and --tls-key, or set Dask's "
                         "distributed.comm.tls.ca-file, .client.cert and .client.key "
                         "(docs/batch.md)")
    try:
        return Client(address, security=security, timeout=30)
    except (OSError, TimeoutError, ValueError, ssl.SSLError) as exc:
        raise GraderSetupError(f"cannot reach the Dask scheduler {scheduler}: "
                               f"{exc}") from None
