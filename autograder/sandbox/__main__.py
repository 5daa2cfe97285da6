"""``python -m autograder.sandbox`` (``make sandbox-check``): say how children will run here, under
bubblewrap or plain (:mod:`autograder.sandbox.mode`). Exit status 0 either way; 1 under
``KERNELGRADE_SANDBOX=require`` when bubblewrap cannot run."""

from __future__ import annotations

import sys

from autograder.sandbox import mode


def main() -> int:
    status = mode.sandbox_status()
    if status.available:
        print("sandbox: bubblewrap (read-only system, private /tmp, no network, own PID namespace)")
        return 0
    print(mode.PLAIN_NOTE.format(reason=status.reason))
    return 1 if mode.requested() == "require" else 0


if __name__ == "__main__":
    sys.exit(main())
