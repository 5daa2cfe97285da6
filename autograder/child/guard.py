"""The child's audit hook (PEP 578): what the submission's code may not do, however it spells it.

The import gate and the submission's own built-ins (:mod:`autograder.source.reach`) hold what a
name reaches; the parse check refuses the spellings of frames and dunders. This hook holds the
line at run time for the rest: CPython raises an audit event for every way to a frame
(``sys._getframe``, ``sys._current_frames``, a generator's ``gi_frame``, a coroutine's
``cr_frame``, a traceback's ``tb_frame``), to a function's or frame's code (``__code__``,
``f_code``), for ``exec``, ``compile``, every new import, ``open``, processes, signals, sockets,
``ctypes``, ``gc``'s object lists, ``sys.settrace`` and more. Once :func:`install` has run, an
event whose *responsible* frame is the submission's is refused with :class:`ReachError`: the
innermost frame that is either the submission's (its globals are the submission's module, the
only globals its functions have) or the grader's own (its module is in the ``autograder``
package) decides; frames of the standard library, NumPy and Numba in between do not, so a
library that the submission asks to fetch a frame for it is refused too, and the simulator's
and the instrumentation's own frame reads (below a kernel's body, from the grader's modules)
are not. An import started by a library is the library's (:func:`_responsible`). Three rules
close the ways round that (red team of issue 30, goal 6):

- the instrumentation's code that a kernel's body calls with its own values (:data:`KERNEL_SIDE`:
  the array proxies and the taint wrappers of its math) does not stand in for the grader; the
  frames beneath it decide;
- a thread with neither kind of frame (one a library started) counts as the submission's;
- what nothing in a loaded child does (:data:`ALWAYS_REFUSED`: unpickling) is refused whoever
  asks, since a library can be made to do it later from a grader frame.

A hook cannot be removed once added, and the submission's code cannot reach ``sys`` to add
another before it. It costs CPU where the grader itself raises events: the instrumentation calls
``sys._getframe``, ``frame.f_code`` and ``id()`` at every element access (about 830,000 events in
an instrumented launch of a 48x48 tiled matmul, 9 blocks), which the hook lets through in 0.3 µs
(:data:`ALLOWED_EVENTS`, :data:`HELD_READS`) to 2 µs (``sys._getframe``: the caller is found).
Measured on the 2-core VM: such a launch 2.8 s of CPU -> 3.6 s (a hook that does nothing:
3.0 s); a simulated grading of tiled_matmul about 1-2 s more of its 14 s.
"""

from __future__ import annotations

import sys
import threading

from autograder.source.reach import MODULES, ReachError, allowed_text

#: Events the submission's code may raise itself: ``id()`` (an address; the submission's
#: built-ins have no ``id``, the grader's instrumentation calls it at every element access).
ALLOWED_EVENTS = frozenset({"builtins.id"})
#: Events the grader's own code raises by a direct call (the innermost frame is the grader's):
#: the instrumentation reads frames (``sys._getframe``, also from the kernel side) and compiles
#: the kernel it rewrites (not from the kernel side, where a library callable the submission
#: handed over would be the one calling).
GRADER_OWN_EVENTS = frozenset({"sys._getframe", "compile", "exec"})
#: Events nothing in a child raises once a submission is loaded (the request was unpickled
#: before), so they are refused whatever frame raises them: a library made to unpickle for the
#: submission (``np.load`` with pickles allowed, run later from a grader frame) stops here.
ALWAYS_REFUSED = frozenset({"pickle.find_class"})
#: Attributes whose audited reads need what is refused first: a frame's code (``f_code``, read
#: at every element access by the instrumentation) needs a frame, and every way to a frame is
#: refused.
HELD_READS = frozenset({"f_code"})

#: The instrumentation's modules whose code a kernel's body calls with its own values (its
#: arrays' elements and indexes, its math functions' arguments), and the simulator's libdevice
#: functions (its arguments). The scheduler, which runs the kernel and its barriers, and the
#: memory model (its lazy imports of Numba's modules) stay the grader's.
KERNEL_SIDE = frozenset({"autograder.instrument.proxies", "autograder.instrument.taint",
                         "autograder.simulator.libdevice"})

_IMPORTLIB = ("<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>",
              "<frozen zipimport>")
_namespaces: list[dict] = []   # the submissions' module dicts (kept alive)
_busy: set[int] = set()        # threads inside the hook (its own sys._getframe is audited)
_installed = False
_lock = threading.Lock()


def install(namespace: dict) -> None:
    """Refuse audit events that code running with ``namespace`` as its globals (the
    submission's module dict) is responsible for, from now on in this process. Idempotent: the
    hook is added once; each call adds a namespace."""
    global _installed
    with _lock:
        if not any(ns is namespace for ns in _namespaces):
            _namespaces.append(namespace)
        if not _installed:
            sys.addaudithook(_hook)
            _installed = True


def _is_student(globs) -> bool:
    for ns in _namespaces:  # by identity: id() is an audited call
        if globs is ns:
            return True
    return False


def _is_grader(globs) -> bool:
    """A frame of the ``autograder`` package's, the harness's ``__main__`` included (run by
    ``python -m autograder.child.harness``, its ``__spec__`` names it)."""
    if type(globs) is not dict:
        return False
    name = globs.get("__name__")
    if name == "__main__":
        name = getattr(globs.get("__spec__"), "name", None)
    return type(name) is str and (name == "autograder" or name.startswith("autograder."))


def _responsible(frame, event: str, args) -> bool:
    """True when the submission's code is responsible for ``event`` raised in ``frame``: the
    innermost frame that is the submission's or the grader's is the submission's. For
    ``import``, the importer is the first frame outside importlib's: a submission's import of
    one of :data:`autograder.source.reach.MODULES` passes (the gate checks what it binds), and
    a library's imports are the library's."""
    if event == "import":
        while frame is not None and frame.f_code.co_filename in _IMPORTLIB:
            frame = frame.f_back
        if frame is None or not _is_student(frame.f_globals):
            return False
        return not (args and args[0] in MODULES)
    if _is_grader(frame.f_globals) and (event == "sys._getframe" or (
            event in GRADER_OWN_EVENTS and not _on_kernel_side(frame.f_globals))):
        return False  # the grader's own call (the instrumentation's frame reads, its compile)
    while frame is not None:
        globs = frame.f_globals
        if _is_student(globs):
            return True
        if _is_grader(globs) and not _on_kernel_side(globs):
            return False
        frame = frame.f_back
    return True  # a thread with neither: one a library started for the submission's code


def _on_kernel_side(globs) -> bool:
    """A frame of the instrumentation (:mod:`autograder.instrument`), which a kernel's body
    calls on the simulator (its arrays, its math functions, its barriers): it passes the
    submission's values to libraries on the submission's behalf, so the frames beneath it
    decide (a red team had ``math.fsum`` of the instrumented run consume a ``map`` over
    ``numba.cfunc``, whose signature string Numba evaluates)."""
    return globs.get("__name__") in KERNEL_SIDE



def _hook(event: str, args, _allowed=ALLOWED_EVENTS, _held=HELD_READS,
          _ident=threading.get_ident, _getframe=sys._getframe) -> None:
    if event in _allowed or not _namespaces:
        return
    if event == "object.__getattr__" and args[1] in _held:
        return
    if event in ALWAYS_REFUSED:
        raise ReachError(f"{_what(event, args)} is out of reach: {allowed_text()}")
    me = _ident()
    if me in _busy:  # the hook's own sys._getframe below
        return
    _busy.add(me)
    try:
        frame = _getframe(1)
    except ValueError:  # raised where no Python frame runs (a thread's start, the exit)
        frame = None
    finally:
        _busy.discard(me)
    if frame is not None and _responsible(frame, event, args):
        raise ReachError(f"{_what(event, args)} is out of reach: {allowed_text()}")


def _what(event: str, args) -> str:
    """The refused operation, in words."""
    if event == "object.__getattr__" and len(args) > 1:
        return f"attribute {args[1]}"
    if event == "import" and args:
        return f"import {args[0]}"
    return f"{event}()"
