"""Student code reaches only what the contract names (issue 30, goal 6): numba, numpy and math;
not the grader's package, not frames, builtins or importlib, for kernels on the simulator and
pure-Python exercises alike (:mod:`autograder.source.reach`, :mod:`autograder.child.guard`).

Each layer is tested on its own, the inner ones with the outer ones out of the way:

* the source: the parse check refuses the spellings of frames and dunders
  (:mod:`autograder.sandbox.parse_check`), the definitions runner the imports and module chains
  of the functions the grader calls; honest code (every solution, variant, mutant, course file
  and example) passes both;
* the process: a child Python builds a submission's module as the harness does (its own
  built-ins with the import gate, the audit hook), then runs functions put into that module
  *past* both source checks, as if a spelling had slipped through: each attack of the issue is
  refused at run time, honest kernels and Numba's own lazy imports are not;
* what a bubblewrap child sees of the package: the grader's side is not there.

The end-to-end gradings of the two attacks are ``tests/adversarial/files/reach_*.py``.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")  # in-process numba, as tests/instrument does

import pytest  # noqa: E402

from autograder.sandbox import parse_check  # noqa: E402
from autograder.source import reach  # noqa: E402
from autograder.source.submission import Source  # noqa: E402
from conftest import ROOT, env_with_root, run_file_on_the_simulator  # noqa: E402

PATH = "/nonexistent/submission.py"


def _honest_files() -> list[Path]:
    """Every file of honest code in the checkout: solutions, textbook variants, mutants (wrong,
    not hostile), the course's fixtures and the example class."""
    found = [*ROOT.glob("solutions/*.py"), *ROOT.glob("assignments/*/variants/*.py"),
             *ROOT.glob("assignments/*/mutants/*.py"), *ROOT.glob("examples/submitted/*/*.py"),
             *ROOT.glob("tests/fixtures/*/solutions/*.py"),
             *ROOT.glob("tests/files/concept_honest/*.py"),
             *ROOT.glob("tests/files/timing/*.py"), *ROOT.glob("tests/files/hints/*.py")]
    return sorted(p for p in found if p.name != "__init__.py")


def _refusal(src: str):
    return parse_check.check(Source(src, PATH))


# --- the source check ------------------------------------------------------------------------

@pytest.mark.parametrize("body, words", [
    # the attack: a generator frame's f_back.f_builtins gave a kernel body __import__
    ("g = (i for i in range(1))\n    b = g.gi_frame.f_back.f_builtins", "attribute gi_frame"),
    ("return ().__class__.__base__.__subclasses__()", "attribute __class__"),
    ("return __builtins__['__import__']('os')", "the name __builtins__"),
    ("return __import__('os')", "the name __import__"),
    ("try:\n        1 / 0\n    except Exception as e:\n        return e.__traceback__",
     "attribute __traceback__"),
    ("t = None\n    return t.tb_frame", "attribute tb_frame"),
    ("c = None\n    return c.cr_frame.f_globals", "attribute cr_frame"),
    ("return x.f_locals", "attribute f_locals"),
    ("return x.co_consts", "attribute co_consts"),
    ("return x._exit", "attribute _exit"),
    ("return dict(__builtins__=1)", "the name __builtins__"),
])
def test_the_parse_check_refuses_frames_and_dunders_with_the_line(body, words):
    src = f"import math\n\n\ndef f(x):\n    {body}\n"
    refusal = _refusal(src)
    assert refusal is not None, body
    assert words in refusal.message, refusal.message
    spelling = words.split()[-1]
    line = next(i for i, text in enumerate(src.splitlines(), 1) if spelling in text)
    assert refusal.message.startswith(f"line {line}: "), refusal.message
    assert "numba (numba.cuda), numpy and math" in refusal.message  # says what is allowed
    assert refusal.reason == "the code reaches beyond numba, numpy and math"


def test_the_parse_check_names_the_first_spelling_of_a_chain():
    refusal = _refusal("def k(a):\n    g = (i for i in a)\n    return g.gi_frame.f_back\n")
    assert "attribute gi_frame" in refusal.message, refusal.message


def test_the_parse_check_leaves_what_the_grader_does_not_run():
    """Top-level statements the grader skips (a notebook's test cells) may use anything."""
    src = ("import os\nprint(os.__file__)\nif __name__ == '__main__':\n    x = ().__class__\n"
           "def helper():\n    import time\n    return time.perf_counter()\n")
    assert _refusal(src) is None


@pytest.mark.parametrize("path", _honest_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_honest_code_passes_the_parse_check(path):
    text = path.read_text(encoding="utf-8-sig")
    assert _refusal(text) is None


# --- the policy: imports and built-ins --------------------------------------------------------

@pytest.mark.parametrize("name, fromlist", [
    ("autograder.grading.driver_occupancy", ()), ("os", ()), ("importlib", ()),
    ("builtins", ()), ("numba.core.config", ()), ("numba", ("sys",)), ("numba", ("config",)),
    ("numba", ("_helperlib",)), ("numpy", ("ctypeslib",)), ("numpy.lib.stride_tricks",
                                                           ("as_strided",)),
])
def test_the_gate_refuses_what_the_contract_does_not_name(simulator, name, fromlist):
    with pytest.raises(reach.ReachError, match="numba .numba.cuda., numpy and math"):
        reach.gate()(name, {}, {}, fromlist, 0)


@pytest.mark.parametrize("name, fromlist", [
    ("math", ()), ("numpy", ()), ("numpy.linalg", ()), ("numba", ()), ("numba.cuda", ()),
    ("numba", ("cuda", "float32", "int32", "types", "typeof")), ("numba.core", ("types",)),
    ("numba.core.types", ("float32",)), ("numpy", ("float32", "zeros")),
])
def test_the_gate_lets_the_contract_through(simulator, name, fromlist):
    assert reach.gate()(name, {}, {}, fromlist, 0) is sys.modules[name.split(".")[0] if not
                                                                  fromlist else name]


def test_the_student_builtins_have_no_way_out():
    b = reach.student_builtins()
    for name in ("range", "len", "min", "max", "abs", "int", "float", "print", "zip",
                 "IndexError", "ValueError", "True"):
        assert name in b
    for name in ("eval", "exec", "compile", "open", "getattr", "globals", "vars", "type",
                 "breakpoint", "__build_class__"):
        with pytest.raises(reach.ReachError, match=f"{name}|class"):
            b[name]("x")
    assert b["__import__"].__name__ == "__import__" and b["__import__"] is not __import__


# --- the definitions runner: imports and module chains of the functions the grader calls -----

_CHAINS = [
    ("import numba\ndef f():\n    return numba.sys.modules\n", "`numba.sys` is the module sys"),
    ("import numba\ndef f():\n    return numba.config.os.system\n",
     "`numba.config` is the module numba.core.config"),
    ("import numpy as np\ndef f():\n    return np.ctypeslib.as_array\n",
     "attribute ctypeslib"),
    ("def f():\n    import autograder.grading.driver_occupancy as d\n    return d.fill\n",
     "import autograder.grading.driver_occupancy"),
    ("def f():\n    from numba import cuda\n    return cuda.importlib\n",
     "`cuda.importlib` is the module importlib"),
    ("import math\ndef f():\n    m = math\n    return m\n", "the module `math` is used as a value"),
    ("import math\ndef f(math):\n    return math.pi\n", "`math` names the module math"),
    ("import math\ndef f():\n    math.pi = 3\n    return 3\n", "assigns to `math.pi`"),
    ("import numpy as np\ndef f():\n    del np.zeros\n    return 3\n", "assigns to `np.zeros`"),
    # the red team of goal 6: library callables that a grader frame would run later
    ("import numpy as np\ndef f():\n    np.set_printoptions(precision=3)\n    return 1\n",
     "attribute set_printoptions"),
    ("import numpy as np\ndef f():\n    return np.zeros(3).tofile\n", "attribute tofile"),
    ("import numpy as np\ndef f():\n    x = np\n    return 1\n", "used as a value"),
    ("import numpy as np\ndef f(a):\n    return np.array2string(a, formatter=None)\n",
     "the keyword formatter="),
    ("def f(x):\n    return '{0.real}'.format(x)\n", "str.format with a template"),
    ("def f(x, t):\n    return t.format(x)\n", "str.format with a template"),
    ("def f(x):\n    fmt = '{0.real}'.format\n    return fmt(x)\n", "str.format with a template"),
    ("import numba\ndef f(x):\n    return numba.cfunc('void()')\n", "attribute cfunc"),
    ("def f():\n    from numpy import load\n    return load\n", "from numpy import load"),
]


def _definitions(src: str, live=("f",)):
    """Run ``src``'s definitions in this process (the simulator's Numba, no audit hook)."""
    from autograder.source.definitions import run_definitions

    ns = {"__name__": "submission"}
    run_definitions(src, PATH, ns, live=live)
    return ns


@pytest.fixture()
def simulator(request):
    from conftest import simulator_in_process

    simulator_in_process(request)


def test_in_a_fresh_interpreter():
    """The tests that need this process's Numba to be the simulator, where another test file
    imported it for a GPU target first."""
    run_file_on_the_simulator(__file__, 40, "definitions or chains or never_calls or top_level "
                                            "or star_import or gate")


@pytest.mark.parametrize("src, words", _CHAINS)
def test_module_chains_of_a_called_function_are_refused(simulator, src, words):
    from autograder.source.definitions import NotGradable

    with pytest.raises(NotGradable) as info:
        _definitions(src)
    assert words in str(info.value), str(info.value)
    assert info.value.submission_lineno >= 2


def test_a_function_the_grader_never_calls_may_import_anything(simulator):
    ns = _definitions("def f():\n    return 1\ndef bench():\n    import time\n"
                      "    return time.perf_counter()\n")
    assert ns["f"]() == 1


def test_top_level_imports_outside_the_contract_are_skipped(simulator):
    from autograder.source.definitions import run_definitions

    ns = {}
    skipped = run_definitions("from numba import sys\nimport numba.core.config\n"
                              "from numpy import ctypeslib\nimport math\n", PATH, ns)
    assert [s.lineno for s in skipped] == [1, 2, 3] and "sys" not in ns and "math" in ns
    assert all("numba (numba.cuda), numpy and math" in s.reason for s in skipped)


def test_a_star_import_binds_no_module_outside_the_contract(simulator):
    from autograder.source.definitions import run_definitions

    ns = {}
    skipped = run_definitions("from numba.cuda import *\nfrom numpy import *\n"
                              "from numba import *\n", PATH, ns)
    assert skipped == []
    assert "zeros" in ns and "float32" in ns and "to_device" in ns  # what they are for
    for name in ("sys", "os", "importlib", "ctypeslib", "testing", "f2py", "simulator",
                 "cudadrv", "experimental"):
        assert name not in ns, name


@pytest.mark.parametrize("path", [p for p in _honest_files() if "notebook" not in p.name],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_honest_code_passes_the_definitions_check(simulator, path):
    from autograder.source.definitions import run_definitions

    text = path.read_text(encoding="utf-8-sig")
    live = [n.name for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]
    run_definitions(text, str(path), {}, live=())
    run_definitions(text, str(path), {}, live=live)


# --- the process: the gate, the built-ins and the audit hook hold past the source checks -----

# Builds the submission's module as the harness does (NUMBA_ENABLE_CUDASIM set by the caller),
# then defines ATTACKS in it *without* the parse check or the definitions runner, as if a
# spelling had slipped past both; runs each and prints {name: "ok" | "Type: message"}.
_RUNTIME = r'''
# This script stands for the harness: as under `python -m autograder.child.harness`, a frame of
# the grader's is at the bottom of the main thread's stack.
__name__ = "autograder.child.runtime_test"
import json, sys, builtins
from autograder.child.contract import import_submission
from autograder.simulator.adapter import prepare_simulator
import numpy as np

PATH = "/nonexistent/submission.py"
module = import_submission(PATH, "import math\nimport numpy as np\nfrom numba import cuda\n")
ns = module.__dict__
# A grader frame that consumes what the submission gave it (as the child's formatting of a
# returned value or an exception would): the library runs the submission's callables from it.
grader = {"__name__": "autograder.child.consumer"}
exec("def consume(value):\n    return list(value)\n", grader)
ns["consume"] = grader["consume"]
from autograder.instrument import taint
import math as real_math
ns["tainted_fsum"] = taint._wrap_function(real_math.fsum)  # the instrumented run's math.fsum
leaked = dict(ns, B=builtins, S=sys)  # what a dunder that slipped through would have given
ATTACKS = sys.argv[1]
exec(compile(ATTACKS, PATH, "exec"), ns)  # past both source checks
prepare_simulator()
out = {}
for name in [n for n in list(ns) if n.startswith("attack_") or n.startswith("honest_")]:
    fn = ns[name]
    if name.endswith("_leaked"):
        fn.__globals__.update(B=builtins, S=sys)
    try:
        value = fn()
        out[name] = "ok"
    except BaseException as exc:
        out[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
'''

_ATTACKS = '''
def attack_import_the_grader():  # the issue's occupancy attack
    import autograder.grading.driver_occupancy as d
    return d

def attack_import_os():
    import os
    return os

def attack_dunder_import():
    return __import__("importlib")

def attack_generator_frame():  # the issue's kernel-body attack, as Python
    g = (g.gi_frame.f_back for i in range(1))
    return next(g).f_back.f_builtins["__import__"]("os")

def attack_traceback_frame():
    try:
        1 / 0
    except ZeroDivisionError as e:
        return e.__traceback__.tb_frame.f_back.f_globals

def attack_eval():
    return eval("1")

def attack_getattr():
    return getattr(np, "__loader__")

def attack_open():
    return open("/etc/hostname").read()

def attack_from_numba_import_sys():
    from numba import sys
    return sys

def attack_import_leaked():
    return B.__import__("autograder.grading.driver_occupancy")

def attack_open_leaked():
    return B.open("/etc/hostname").read()

def attack_exec_leaked():
    return B.exec("x = 1")

def attack_getframe_leaked():
    return S._getframe(0).f_back.f_globals

def attack_current_frames_leaked():
    return S._current_frames()

def attack_settrace_leaked():
    return S.settrace(None)

def attack_gc_leaked():
    return B.__import__("gc").get_objects()

def attack_unpickle_from_a_grader_frame_leaked():  # np.load(..., allow_pickle) run later
    return consume(map(S.modules["pickle"].loads, [b"cbuiltins\\nprint\\n(S'x'\\ntR."]))

def attack_thread_with_no_grader_frame_leaked():  # a library's thread runs a library callable
    threading = S.modules["threading"]
    seen, errors = [], []
    threading.excepthook = lambda a: errors.append(a.exc_value)
    t = threading.Thread(target=B.exec, args=("import os\\nR.append(os.getpid())",
                                              {"R": seen, "__builtins__": B}))
    t.start()
    t.join()
    if seen or not errors:
        return "escaped"
    raise errors[0]

def attack_library_callable_through_the_taint_wrapper_leaked():
    # the instrumented run's math: the grader's wrapper calls math.fsum on the submission's
    # argument, and fsum runs the map's callable (numba.cfunc would eval a signature string)
    return tainted_fsum(map(B.exec, ["x = 1"]))

def honest_math():
    return math.sqrt(4.0) + float(np.float32(1)) + min(3, 4) + len(range(3))

def honest_import_inside():
    import numpy
    import math as m
    from numba import cuda, float32
    return m.floor(2.5)

@cuda.jit
def frame_kernel(A):  # the kernel-body attack on the simulator
    g = (g.gi_frame.f_back for i in range(1))
    A[0] = len(next(g).f_back.f_builtins)

@cuda.jit
def kernel_of_honest(A):
    i = cuda.grid(1)
    if i < A.shape[0]:
        t = cuda.shared.array(4, dtype=np.float32)
        t[cuda.threadIdx.x] = i
        cuda.syncthreads()
        A[i] = math.sqrt(t[cuda.threadIdx.x]) * 2

def honest_simulated_launch():
    A = np.zeros(8, dtype=np.float32)
    kernel_of_honest[2, 4](A)
    assert np.allclose(A, 2 * np.sqrt(np.arange(8))), A
    return A

def attack_simulated_launch():
    A = np.zeros(8, dtype=np.float32)
    frame_kernel[1, 1](A)
    return A
'''


@pytest.fixture(scope="module")
def runtime() -> dict:
    out = subprocess.run([sys.executable, "-c", _RUNTIME, _ATTACKS], capture_output=True,
                         text=True, timeout=300, cwd=str(ROOT),
                         env=env_with_root(NUMBA_ENABLE_CUDASIM="1"))
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


_REFUSED = sorted(n.name for n in ast.parse(_ATTACKS).body
                  if isinstance(n, ast.FunctionDef) and n.name.startswith("attack_"))


@pytest.mark.parametrize("name", _REFUSED)
def test_the_process_refuses_each_attack_past_the_source_checks(runtime, name):
    result = runtime[name]
    assert result.startswith("ReachError: "), result
    assert "numba (numba.cuda), numpy and math" in result, result


def test_honest_code_runs_in_the_guarded_process(runtime):
    honest = {k: v for k, v in runtime.items() if k.startswith("honest_")}
    assert honest and all(v == "ok" for v in honest.values()), honest


_COMPILE = r'''
__name__ = "autograder.child.compile_test"  # stands for the harness, as in _RUNTIME
import json, sys
from autograder.child.contract import import_submission
from numba import cuda
from numba.core import types

SRC = """import math
from numba import cuda, float32
import numba.cuda

@cuda.jit
def k(A):
    i = numba.cuda.grid(1)
    if i < A.shape[0]:
        t = cuda.shared.array(32, dtype=float32)
        t[cuda.threadIdx.x] = A[i]
        cuda.syncthreads()
        A[i] = math.sqrt(t[cuda.threadIdx.x]) + float32(1)
"""
module = import_submission("/nonexistent/submission.py", SRC, lazy=True)
before = set(sys.modules)
ptx, _ = cuda.compile_ptx(module.k.py_func, (types.float32[::1],), cc=(9, 0))
print(json.dumps({"ptx": ".entry" in ptx, "imported": len(set(sys.modules) - before)}))
'''


def test_numba_imports_what_it_needs_while_compiling_under_the_guard():
    """The GPU compile (as the compile child does it, no GPU needed) imports Numba's lazily
    loaded modules through the real import machinery, in a process with the audit hook, for a
    kernel whose module has the student's built-ins."""
    env = env_with_root()
    env.pop("NUMBA_ENABLE_CUDASIM", None)  # Numba's CUDA target, as the compile child has it
    out = subprocess.run([sys.executable, "-c", _COMPILE], capture_output=True, text=True,
                         timeout=600, cwd=str(ROOT), env=env)
    if out.returncode and "NVVM" in out.stderr:
        pytest.skip("no NVVM here to compile PTX with")
    assert out.returncode == 0, out.stderr[-3000:]
    answer = json.loads(out.stdout.strip().splitlines()[-1])
    assert answer["ptx"] and answer["imported"] > 0, answer


# --- what a bubblewrap child sees of the package ----------------------------------------------

def test_a_sandboxed_child_sees_no_grader_side(tmp_path):
    from autograder.sandbox import bwrap, mode

    if shutil.which("bwrap") is None or not mode.sandbox_status().available:
        pytest.skip("bubblewrap cannot run here")
    code = ("import os, autograder, importlib\n"
            "d = os.path.dirname(autograder.__file__)\n"
            "out = {'grading': os.listdir(os.path.join(d, 'grading'))}\n"
            "for m in ('autograder.grading.driver_occupancy', 'autograder.judge.cases',\n"
            "          'autograder.grader', 'autograder.batch.run'):\n"
            "    try:\n"
            "        importlib.import_module(m)\n"
            "        out[m] = 'imported'\n"
            "    except Exception as e:\n"
            "        out[m] = type(e).__name__\n"
            "import autograder.child.harness, autograder.simulator.scheduler\n"
            "import autograder.exercises.package\n"
            "out['harness'] = 'imported'\n"
            "print(__import__('json').dumps(out))\n")
    args = bwrap.arguments(tmp_path, False)
    done = subprocess.run([*args, "--", sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=120, env=env_with_root())
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen.pop("harness") == "imported" and seen.pop("grading") == []
    assert all(v != "imported" for v in seen.values()), seen


def test_the_child_turns_no_value_of_the_submission_into_text_by_running_it():
    """An exception the submission raised, holding an array (whose text NumPy makes with the
    print options' formatter), is described by its arguments' types, never formatted."""
    import numpy as np
    from autograder.child.channel import describe
    from autograder.wire.exception_text import exception_text

    ran = []
    with np.printoptions(formatter={"all": lambda v: ran.append(v) or "x"}):
        assert describe(ValueError(np.arange(3))) == "ValueError: <ndarray>"
        error = OSError(2, "No such file")
        error.filename = np.arange(2)
        assert "ndarray" not in exception_text(error) and "No such file" in exception_text(error)
        assert describe(IndexError("index 3 is out of bounds")) == \
            "IndexError: index 3 is out of bounds"
    assert ran == []
