"""``python -m autograder.sandbox`` (``make sandbox-check``): say how children will run here, under
bubblewrap, as a user of its own (a root grader without bubblewrap) or plain
(:mod:`autograder.sandbox.mode`; a plain child's writes restricted by
Landlock or not, :mod:`autograder.sandbox.landlock`), whether a class may be graded here
(:func:`autograder.sandbox.mode.for_class`), and how a child's process tree is held to its caps
(:mod:`autograder.sandbox.caps`). Exit status 0 either way; 1 under
``KERNELGRADE_SANDBOX=require`` when no sandbox can run."""

from __future__ import annotations

import sys

from autograder.sandbox import caps, landlock, mode


def main() -> int:
    status = mode.sandbox_status()
    if status.available:
        print("sandbox: bubblewrap (read-only system, private /tmp, no network, own PID namespace)")
    elif status.user:
        print(mode.USER_NOTE.format(reason=status.reason))
    else:
        version = landlock.abi()
        print(mode.PLAIN_NOTE.format(reason=status.reason) + (
            f", its writes restricted to its scratch folder by Landlock (ABI {version})"
            if version else ", not restricted in what it writes (this kernel has no Landlock)"))
        if mode.requested() != "off":
            print(f"a class is not graded here without --no-sandbox: {mode.INSTALL}")
    print(caps.how())
    return 1 if not status.sandboxed and mode.requested() == "require" else 0


if __name__ == "__main__":
    sys.exit(main())
