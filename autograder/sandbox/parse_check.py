"""Compile and parse a submission's source in a fresh interpreter, under limits, before anything
in the grader's process or a grading child parses it.

Python's own compiler can fail on input no student needs: 100,000 chained additions raise
``RecursionError`` in ``compile``, deeply nested code overflows the recursive tree walkers of
the grading children, and a huge file can take the grader's time and memory. So the grader's
process never compiles a submission itself: :func:`check` sends the text to ``python -I -S``
(no site packages, no Numba: about 20 ms) that sets its own limits first (CPU time
:data:`CPU_S`, address space :data:`MEMORY_BYTES`, recursion limit :data:`RECURSION_LIMIT`, below
the default every later parser has), runs ``compile`` and ``ast.parse``, and measures the
syntax tree's depth without recursion. Code the check accepts is at most :data:`MAX_DEPTH`
levels deep (the package's own deepest module has 21), so every later ``ast.parse``, ``compile``
and recursive walk of it (the children's definitions runner, the instrumentation's rewriter)
stays far below Python's default recursion limit.

The child also refuses, in the submission's top-level functions (kernels, device functions,
plain functions: what the grader may run of it), the spellings by which code reaches beyond
what the contract names (:mod:`autograder.source.reach`): an attribute with a leading underscore
(``x.__class__``, ``os._exit``), the attributes of frames, code objects, generators and
tracebacks (``gen.gi_frame.f_back.f_builtins``: see
:data:`autograder.source.reach.INTROSPECTION_ATTRS`) and a dunder name (``__builtins__``,
``__import__``). No honest kernel or exercise spells one, so this check names the line before
any child starts; the grading child holds the same line at run time whatever the spelling (the import gate, its own built-ins, the audit hook:
:mod:`autograder.child.guard`), and refuses the imports and module chains of the functions the
grader calls (:func:`autograder.source.reach.check_functions`): a notebook's own helper that
imports ``time`` is not refused here.

Whatever goes wrong (a ``SyntaxError``, too deep, too large, out of reach, a crash of the child,
its time limit) is a :class:`Refusal`: one plain message for the student, who gets a 0; a
child that cannot run even ``pass`` is the grader's fault
(:class:`autograder.errors.GraderSetupError`). The check runs no student code, so it needs no
sandbox.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

from autograder.errors import GraderSetupError
from autograder.source import reach
from autograder.source.submission import Source

#: Deepest syntax tree accepted (module = 0; the package's deepest module has 21 levels).
MAX_DEPTH = 100
#: Longest source accepted, in characters (the largest exercise file has about 13,000).
MAX_CHARS = 1_000_000
#: The child's limits: CPU seconds, address space, Python recursion limit.
CPU_S = 10
MEMORY_BYTES = 2 << 30
RECURSION_LIMIT = 500
#: Wall-clock limit of the child, in seconds: reached only on an overloaded machine (compiling
#: never waits), so reaching it is the grader's fault.
WALL_S = 120

# The child: argv = [cpu_s, memory_bytes, recursion_limit, max_depth, path, rules]; the source
# on stdin as UTF-8; one JSON object on stdout: {"kind": "ok" | "syntax" | "deep" | "memory" |
# "reach", "msg": str, "lineno": int}; rules: the JSON of _rules() (what "reach" refuses).
# Python 3.11's parser raises MemoryError, not RecursionError, when its own stack overflows
# (`N = 1**1**...` 3000 times): "memory" means either.
_CHILD = r"""
import resource, sys
cpu, mem, rec, max_depth = map(int, sys.argv[1:5])
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
sys.setrecursionlimit(rec)
import ast, json, warnings
warnings.simplefilter("ignore")

def say(kind, msg="", lineno=0):
    sys.stdout.write(json.dumps({"kind": kind, "msg": msg, "lineno": lineno or 0}))
    sys.stdout.flush()
    raise SystemExit(0)

try:
    text = sys.stdin.buffer.read().decode("utf-8")
    compile(text, sys.argv[5], "exec", dont_inherit=True)
    tree = ast.parse(text, sys.argv[5])
except SyntaxError as exc:
    say("syntax", str(exc.msg), exc.lineno)
except (RecursionError, OverflowError):
    say("deep")
except MemoryError:
    say("memory")
except ValueError as exc:
    say("syntax", str(exc))
stack = [(tree, 0, 0)]
while stack:
    node, depth, line = stack.pop()
    line = getattr(node, "lineno", line)
    if depth > max_depth:
        say("deep", "", line)
    stack.extend((child, depth + 1, line) for child in ast.iter_child_nodes(node))
rules = json.loads(sys.argv[6])
attrs, prefixes, allowed = set(rules["attrs"]), tuple(rules["prefixes"]), rules["allowed"]

def attribute(attr):
    if attr.startswith("_"):
        return f"attribute {attr}: attributes with a leading underscore are out of reach"
    if attr in attrs or attr.startswith(prefixes):
        return (f"attribute {attr}: frames, code objects, generators' and tracebacks' insides "
                "and the interpreter's tables are out of reach")

def dunder(name):
    if name.startswith("__") and name.endswith("__"):
        return f"the name {name} is out of reach"

found = []
for top in tree.body:
    if not isinstance(top, ast.FunctionDef):
        continue
    for node in ast.walk(top):
        why = None
        if isinstance(node, ast.Attribute):
            why = attribute(node.attr)
        elif isinstance(node, ast.Name):
            why = dunder(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            why = next(filter(None, map(dunder, node.names)), None)
        elif isinstance(node, ast.keyword) and node.arg:
            why = dunder(node.arg)
        if why:
            at = tuple(getattr(node, k, None) or 0
                       for k in ("lineno", "col_offset", "end_col_offset"))
            found.append((at, why))
if found:  # the first in reading order: gen.gi_frame before .f_back
    at, why = min(found)
    say("reach", f"{why}: {allowed}", at[0])
say("ok")
"""


@dataclass(frozen=True)
class Refusal:
    """Why a submission's source cannot be graded: ``message`` for the student (the first
    test's), ``reason`` in a few words for the other tests ("not run: <reason> (see above)")."""

    message: str
    reason: str


def _rules() -> str:
    """What the child's reach check refuses, as JSON (:mod:`autograder.source.reach`)."""
    return json.dumps({"attrs": sorted(reach.INTROSPECTION_ATTRS),
                       "prefixes": list(reach.INTROSPECTION_PREFIXES),
                       "allowed": reach.allowed_text()})


def _reach(source: Source, msg: str, lineno: int) -> Refusal:
    code = source.line_text(lineno).strip()[:80] if lineno else ""
    where = f"{source.where(lineno)}: " if lineno else ""
    return Refusal(f"{where}{msg}" + (f" (`{code}`)" if code else ""),
                   "the code reaches beyond numba, numpy and math")


def _syntax(source: Source, msg: str, lineno: int) -> Refusal:
    code = source.line_text(lineno).strip()[:80] if lineno else ""
    where = f"{source.where(lineno)}: " if lineno else ""
    return Refusal(f"{where}the code does not parse: {msg}" + (f" (`{code}`)" if code else ""),
                   "the code does not parse")


def _deep(source: Source, lineno: int) -> Refusal:
    where = f"{source.where(lineno)}: " if lineno else ""
    return Refusal(f"{where}the code is nested too deeply to compile (more than {MAX_DEPTH} "
                   "levels, e.g. a very long chain of `+`); write it in simpler steps",
                   "the code is nested too deeply")


def check(source: Source) -> Refusal | None:
    """None when ``source`` compiles and parses within the limits; else the :class:`Refusal`.

    Never raises for any text. Raises :class:`autograder.errors.GraderSetupError` when the
    child fails on a trivial source too (it cannot start here) or runs out of wall-clock time
    (:data:`WALL_S`) before its CPU limit (the machine is overloaded): never a 0 for the
    grader's fault. Takes about 20 ms (CPU and wall clock) for an exercise's file.
    """
    if len(source.text) > MAX_CHARS:
        return Refusal(f"the code is too large to grade ({len(source.text):,} characters; at "
                       f"most {MAX_CHARS:,})", "the code is too large")
    answer, status, err = _run(source.text, source.path)
    if answer is None:
        if status in (-24, -9):  # SIGXCPU, SIGKILL: the CPU limit
            return _too_slow()
        if _run("pass\n", "probe.py")[0] is None:
            raise GraderSetupError(f"the parse check's child ({sys.executable} -I -S) fails "
                                   f"even on `pass` (exit status {status}): {err[-300:]}")
        return Refusal("the code could not be compiled: Python's compiler stopped on it (exit "
                       f"status {status}); write it in simpler steps",
                       "the code could not be compiled")
    kind, msg, lineno = answer
    if kind == "ok":
        return None
    if kind == "syntax":
        return _syntax(source, msg, lineno)
    if kind == "deep":
        return _deep(source, lineno)
    if kind == "reach":
        return _reach(source, msg, lineno)
    return Refusal("the code is nested too deeply or too large to compile (Python's compiler "
                   "ran out of room); write it in simpler steps",
                   "the code is nested too deeply or too large")


def _run(text: str, path: str) -> tuple[tuple[str, str, int] | None, int, str]:
    """``((kind, msg, lineno) or None when the child gave no answer, exit status, the end of
    its stderr)`` of the child on ``text``."""
    args = [sys.executable, "-I", "-S", "-c", _CHILD, str(CPU_S), str(MEMORY_BYTES),
            str(RECURSION_LIMIT), str(MAX_DEPTH), path, _rules()]
    try:
        done = subprocess.run(args, input=text.encode("utf-8", "surrogatepass"),
                              capture_output=True, timeout=WALL_S, check=False)
    except subprocess.TimeoutExpired:
        raise GraderSetupError(f"the parse check took over {WALL_S} s of wall-clock time for "
                               f"at most {CPU_S} s of CPU: this machine is overloaded") from None
    err = done.stderr.decode("utf-8", "replace")
    try:
        answer = json.loads(done.stdout.decode("utf-8"))
        return (str(answer["kind"]), str(answer["msg"]), int(answer["lineno"])), \
            done.returncode, err
    except (ValueError, KeyError, TypeError):
        return None, done.returncode, err


def _too_slow() -> Refusal:
    return Refusal(f"the code takes too long to compile (over {CPU_S} s of CPU time); write it "
                   "in simpler steps", "the code takes too long to compile")
