"""Issue 39 item 6 for output styles and the project's instructions files: a hostile output style
is one warning naming the file (and field) and the other styles load; a hostile CLAUDE.md is
skipped, never read whole nor waited on, and the other instructions files are still sent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from covey.definitions.context import project_context
from covey.definitions.output_style import output_styles
from tests.common.test_safe_yaml import BOMB
from tests.hostile_files import huge



STYLES = {
    "alias-bomb": (lambda p: p.write_text(f"---\n{BOMB}---\nbody\n"), "alias bomb"),
    "duplicate-key": (lambda p: p.write_text("---\nname: a\nname: b\n---\nbody\n"), "appears twice"),
    "frontmatter-list": (lambda p: p.write_text("---\n- a\n---\nbody\n"), "not a mapping"),
    "keep-coding-word": (lambda p: p.write_text("---\nkeep-coding-instructions: perhaps\n---\nb\n"),
                         "field 'keep-coding-instructions'"),
    "name-list": (lambda p: p.write_text("---\nname: [a]\n---\nb\n"), "field 'name'"),
    "fifo": (os.mkfifo, "a FIFO (named pipe), not a regular file"),
    "symlink-dev-zero": (lambda p: p.symlink_to("/dev/zero"), "a character device"),
    "huge-200mb": (huge, "too large: over 1,048,576 bytes"),
    "invalid-utf8": (lambda p: p.write_bytes(b"---\nname: \xff\n---\n"), "not UTF-8 text"),
}


@pytest.mark.parametrize("name", sorted(STYLES))
def test_a_hostile_output_style_is_one_warning_and_the_others_load(tmp_path, name):
    make, words = STYLES[name]
    folder = tmp_path / "project" / ".claude" / "output-styles"
    folder.mkdir(parents=True)
    (folder / "Editor.md").write_text("---\ndescription: Edits prose\n---\nEdit.\n")
    path = folder / f"{name}.md"
    make(path)
    styles, warnings = output_styles(tmp_path / "project", home=tmp_path / "home")
    assert "Editor" in styles and len(warnings) == 1, warnings
    assert warnings[0].startswith(f"{path}: ") and words in warnings[0] and "\n" not in warnings[0], warnings[0]


@pytest.mark.parametrize("make", [os.mkfifo, lambda p: p.symlink_to("/dev/zero"), huge,
                                  lambda p: p.write_bytes(b"caf\xe9")], ids=["fifo", "dev-zero", "huge-200mb", "latin1"])
def test_a_hostile_claude_md_is_skipped_and_the_other_instructions_are_sent(tmp_path, make):
    make(tmp_path / "CLAUDE.md")
    (tmp_path / "AGENTS.md").write_text("Agents rules.")
    messages = project_context(tmp_path, omit=False)
    text = messages[0]["content"][0]["text"]
    assert "Agents rules." in text and "CLAUDE.md" not in text
