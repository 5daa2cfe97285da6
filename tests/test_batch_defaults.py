"""How many workers ``autograder batch`` puts on each GPU when none is asked for."""

from __future__ import annotations

import pytest

from autograder import batch


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
    assert batch.default_workers_per_gpu(gpus, cores) == expected


def test_the_command_line_leaves_the_choice_to_the_batch_by_default():
    import inspect

    from autograder import cli

    option = inspect.signature(cli.batch).parameters["workers_per_gpu"].default
    assert option.default is None
    assert inspect.signature(batch.run_batch).parameters["workers_per_gpu"].default is None
