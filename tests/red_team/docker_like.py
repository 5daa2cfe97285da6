"""``python docker_like.py [--no-landlock] CMD ARGS...``: run CMD as a Docker container's root
would run, without Docker: the capabilities Docker gives a container by default (the bounding
set cut to them, so CMD and everything it starts have no others) and the part of Docker's
default seccomp profile that decides whether a sandbox can run (moby's profiles/seccomp
default.json for a container without ``CAP_SYS_ADMIN``): ``unshare``, ``mount``, ``umount2``,
``setns`` and ``pivot_root`` fail with EPERM, ``clone`` with any namespace flag fails with EPERM,
``clone3`` with ENOSYS (so libraries fall back to ``clone``). With ``--no-landlock`` the
Landlock calls fail with ENOSYS too, as under Docker before 23.0.

Standard library only; Linux x86-64 (elsewhere it refuses). Run as root. Tests only.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys

#: Docker's default capabilities (moby oci/caps/defaults.go): CHOWN, DAC_OVERRIDE, FOWNER,
#: FSETID, KILL, SETGID, SETUID, SETPCAP, NET_BIND_SERVICE, NET_RAW, SYS_CHROOT, MKNOD,
#: AUDIT_WRITE, SETFCAP.
DOCKER_CAPS = {0, 1, 3, 4, 5, 6, 7, 8, 10, 13, 18, 27, 29, 31}
_PR_CAPBSET_DROP, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 24, 22, 2
_AUDIT_ARCH_X86_64 = 0xC000003E
_NR = {"unshare": 272, "mount": 165, "umount2": 166, "setns": 308, "pivot_root": 155,
       "clone": 56, "clone3": 435, "landlock_create_ruleset": 444, "landlock_add_rule": 445,
       "landlock_restrict_self": 446}
#: CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
#: CLONE_NEWNET (the mask moby's profile tests clone's flags with).
_NAMESPACE_FLAGS = 0x7E020000
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_EPERM, _ENOSYS = 1, 38
_LD_W_ABS, _JEQ_K, _JSET_K, _RET_K = 0x20, 0x15, 0x45, 0x06


class _Filter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_Filter))]


def _program(landlock: bool) -> list[tuple[int, int, int, int]]:
    """The BPF program: (code, jt, jf, k) each."""
    refused = [(_NR[n], _EPERM) for n in ("unshare", "mount", "umount2", "setns", "pivot_root")]
    refused.append((_NR["clone3"], _ENOSYS))
    if not landlock:
        refused += [(_NR[n], _ENOSYS) for n in ("landlock_create_ruleset", "landlock_add_rule",
                                                "landlock_restrict_self")]
    out = [(_LD_W_ABS, 0, 0, 4), (_JEQ_K, 1, 0, _AUDIT_ARCH_X86_64), (_RET_K, 0, 0, _ALLOW),
           (_LD_W_ABS, 0, 0, 0)]
    # each refused call: jeq nr -> next instruction returns the errno, else skip it
    for nr, errno in refused:
        out += [(_JEQ_K, 0, 1, nr), (_RET_K, 0, 0, _ERRNO | errno)]
    out += [(_JEQ_K, 0, 3, _NR["clone"]), (_LD_W_ABS, 0, 0, 16),  # clone's flags (low word)
            (_JSET_K, 0, 1, _NAMESPACE_FLAGS), (_RET_K, 0, 0, _ERRNO | _EPERM),
            (_RET_K, 0, 0, _ALLOW)]
    return out


def enter(landlock: bool = True) -> None:
    """Put this process (and what it runs from now on) under the filter and Docker's
    capabilities. Raises ``OSError`` when a step fails."""
    if platform.machine() != "x86_64" or os.geteuid() != 0:
        raise OSError("docker_like needs root on x86-64")
    libc = ctypes.CDLL(None, use_errno=True)
    code = _program(landlock)
    filters = (_Filter * len(code))(*[_Filter(*c) for c in code])
    prog = _Program(len(code), filters)
    if libc.prctl(ctypes.c_int(_PR_SET_SECCOMP), ctypes.c_ulong(_SECCOMP_MODE_FILTER),
                  ctypes.byref(prog), ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        raise OSError(ctypes.get_errno(), "seccomp filter refused")
    last = int(open("/proc/sys/kernel/cap_last_cap").read())
    for cap in range(last + 1):
        if cap not in DOCKER_CAPS and libc.prctl(ctypes.c_int(_PR_CAPBSET_DROP),
                                                 ctypes.c_ulong(cap), ctypes.c_ulong(0),
                                                 ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
            raise OSError(ctypes.get_errno(), f"cannot drop capability {cap}")


def main(argv: list[str]) -> int:
    landlock = True
    if argv and argv[0] == "--no-landlock":
        landlock, argv = False, argv[1:]
    enter(landlock)
    os.execvp(argv[0], argv)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
