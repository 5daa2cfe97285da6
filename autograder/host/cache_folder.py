"""kernelgrade's cache folder on this host, shared by the preflight's passed checks
(:mod:`autograder.grading.preflight`, ``preflight/``) and the compiled timing kernels
(:mod:`autograder.host.kernel_cache`, ``kernels/``)."""

from __future__ import annotations

import os
from pathlib import Path
from autograder import settings

CACHE_ENV = settings.CACHE_DIR  # the cache folder (default: the user's cache folder)
CACHE_SWITCH_ENV = settings.PREFLIGHT_CACHE  # "off" (or 0, no, false): no cache
CACHE_MAX_AGE_S = 30 * 24 * 3600  # entries older than this are removed when one is written


def cache_dir() -> Path | None:
    """The folder of kernelgrade's cache: ``$KERNELGRADE_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/kernelgrade``, else ``~/.cache/kernelgrade``; None when
    ``KERNELGRADE_PREFLIGHT_CACHE`` is ``off`` (or ``0``, ``no``, ``false``) or no folder can be
    named (no home). The folder need not exist yet."""
    if os.environ.get(CACHE_SWITCH_ENV, "").strip().lower() in ("off", "0", "no", "false"):
        return None
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "kernelgrade"
    try:
        return Path.home() / ".cache" / "kernelgrade"
    except (RuntimeError, KeyError):
        return None
