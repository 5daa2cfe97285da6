# adversarial: takes the instructor's kernel instead of writing one: imports it from the
# checkout (solutions.tiled_matmul, beside the package), through importlib, or by executing the file.
# adversarial-exercise: tiled_matmul
# adversarial-message: not run by the grader
# kernelgrade-expect: correctness=error
import importlib
from solutions.tiled_matmul import tiled_matmul, TILE_WIDTH

solution = importlib.import_module("solutions.tiled_matmul")
tiled_matmul = solution.tiled_matmul
TILE_WIDTH = solution.TILE_WIDTH
exec(open("solutions/tiled_matmul.py").read())
