"""kernelgrade: auto-graded Numba CUDA kernel exercises.

Students fill in kernel skeletons; :func:`autograder.grader.grade` runs hidden correctness,
concept and timing tests in a child process on a GPU or the Numba CUDA simulator, and compares
the outputs with a float64 reference in the grader's own process.
"""

__version__ = "0.1.0"
