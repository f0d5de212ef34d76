"""Issue 39 item 6: a hostile SKILL.md (or command file) is one error line naming the file and the
field, and the other skills load."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from covey.definitions.skill_loader import discover_skills
from tests.common.test_safe_yaml import BOMB
from tests.hostile_files import special_files


def _head(*lines: str) -> str:
    return "---\ndescription: d\n" + "".join(f"{line}\n" for line in lines) + "---\nDo the thing.\n"


# (SKILL.md text, the field its line names, words the reason holds)
BAD = {
    "alias-bomb": (_head(BOMB.rstrip("\n")), "frontmatter", "alias bomb"),
    "deep-flow": (_head("allowed-tools: " + "[" * 600 + "]" * 600), "frontmatter", "brackets deep"),
    "deep-block": (_head("x:", "- " * 5000 + "y"), "frontmatter", "nests too deeply"),
    "nul-byte": (_head("name: a\x00b"), "frontmatter", "#x0000"),
    "python-tag": (_head("name: !!python/object/apply:os.system [id]"), "frontmatter", "python/object"),
    "duplicate-key": (_head("name: a", "name: b"), "name", "appears twice"),
    "frontmatter-list": ("---\n- a\n---\nbody\n", "frontmatter", "valid dictionary"),
    "allowed-tools-int": (_head("allowed-tools: 5"), "allowed-tools", "valid list"),
    "allowed-tools-mapping": (_head("allowed-tools: {a: 1}"), "allowed-tools", "valid list"),
    "description-list": ("---\ndescription: [a]\n---\nbody\n", "description", "valid string"),
    "name-mapping": (_head("name: {a: 1}"), "name", "valid string"),
    "disable-invocation-word": (_head("disable-model-invocation: perhaps"), "disable-model-invocation", "boolean"),
    "when-to-use-huge": (_head("when_to_use: " + "w" * 30_000), "when_to_use", "20000"),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project" / ".claude" / "skills" / "good"
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text("---\ndescription: fine\n---\nok\n")
    (tmp_path / "home").mkdir()
    return tmp_path / "project"


def _skill(project: Path, name: str) -> Path:
    path = project / ".claude" / "skills" / name / "SKILL.md"
    path.parent.mkdir()
    return path


def _one_line(project: Path, path: Path, words: str, field: str | None = None) -> None:
    scan = discover_skills(project, home=project.parent / "home")
    assert "good" in scan.skills and path.parent.name not in scan.skills
    mine = [str(error) for error in scan.errors if error.path == str(path)]
    assert len(mine) == 1 and "\n" not in mine[0] and words in mine[0], mine
    assert mine[0].startswith(f"{path}: field {field!r}: " if field else f"{path}: "), mine[0]


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_hostile_skill_file_is_one_line_naming_file_and_field(project, name):
    text, field, words = BAD[name]
    path = _skill(project, name)
    path.write_text(text)
    _one_line(project, path, words, field)



SPECIAL = special_files("too large: over 1,048,576 bytes", b"---\ndescription: \xc3\x28\n---\n", prefix="cannot read: ")


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_a_special_or_huge_skill_file_is_refused_unread(project, name):
    make, words = SPECIAL[name]
    path = _skill(project, name)
    make(path)
    _one_line(project, path, words)


def test_a_fifo_among_the_commands_is_one_line_and_the_other_commands_load(project):
    commands = project / ".claude" / "commands"
    commands.mkdir()
    (commands / "fine.md").write_text("Say hello.\n")
    os.mkfifo(commands / "pipe.md")
    scan = discover_skills(project, home=project.parent / "home")
    assert "fine" in scan.skills and "pipe" not in scan.skills
    assert [str(e) for e in scan.errors] == [f"{commands / 'pipe.md'}: cannot read: a FIFO (named pipe), not a regular file"]


def test_a_skill_whose_dates_are_text_loads(project):
    _skill(project, "dated").write_text("---\nname: 2024-01-01\ndescription: 2024-05-06\n---\nbody\n")
    scan = discover_skills(project, home=project.parent / "home")
    assert scan.skills["dated"].description == "2024-05-06" and scan.errors == []
