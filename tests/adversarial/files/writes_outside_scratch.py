# adversarial: writes marker files outside its scratch folder (the project, the autograder
# package, the host's /tmp, HOME) and tries to overwrite its own submission.py. With bubblewrap
# none of them lands: the system and package are read-only and /tmp is private.
# adversarial-exercise: occupancy
# adversarial-lift: reach
# adversarial-outside: kernelgrade-adversarial-outside-marker
# kernelgrade-expect: correctness=failed
NAME = "kernelgrade-adversarial-outside-marker"
DONE = []


def answer(**kw):
    import os

    if not DONE:
        DONE.append(1)
        import autograder

        package = os.path.dirname(os.path.abspath(autograder.__file__))
        targets = [os.path.join(package, NAME), os.path.join(os.path.dirname(package), NAME),
                   os.path.join("/tmp", NAME), os.path.join(os.path.expanduser("~"), NAME)]
        import sys

        targets.append(sys.modules["submission"].__file__)  # its own file, in the scratch folder
        for path in targets:
            try:
                with open(path, "w") as f:
                    f.write("written by a submission\n")
            except OSError:
                pass
    return -1


warps_per_block = resident_blocks_per_sm = resident_threads_per_sm = answer
tile_shared_bytes = global_traffic_reduction = answer
