"""An exception's text, made without running what the exception holds.

The grading child describes what the submission raised (and the simulator's lanes what a
kernel raised) from grader frames; ``str(exc)`` of an exception that holds the submission's
objects would run their (or a library's) code there. See docs/architecture.md,
"What a submission may reach".
"""

from __future__ import annotations

_PLAIN = (str, int, float, bool, complex, type(None))
# Built-in exceptions' members that their str() formats (OSError, SyntaxError, ImportError, ...).
_MEMBERS = ("errno", "strerror", "filename", "filename2", "msg", "text", "name", "path",
            "lineno", "offset", "end_lineno", "end_offset", "print_file_and_line")


def exception_text(exc: BaseException) -> str:
    """``str(exc)`` where the exception holds plain values only (strings, numbers, None) in its
    arguments and attributes; else its arguments, each a plain value or its type's name. The
    child never turns a value the submission made into text by running that value's code (or
    the library's, on the submission's behalf) from a grader frame."""
    args = exc.args if type(exc.args) is tuple else ()
    # A built-in exception's own attributes (OSError's filename) go into its text too; a
    # library's (Numba's location objects) are the library's own.
    extra = []
    if type(exc).__module__ == "builtins":
        extra = list(vars(exc).values()) if hasattr(exc, "__dict__") else []
        extra += [getattr(exc, n, None) for n in _MEMBERS]
    if all(type(a) in _PLAIN for a in (*args, *extra)):
        try:
            return str(exc)
        except Exception:  # noqa: BLE001 - a library __str__ that needs more than it has
            pass
    parts = [repr(a) if type(a) in _PLAIN else f"<{type(a).__name__}>" for a in args]
    return parts[0] if len(parts) == 1 else ", ".join(parts)
