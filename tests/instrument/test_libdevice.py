"""The simulator's libdevice functions (:mod:`autograder.simulator.libdevice`) in an instrumented
launch: their results carry their arguments' taint, as ``math``'s do, so the concept checks see
a sum made with ``libdevice.fadd_rn`` as the sum it is (red team g7)."""

import numpy as np

from autograder.instrument import instrumented_launch
from autograder.simulator import adapter

from .conftest import ROOT, load


def test_a_libdevice_sum_keeps_the_data_flow_of_a_plain_sum():
    adapter.libdevice_functions()   # what the simulator child's settings do
    module = load(ROOT / "tests" / "files" / "honest" / "libdevice.py")
    plain = load(ROOT / "solutions" / "block_sum.py")
    x = np.random.default_rng(0).random(1000).astype(np.float32)
    reports = []
    for kernel in (module.block_sum, plain.block_sum):
        partial = np.zeros(4, np.float32)
        reports.append(instrumented_launch(kernel, 4, 256, [x, partial]))
        assert np.allclose(partial, [x[b * 256:(b + 1) * 256].sum() for b in range(4)], rtol=1e-5)
    got, expected = (r["shared_use"] for r in reports)
    assert reports[0]["error"] is None
    assert (got["shared_inputs"], got["max_output_steps"]) == \
        (expected["shared_inputs"], expected["max_output_steps"]) and got["max_output_steps"] > 0
