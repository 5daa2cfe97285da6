"""Numba's CUDA simulator, adapted in one place (:mod:`autograder.simulator.adapter`): the
settings a grading child applies before any kernel runs, and the simulator's own classes that the
instrumentation and the definitions read. No other module imports ``numba.cuda.simulator``
(``tests/test_layers.py``); see ``docs/architecture.md``, "The layers". Beside it: the block
scheduler that runs a block's threads one at a time (:mod:`autograder.simulator.scheduler`) and
libdevice's functions as a GPU computes them (:mod:`autograder.simulator.libdevice`)."""
