"""``ast.parse`` safe to call from several threads at once.

CPython 3.11 keeps the AST converter's recursion depth in state that threads share: two threads
parsing at the same moment can fail with ``SystemError: AST constructor recursion depth
mismatch`` (CPython issue 106905). The grader parses submissions in threads (``batch`` and
``solutions`` grade several at once: a grading ended that way in this suite), so every parse on
the grader's side goes through :func:`parse`, one at a time.

The lock alone is not enough: other code in the process converts ASTs too (the standard
library's ``traceback`` parses a source line to place its carets), and on 2026-11-25 one of
``tests/test_load.py``'s five gradings at once still ended with the error inside a locked
parse. A parse has no side effects, so :func:`parse` tries again (:data:`ATTEMPTS` in all)
when it meets that one error.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()
#: How many times :func:`parse` tries when CPython's AST converter loses count.
ATTEMPTS = 3
_LOST_COUNT = "AST constructor recursion depth mismatch"


def parse(source, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """:func:`ast.parse` under a lock shared by this process's threads, tried again when
    CPython's converter loses count (``SystemError``, issue 106905); raises what it raises
    (``SyntaxError``, ``ValueError``, and that ``SystemError`` after :data:`ATTEMPTS`)."""
    for attempt in range(ATTEMPTS):
        try:
            with _LOCK:
                return ast.parse(source, filename, mode)
        except SystemError as exc:
            if _LOST_COUNT not in str(exc) or attempt == ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")
