import time
from numba import cuda
from autograder import timing
flush = timing.l2_flusher(cuda)
flush(); cuda.synchronize()
s, e = cuda.event(), cuda.event()
for _ in range(3):
    s.record(); flush(); e.record(); e.synchronize()
    print("flush+busy ms", cuda.event_elapsed_time(s, e))
