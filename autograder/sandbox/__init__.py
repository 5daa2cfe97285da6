"""Starting, limiting and watching one child process, one job a module:

* ``mode``: bubblewrap or plain, chosen once per grader process (``KERNELGRADE_SANDBOX``, the
  probe); ``python -m autograder.sandbox`` says which.
* ``bwrap``: the bubblewrap arguments of one child (what it sees, what is hidden from it).
* ``reaper``: the plain mode's guardian, which kills every descendant when the harness ends.
* ``limits``: what a child starts with (its deadlines and resource caps, its environment).
* ``watchdog``: the deadlines, on the CPU time of the child's process tree or the wall clock.
* ``run``: running one child (``run_child``): spawn, feed the request, collect the records, stop.
* ``gpu_nodes``: the GPU device nodes a child is shown; ``parse_check``: the parse check before
  any child; ``nodump``: a grader that cannot be inspected by its children.
"""
