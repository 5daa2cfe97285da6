"""What the simulator runs is what a GPU compiles (issue 20): the loader refuses a skipped
statement that binds a name the kept code reads, and kernels that read what differs between the
simulator and a GPU; the grader voids simulator passes when the simulator child and the
GPU-compile child built different definitions. The hostile submissions themselves are in
``tests/adversarial/files/sim_only_branch_*.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")  # in-process numba, as tests/instrument does

import pytest  # noqa: E402

from autograder.judge import collect as judge  # noqa: E402
from autograder.source.definitions import NotGradable, run_definitions  # noqa: E402
from autograder.wire.protocol import Imported  # noqa: E402
from autograder.wire.results import Kind, Status, TestResult  # noqa: E402
from autograder.source.submission import Source  # noqa: E402
from conftest import run_file_on_the_simulator, simulator_in_process  # noqa: E402


@pytest.fixture(autouse=True)
def _simulator_numba(request):
    simulator_in_process(request)


def test_in_a_fresh_interpreter():
    """The loader's checks read what Numba is in this process (the simulator's ``cuda``): where
    a parallel run imported it for a GPU target first, the file runs again here."""
    run_file_on_the_simulator(__file__, minimum=20)

ROOT = Path(__file__).resolve().parents[1]
PATH = "/nonexistent/submission.py"
HEAD = "import math\nimport numba\nimport numpy as np\nfrom numba import cuda, float32\n"


def _run(src: str, live=()):
    ns = {"__name__": "submission"}
    skipped = run_definitions(HEAD + src, PATH, ns, live=live)
    return ns, skipped


def _kernel(body: str) -> str:
    return "@cuda.jit\ndef k(A, B):\n" + "".join(f"    {line}\n" for line in body.split("\n"))


@pytest.mark.parametrize("src, words", [
    ("ON_SIM = None\nON_SIM = cuda.compile_all\n" + _kernel("if ON_SIM is None:\n    B[0] = 1"),
     "binds ON_SIM and your kernel k reads it"),
    ("FLAG = 0\nFLAG = cuda.compile_all\nMODE = FLAG\n" + _kernel("if MODE == 0:\n    B[0] = 1"),
     "binds FLAG and line 7 reads it"),
    ("SIM = None\nSIM = cuda.compile_all\n@cuda.jit(device=True)\ndef on_sim():\n    return SIM\n"
     + _kernel("if on_sim() is None:\n    B[0] = 1"), "binds SIM and your device function on_sim"),
    ("for SCALE in (1, 2):\n    pass\n" + _kernel("B[0] = SCALE"), "binds SCALE"),
    ("TILE = 16\nif True:\n    TILE = 8\n    print(TILE)\n", "the exercise asks for it"),
    (_kernel("if numba.config.ENABLE_CUDASIM:\n    B[0] = 1"),
     "`numba.config.ENABLE_CUDASIM` is 1 here, not a function"),
    (_kernel("if cuda.compile_all is None:\n    B[0] = 1"),
     "`cuda.compile_all` is None here, not a function"),
    (_kernel("if isinstance(A, np.ndarray):\n    B[0] = 1"), "the built-in isinstance"),
    (_kernel("if hasattr(A, 'x'):\n    B[0] = 1"), "the built-in hasattr"),
    (_kernel("if type(A) is np.ndarray:\n    B[0] = 1"), "the built-in type"),
    (_kernel("B[0] = getattr(A, 'size', 0)"), "the built-in getattr"),
    (_kernel("try:\n    B[0] = 1\nexcept Exception:\n    B[0] = 2"), "`try` is not allowed"),
    (_kernel("global G\nG = 1"), "`global` is not allowed"),
    (_kernel("B[0] = A._ary[0]"), "attribute _ary is not available in a kernel"),
    (_kernel("c = numba.config\nB[0] = c.ENABLE_CUDASIM"), "the module `numba.config` is used"),
])
def test_the_loader_refuses_what_runs_otherwise_on_a_gpu(src, words):
    with pytest.raises(NotGradable) as info:
        _run(src, live=("TILE",))
    assert words in str(info.value), str(info.value)
    assert info.value.submission_lineno > 4


@pytest.mark.parametrize("src", [
    "n = 1024\nfor n in range(3):\n    pass\n" + _kernel("B[0] = A[0]"),
    "X = cuda.compile_all\nX = 1\n" + _kernel("B[0] = X"),
    "A = np.random.rand(4)\nTILE = 16\n" + _kernel("B[0] = TILE"),
    "WARP = 32\n" + _kernel(
        "s = cuda.shared.array(WARP, float32)\ni = cuda.threadIdx.x\n"
        "s[i] = math.sin(math.pi * A[i]) + np.float32(np.pi) + np.inf * 0\ncuda.syncthreads()\n"
        "for j in range(min(len(A), WARP)):\n    B[j] = abs(s[j]) + max(0, j)\n"
        "if i > 1000:\n    raise ValueError('too many')\nassert i >= 0"),
])
def test_the_loader_keeps_honest_code(src):
    ns, _ = _run(src)
    assert "k" in ns


def test_a_top_level_if_on_a_constant_runs_the_branch_taken():
    """``DEBUG = False`` / ``if DEBUG: BLOCK = 64`` / ``else: BLOCK = 256`` binds what Python
    binds (the loader skipped the ``if``: the kernel's BLOCK was not run, 0 points, red team
    g13). A test that is not a constant (a setting read off Numba, which the simulator and a GPU
    answer differently) or a branch holding more than assignments is still skipped."""
    ns, skipped = _run("DEBUG = False\nif DEBUG:\n    TILE = 64\nelif DEBUG is None:\n"
                       "    TILE = 1\nelse:\n    TILE = 256\n    TILE += 0\n"
                       + _kernel("B[0] = TILE"))
    assert not skipped and ns["TILE"] == 256
    with pytest.raises(NotGradable, match="binds TILE and your kernel k reads it"):
        _run("if numba.config.ENABLE_CUDASIM:\n    TILE = 8\nelse:\n    TILE = 16\n"
             + _kernel("B[0] = TILE"))
    ns, skipped = _run("if True:\n    def f():\n        return 1\n")
    assert "f" not in ns and "holds a def" in skipped[0].reason


def test_a_function_written_as_a_lambda_is_run_as_its_def():
    """``warps = lambda n, w=32: -(-n // w)`` at the top level is a function to Python; the
    loader skipped it ("Lambda expressions are not run") and every function reading it scored
    0 (red team g12). It runs as its ``def``, with a def's checks: constant defaults, and the
    reach of its body when the grader may call it."""
    ns, skipped = _run("warps = lambda n, w=32: -(-n // w)\n"
                       "def blocks(n):\n    return 2048 // (warps(n) * 32)\n",
                       live={"blocks"})
    assert not skipped and ns["warps"](100) == 4 and ns["blocks"](100) == 16
    with pytest.raises(NotGradable, match="load"):
        _run("read = lambda path: np.load(path)\n", live={"read"})
    ns, skipped = _run("bad = lambda x=np.random.rand(3): x\n")
    assert "bad" not in ns and len(skipped) == 1


@pytest.mark.parametrize("sig, allowed", [
    ("UniTuple(int64, 2)(int64, int64)", True),    # refused before (red team g6)
    ("Tuple((float32, int32))(float32[:], int32)", True),
    ("float32[:](float32[:])", True),
    ("void(float32[:, ::1], int32)", True),
    ("__import__('os').system('x')", False),
    ("UniTuple(int64, 2).__call__(int64)", False),
    ("(lambda: int64)()(int64)", False),
    ("UniTuple(int64, n=2)(int64)", False),
    ("print(1)(int64)", False),
    ("UniTuple(int64, 2.5)(int64)", False),
])
def test_a_signature_string_names_numba_types_only(sig, allowed):
    from autograder.source.definitions import Disallowed, _Kinds, check_signature_string

    if allowed:
        check_signature_string(sig, _Kinds(PATH))
    else:
        with pytest.raises(Disallowed):
            check_signature_string(sig, _Kinds(PATH))


def test_what_cuda_jit_returns_is_called_on_a_function_of_the_file_only():
    """``k = cuda.jit()(f)`` and ``cuda.jit("void(...)")(f)`` are ``@cuda.jit`` spelled as a call
    (the loader skipped them: "calling `cuda.jit()` is not run", red team g2); the decorator
    takes one function of this file, nothing else."""
    from autograder.simulator import adapter

    ns, skipped = _run(
        "def f(A, B):\n    B[0] = A[0]\n"
        "k = cuda.jit()(f)\n"
        'k_sig = cuda.jit("void(float32[:], float32[:])", cache=True)(f)\n'
        "device = cuda.jit(device=True)\n"
        "d = device(f)\n"
        "bad_library = cuda.jit()(np.sum)\n"
        "bad_builtin = device(max)\n"
        "bad_kernel = cuda.jit()(k)\n"
        "bad_two = cuda.jit()(f, f)\n"
        "bad_keyword = cuda.jit()(func=f)\n")
    for name in ("k", "k_sig", "d"):
        assert type(ns[name]) is adapter.FakeCUDAKernel and ns[name].py_func is ns["f"], name
    assert ns["d"]._device and not ns["k"]._device
    reasons = {s.reason for s in skipped}
    assert not any(n.startswith("bad") for n in ns) and len(skipped) == 5, reasons
    assert all("cuda.jit(...) is called on" in r for r in reasons), reasons


def _source(n: int) -> Source:
    return Source(path="s.py", text="\n".join(f"X{i} = {i}" for i in range(n)),
                  origins=[(None, i + 1) for i in range(n)])


@pytest.mark.parametrize("sim, compiled, words", [
    (Imported({"T": 16}, [], {"F": "data:NoneType:None"}),
     Imported({"T": 16}, [], {"F": "callable"}),
     "F is the value None on the simulator and a function when compiled"),
    (Imported({"T": 16}, [[3, "a setting"]], {}), Imported({"T": 16}, [], {}),
     "line 3 (`X2 = 2`) was skipped on the simulator only"),
    (Imported({"T": 16}, [], {}), Imported({"T": 8}, [], {}), "different constants"),
    (Imported({"T": 16}, [], {"F": "type:float32"}), Imported({"T": 16}, [], None),
     "did not report its definitions"),
])
def test_children_that_built_different_definitions_differ(sim, compiled, words):
    why = judge.definitions_differ(_source(5), sim, compiled)
    assert why is not None and words in why, why
    same = Imported(sim.constants, sim.skipped, sim.bindings)
    assert judge.definitions_differ(_source(5), sim, same) is None


def test_a_simulator_pass_is_void_when_the_definitions_differ():
    from autograder.wire.protocol import Compiled
    from autograder.sandbox.run import ChildRun

    def child(*records):
        return ChildRun(records=[(r.to_header(), {}) for r in records])

    def passed():
        return [TestResult(name="case", kind=Kind.CORRECTNESS, visibility="public",
                           status=Status.PASSED, points=5.0, max_points=5.0, message="ok")]

    built = child(Imported({"T": 16}, [], {"F": "callable"}), Compiled(".version 8.0"))
    tests = passed()
    judge.void_unless_compiled(tests, _source(3), child(
        Imported({"T": 16}, [], {"F": "data:NoneType:None"})), built)
    assert tests[0].status is Status.ERROR and tests[0].points == 0
    assert "F is the value None on the simulator" in tests[0].message
    tests = passed()
    judge.void_unless_compiled(tests, _source(3), child(
        Imported({"T": 16}, [], {"F": "callable"})), built)
    assert tests[0].status is Status.PASSED


_CORPUS = ["solutions/*.py", "assignments/*/mutants/*.py",
           "tests/files/**/*.py", "tests/adversarial/files/*.py", "examples/**/*.ipynb"]

_SCAN = r"""
import glob, json, re, sys
from autograder import exercises
from autograder.source.definitions import NotGradable, bindings, run_definitions
from autograder.source.submission import load_source
lazy = sys.argv[1] == "compile"
if sys.argv[1] == "sim":  # as the simulator child, before the submission's import
    from autograder.simulator.adapter import prepare_simulator
    prepare_simulator()
out = {}
for pattern in json.loads(sys.argv[2]):
    for f in sorted(glob.glob(pattern, recursive=True)):
        try:
            text = load_source(f).text if not f.endswith("hangs_at_import.py") else ""
        except Exception:
            continue  # not UTF-8, empty: never loaded
        m = re.search(r"exercises/([^/]+)/|adversarial-exercise:\s*(\S+)", f + "\n" + text[:3000])
        name = (m.group(1) or m.group(2)) if m else None
        live = exercises.get(name).contract.names if name else ()
        ns = {"__name__": "submission"}
        try:
            skipped = run_definitions(text, "/x/submission.py", ns, lazy=lazy, live=live)
            out[f] = [sorted(s.lineno for s in skipped), bindings(ns, "/x/submission.py")]
        except NotGradable as exc:
            out[f] = ["refused", str(exc)]
        except BaseException as exc:
            out[f] = ["error", type(exc).__name__]
print(json.dumps(out))
"""


def _scan(backend: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if backend == "sim":
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    else:
        env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run([sys.executable, "-c", _SCAN, backend, json.dumps(_CORPUS)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_solutions_and_known_bad_submissions_build_the_same_definitions_on_both_backends():
    """No honest kernel is refused, and every file the grader knows builds the same definitions
    in the simulator child as in the GPU-compile child (the same statements skipped, each name
    bound to the same kind of value); only the hostile files that play this game differ."""
    sim, compiled = _scan("sim"), _scan("compile")
    assert len(sim) > 100
    refused = {f for f, v in sim.items() if v[0] == "refused"}
    honest = [f for f in refused if "/adversarial/" not in f]
    assert not honest, {f: sim[f] for f in honest}
    differ = sorted(f for f in sim if sim[f] != compiled[f] and f not in refused)
    assert not differ, {f: (sim[f], compiled[f]) for f in differ}
    assert {Path(f).stem for f in refused} >= {
        "sim_only_branch_skipped_rebind", "sim_only_branch_via_alias",
        "sim_only_branch_numba_config", "sim_only_branch_cuda_attribute",
        "sim_only_branch_type_test", "sim_only_branch_hasattr"}
