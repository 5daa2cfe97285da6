"""The grader's own kernels for exercises whose submission is a device function, not a kernel.

A driver module defines ``drive(function, views, params, consts)``: it builds a kernel that calls
the student's device function, launches it on the guarded views and returns nothing (outputs are
read back from the views' buffers by the harness).
"""
