"""The host's cache of compiled kernels (autograder.host.kernel_cache): cubin bytes that verify or
nothing, what its keys tell apart, who may write it, that no child can, that a planted file is
never run, and that no failure of it changes a grading (a miss compiles). Loading a real
compiled kernel needs a GPU: tests/test_kernel_cache_gpu.py (marked gpu) loads the instructor's
kernel from an entry and launches it; a timed child on a GPU reports it
(``details.timing.instructor_cached``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.host import kernel_cache
from autograder.grading import preflight
from autograder.wire import protocol
from autograder.grading import reference_warmup
from autograder.sandbox import mode as sandbox_mode
from autograder.sandbox import run as sandbox_run
from autograder.sandbox.limits import Limits
from autograder.exercises import get, solution_path


class FakeLibrary:
    def __init__(self, cubin: bytes):
        self.cubin = cubin

    def get_cubin(self) -> bytes:
        return self.cubin


class FakeCompiled:
    """What numba-cuda's compile returns, as far as the cache touches it."""

    def __init__(self, name: str, cubin: bytes = b"\x7fELF fake cubin"):
        self.entry_name, self.cooperative = name, False
        self._codelibrary = FakeLibrary(cubin)


class FakeKernel:
    """A dispatcher: counts compiles."""

    def __init__(self, lineinfo: bool = True):
        self.targetoptions = {"lineinfo": lineinfo}
        self.compiles: list = []

    def compile(self, argtypes):
        self.compiles.append(argtypes)
        return FakeCompiled("_ZN6cudapy4fill")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "kernels"
    folder.mkdir()
    monkeypatch.setenv(kernel_cache.CACHE_ENV, str(folder))
    monkeypatch.delenv(kernel_cache.WRITE_ENV, raising=False)
    monkeypatch.setattr(kernel_cache, "_argtypes",
                        lambda args: tuple(type(a).__name__ for a in args))
    monkeypatch.setattr(kernel_cache, "_cc", lambda: (9, 0))
    monkeypatch.setattr(kernel_cache, "events", [])
    monkeypatch.setattr(kernel_cache, "_provided", {})
    return folder


@pytest.fixture
def loaded(monkeypatch) -> list:
    """What :func:`kernel_cache.load` was given (the driver's part needs a GPU)."""
    found: list = []
    monkeypatch.setattr(kernel_cache, "load",
                        lambda kernel, argtypes, entry: found.append((argtypes, entry)))
    return found


def test_keys_tell_apart_what_the_compiled_code_depends_on():
    key = kernel_cache.entry_key
    base = key("id", ("float32[:, ::1]",), {"lineinfo": True}, (9, 0))
    assert base == key("id", ("float32[:, ::1]",), {"lineinfo": True}, (9, 0))
    assert len({base,
                key("other", ("float32[:, ::1]",), {"lineinfo": True}, (9, 0)),
                key("id", ("float64[:, ::1]",), {"lineinfo": True}, (9, 0)),
                key("id", ("float32[:, ::1]",), {"lineinfo": False}, (9, 0)),
                key("id", ("float32[:, ::1]",), {"lineinfo": True}, (8, 0))}) == 5


def test_the_instructors_kernel_at_other_constants_is_another_entry():
    """Numba's own file cache ignores module globals such as TILE_WIDTH; this one does not."""
    text = solution_path(get("tiled_matmul")).read_text()
    same = kernel_cache.solution_identity(text, "tiled_matmul", {"TILE_WIDTH": 16})
    assert same == kernel_cache.solution_identity(text, "tiled_matmul", {"TILE_WIDTH": 16})
    assert same != kernel_cache.solution_identity(text, "tiled_matmul", {"TILE_WIDTH": 32})
    assert same != kernel_cache.solution_identity(text + "\n", "tiled_matmul",
                                                  {"TILE_WIDTH": 16})


KEY = "ab" * 32
CUBIN = b"\x7fELF" + bytes(range(200))


def test_an_entry_is_cubin_bytes_and_verifies_only_as_written():
    data = kernel_cache.pack(KEY, "_ZN6cudapy8__main__4fill", CUBIN)
    entry = kernel_cache.unpack(data, KEY)
    assert (entry.cubin, entry.name, entry.cooperative) == (CUBIN, "_ZN6cudapy8__main__4fill",
                                                            False)
    header = data[len(kernel_cache.MAGIC):data.index(b"\n", len(kernel_cache.MAGIC))]
    changed_code = data[:-1] + bytes([data[-1] ^ 1])
    other_key = kernel_cache.pack("cd" * 32, "_ZN6cudapy8__main__4fill", CUBIN)
    forged = (kernel_cache.MAGIC + header.replace(b"_ZN6cudapy8__main__4fill", b"x; import os")
              + b"\n" + CUBIN)
    for bad, why in ((changed_code, "digest"), (data[:-10], "digest"), (other_key, "another key"),
                     (b"garbage", "not a kernelgrade"), (forged, "not an entry-point name"),
                     (data.replace(b"\x7fELF", b"\x7fPY!"), "digest")):
        with pytest.raises(kernel_cache.BadEntry, match=why):
            kernel_cache.unpack(bad, KEY)
    with pytest.raises(kernel_cache.BadEntry, match="not a cubin"):
        kernel_cache.pack(KEY, "k", b"import os")  # what is written is what verifies


class Planted:
    """A pickle that, loaded, creates ``marker``: what a child would plant in the cache."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_planted_pickle_is_never_loaded_by_the_grader_the_child_or_the_warm_up(
        cache, loaded, tmp_path, monkeypatch):
    """Issue 30: a plain child overwrote an entry with a pickle; the next warm-up and the next
    timed child unpickled it and ran its code. Planted under every name an entry can have, it
    is reported and never run."""
    import pickle

    marker = tmp_path / "ran"
    payload = pickle.dumps(Planted(marker))
    kernel = FakeKernel()
    key = kernel_cache.entry_key("solution:x", ("float", "int"), kernel.targetoptions, (9, 0))
    for name in (f"{key}.kernel", f"{key}{kernel_cache.SUFFIX}", "index.pkl"):
        (cache / name).write_bytes(payload)

    entries, bad = kernel_cache.read_folder(cache)  # the grader, for a child's request
    assert entries == {} and sorted(n for n, _ in bad) == sorted(p.name for p in cache.iterdir())
    kernel_cache.provide({key: payload})  # a child sent it anyway
    kernel_cache.compile_for(kernel, [1.0, 2], "solution:x")
    assert kernel.compiles == [("float", "int")] and loaded == []
    monkeypatch.setenv(kernel_cache.WRITE_ENV, "1")  # the warm-up: compiles and replaces it
    kernel_cache.compile_for(FakeKernel(), [1.0, 2], "solution:x")
    assert not marker.exists()
    assert kernel_cache.unpack((cache / f"{key}{kernel_cache.SUFFIX}").read_bytes(), key)
    assert reference_warmup.remove_foreign(cache) == sorted([f"{key}.kernel", "index.pkl"])
    assert [p.name for p in cache.iterdir()] == [f"{key}{kernel_cache.SUFFIX}"]
    assert not marker.exists()


def test_the_warm_up_saves_and_a_child_loads_only_what_the_grader_sent(cache, loaded,
                                                                        monkeypatch):
    monkeypatch.setenv(kernel_cache.WRITE_ENV, "1")
    warm = FakeKernel()
    assert kernel_cache.compile_for(warm, [1.0, 2], "solution:x") == "compiled"
    saved = list(cache.glob(f"*{kernel_cache.SUFFIX}"))
    assert len(saved) == 1 and warm.compiles == [("float", "int")]
    assert kernel_cache.compile_for(FakeKernel(), [1.0, 2], "solution:x") == "kept"

    monkeypatch.delenv(kernel_cache.WRITE_ENV)
    monkeypatch.delenv(kernel_cache.CACHE_ENV)  # a child has no folder: it gets bytes
    child = FakeKernel()
    assert kernel_cache.compile_for(child, [1.0, 2], "solution:x") == "compiled, not cached"
    kernel_cache.provide(kernel_cache.read_folder(cache)[0])
    before = len(loaded)
    assert kernel_cache.compile_for(child, [1.0, 2], "solution:x") == "loaded"
    assert child.compiles == [("float", "int")]  # the first call's, none since
    assert loaded[before][1].cubin == b"\x7fELF fake cubin"
    assert kernel_cache.events[-1] == ("solution:x", "loaded")
    assert kernel_cache.compile_for(child, [1], "solution:x") == "compiled, not cached"  # a miss


def test_without_identity_the_kernel_is_compiled(cache):
    k = FakeKernel()
    kernel_cache.provide({KEY: kernel_cache.pack(KEY, "k", CUBIN)})
    kernel_cache.compile_for(k, [1], None)
    assert k.compiles == [("int",)] and kernel_cache.events == []


def _timed_request(text: str = "KERNEL = 1\n") -> dict:
    return {"timing": {"solution_source": text}}


def test_only_a_timed_gpu_child_that_cannot_write_the_folder_gets_its_entries(
        tmp_path, monkeypatch):
    monkeypatch.setenv(preflight.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(sandbox_run, "_unrestricted_child", False)
    folder = kernel_cache.host_folder("KERNEL = 1\n")
    assert folder.parent == tmp_path / "kernels"
    assert sandbox_run.kernel_entries(_timed_request(), "gpu", True) == ({}, [])  # none yet
    folder.mkdir(parents=True)
    (folder / f"{KEY}{kernel_cache.SUFFIX}").write_bytes(kernel_cache.pack(KEY, "k", CUBIN))
    (folder / "stray").write_bytes(b"x")
    entries, bad = sandbox_run.kernel_entries(_timed_request(), "gpu", True)
    assert list(entries) == [KEY] and [n for n, _ in bad] == ["stray"]
    assert sandbox_run.kernel_entries(_timed_request(), "sim", True) == ({}, [])
    assert sandbox_run.kernel_entries({"timing": None}, "gpu", True) == ({}, [])  # a sanitizer run
    monkeypatch.setattr(sandbox_run, "_landlock", [0])  # plain, no Landlock: it could write there
    assert sandbox_run.kernel_entries(_timed_request(), "gpu", False) == ({}, [])
    monkeypatch.setattr(sandbox_run, "_landlock", [1])
    assert list(sandbox_run.kernel_entries(_timed_request(), "gpu", False)[0]) == [KEY]
    monkeypatch.setattr(sandbox_run, "_unrestricted_child", True)  # this process ran one
    assert sandbox_run.kernel_entries(_timed_request(), "gpu", True) == ({}, [])
    # one folder per solution: a child gets its own exercise's kernels only
    assert kernel_cache.host_folder("OTHER = 2\n") != folder
    monkeypatch.setenv(preflight.CACHE_SWITCH_ENV, "off")
    assert kernel_cache.host_folder("KERNEL = 1\n") is None


PROBE = ("import os, sys\n"
         "d = sys.argv[1]\n"
         "for act in (lambda: open(os.path.join(d, 'x.cubin'), 'wb'),\n"
         "            lambda: open(os.path.join(d, 'entry.cubin'), 'r+b'),\n"
         "            lambda: os.remove(os.path.join(d, 'entry.cubin'))):\n"
         "    try:\n        act(); print('written')\n"
         "    except OSError as exc:\n        print('refused', exc.errno)\n")


@pytest.mark.parametrize("sandboxed", [True, False], ids=["bubblewrap", "plain"])
def test_no_child_can_write_the_cache_folder(sandboxed, tmp_path, monkeypatch):
    """A bubblewrap child is not shown the folder at all; a plain child runs under Landlock
    and may write only its own scratch folder."""
    import errno

    monkeypatch.setenv(preflight.CACHE_ENV, str(tmp_path / "cache"))
    if sandboxed and not sandbox_mode.sandbox_status().available:
        pytest.skip(f"needs bubblewrap: {sandbox_mode.sandbox_status().reason}")
    if not sandboxed and sandbox_run._landlock_abi() == 0:
        pytest.skip("needs Landlock (Linux 5.13+)")
    monkeypatch.setenv("KERNELGRADE_SANDBOX", "require" if sandboxed else "off")
    folder = kernel_cache.host_folder("KERNEL = 1\n")
    folder.mkdir(parents=True)
    (folder / "entry.cubin").write_bytes(b"compiled")
    work = tmp_path / "work"
    work.mkdir()
    (work / "probe.py").write_text(PROBE)
    run = sandbox_run.run_child({}, "sim", Limits(), work,
                                program=[sys.executable, "-S", str(work / "probe.py"),
                                         str(folder)])
    said = [line for line in run.output.splitlines() if line.startswith(("refused", "written"))]
    want = errno.ENOENT if sandboxed else errno.EACCES
    assert said == [f"refused {want}"] * 3, (run.sandbox, run.notes, run.output)
    assert sorted(p.name for p in folder.iterdir()) == ["entry.cubin"]
    assert (folder / "entry.cubin").read_bytes() == b"compiled"


def test_the_preflight_warms_up_on_a_gpu_only(monkeypatch):
    warmed = []
    monkeypatch.setattr(reference_warmup, "warm", lambda exercise: warmed.append(exercise.name))
    with preflight._warming_up("tiled_matmul", "sim"):
        pass
    assert warmed == []
    with preflight._warming_up("tiled_matmul", "gpu"):
        pass
    assert warmed == ["tiled_matmul"]


def test_a_warm_up_that_cannot_run_gives_a_reason_and_raises_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(preflight.CACHE_ENV, str(tmp_path))
    assert reference_warmup.warm(get("occupancy")) is None  # no timing test: nothing to do
    monkeypatch.setattr(reference_warmup, "WARMUP_TIMEOUT_S", 120.0)
    env_python = tmp_path / "python"
    env_python.write_text("#!/bin/sh\necho 'CudaSupportError: no CUDA driver' >&2\nexit 1\n")
    env_python.chmod(0o755)
    monkeypatch.setattr(reference_warmup.sys, "executable", str(env_python))
    why = reference_warmup.warm(get("tiled_matmul"))
    assert why == "CudaSupportError: no CUDA driver"
    folder = kernel_cache.host_folder(solution_path(get("tiled_matmul")).read_text())
    assert folder.is_dir() and not list(folder.iterdir())
    monkeypatch.setenv(preflight.CACHE_SWITCH_ENV, "off")
    assert "turned off" in reference_warmup.warm(get("tiled_matmul"))


def test_the_timing_record_says_where_the_instructors_kernel_came_from():
    rec = protocol.TimingSamples([1.0], [1.0], [1.0], [1.0], 3, 0.1, instructor_cached=True)
    back = protocol.TimingSamples.from_header(rec.to_header())
    assert back.instructor_cached is True
    old = {k: v for k, v in rec.to_header().items() if k != "instructor_cached"}
    assert protocol.TimingSamples.from_header(old).instructor_cached is None
    with pytest.raises(protocol.ProtocolError):
        protocol.TimingSamples.from_header({**rec.to_header(), "instructor_cached": "yes"})


def test_the_early_driver_start_is_harmless_without_a_driver(tmp_path):
    """A GPU child starts the CUDA driver in a thread while it imports Numba; where there is no
    driver (this CI machine, or a broken setup) that thread ends quietly and Numba's own import
    and error reporting are what they were."""
    from autograder.child import device as child_device

    probe = tmp_path / "probe.py"
    probe.write_text(
        "from autograder.child.device import start_driver_early\n"
        "thread = start_driver_early()\n"
        "thread.join(30)\n"
        "print('alive' if thread.is_alive() else 'ended')\n")
    out = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True,
                         timeout=60, cwd=str(Path(child_device.__file__).parents[1]))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ended" and out.stderr == ""


def test_the_warm_up_removes_folders_no_warm_up_used_for_a_month(tmp_path, monkeypatch):
    """One folder per instructor solution: an edited solution's old folder goes once no warm-up
    has used it for CACHE_MAX_AGE_S; the folder in use is touched by each warm-up, so it stays."""
    import time

    from autograder.host.cache_folder import CACHE_MAX_AGE_S

    monkeypatch.setenv(preflight.CACHE_ENV, str(tmp_path))
    ours = kernel_cache.host_folder(solution_path(get("tiled_matmul")).read_text())
    stale, recent = ours.parent / "stale", ours.parent / "recent"
    for folder in (ours, stale, recent):
        folder.mkdir(parents=True)
        (folder / f"{KEY}{kernel_cache.SUFFIX}").write_bytes(kernel_cache.pack(KEY, "k", CUBIN))
    month_ago = time.time() - CACHE_MAX_AGE_S - 3600
    for folder in (ours, stale):
        os.utime(folder, (month_ago, month_ago))
    failing = tmp_path / "python"
    failing.write_text("#!/bin/sh\nexit 1\n")
    failing.chmod(0o755)
    monkeypatch.setattr(reference_warmup.sys, "executable", str(failing))
    reference_warmup.warm(get("tiled_matmul"))  # fails to compile; prunes all the same
    assert sorted(p.name for p in ours.parent.iterdir()) == sorted([ours.name, "recent"])
    assert (ours / f"{KEY}{kernel_cache.SUFFIX}").exists()
