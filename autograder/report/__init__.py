"""Renderers for :class:`autograder.results.ExerciseResult`: console tables and JSON."""
