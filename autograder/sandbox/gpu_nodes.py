"""The GPU a GPU child uses, and the device nodes it is shown: that GPU's own, not every GPU's.

A child uses device 0 of its ``CUDA_VISIBLE_DEVICES``. Where that GPU can be named for sure
(:func:`own_gpu`), bubblewrap shows the child the driver's shared nodes (``/dev/nvidiactl``,
``/dev/nvidia-uvm``, ...) and that one GPU's ``/dev/nvidiaN`` only, and the child's
``CUDA_VISIBLE_DEVICES`` becomes that GPU's UUID, so its device 0 is the same GPU whatever nodes
it sees. Elsewhere it is shown every node, as before.

Why: with every node present, each process's ``cuInit`` attaches every GPU of the host, and the
driver serialises that host-wide, so a second GPU added no grading throughput. Measured on two
H200s (``nvidia-h200-x2``, 32 cores, 2026-11-23; see
``benchmarks/results/2026-11-23_2xH200_session6.md``), 144 processes inside bubblewrap, 24 at a
time, half on each GPU: ``cuInit`` alone 16.3 per second with every node, 35.3 with its own;
``cuInit`` and a context 10.4 → 13.3 per second. It also keeps a submission off the GPUs it was
not given.
"""

from __future__ import annotations

import functools
import glob
import itertools
import os
import re
from dataclasses import dataclass
from pathlib import Path

#: Where the NVIDIA driver lists its GPUs, one folder per PCI device (no subprocess needed).
DRIVER_GPUS = "/proc/driver/nvidia/gpus"
#: Where the device nodes are.
DEV = "/dev"

_GPU_NODE = re.compile(r"nvidia(\d+)$")


@dataclass(frozen=True)
class DriverGpu:
    """One GPU as the driver lists it: ``minor`` (N of ``/dev/nvidiaN``), ``uuid``
    (``GPU-…``), ``bus`` (PCI location, lower case) and ``model``."""
    minor: int
    uuid: str
    bus: str
    model: str


def driver_gpus() -> list[DriverGpu]:
    """The GPUs of :data:`DRIVER_GPUS`, in PCI bus order; those whose ``information`` file
    lacks a field are left out. Empty without the driver."""
    found = []
    for info in glob.glob(os.path.join(DRIVER_GPUS, "*", "information")):
        try:
            text = Path(info).read_text(errors="replace")
        except OSError:
            continue
        fields = dict(ln.split(":", 1) for ln in text.splitlines() if ":" in ln)
        fields = {k.strip(): v.strip() for k, v in fields.items()}
        try:
            found.append(DriverGpu(int(fields["Device Minor"]), fields["GPU UUID"],
                                   fields["Bus Location"].lower(), fields.get("Model", "")))
        except (KeyError, ValueError):
            continue
    return sorted(found, key=lambda g: g.bus)


def own_gpu(visible: str | None, order: str | None = None) -> DriverGpu | None:
    """The GPU a child with ``CUDA_VISIBLE_DEVICES=visible`` uses (its first entry), or None
    where that cannot be named for sure, and the child is then shown every GPU.

    An entry ``GPU-…`` is a UUID (a unique prefix is enough, as for CUDA). A number is an index
    in CUDA's order, which counts only the GPUs this process can open (a container, or a cgroup
    as under Slurm's ``ConstrainDevices``, may list a GPU in ``/proc`` and deny its node): PCI
    bus order under ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` (``order``), and under the default (fastest
    first) only where every GPU is the same model, when the two orders agree. Unset is index 0,
    as for CUDA. None also for a host with one GPU (its node is every GPU node there), ``MIG-…``,
    an empty value (no GPU), an index past the end, or a GPU without its ``/dev/nvidiaN``."""
    first = ("0" if visible is None else visible).split(",")[0].strip()
    gpus = driver_gpus()
    if not first or len(gpus) < 2:
        return None
    if first.startswith("GPU-"):
        matches = [g for g in gpus if g.uuid.startswith(first)]
        found = matches[0] if len(matches) == 1 else None
    elif first.isdigit() and (order == "PCI_BUS_ID" or len({g.model for g in gpus}) == 1):
        openable = (g for g in gpus if _opens(os.path.join(DEV, f"nvidia{g.minor}")))
        found = next(itertools.islice(openable, int(first), None), None)
    else:
        found = None
    if found is None or not os.path.exists(os.path.join(DEV, f"nvidia{found.minor}")):
        return None
    return found


@functools.lru_cache(maxsize=None)
def _opens(node: str) -> bool:
    """Whether this process may open the device node ``node`` read-write (what CUDA does);
    asked once per node and process."""
    try:
        fd = os.open(node, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return False
    os.close(fd)
    return True


def child_gpu() -> DriverGpu | None:
    """:func:`own_gpu` for this process's ``CUDA_VISIBLE_DEVICES`` and ``CUDA_DEVICE_ORDER``:
    the GPU the GPU children started from here use."""
    return own_gpu(os.environ.get("CUDA_VISIBLE_DEVICES"), os.environ.get("CUDA_DEVICE_ORDER"))


def device_nodes(own: DriverGpu | None = None) -> list[str]:
    """The ``/dev/nvidia*`` nodes (and ``/dev/dri/renderD*``) a GPU child is shown: every one
    on this machine, or with ``own`` every one but the other GPUs' ``/dev/nvidiaN``."""
    nodes = sorted(glob.glob(os.path.join(DEV, "nvidia*")))
    if own is not None:
        nodes = [n for n in nodes
                 if not (m := _GPU_NODE.match(os.path.basename(n))) or int(m[1]) == own.minor]
    return nodes + sorted(glob.glob(os.path.join(DEV, "dri", "renderD*")))
