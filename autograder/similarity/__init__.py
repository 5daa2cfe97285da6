"""Kernel-aware similarity of a class's submissions (``autograder similarity``): which pairs
share more of their own work than independent solutions of one lesson do. A score is a reason
to look at two files, never a verdict. Everything runs locally. How the score is made and what
it cannot catch: docs/similarity.md."""
