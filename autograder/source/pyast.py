"""``ast.parse`` safe to call from several threads at once.

CPython 3.11 keeps the AST converter's recursion depth in state that threads share: two threads
parsing at the same moment can fail with ``SystemError: AST constructor recursion depth
mismatch`` (CPython issue 106905). The grader parses submissions in threads (``batch`` and
``solutions`` grade several at once: a grading ended that way in this suite), so every parse on
the grader's side goes through :func:`parse`, one at a time.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """:func:`ast.parse` under a lock shared by this process's threads; raises what it
    raises (``SyntaxError``, ``ValueError``)."""
    with _LOCK:
        return ast.parse(source, filename, mode)
