"""Renderers for :class:`autograder.wire.results.ExerciseResult`: console tables and JSON."""
