"""The generated documents (docs/CONTRACTS.md, the README's exercise table) match the exercise
definitions they come from."""

from pathlib import Path

from autograder import exercises
from autograder.authoring import docs


def test_generated_documents_are_current(capsys):
    assert docs.main(["--check"]) == 0, capsys.readouterr().out


def test_every_exercise_has_a_contract_section_with_its_launch():
    text = docs.render_contracts()
    for name in exercises.names():
        ex = exercises.get(name)
        assert f"## {name} — {ex.title}" in text
        assert ex.contract_text.strip(), f"{name} has no contract_text"
        if ex.contract.kernel and not ex.contract.device_function:
            assert f"- Launch: `{ex.contract.kernel}[" in text


def test_a_changed_definition_makes_the_documents_stale(monkeypatch, tmp_path, capsys):
    ex = exercises.get("tiled_matmul")
    monkeypatch.setattr(ex, "title", ex.title + " (renamed)")
    assert "(renamed)" in docs.render_contracts()
    assert docs.main(["--check"]) == 1
    assert "stale: docs/CONTRACTS.md" in capsys.readouterr().out


def test_help_and_unknown_arguments_write_nothing(capsys, monkeypatch):
    writes = []
    monkeypatch.setattr(Path, "write_text", lambda self, *a, **k: writes.append(self))
    assert docs.main(["--help"]) == 0 and "usage:" in capsys.readouterr().out
    assert docs.main(["--chek"]) == 2 and "unknown argument '--chek'" in capsys.readouterr().err
    assert writes == []


def test_the_authoring_guide_names_every_field_of_the_definition_api():
    # docs/authoring.md documents autograder.define: a field added to a class there must be
    # described in the guide too (driver_root is set by the registry, not by an author)
    import dataclasses
    import re

    from autograder import define

    guide = (docs.ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")
    missing = [f"{name}.{f.name}" for name in define.__all__
               if dataclasses.is_dataclass(getattr(define, name))
               for f in dataclasses.fields(getattr(define, name))
               if f.name != "driver_root" and not re.search(rf"\b{f.name}\b", guide)]
    assert not missing, f"docs/authoring.md does not describe {', '.join(missing)}"


def test_the_readme_starts_with_the_two_commands_for_a_fresh_machine():
    readme = docs.README.read_text(encoding="utf-8")
    first_block = readme.split("```")[1]
    assert [line.split("#")[0].strip() for line in first_block.strip().splitlines()] == \
        ["make demo", "make test"]
