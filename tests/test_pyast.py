"""The grader's parses are safe from several threads at once (``autograder.source.pyast``): CPython
3.11's AST converter can fail with ``SystemError: AST constructor recursion depth mismatch``
when two threads parse at the same moment (CPython issue 106905), which ended one of
``tests/test_gpu_scheduling.py``'s eight gradings at once. The failure is too rare to provoke
on demand, so these tests hold the grader to the guarded parse, and the parse to trying again
when the converter loses count anyway (other code in the process parses without the lock)."""

from __future__ import annotations

import ast

import pytest

from autograder.source import loops, pyast
from autograder.timing import measure as timing
from conftest import ROOT

#: Code that runs only in a child process (one thread parsing), where ``ast.parse`` is safe.
CHILD_SIDE = ("autograder/child/", "autograder/instrument/", "autograder/sandbox/parse_check.py",
              "autograder/source/pyast.py")


def test_no_grader_module_calls_ast_parse_itself():
    direct = []
    for path in sorted((ROOT / "autograder").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(CHILD_SIDE):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "parse" and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "ast"):
                direct.append(f"{rel}:{node.lineno}")
    assert direct == []


def test_the_graders_parses_take_the_lock(monkeypatch):
    taken = []

    class Recording:
        def __enter__(self):
            taken.append(1)

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(pyast, "_LOCK", Recording())
    text = "def k(a):\n    for i in range(cuda.blockDim.x):\n        a[i] = 0\n"
    timing.loop_bounds_at_run_time(text, "k", ("BLOCK_SIZE",))
    loops.loops(text)   # the hints' reading of the loops
    assert len(taken) == 2


def test_parse_raises_what_ast_parse_raises():
    with pytest.raises(SyntaxError):
        pyast.parse("def (:\n")
    assert isinstance(pyast.parse("1 + 2", mode="eval").body.op, ast.Add)


def test_a_parse_that_loses_count_is_tried_again(monkeypatch):
    real, calls = ast.parse, []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=42, after=25)")
        return real(*args, **kwargs)

    monkeypatch.setattr(ast, "parse", flaky)
    assert isinstance(pyast.parse("x = 1").body[0], ast.Assign)
    assert len(calls) == 2


def test_a_parse_that_always_loses_count_or_fails_otherwise_raises(monkeypatch):
    def broken(*args, **kwargs):
        raise SystemError("AST constructor recursion depth mismatch (before=1, after=0)")

    monkeypatch.setattr(ast, "parse", broken)
    with pytest.raises(SystemError):
        pyast.parse("x = 1")

    calls = []

    def other(*args, **kwargs):
        calls.append(1)
        raise SystemError("something else")

    monkeypatch.setattr(ast, "parse", other)
    with pytest.raises(SystemError, match="something else"):
        pyast.parse("x = 1")
    assert len(calls) == 1
