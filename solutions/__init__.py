"""Instructor solutions: the reference for timing and the proof that each exercise works.

Installed as ``autograder.solutions``; never imported into a student's process before the
student's results have been sent.
"""
