"""Instrumented runs happen in this process, on the simulator: choose it before numba loads."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

FILES = Path(__file__).resolve().parent / "files"
ROOT = Path(__file__).resolve().parents[2]


def load(path) -> object:
    """Import a kernel file as its own module (the way the harness imports a submission)."""
    path = Path(path)
    if not path.is_absolute():
        path = FILES / path
    spec = importlib.util.spec_from_file_location(f"instrument_case_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def line_of(path, text: str) -> int:
    """Line number of the first line of ``path`` containing ``text``."""
    path = Path(path)
    if not path.is_absolute():
        path = FILES / path
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if text in line:
            return n
    raise AssertionError(f"{text!r} not in {path}")


def f32(*shape, seed=0):
    return np.random.default_rng(seed).random(shape, dtype=np.float32)


@pytest.fixture
def sim_only():
    from numba import config

    if not config.ENABLE_CUDASIM:
        pytest.skip("numba was imported before this conftest without the simulator")
