"""The package's layers, one folder each: every module of ``autograder`` lies in a folder that
belongs to one layer below (or is one of the package's few faces at its top), and imports only
from its own layer or a lower one (every import statement counts, those inside functions too).
Parsed with ``ast``: nothing is imported.

Lowest first:

1. **foundations** (``wire/``, ``source/``, ``exercises/``, ``host/``, ``timing/``,
   ``simulator/``, ``instrument/``; ``errors``, ``settings``, ``define``): the formats between
   grader and child, a submission's source, the exercise registry, this host's shared facts,
   timing shared by both sides, Numba's simulator adapted, its instrumented launches. No grading,
   no processes started.
2. **child** (``child/``): what runs in the child process (``python -m autograder.child.harness``).
   It never imports the grader's side.
3. **sandbox** (``sandbox/``): starting, limiting and watching one child.
4. **judging** (``judge/``): a child's records into an exercise's tests, diagnostics, hints. The
   judges proper are pure (see :func:`test_the_judges_start_nothing`).
5. **grading** (``grading/``; ``grader``, the public entry): choosing the device, planning,
   running the children, the preflight.
6. **many gradings** (``batch/``, ``mutation/``): a class, the mutation analysis.
7. **front ends** (``authoring/``, ``report/``, ``nbgrader/``, ``gradescope/``,
   ``similarity/``; ``cli``).
"""

from __future__ import annotations

import ast
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "autograder"

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundations", ("autograder", "errors", "settings", "define", "wire", "wire.*", "source",
                     "source.*", "exercises", "exercises.*", "host", "host.*", "timing",
                     "timing.*", "simulator", "simulator.*", "instrument", "instrument.*")),
    ("child", ("child", "child.*")),
    ("sandbox", ("sandbox", "sandbox.*")),
    ("judging", ("judge", "judge.*")),
    ("grading", ("grading", "grading.*", "grader")),
    ("many gradings", ("batch", "batch.*", "mutation", "mutation.*")),
    ("front ends", ("cli", "authoring", "authoring.*", "report", "report.*", "nbgrader",
                    "nbgrader.*", "gradescope", "gradescope.*", "similarity", "similarity.*")),
]

#: The package's faces: the only modules outside a folder.
FACES = {"autograder", "errors", "settings", "define", "grader", "cli"}

# Imports that go up a layer, each with its reason. The test fails when one disappears, so the
# list only shrinks. (Empty: the preflight's package facts live in ``host.environment``.)
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}


# Modules that must judge without side effects, and what they may not import.
PURE = ("judge.collect", "judge.cases", "judge.concept_use", "judge.compare", "judge.hints",
        "judge.ptx", "judge.occupancy_calculator", "judge.advice")
IMPURE = ("sandbox", "grading", "host.gpulock", "subprocess", "threading", "os",
          "multiprocessing")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) or "autograder"


def _is_module(dotted: str) -> bool:
    base = PACKAGE.joinpath(*dotted.split(".")) if dotted else PACKAGE
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file() or (
        base.is_dir() and any(base.glob("*.py")))


def _imports(path: Path, text: str | None = None) -> list[tuple[str, int, bool]]:
    """(imported module, relative to the package, or ``"autograder"``; line; at module level)
    for each import of the package, plus ``("!" + name, ...)`` for other top-level packages.
    ``text``: the module's source (default: read from ``path``)."""
    text = path.read_text(encoding="utf-8") if text is None else text
    tree = ast.parse(text, str(path))
    name = _module_name(path)
    package = name if path.name == "__init__.py" else (name.rpartition(".")[0] or "autograder")
    top_level = {id(n) for n in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ("autograder." + package if package != "autograder" else "autograder")
                base = ".".join(base.split(".")[: len(base.split(".")) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            targets = [f"{module}.{a.name}" if module.startswith("autograder") and _is_module(
                f"{module}.{a.name}".removeprefix("autograder").lstrip(".")) else module
                for a in node.names]
        else:
            continue
        for target in targets:
            if target == "autograder" or target.startswith("autograder."):
                found.append((target.removeprefix("autograder.") if target != "autograder"
                              else "autograder", node.lineno, id(node) in top_level))
            else:
                found.append(("!" + target.split(".")[0], node.lineno, id(node) in top_level))
    return found


def _layer(module: str) -> int | None:
    for i, (_, patterns) in enumerate(LAYERS):
        if any(fnmatchcase(module, p) for p in patterns):
            return i
    return None


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def test_every_module_has_a_layer():
    assert [m for m in MODULES if _layer(m) is None] == []


def test_no_module_imports_from_a_higher_layer():
    upward, used = [], set()
    for module, path in MODULES.items():
        for target, line, _ in _imports(path):
            if target.startswith("!") or _layer(target) is None:
                continue
            if _layer(target) > _layer(module):
                if (module, target) in ALLOWED_UPWARD:
                    used.add((module, target))
                    continue
                upward.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {module} "
                              f"({LAYERS[_layer(module)][0]}) imports {target} "
                              f"({LAYERS[_layer(target)][0]})")
    assert upward == []
    assert used == set(ALLOWED_UPWARD), "an allowed upward import is gone: remove it from the list"


def test_the_child_never_imports_the_grader_side():
    grader_side = {m for m in MODULES if _layer(m) > _layer("child")}
    for module in (m for m in MODULES if m == "child" or m.startswith("child.")):
        assert {t for t, _, _ in _imports(MODULES[module])} & grader_side == set(), module


def test_the_child_imports_numba_only_inside_functions():
    """The harness chooses the backend (``NUMBA_ENABLE_CUDASIM``, read when Numba is imported)
    before Numba is imported: no module of the child may import it at module level."""
    for module in (*(m for m in MODULES if m.startswith(("child.", "simulator."))), "wire.protocol",
                   "wire.channel", "host.environment", "wire.buffers", "wire.shapes",
                   "source.definitions", "source.same_code"):
        at_top = [line for t, line, top in _imports(MODULES[module])
                  if top and t in ("!numba", "!numba_cuda", "!llvmlite")]
        assert at_top == [], f"{module} imports numba at module level (line {at_top})"


def test_only_the_adapter_reaches_numbas_simulator():
    """Numba's simulator is adapted in one module (issue 31): no other module imports
    ``numba.cuda.simulator`` or names one of its modules (``importlib``), so a numba-cuda release
    that moves its internals is met in ``simulator/adapter.py`` alone."""
    reaching = []
    for module, path in MODULES.items():
        if module == "simulator.adapter":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names = [node.value]
            if any(n == "numba.cuda.simulator" or n.startswith("numba.cuda.simulator.")
                   for n in names):
                reaching.append(f"{module}:{node.lineno}")
    assert reaching == []


#: The package's folders (subpackages): each is one layer's, whole.
FOLDERS = sorted({m.split(".")[0] for m in MODULES if "." in m})


@pytest.mark.parametrize("folder", FOLDERS)
def test_each_folder_lies_in_one_layer(folder):
    layers = {LAYERS[_layer(m)][0] for m in MODULES if m == folder or m.startswith(folder + ".")}
    assert len(layers) == 1, f"autograder/{folder}/ spans the layers {sorted(layers)}"


def test_no_two_folders_import_each_other():
    """Folders import downwards only: never two that import each other (issue 23: ``report``
    and ``nbgrader`` did)."""
    edges = set()
    for module, path in MODULES.items():
        here = module.split(".")[0]
        for target, _, _ in _imports(path):
            there = target.split(".")[0]
            if not target.startswith("!") and there != here and there in FOLDERS \
                    and here in FOLDERS:
                edges.add((here, there))
    assert not {(a, b) for a, b in edges if (b, a) in edges}, sorted(edges)


def test_every_module_is_in_a_folder_but_the_faces():
    assert {m for m in MODULES if "." not in m and m not in FOLDERS} == FACES


def test_the_judges_start_nothing():
    for module in PURE:
        imported = {t.lstrip("!") for t, _, _ in _imports(MODULES[module])}
        assert {t for t in imported if any(t == i or t.startswith(i + ".")
                                           for i in IMPURE)} == set(), module


@pytest.mark.parametrize("source, expected", [
    ("from .sandbox import run_child\n", "sandbox"),
    ("from . import grader\n", "grader"),
    ("def f():\n    from .judge import collect\n", "judge.collect"),
    ("import autograder.report.html\n", "report.html"),
    ("from .instrument import instrumented_launch\n", "instrument"),
])
def test_imports_are_found_wherever_they_are(source, expected):
    """The parser sees relative, absolute and function-level imports (else the rule above
    would pass vacuously)."""
    assert expected in {t for t, _, _ in _imports(PACKAGE / "cli.py", source)}
    assert expected in {t for t, _, _ in _imports(PACKAGE / "child" / "harness.py",
                                                  source.replace("from .", "from .."))}
    assert expected in {t for t, _, _ in _imports(PACKAGE / "report" / "html.py",
                                                  source.replace("from .", "from .."))}
