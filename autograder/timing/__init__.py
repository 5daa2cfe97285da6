"""Timing shared by grader and child: interleaved pairs of launches and their statistics
(``measure``), and every timed launch's outputs checked by trusted kernels (``outputs``)."""
