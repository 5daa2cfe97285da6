# adversarial: takes the instructor's kernel instead of writing one: imports it from the
# package (autograder.exercises.tiled_matmul.solution), through importlib, or by executing the file.
# adversarial-exercise: tiled_matmul
# adversarial-message: not run by the grader
# kernelgrade-expect: correctness=error
import importlib
from autograder.exercises.tiled_matmul.solution import tiled_matmul, TILE_WIDTH

solution = importlib.import_module("autograder.exercises.tiled_matmul.solution")
tiled_matmul = solution.tiled_matmul
TILE_WIDTH = solution.TILE_WIDTH
exec(open("autograder/exercises/tiled_matmul/solution.py").read())
