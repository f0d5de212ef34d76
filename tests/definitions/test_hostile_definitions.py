"""Issue 39 item 6: a cloned repository's agents folder is untrusted input. Each hostile file gives
one line naming the file (and the field, where there is one) and why; the other files still load."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from covey.definitions.loader import load_definitions
from tests.common.test_safe_yaml import BOMB
from tests.hostile_files import huge

GOOD = "---\nname: good\ndescription: A good agent\n---\nYou help.\n"


def _head(*lines: str, body: str = "b\n") -> str:
    return "---\nname: bad\ndescription: d\n" + "".join(f"{line}\n" for line in lines) + f"---\n{body}"


# (file text, the field the line names (None: the whole file), words the reason holds)
ERRORS = {
    "alias-bomb": (_head(BOMB.rstrip("\n")), "frontmatter", "alias bomb"),
    "self-alias": (_head("k: &a [*a]"), "frontmatter", "contains itself"),
    "deep-flow": (_head("tools: " + "[" * 600 + "]" * 600), "frontmatter", "brackets deep"),
    "deep-block-list": (_head("tools:", "- " * 5000 + "x"), "frontmatter", "nests too deeply"),
    "deep-block-map": (_head(*(" " * i + f"k{i}:" for i in range(1200))), "frontmatter", "nests too deeply"),
    "nul-byte": (_head("model: a\x00b"), "frontmatter", "#x0000"),
    "unclosed-quote": (_head('color: "red'), "frontmatter", "quoted scalar"),
    "tab-indent": (_head("\tcolor: red"), "frontmatter", "'\\t'"),
    "duplicate-key": (_head("model: a", "model: b"), "model", "appears twice"),
    "python-tag-nested": (_head("hooks:", "  Stop: !!python/object/apply:os.system [id]"), "frontmatter",
                          "python/object"),
    "tools-int": (_head("tools: 5"), "tools", "valid list"),
    "tools-mapping": (_head("tools: {a: 1}"), "tools", "valid list"),
    "disallowed-mapping": (_head("disallowedTools: {a: b}"), "disallowedTools", "valid list"),
    "skills-mapping": (_head("skills: {a: 1}"), "skills", "valid list"),
    "model-list": (_head("model: []"), "model", "valid string"),
    "color-list": (_head("color: [1]"), "color", "valid string"),
    "hooks-string": (_head("hooks: x"), "hooks", "valid dictionary"),
    "hooks-event-int": (_head("hooks: {PreToolUse: 5}"), "hooks.PreToolUse", ""),
    "mcp-int": (_head("mcpServers: 3"), "mcpServers", "valid list"),
    "permission-mode-unknown": (_head("permissionMode: god"), "permissionMode", "'acceptEdits'"),
    "isolation-unknown": (_head("isolation: moon"), "isolation", "'worktree'"),
    "memory-unknown": (_head("memory: everywhere"), "memory", "'project'"),
    "background-word": (_head("background: maybe"), "background", "boolean"),
    "max-turns-negative": (_head("maxTurns: -3"), "maxTurns", "greater than 0"),
    "max-turns-list": (_head("maxTurns: [1]"), "maxTurns", "valid integer"),
    "initial-prompt-int": (_head("initialPrompt: 5"), "initialPrompt", "valid string"),
    "description-huge": (_head(body="b\n").replace("description: d", "description: " + "y" * 30_000), "description",
                         "20000"),
    "long-line-body": (_head(body="z" * 1_100_000 + "\n"), None, "over 1,048,576 bytes"),
}
SKIPS = {
    "frontmatter-list": ("---\n- a\n- b\n---\nb\n", "frontmatter", "key: value"),
    "frontmatter-scalar": ("---\njust text\n---\nb\n", "frontmatter", "key: value"),
    "no-closing-dashes": ("---\nname: bad\ndescription: d\nbody without an end\n", None, "no frontmatter block"),
    "name-list": ("---\nname: [a]\ndescription: d\n---\nb\n", "name", "no 'name'"),
    "description-mapping": ("---\nname: bad\ndescription: {a: 1}\n---\nb\n", "description", "no 'description'"),
    "effort-list": (_head("effort: [1]"), "effort", "ignored"),
}


def _project(tmp_path: Path) -> Path:
    agents = tmp_path / "project" / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "good.md").write_text(GOOD)
    return agents


def _load(tmp_path: Path):
    return load_definitions(tmp_path / "project", home=tmp_path / "home")


def _one_line(lines: list, path: Path, field: str | None, words: str) -> None:
    mine = [str(line) for line in lines if line.path == str(path)]
    assert len(mine) == 1, mine
    assert "\n" not in mine[0] and words in mine[0], mine[0]
    assert mine[0].startswith(f"{path}: {field}: " if field else f"{path}: "), mine[0]


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_a_hostile_agent_file_is_one_error_line_and_the_others_load(tmp_path, name):
    text, field, words = ERRORS[name]
    path = _project(tmp_path) / f"{name}.md"
    path.write_text(text)
    result = _load(tmp_path)
    _one_line(result.errors, path, field, words)
    assert "good" in result.definitions and "bad" not in result.definitions


@pytest.mark.parametrize("name", sorted(SKIPS))
def test_a_file_claude_code_skips_is_one_skipped_line_and_the_others_load(tmp_path, name):
    text, field, words = SKIPS[name]
    path = _project(tmp_path) / f"{name}.md"
    path.write_text(text)
    result = _load(tmp_path)
    _one_line(result.skipped, path, field, words)
    assert result.errors == [] and "good" in result.definitions


def _fifo(path: Path) -> None:
    os.mkfifo(path)



SPECIAL = {
    "fifo": (_fifo, "cannot read: a FIFO (named pipe), not a regular file"),
    "symlink-dev-zero": (lambda path: path.symlink_to("/dev/zero"), "cannot read: a character device"),
    "symlink-dev-null": (lambda path: path.symlink_to("/dev/null"), "cannot read: a character device"),
    "dangling-symlink": (lambda path: path.symlink_to(path.parent / "nowhere"), "No such file or directory"),
    "huge-200mb": (huge, "too large: over 1,048,576 bytes (1 MiB), the most a definition file may be; not read"),
    "invalid-utf8": (lambda path: path.write_bytes(b"---\nname: bad\ndescription: \xff\xfe\n---\n"),
                     "cannot read: not UTF-8 text (byte 0xff at offset 27)"),
}


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_a_special_or_huge_file_among_the_agents_is_refused_unread_and_the_others_load(tmp_path, name):
    make, words = SPECIAL[name]
    path = _project(tmp_path) / f"{name}.md"
    make(path)
    result = _load(tmp_path)  # returns at all: nothing blocks on the FIFO, nor reads /dev/zero for ever
    _one_line(result.errors, path, None, words)
    assert "good" in result.definitions


def test_a_definition_symlinked_to_dev_stdin_never_waits_for_input(tmp_path):
    path = _project(tmp_path) / "stdin.md"
    path.symlink_to("/dev/stdin")
    read, write = os.pipe()  # stdin a pipe no one writes to: reading it would block for ever
    saved = os.dup(0)
    try:
        os.dup2(read, 0)
        result = _load(tmp_path)
    finally:
        os.dup2(saved, 0)
        for fd in (read, write, saved):
            os.close(fd)
    _one_line(result.errors, path, None, "not a regular file")
    assert "good" in result.definitions


def test_dates_stay_the_text_they_were_written_as(tmp_path):
    (_project(tmp_path) / "dated.md").write_text("---\nname: 2024-01-01\ndescription: 2024-01-02\nmodel: 2024-01-03\n"
                                                  "---\nb\n")
    definition = _load(tmp_path).definitions["2024-01-01"]
    assert (definition.description, definition.model) == ("2024-01-02", "2024-01-03")


def test_a_python_tag_on_a_simple_line_is_quoted_as_claude_code_repairs_it_never_run(tmp_path):
    (_project(tmp_path) / "tagged.md").write_text(_head("model: !!python/object/apply:os.system [touch pwned]"))
    result = _load(tmp_path)
    assert result.definitions["bad"].model == "!!python/object/apply:os.system [touch pwned]"
    assert not (Path.cwd() / "pwned").exists() and result.errors == []


def test_many_hostile_files_at_once_each_get_their_line_and_the_good_one_loads(tmp_path):
    agents = _project(tmp_path)
    for name, (text, _, _) in ERRORS.items():
        (agents / f"{name}.md").write_text(text)
    _fifo(agents / "pipe.md")
    result = _load(tmp_path)
    assert len(result.errors) == len(ERRORS) + 1 and "good" in result.definitions
    assert all("\n" not in str(error) for error in result.errors)


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a": ' * 300 + "{}" + "}" * 300, '{"a": {"description": 5}}'],
                         ids=["deep-arrays", "deep-objects", "wrong-type"])
def test_hostile_agents_json_is_one_error_line_and_the_files_still_load(tmp_path, text):
    _project(tmp_path)
    result = load_definitions(tmp_path / "project", home=tmp_path / "home", flag_agents=text)
    assert "good" in result.definitions and len(result.errors) == 1
    assert str(result.errors[0]).startswith("--agents") and "\n" not in str(result.errors[0])
