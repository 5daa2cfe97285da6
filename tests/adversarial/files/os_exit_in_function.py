# adversarial: prints a perfect result (a fake JSON report and "100 / 100 points") and exits the
# process with status 0 the first time the grader calls it.
# adversarial-exercise: occupancy
# adversarial-lift: reach
# adversarial-message: the grading process ended early
# kernelgrade-expect: correctness=error


def answer(**kw):
    import json
    import os

    print(json.dumps({"exercise": "occupancy", "score": 100.0, "max_score": 100.0,
                      "tests": [{"status": "passed"}]}))
    print("100 / 100 points")
    os._exit(0)


warps_per_block = resident_blocks_per_sm = resident_threads_per_sm = answer
tile_shared_bytes = global_traffic_reduction = answer
