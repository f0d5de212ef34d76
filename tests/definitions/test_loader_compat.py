"""Agent files read as Claude Code reads them, over the corpus in tests/data/claude_files/agents."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from covey.cli.agents import list_agents_text
from covey.definitions.loader import load_definitions

CORPUS = Path(__file__).resolve().parents[1] / "data" / "claude_files" / "agents"
AGENTS = CORPUS / "project" / ".claude" / "agents"


@pytest.fixture(scope="module")
def corpus():
    return load_definitions(CORPUS / "project", home=CORPUS / "home")


def skipped(result, name):
    return [(s.field, s.message) for s in result.skipped if s.path == str(AGENTS / name)]


def test_subfolders_are_read_and_never_part_of_the_name(corpus):
    auditor = corpus.definitions["security-auditor"]
    assert auditor.path == str(AGENTS / "review" / "security-auditor.md") and auditor.source == "project"
    assert corpus.definitions["perf-reviewer"].path == str(AGENTS / "review" / "deep" / "perf-reviewer.md")
    user = corpus.definitions["docs-writer"]
    assert user.source == "user" and user.path.endswith(os.path.join("writing", "docs-writer.md"))
    assert not any(":" in name or "/" in name for name in corpus.definitions)


def test_an_unquoted_description_with_colons_is_repaired_and_its_backslash_n_breaks_lines(corpus):
    researcher = corpus.definitions["web-researcher"]
    assert researcher.description.startswith("Use when: the user asks about a library's current API")
    assert "Examples:\n\n<example>\nContext: the user wants" in researcher.description
    assert 'user: "what does the v3 config look like?"' in researcher.description
    assert researcher.tools == ["WebFetch", "WebSearch", "Read"] and researcher.color == "cyan"
    assert researcher.prompt == "You research questions on the web and answer with sources."


def test_a_longer_dashed_line_closes_the_frontmatter(corpus):
    notes = corpus.definitions["release-notes"]
    assert notes.tools == ["Bash", "Read"]
    assert notes.prompt == "You write release notes. Group changes as Added, Changed, Fixed."


def test_files_claude_code_skips_are_skipped_with_their_reason(corpus):
    assert skipped(corpus, "README.md") == [(None, skipped(corpus, "README.md")[0][1])]
    assert "no frontmatter block" in skipped(corpus, "README.md")[0][1]
    assert skipped(corpus, "draft.md")[0][0] == "name" and "no 'name'" in skipped(corpus, "draft.md")[0][1]
    (field, message), = skipped(corpus, "archive/old-reviewer.md")
    assert field == "description" and "'old-reviewer'" in message
    assert "old-reviewer" not in corpus.definitions
    assert not any(e.path.endswith(("README.md", "draft.md", "old-reviewer.md")) for e in corpus.errors)


def test_a_second_file_of_one_name_in_the_tree_is_skipped(corpus):
    assert corpus.definitions["code-reviewer"].path == str(AGENTS / "code-reviewer.md")
    (field, message), = skipped(corpus, "review/code-reviewer-v2.md")
    assert field == "name" and str(AGENTS / "code-reviewer.md") in message


def test_an_effort_claude_code_does_not_know_is_dropped_and_the_agent_loads(corpus):
    assert corpus.definitions["odd-effort"].effort is None
    (field, message), = skipped(corpus, "odd-effort.md")
    assert field == "effort" and "'extreme'" in message
    triage = corpus.definitions["triage"]
    assert (triage.effort, triage.model) == ("low", "haiku")


def test_yaml_even_the_repair_cannot_read_is_an_error_naming_the_file(corpus):
    (error,) = corpus.errors
    assert (error.path, error.field) == (str(AGENTS / "plugin-dev-style.md"), "frontmatter")
    assert "invalid YAML" in error.message and "line 2" in error.message


def test_covey_agents_lists_every_agent_and_every_skipped_file(corpus):
    text = list_agents_text(corpus)
    for name in ("code-reviewer", "security-auditor", "perf-reviewer", "web-researcher", "release-notes", "docs-writer"):
        assert any(line.strip().startswith(name) for line in text.splitlines()), name
    assert "5 file(s) or field(s) skipped, as Claude Code skips them:" in text
    assert f"{AGENTS / 'draft.md'}: name: skipped: " in text
    assert "general-purpose" in text and "model: inherit" in text


def test_symlinked_folders_are_read_once(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "linked.md").write_text("---\nname: linked\ndescription: from a linked folder\n---\nbody\n")
    agents = tmp_path / "project" / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "team").symlink_to(shared, target_is_directory=True)
    (agents / "again").symlink_to(shared, target_is_directory=True)
    (agents / "loop").symlink_to(agents, target_is_directory=True)
    result = load_definitions(tmp_path / "project", home=tmp_path / "home")
    assert result.definitions["linked"].description == "from a linked folder"
    assert result.skipped == [] and result.errors == []


def test_plugin_agents_keep_their_file_name_and_need_no_description(tmp_path):
    agents = tmp_path / "plugin" / "agents" / "lint"
    agents.mkdir(parents=True)
    (agents / "style.md").write_text("---\ntools: Read\n---\nCheck the style.\n")
    result = load_definitions(tmp_path, home=tmp_path / "home", plugin_dirs=[tmp_path / "plugin"])
    style = result.definitions["plugin:lint:style"]  # plugin:subfolder:file, as Claude Code names it
    assert (style.source, style.description, style.prompt) == ("plugin", "", "Check the style.")


def test_a_plugins_skills_and_commands_are_never_read_as_agents(tmp_path):
    plugin = tmp_path / "plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "tools"}')
    (plugin / "skills" / "lint").mkdir(parents=True)
    (plugin / "skills" / "lint" / "SKILL.md").write_text("---\nname: lint\ndescription: Lints.\n---\nLint.\n")
    result = load_definitions(tmp_path, home=tmp_path / "home", plugin_dirs=[plugin])
    assert all(d.source != "plugin" for d in result.definitions.values())
