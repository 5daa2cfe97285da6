"""What students install (issue 11): a kernelgrade wheel carries every exercise's definition and
no instructor solution, known-bad submission or test; installed, it lists the exercises, loads
each definition, runs occupancy's public tests, and grades only where it is given the
solutions ($KERNELGRADE_SOLUTIONS or --solutions), exit 2 otherwise.

The wheel is built as ``pip wheel`` builds it (setuptools, with build isolation, from a copy of
the sources: the checkout gets no build/ folder) and installed, without dependencies, into a
fresh virtual environment under the test's temporary folder; that venv finds the dependencies in
this one's site-packages (:func:`install`), so no network is needed beyond the build backend.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

from autograder import exercises

from conftest import EXERCISES, ROOT, SOLUTIONS

PACKAGE = ROOT / "autograder"


def build_wheel(out: Path) -> Path:
    """``pip wheel --no-deps`` of this checkout's sources (copied to ``out/src``, caches left
    out) into ``out/dist``; returns the wheel. Raises ``AssertionError`` with pip's output when
    the build fails."""
    src = out / "src"
    src.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for name in ("autograder", "assignments", "solutions"):  # solutions: to prove none is packed
        shutil.copytree(ROOT / name, src / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                           "-w", str(out / "dist"), str(src)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [wheel] = (out / "dist").glob("kernelgrade-*.whl")
    return wheel


def install(venv: Path, wheel: Path) -> Path:
    """A fresh venv at ``venv`` with ``wheel`` installed by pip (``--no-deps``, not editable);
    its dependencies come from this interpreter's site-packages, added as a site folder after
    the venv's own (so the venv's ``autograder`` is the one imported), and the CUDA wheels'
    ``nvidia/`` folder is linked into the venv's site-packages, the only place numba-cuda's
    cuda-pathfinder looks for NVRTC and NVVM. Returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = venv / "bin" / "python"
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                           "-q", "--no-deps", "--no-index", str(wheel)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    purelib = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    ours = Path(sysconfig.get_paths()["purelib"])
    Path(purelib, "_kernelgrade_test_deps.pth").write_text(
        f"import site; site.addsitedir({str(ours)!r})\n")
    if (ours / "nvidia").is_dir():
        Path(purelib, "nvidia").symlink_to(ours / "nvidia")
    return python


def user_env(**extra: str) -> dict:
    """This process's environment without any solutions folder, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k != exercises.SOLUTIONS_ENV}
    return env | extra


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def python(wheel, tmp_path_factory) -> Path:
    return install(tmp_path_factory.mktemp("student") / "venv", wheel)


def run(args: list[str], cwd: Path, timeout: int = 600, **env: str):
    return subprocess.run(args, cwd=cwd, env=user_env(**env), capture_output=True, text=True,
                          timeout=timeout)


def test_wheel_holds_every_definition_and_no_solution(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    for name in exercises.names():
        folder = EXERCISES / name
        for f in ("exercise.py", "driver.py", "notebook.py"):
            if (folder / f).is_file():
                assert f"kernelgrade_assignments/{name}/{f}" in names, f"{name}/{f} not packed"
    for f in EXERCISES.glob("*.py"):  # helpers the definitions share
        assert f"kernelgrade_assignments/{f.name}" in names, f"{f.name} not packed"
    assert not [n for n in names if n.endswith(("/solution.py", "/solution_blockdim.py"))
                or "/mutants/" in n
                or "/variants/" in n
                or n.startswith(("tests/", "solutions/", "assignments/", "autograder/assignments"))]
    # every module of the engine (a new subpackage missing from pyproject.toml's packages shows
    # here), and the report templates
    for f in PACKAGE.rglob("*"):
        rel = f.relative_to(ROOT).as_posix()
        if f.is_file() and "__pycache__" not in rel and (f.suffix == ".py" or "/templates/" in rel):
            assert rel in names, f"{rel} not packed"
    requires = [ln.split(": ", 1)[1] for ln in meta.splitlines()
                if ln.startswith("Requires-Dist: ") and "extra ==" not in ln]
    assert requires and all("~=" in r for r in requires), requires
    assert "jupytext~=1.19" in requires
    assert "Requires-Python: >=3.11" in meta


def test_gradescope_wheel_packs_the_same_files(wheel):
    """The Gradescope bundle's own wheel (autograder.gradescope.wheel) holds what pip's does."""
    from autograder.gradescope.wheel import _contents

    with zipfile.ZipFile(wheel) as z:
        ours = {n for n in z.namelist() if n.startswith(("autograder/", "kernelgrade_assignments/"))}
    assert set(_contents()) == ours


def test_pins_are_compatible_ranges_and_environment_yml_the_tested_versions():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    env = (ROOT / "environment.yml").read_text()
    lock = (ROOT / "requirements-lock.txt").read_text().splitlines()
    for req in project["dependencies"] + project["optional-dependencies"]["test"]:
        name, floor = req.split("~=")
        bare = name.split("[")[0]
        exact = [ln for ln in lock if ln.lower().startswith(bare.lower() + "==")]
        assert exact, f"{bare} is not in requirements-lock.txt"
        version = exact[0].split("==")[1]
        assert version.startswith(floor) or version >= floor, (req, version)
        assert f"{name}=={version}" in env or f"{bare}={version}" in env, \
            f"environment.yml lacks {bare} {version}"
    assert project["requires-python"] == ">=3.11" and "python=3.11" in env


def test_installed_package_lists_exercises_and_loads_each_definition(python, tmp_path):
    script = (
        "import json, autograder\n"
        "from autograder import exercises\n"
        "out = {'file': autograder.__file__, 'defs': {}, 'mutants': {}, 'missing': {}}\n"
        "for name in exercises.names():\n"
        "    ex = exercises.get(name)\n"
        "    out['defs'][name] = [ex.number, ex.assignment, len(ex.cases), ex.max_score]\n"
        "    out['mutants'][name] = len(exercises.mutants(name))\n"
        "    try:\n"
        "        exercises.solution_path(name)\n"
        "    except FileNotFoundError as exc:\n"
        "        out['missing'][name] = str(exc)\n"
        "print(json.dumps(out))\n")
    proc = run([str(python), "-c", script], tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert Path(got["file"]).is_relative_to(python.parent.parent), got["file"]
    want = {n: [e.number, e.assignment, len(e.cases), e.max_score]
            for n in exercises.names() for e in [exercises.get(n)]}
    assert got["defs"] == want
    assert not any(got["mutants"].values())
    assert set(got["missing"]) == set(want)
    assert all(exercises.SOLUTIONS_ENV in m for m in got["missing"].values())


def solutions_folder(where: Path, *names: str) -> Path:
    """An instructor's solutions folder, ``<name>.py`` for each exercise."""
    where.mkdir()
    for name in names:
        shutil.copy(SOLUTIONS / f"{name}.py", where / f"{name}.py")
    return where


def test_installed_cli_grades_only_with_the_solutions(python, tmp_path):
    autograder = str(python.parent / "autograder")
    sub = tmp_path / "occupancy.py"
    shutil.copy(SOLUTIONS / "occupancy.py", sub)
    assert run([autograder, "--help"], tmp_path).returncode == 0
    listed = run([autograder, "exercises"], tmp_path)
    assert listed.returncode == 0 and all(n in listed.stdout for n in exercises.names())

    missing = run([autograder, "grade", str(sub), "-e", "occupancy", "--device", "sim"],
                  tmp_path)
    assert missing.returncode == 2 and not missing.stdout, missing.stdout
    assert exercises.SOLUTIONS_ENV in missing.stderr and "error:" in missing.stderr

    bad = run([autograder, "grade", str(sub), "-e", "occupancy", "--device", "sim",
               "--solutions", str(tmp_path / "nowhere")], tmp_path)
    assert bad.returncode == 2 and "--solutions" in bad.stderr

    sols = solutions_folder(tmp_path / "instructor", "occupancy")
    graded = run([autograder, "grade", str(sub), "-e", "occupancy", "--device", "sim",
                  "--json", "--solutions", str(sols)], tmp_path)
    assert graded.returncode == 0, graded.stderr
    result = json.loads(graded.stdout)
    tests = [t for t in result["tests"] if t["status"] != "skipped"]
    assert tests and all(t["status"] == "passed" for t in tests), tests
    assert any(t["visibility"] == "hidden" for t in tests)  # judged with the solution


def test_installed_public_tests_of_occupancy_need_no_solution(python, tmp_path):
    def public(path: Path, returncode: int) -> subprocess.CompletedProcess:
        code = ("import sys\nfrom autograder.nbgrader.public import run_public_tests\n"
                "run_public_tests('occupancy', device='sim', cells=[sys.stdin.read()])\n")
        proc = subprocess.run([str(python), "-c", code], input=path.read_text(),
                              cwd=tmp_path, env=user_env(), capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == returncode, proc.stderr
        return proc

    good = public(SOLUTIONS / "occupancy.py", 0).stdout
    assert "5 of 5 public tests passed" in good, good
    bad = public(EXERCISES / "occupancy" / "mutants" / "one_tile_only.py", 1)
    assert "[FAILED] 16×16 tiles use 2 KB" in bad.stdout and "tile_shared_bytes" in bad.stdout
    assert "PublicTestsFailed: " in bad.stderr and "public tests failed" in bad.stderr


def test_installed_cli_runs_public_tests_without_solutions(python, tmp_path):
    """What a student runs on a laptop: the public cases, the concept test and the diagnostics
    of a kernel exercise, with no instructor solution anywhere."""
    sub = tmp_path / "tiled_matmul.py"
    shutil.copy(EXERCISES / "tiled_matmul" / "mutants" / "naive.py", sub)
    proc = run([str(python.parent / "autograder"), "grade", str(sub), "-e", "tiled_matmul",
                "--device", "sim", "--public"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "[ok] width 16: correct" in proc.stdout, proc.stdout
    assert "[FAILED] concept" in proc.stdout and "shared memory" in proc.stdout
    assert "float64" in proc.stdout  # the performance hint, with its line
    assert "hidden:" not in proc.stdout and "seed" not in proc.stdout
