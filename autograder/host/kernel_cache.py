"""Kernels the grader trusts, compiled once per host and kept on disk for every GPU child: the
instructor's kernel at the timing's argument types and the timing's own kernels (the L2 flush,
the input fill). Compiling them cost each grading 0.4-0.55 s of its serial chain on an H200
(2026-11-23, ``benchmarks/results/2026-11-23_H200_session4.md``); a load is a file read.

Who writes, who reads:

* **Only a trusted process writes**: :mod:`autograder.grading.reference_warmup`, which the preflight
  runs (no student code in it), with :data:`WRITE_ENV` set. An entry is written to a temporary
  name and renamed, so a reader sees a whole entry or none.
* **A sandboxed GPU child reads**: the sandbox shows the folder read-only
  (:mod:`autograder.sandbox.run`) and names it in :data:`CACHE_ENV`. Without bubblewrap the child
  could write where the grader reads, so a plain child gets no folder and compiles as before.

An entry's name is a SHA-256 over what the compiled code depends on (:func:`entry_key`): the
kernel's identity (for the instructor's kernel, the solution's text and the student's
constants; for the timing's kernels, the bytes of :mod:`autograder.timing.measure`), its argument types,
its target options (``lineinfo``), the GPU's compute capability, the Python and the versions of
numpy, numba, numba-cuda and llvmlite. A kernel whose identity, types or options differ misses
and is compiled in the child, as without a cache. Anything that goes wrong reading an entry (a
missing, truncated or foreign file, an internal API of numba-cuda that changed) is a miss too:
the cache can make a grading faster, never different.

The entry is numba-cuda's own form for its disk cache (``_Kernel._reduce_states``: the PTX and
the cubin for the compute capability), loaded with ``_Kernel._rebuild`` and added to the
dispatcher with ``add_overload``, as numba-cuda's ``cache=True`` does. Numba's own file cache
does not serve here: its key ignores module globals such as ``TILE_WIDTH``, which the timing
sets to the student's value.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import pickle
import sys
import threading
from pathlib import Path
from autograder import settings

#: The cache folder, in a GPU child's environment (read-only there) and the warm-up's.
CACHE_ENV = settings.KERNEL_CACHE
#: Set (to ``1``) only in the trusted warm-up process: compiled kernels are saved.
WRITE_ENV = settings.KERNEL_CACHE_WRITE
SUFFIX = ".kernel"
FORMAT = 1

#: What each :func:`compile_for` call did in this process, in order: ``"loaded"``,
#: ``"compiled"`` (and saved, in the warm-up) or ``"compiled, not cached"`` (no folder).
events: list[tuple[str, str]] = []


def host_folder(solution_text: str) -> Path | None:
    """In the grader: the folder of the compiled kernels for the timing of the exercise whose
    instructor solution is ``solution_text`` (one folder per solution, so a child sees only its
    own exercise's): ``kernels/<digest>`` in kernelgrade's cache folder
    (:func:`autograder.host.cache_folder.cache_dir`); None when the cache is turned off."""
    from autograder.host.cache_folder import cache_dir

    root = cache_dir()
    if root is None:
        return None
    return root / "kernels" / hashlib.sha256(solution_text.encode("utf-8")).hexdigest()[:24]


def folder() -> Path | None:
    """The cache folder named in :data:`CACHE_ENV`, or None (no cache in this process)."""
    value = os.environ.get(CACHE_ENV, "").strip()
    return Path(value) if value else None


def writing() -> bool:
    """True in the trusted warm-up process (:data:`WRITE_ENV`), which saves what it compiles."""
    return os.environ.get(WRITE_ENV) == "1" and folder() is not None


@functools.cache
def module_identity(path: str | os.PathLike, name: str) -> str:
    """The identity of a kernel defined in the grader's module at ``path``: its bytes and the
    kernel's ``name`` (a change to the module changes every key)."""
    return f"module:{hashlib.sha256(Path(path).read_bytes()).hexdigest()}:{name}"


def solution_identity(text: str, kernel: str, consts: dict) -> str:
    """The identity of the instructor's kernel ``kernel`` in the solution ``text`` run with the
    student's constants ``consts`` (:func:`autograder.child.timing.import_solution`)."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"solution:{digest}:{kernel}:{json.dumps(consts, sort_keys=True, default=repr)}"


def entry_key(identity: str, argtypes: tuple, targetoptions: dict, cc: tuple) -> str:
    """The entry's name (hex SHA-256) for a kernel of ``identity`` compiled for ``argtypes``
    (Numba types) with ``targetoptions`` on a GPU of compute capability ``cc``."""
    parts = [FORMAT, identity, [str(t) for t in argtypes],
             sorted((k, repr(v)) for k, v in targetoptions.items()), list(cc), _versions(),
             sys.version]
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()


@functools.cache
def _versions() -> dict:
    import importlib

    return {name: getattr(importlib.import_module(name), "__version__", None)
            for name in ("numpy", "numba", "numba_cuda", "llvmlite")}


def _argtypes(args) -> tuple:
    from numba import typeof

    return tuple(typeof(a) for a in args)


def _cc() -> tuple:
    from numba import cuda

    return tuple(cuda.get_current_device().compute_capability)


def load(kernel, argtypes: tuple, key: str) -> bool:
    """Add the entry ``key`` to ``kernel`` (a Numba CUDA dispatcher) as its overload for
    ``argtypes``; False (nothing changed) when there is no usable entry."""
    root = folder()
    if root is None:
        return False
    try:
        data = (root / f"{key}{SUFFIX}").read_bytes()
    except OSError:
        return False
    try:
        from numba.cuda.dispatcher import _Kernel

        states = pickle.loads(data)
        compiled = _Kernel._rebuild(**states)
        kernel.add_overload(compiled, argtypes)
    except Exception:  # noqa: BLE001 - a foreign, truncated or older entry: compile instead
        return False
    return True


def save(compiled, key: str) -> bool:
    """Write ``compiled`` (numba-cuda's compiled kernel, bound to this GPU) as the entry
    ``key``, atomically; False when it cannot be written or serialized."""
    root = folder()
    if root is None:
        return False
    from numba.cuda.serialize import dumps

    tmp = root / f".{key}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        data = dumps(compiled._reduce_states())
        root.mkdir(parents=True, exist_ok=True, mode=0o755)
        tmp.write_bytes(data)
        os.replace(tmp, root / f"{key}{SUFFIX}")
    except Exception:  # noqa: BLE001 - a kernel that cannot be kept is compiled by each child
        try:
            tmp.unlink()
        except OSError:
            pass
        return False
    return True


def compile_for(kernel, args, identity: str | None) -> str:
    """Have ``kernel`` (a Numba CUDA dispatcher) compiled for ``args`` (its launch's arguments)
    before its first launch: from the cache when ``identity`` (see :func:`module_identity`,
    :func:`solution_identity`) has an entry for these argument types, options and GPU, else
    compiled here (and saved, in the warm-up). Returns what it did: ``"loaded"``,
    ``"compiled"`` (and saved) or ``"compiled, not cached"``, also kept in :data:`events` with
    ``identity`` when there is one. Raises what Numba's ``compile`` raises."""
    argtypes = _argtypes(args)
    if identity is None or folder() is None:
        kernel.compile(argtypes)
        return "compiled, not cached"
    key = entry_key(identity, argtypes, dict(getattr(kernel, "targetoptions", {})), _cc())
    if load(kernel, argtypes, key):
        outcome = "loaded"
    else:
        compiled = kernel.compile(argtypes)
        outcome = "compiled" if writing() and save(compiled, key) else "compiled, not cached"
    events.append((identity, outcome))
    return outcome
