"""How many workers ``autograder batch`` puts on each GPU when none is asked for."""

from __future__ import annotations

import pytest

from autograder.batch import run as batch
from autograder.batch import cluster


@pytest.mark.parametrize("gpus, cores, expected", [
    (1, 16, 12),   # one H200, 16 cores: the measured best (8: 158/min, 12: 201, 16: 189)
    (2, 32, 12),   # two GPUs, twice the cores: the same per GPU
    (1, 64, 12),   # capped: more workers than that only wait for the GPU
    (1, 8, 6),
    (4, 16, 3),    # four GPUs share 16 cores
    (1, 1, 1),     # never none
    (8, 4, 1),
])
def test_workers_per_gpu_follow_the_cores(gpus, cores, expected):
    assert cluster.default_workers_per_gpu(gpus, cores) == expected
    assert cluster.default_workers_per_gpu(gpus, cores, 141 << 30) == expected  # an H200


@pytest.mark.parametrize("gib, expected", [(80, 12), (40, 10), (24, 6), (16, 4), (2, 1)])
def test_a_smaller_gpu_gets_fewer_workers(gib, expected):
    """Each worker may hold a CUDA context and a timing's inputs (up to 3.2 GB) at once."""
    assert cluster.default_workers_per_gpu(1, 16, gib << 30) == expected


def test_the_gpu_memory_comes_from_nvidia_smi(monkeypatch, tmp_path):
    from autograder.grading import devices

    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 143771\necho 81559\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{__import__('os').environ['PATH']}")
    assert devices.smallest_gpu_memory_bytes() == 81559 << 20
    smi.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed'\nexit 9\n")
    assert devices.smallest_gpu_memory_bytes() is None


def test_the_command_line_leaves_the_choice_to_the_batch_by_default():
    import inspect

    from autograder import cli

    option = inspect.signature(cli.batch).parameters["workers_per_gpu"].default
    assert option.default is None
    assert inspect.signature(batch.run_batch).parameters["workers_per_gpu"].default is None
