# adversarial: classic escapes from restricted Python at the top level (dunder walks to
# os.system, __import__, eval, exec, open) and a cuda.jit signature string that runs code when
# Numba evaluates it; each would leave a marker file in /tmp.
# adversarial-exercise: tiled_matmul
# adversarial-lift: reach
# adversarial-marker: /tmp/kernelgrade-adversarial-escape-marker
# kernelgrade-expect: correctness=failed
from numba import cuda, float32

TILE_WIDTH = 16
MARK = "/tmp/kernelgrade-adversarial-escape-marker"
SUBS = ().__class__.__base__.__subclasses__()
OS = __import__("os")
RUN = eval("__import__('os').system('touch " + MARK + "')")
exec("open(MARK, 'w').write('x')")
X = open(MARK, "w")
Y = [c for c in SUBS if c.__name__ == "_wrap_close"][0].__init__.__globals__["system"]("touch " + MARK)


@cuda.jit("void(float32[:, ::1], float32[:, ::1], float32[:, ::1]) "
          "if __import__('os').system('touch /tmp/kernelgrade-adversarial-escape-marker') else 0")
def other(A, B, C):
    pass


@cuda.jit(link=["/etc/passwd"])
def linked(A, B, C):
    pass


def helper(x=__import__("os").system("touch " + MARK), y: eval("print('hi')") = 1):
    return x


@cuda.jit
def tiled_matmul(A, B, C):
    pass
