"""Kernels the grader trusts, compiled once per host and kept on disk as cubin bytes: the
instructor's kernel at the timing's argument types and the timing's own kernels (the L2 flush,
the input fill, the launch checks). Compiling them cost each grading 0.4-0.55 s of its serial
chain on an H200 (2026-11-23, ``benchmarks/results/2026-11-23_H200_session4.md``); a load is
the CUDA driver loading a cubin.

**Nothing in the cache is Python.** An entry (:func:`pack`) is one line of magic, one line of
JSON (the entry's key, the SHA-256 of its key and cubin, the kernel's entry-point name, whether
it is a cooperative kernel) and the cubin the CUDA driver loads: no pickle, no marshal, nothing
Python runs. The kernel's Numba side (its signature, the dispatcher it is added to) is rebuilt by
the reader from its own arguments (:func:`load`). A file that does not verify (:func:`unpack`:
wrong magic, a key that is not its name, a digest that does not match, anything but an ELF
cubin) is never loaded: the grader ignores it and tells the instructor
(:func:`read_folder`).

Who writes, who reads:

* **Only a trusted process writes**: :mod:`autograder.grading.reference_warmup`, which the
  preflight runs on a GPU (no student code in it), with :data:`WRITE_ENV` set. An entry is
  written to a temporary name and renamed, so a reader sees a whole entry or none; the warm-up
  also removes every file of its folder that is not a verified entry.
* **The grader reads**: for each timed GPU child, :func:`read_folder` reads the exercise's
  folder, keeps the entries that verify and sends their bytes in the child's timing request
  (:attr:`autograder.wire.protocol.TimingRequest.kernels`); the child (:func:`provide`) verifies
  each again before the driver loads it. **No child sees the folder**: bubblewrap does not show
  it (it binds no cache folder), and a plain child (no bubblewrap) runs under a Landlock rule
  that lets it write only its own scratch folder and ``/dev``
  (:mod:`autograder.sandbox.landlock`), so it cannot write where the grader reads. Where
  Landlock is unavailable, a plain child could write there (as it could write any file of the
  grader's user): that is why a class is graded plain only when asked for explicitly
  (:mod:`autograder.sandbox.mode`), and such a process neither reads nor fills the cache
  (:func:`autograder.sandbox.run.kernel_entries`).

An entry's name is a SHA-256 over what the compiled code depends on (:func:`entry_key`): the
kernel's identity (for the instructor's kernel, the solution's text and its constants; for the
timing's kernels, the bytes of their module), its argument types, its target options
(``lineinfo``), the GPU's compute capability, the Python and the versions of numpy, numba,
numba-cuda and llvmlite. A kernel whose identity, types or options differ misses and is compiled
in the child, as without a cache; so is one whose entry cannot be loaded (an internal API of
numba-cuda that changed): the cache can make a grading faster, never different. Numba's own
file cache does not serve here: it pickles, and its key ignores module globals such as
``TILE_WIDTH``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from autograder import settings

#: The cache folder, in the warm-up's environment (it writes there).
CACHE_ENV = settings.KERNEL_CACHE
#: Set (to ``1``) only in the trusted warm-up process: compiled kernels are saved.
WRITE_ENV = settings.KERNEL_CACHE_WRITE
SUFFIX = ".cubin"
FORMAT = 2
MAGIC = b"kernelgrade-cubin 2\n"
#: The largest entry read (a timing kernel's cubin is 10-60 KB).
MAX_ENTRY_BYTES = 8 << 20
_KEY = re.compile(r"[0-9a-f]{64}")
_ENTRY_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$.]{0,1023}")

#: What each :func:`compile_for` call did in this process, in order: ``"loaded"``,
#: ``"compiled"`` (and saved, in the warm-up), ``"kept"`` (the warm-up found it saved) or
#: ``"compiled, not cached"``.
events: list[tuple[str, str]] = []
#: The entries the grader sent this child (key → entry bytes): :func:`provide`.
_provided: dict[str, bytes] = {}


class BadEntry(ValueError):
    """A file or bytes that are not a verified entry (the message says why)."""


@dataclass(frozen=True)
class Entry:
    """A verified entry: its ``key`` (hex SHA-256, :func:`entry_key`), the kernel's entry-point
    ``name`` in the cubin, ``cooperative`` (a grid-synchronising kernel) and the ``cubin`` (an
    ELF image for the CUDA driver)."""

    key: str
    name: str
    cooperative: bool
    cubin: bytes


def digest(key: str, cubin: bytes) -> str:
    """The hex SHA-256 of an entry's ``key`` and ``cubin`` (what its header must carry)."""
    return hashlib.sha256(key.encode("ascii") + b"\0" + cubin).hexdigest()


def pack(key: str, name: str, cubin: bytes, cooperative: bool = False) -> bytes:
    """The bytes of the entry ``key`` for the kernel ``name`` (its entry point) compiled to
    ``cubin``. Raises :class:`BadEntry` for a key, name or cubin :func:`unpack` would refuse."""
    header = {"format": FORMAT, "key": key, "sha256": digest(key, cubin), "name": name,
              "cooperative": bool(cooperative)}
    data = MAGIC + json.dumps(header, sort_keys=True).encode("ascii") + b"\n" + bytes(cubin)
    unpack(data, key)  # what is written is what a reader accepts
    return data


def unpack(data: bytes, key: str) -> Entry:
    """The entry in ``data``, verified to be the entry ``key``: the magic line, a JSON header
    whose key is ``key`` and whose digest is :func:`digest` of the key and the cubin that
    follows, an entry-point name, and a cubin that is an ELF image. Raises :class:`BadEntry`
    saying what does not verify. Reads nothing but ``data``; runs nothing."""
    if not isinstance(data, (bytes, bytearray)) or len(data) > MAX_ENTRY_BYTES:
        raise BadEntry("not an entry (too large, or not bytes)")
    if not data.startswith(MAGIC):
        raise BadEntry("not a kernelgrade cubin entry (a file of another format, such as an "
                       "older version's pickle)")
    end = data.find(b"\n", len(MAGIC))
    if end < 0:
        raise BadEntry("its header is cut off")
    try:
        header = json.loads(data[len(MAGIC):end].decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise BadEntry("its header is not JSON") from None
    cubin = bytes(data[end + 1:])
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise BadEntry("its header is not of this format")
    if header.get("key") != key or not _KEY.fullmatch(key):
        raise BadEntry("its header names another key than its file name")
    if header.get("sha256") != digest(key, cubin):
        raise BadEntry("its digest does not match its content (changed or cut off)")
    name, cooperative = header.get("name"), header.get("cooperative")
    if not isinstance(name, str) or not _ENTRY_NAME.fullmatch(name):
        raise BadEntry("its kernel name is not an entry-point name")
    if type(cooperative) is not bool:
        raise BadEntry("its header is not of this format")
    if not cubin.startswith(b"\x7fELF"):
        raise BadEntry("its code is not a cubin (an ELF image)")
    return Entry(key, name, cooperative, cubin)


def host_folder(solution_text: str) -> Path | None:
    """In the grader: the folder of the compiled kernels for the timing of the exercise whose
    instructor solution is ``solution_text`` (one folder per solution): ``kernels/<digest>`` in
    kernelgrade's cache folder (:func:`autograder.host.cache_folder.cache_dir`); None when the
    cache is turned off."""
    from autograder.host.cache_folder import cache_dir

    root = cache_dir()
    if root is None:
        return None
    return root / "kernels" / hashlib.sha256(solution_text.encode("utf-8")).hexdigest()[:24]


def read_folder(folder: Path) -> tuple[dict[str, bytes], list[tuple[str, str]]]:
    """In the grader: the verified entries of ``folder`` (key → entry bytes, for a child's
    request) and ``(file name, why)`` for each file there that is not one (the grader tells
    the instructor; the warm-up removes them). A folder that does not exist has no entries; the
    warm-up's temporary files (``.<key>...tmp``) are not reported. Never raises."""
    entries: dict[str, bytes] = {}
    bad: list[tuple[str, str]] = []
    try:
        names = sorted(p.name for p in folder.iterdir())
    except OSError:
        return entries, bad
    for name in names:
        if name.startswith(".") and name.endswith(".tmp"):
            continue
        path = folder / name
        key = name[:-len(SUFFIX)] if name.endswith(SUFFIX) else ""
        try:
            if path.is_symlink() or not path.is_file():
                raise BadEntry("not a regular file")
            if not key:
                raise BadEntry("not an entry's name")
            with open(path, "rb") as f:
                data = f.read(MAX_ENTRY_BYTES + 1)
            unpack(data, key)
        except BadEntry as exc:
            bad.append((name, str(exc)))
            continue
        except OSError as exc:
            bad.append((name, f"cannot be read ({exc.strerror or exc})"))
            continue
        entries[key] = data
    return entries, bad


def folder() -> Path | None:
    """The cache folder named in :data:`CACHE_ENV` (the warm-up's), or None."""
    value = os.environ.get(CACHE_ENV, "").strip()
    return Path(value) if value else None


def writing() -> bool:
    """True in the trusted warm-up process (:data:`WRITE_ENV`), which saves what it compiles."""
    return os.environ.get(WRITE_ENV) == "1" and folder() is not None


def provide(entries: dict | None) -> None:
    """In a child: the entries the grader sent (:attr:`TimingRequest.kernels
    <autograder.wire.protocol.TimingRequest.kernels>`, key → entry bytes), which
    :func:`compile_for` loads from after verifying them again. Replaces what was provided."""
    _provided.clear()
    for key, data in (entries or {}).items():
        if isinstance(key, str) and isinstance(data, (bytes, bytearray)):
            _provided[key] = bytes(data)


@functools.cache
def module_identity(path: str | os.PathLike, name: str) -> str:
    """The identity of a kernel defined in the grader's module at ``path``: its bytes and the
    kernel's ``name`` (a change to the module changes every key)."""
    return f"module:{hashlib.sha256(Path(path).read_bytes()).hexdigest()}:{name}"


def solution_identity(text: str, kernel: str, consts: dict) -> str:
    """The identity of the instructor's kernel ``kernel`` in the solution ``text`` run with the
    constants ``consts`` (:func:`autograder.child.timing.import_solution`)."""
    digest_ = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"solution:{digest_}:{kernel}:{json.dumps(consts, sort_keys=True, default=repr)}"


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


def _cacheable(kernel) -> bool:
    """Only a plain kernel is kept: no debug build (its exception reporting needs Numba's
    call helper), no launch-configuration specialisation."""
    options = getattr(kernel, "targetoptions", {})
    return not options.get("debug") and not getattr(kernel, "_launch_config_sensitive", False)


def load(kernel, argtypes: tuple, entry: Entry) -> None:
    """Add ``entry`` (verified) to ``kernel`` (a Numba CUDA dispatcher) as its overload for
    ``argtypes``: a kernel object built from the cubin alone (numba-cuda's own code library,
    given the cubin for this GPU; the signature and options from the dispatcher). Raises
    whatever numba-cuda raises for it (the caller compiles instead)."""
    from numba.core import types
    from numba.cuda.codegen import CUDACodeLibrary
    from numba.cuda.dispatcher import _Kernel

    options = getattr(kernel, "targetoptions", {})
    library = CUDACodeLibrary(None, entry.name, entry_name=entry.name)
    library._cubin_cache = {library._ensure_cc(None): _object_code(entry.cubin, entry.name)}
    library.use_cooperative = entry.cooperative
    library._finalized = True
    compiled = _Kernel._rebuild(
        cooperative=entry.cooperative, name=entry.name, signature=types.void(*argtypes),
        codelibrary=library, debug=False, lineinfo=bool(options.get("lineinfo")),
        call_helper=None, extensions=[])
    compiled.bind()  # the driver loads the cubin now (a bad one fails here, not at launch)
    kernel.add_overload(compiled, argtypes)


def cubin_of(compiled) -> tuple[str, bytes, bool]:
    """``(entry-point name, cubin, cooperative)`` of ``compiled`` (numba-cuda's compiled
    kernel, on this GPU). Raises ``ValueError`` for a kernel the cubin alone cannot rebuild (a
    module with setup functions, such as NRT's)."""
    library = compiled._codelibrary
    if getattr(library, "_setup_functions", None):
        raise ValueError("its module has setup functions")
    return compiled.entry_name, _cubin_bytes(library.get_cubin()), bool(compiled.cooperative)


def _cubin_bytes(cubin) -> bytes:
    """The bytes of what numba-cuda's ``get_cubin`` returns: ``bytes`` in older releases, a
    ``cuda.core`` ``ObjectCode`` (its ``code``) since numba-cuda 0.2x. Raises ``ValueError`` for
    anything else (not a cubin in memory)."""
    code = getattr(cubin, "code", cubin)
    if isinstance(code, (bytes, bytearray, memoryview)):
        return bytes(code)
    raise ValueError(f"the compiled kernel's cubin is a {type(code).__name__}, not bytes")


def _object_code(cubin: bytes, name: str):
    """``cubin`` as numba-cuda's code library keeps it: a ``cuda.core`` ``ObjectCode`` where
    numba-cuda's driver uses them (it loads a module from the object's handle), else bytes."""
    try:
        from cuda.core import ObjectCode
    except ImportError:  # an older numba-cuda, which loads bytes
        return cubin
    return ObjectCode.from_cubin(cubin, name=name)


def save(compiled, key: str) -> bool:
    """Write ``compiled`` (numba-cuda's compiled kernel, bound to this GPU) as the entry
    ``key`` (:func:`pack`), atomically; False when it cannot be written or rebuilt from its
    cubin."""
    root = folder()
    if root is None:
        return False
    tmp = root / f".{key}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        data = pack(key, *cubin_of(compiled))
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


def _saved(key: str) -> Entry:
    """In the warm-up: the entry ``key`` of its folder, verified. Raises :class:`BadEntry` or
    ``OSError`` when there is none that verifies."""
    with open(folder() / f"{key}{SUFFIX}", "rb") as f:
        return unpack(f.read(MAX_ENTRY_BYTES + 1), key)


def compile_for(kernel, args, identity: str | None) -> str:
    """Have ``kernel`` (a Numba CUDA dispatcher) compiled for ``args`` (its launch's arguments)
    before its first launch. In a child, from the entries the grader sent (:func:`provide`)
    when ``identity`` (see :func:`module_identity`, :func:`solution_identity`) has one for these
    argument types, options and GPU that verifies, else compiled here; in the warm-up, compiled
    and saved unless its folder has it already. Returns what it did: ``"loaded"``,
    ``"compiled"`` (and saved), ``"kept"`` (the warm-up found it saved) or ``"compiled, not
    cached"``, also kept in :data:`events` with ``identity`` when there is one. Raises what
    Numba's ``compile`` raises."""
    argtypes = _argtypes(args)
    if identity is None or not _cacheable(kernel) or not (_provided or writing()):
        kernel.compile(argtypes)
        return "compiled, not cached"
    key = entry_key(identity, argtypes, dict(getattr(kernel, "targetoptions", {})), _cc())
    if writing():
        try:  # loaded as a child would: an entry the driver refuses is compiled and replaced
            load(kernel, argtypes, _saved(key))
            outcome = "kept"
        except Exception:  # noqa: BLE001 - none yet, foreign, or refused: compile and save
            compiled = kernel.compile(argtypes)
            outcome = "compiled" if save(compiled, key) else "compiled, not cached"
    else:
        outcome = "compiled, not cached"
        try:
            load(kernel, argtypes, unpack(_provided[key], key))
            outcome = "loaded"
        except Exception:  # noqa: BLE001 - a missing or foreign entry, a changed numba-cuda
            kernel.compile(argtypes)
    events.append((identity, outcome))
    return outcome
