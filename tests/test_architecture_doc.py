"""docs/architecture.md, the map in the repository, agrees with the code it maps: its layers are
``tests/test_layers.py``'s, in that order; the paths it names exist; and the code cites it, by
sections it has, instead of a design document the repository does not hold."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "autograder"

#: A layer's line in the doc: ``1. **foundations** (`wire/`, `errors.py`, ...): ...``.
LAYER_LINE = re.compile(r"^\d+\. \*\*(?P<name>[^*]+)\*\* \((?P<parts>[^)]*)\)", re.M)
#: A citation of the doc in the code: ``docs/architecture.md, "A grading, end to end"``.
CITATION = re.compile(r'docs/architecture\.md,\s+"(?P<section>[^"]+)"')


def _layers_test():
    spec = importlib.util.spec_from_file_location("_layers", ROOT / "tests" / "test_layers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _section(text: str, title: str) -> str:
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def doc_layers(text: str) -> list[tuple[str, set[str]]]:
    """(name, module names) of each layer the doc's "The layers" lists, in its order:
    ``wire/`` → ``wire``, ``grader.py`` → ``grader``."""
    return [(m["name"], {p.removesuffix("/").removesuffix(".py")
                         for p in re.findall(r"`([^`]+)`", m["parts"])})
            for m in LAYER_LINE.finditer(_section(text, "The layers"))]


def code_layers(layers) -> list[tuple[str, set[str]]]:
    """The same from ``tests/test_layers.py``'s ``LAYERS`` (the package's own ``__init__``
    left out)."""
    return [(name, {p for p in patterns if not p.endswith(".*") and p != "autograder"})
            for name, patterns in layers]


def test_the_layers_are_those_the_code_enforces_in_the_same_order():
    listed = doc_layers(DOC.read_text(encoding="utf-8"))
    assert listed, "docs/architecture.md lists no layer under '## The layers'"
    assert listed == code_layers(_layers_test().LAYERS)


def test_a_layer_moved_or_renamed_in_the_code_shows_up():
    """The comparison can fail: swap two layers or move a folder and it no longer holds."""
    layers = list(_layers_test().LAYERS)
    listed = doc_layers(DOC.read_text(encoding="utf-8"))
    swapped = [layers[1], layers[0], *layers[2:]]
    assert listed != code_layers(swapped)
    moved = [(n, tuple(p for p in ps if p != "judge")) if n == "judging" else
             (n, ps + ("judge",)) if n == "grading" else (n, ps) for n, ps in layers]
    assert listed != code_layers(moved)


def test_every_path_the_map_names_exists():
    text = DOC.read_text(encoding="utf-8")
    named = set(re.findall(r"`(autograder/[\w/]+?(?:\.py|/))`", text))
    named |= {"autograder/" + p for p in re.findall(
        r"`((?:wire|source|exercises|host|timing|instrument|child|sandbox|judge|grading|batch|"
        r"mutation|authoring|report|nbgrader|gradescope)/[\w/]*?(?:\.py|/)?)`", text)}
    named |= set(re.findall(r"`(tests/[\w/]+?(?:\.py|/))`", text))
    assert len(named) > 20
    assert [p for p in sorted(named) if not (ROOT / p).exists()] == []
    links = re.findall(r"\]\(([\w.-]+\.md)\)", text)
    assert [p for p in links if not (DOC.parent / p).is_file()] == []


def test_the_code_cites_the_map_by_sections_it_has():
    headings = set(re.findall(r"^## (.+)$", DOC.read_text(encoding="utf-8"), re.M))
    cited, wrong, elsewhere = set(), [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "DESIGN.md" in text or "design card" in text:
            elsewhere.append(str(path.relative_to(ROOT)))
        for m in CITATION.finditer(text):
            cited.add(m["section"])
            if m["section"] not in headings:
                wrong.append(f"{path.relative_to(ROOT)}: {m['section']!r}")
    assert elsewhere == [], "cite docs/architecture.md, not a design document outside the repository"
    assert wrong == [], f"sections docs/architecture.md does not have: {wrong}"
    assert cited, "no module cites docs/architecture.md"


def test_the_readme_links_the_map():
    assert "(docs/architecture.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
