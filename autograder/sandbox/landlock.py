"""Landlock (Linux 5.13+): what a plain child (no bubblewrap) may write.

A plain child runs as the grader's user, so without a rule it could write every file that user
can: the host's cache of compiled kernels that later gradings read
(:mod:`autograder.host.kernel_cache`), the preflight's records, the installed kernelgrade.
:func:`restrict_writes` (called by :mod:`autograder.sandbox.reaper` in the forked child, just
before it runs the harness) lets the process and everything it starts create, change, remove or
truncate files only beneath the folders it is given (the child's own scratch folder, a wrapper's
log folder) and ``/dev`` (the GPU's device nodes, ``/dev/null``, ``/dev/shm``); reading and
running stay as they were. Where the kernel's Landlock has scopes (ABI 6, Linux 6.12), the child
also cannot signal a process outside its rule (the reaper, the grader) or reach an abstract
Unix socket of one. A child run as a user of its own (:mod:`autograder.sandbox.dropuser`, which
has no network namespace) also may not connect or bind a TCP socket where the kernel can refuse
it (ABI 4, Linux 6.7: ``tcp=False``).

An unprivileged process may restrict itself (after ``PR_SET_NO_NEW_PRIVS``); nothing it does
later can lift the rule. Standard library only (the reaper imports it as a script's sibling,
without the package). :func:`abi` says whether this kernel has Landlock (0: it has not; then a
plain child is not restricted, and the grader says so).
"""

from __future__ import annotations

import ctypes
import os
import platform

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # x86-64 and arm64 alike
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# Access rights to the file system (include/uapi/linux/landlock.h), by the ABI that has them.
WRITE_FILE, REMOVE_DIR, REMOVE_FILE = 1 << 1, 1 << 4, 1 << 5
MAKE_CHAR, MAKE_DIR, MAKE_REG, MAKE_SOCK = 1 << 6, 1 << 7, 1 << 8, 1 << 9
MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 10, 1 << 11, 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
#: Every right that changes the file system, in ABI 1.
WRITES_V1 = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK
             | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM)
#: Writable in every plain child: device nodes (a GPU's), /dev/null, /dev/shm.
ALWAYS_WRITABLE = ("/dev",)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def abi() -> int:
    """The Landlock ABI version of this kernel (1, 2, ...), 0 without Landlock (not Linux, a
    kernel without it or with it turned off, an architecture whose system-call numbers differ
    from x86-64's)."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "aarch64"):
        return 0
    try:
        found = _libc().syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0),
                                ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(0, int(found))


def _writes(version: int) -> int:
    rights = WRITES_V1
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    return rights


def restrict_writes(writable: list[str] | tuple[str, ...], tcp: bool = True) -> int:
    """Restrict this process (and every process it starts, for good) to writing beneath the
    folders ``writable`` and :data:`ALWAYS_WRITABLE`, and, where the kernel can, to signalling
    and reaching abstract Unix sockets of processes under the same rule only; with ``tcp``
    False, and where the kernel can (ABI 4), to no TCP connect or bind. Returns the ABI
    version used. Raises ``OSError`` when the kernel has no Landlock or the rule cannot be made
    (a folder that does not exist)."""
    version = abi()
    if version < 1:
        raise OSError("this kernel has no Landlock")
    libc = _libc()
    rights = _writes(version)
    net = NET_BIND_TCP | NET_CONNECT_TCP if not tcp and version >= 4 else 0
    attr = _RulesetAttr(rights, net, (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)
                        if version >= 6 else 0)
    size = (ctypes.sizeof(_RulesetAttr) if version >= 6
            else 2 * ctypes.sizeof(ctypes.c_uint64) if net else ctypes.sizeof(ctypes.c_uint64))
    ruleset = libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                           ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        for folder in [*ALWAYS_WRITABLE, *writable]:
            fd = os.open(folder, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                rule = _PathBeneathAttr(rights, fd)
                if libc.syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset),
                                ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule),
                                ctypes.c_uint32(0)) != 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {folder}")
            finally:
                os.close(fd)
        if libc.prctl(ctypes.c_int(_PR_SET_NO_NEW_PRIVS), ctypes.c_ulong(1), ctypes.c_ulong(0),
                      ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
            raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS failed")
        if libc.syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return version
