# adversarial: writes a frame on the private channel that announces a 2 GiB array, then garbage,
# hoping the grader allocates it (or chokes on it).
# adversarial-exercise: occupancy
# adversarial-lift: reach
# adversarial-note: bytes of results and was stopped
# kernelgrade-expect: correctness=error


def answer(**kw):
    import json
    import os
    import struct
    import sys

    fd = int(sys.argv[1])  # the harness's channel: its first argument
    header = json.dumps({"type": "case", "id": 0, "_arrays": ["C"]}).encode()
    os.write(fd, b"KGR1" + struct.pack("<I", len(header)) + header + struct.pack("<Q", (1 << 31) - 1))
    chunk = b"\0" * (1 << 20)
    for _ in range(64):
        os.write(fd, chunk)
    return -1


warps_per_block = resident_blocks_per_sm = resident_threads_per_sm = answer
tile_shared_bytes = global_traffic_reduction = answer
