"""A plugin's agents among the definitions: Claude Code's names, its ignored fields, the source priority."""

from pathlib import Path

from covey.definitions.loader import load_definitions
from covey.plugins import read_plugin

CORPUS = Path(__file__).parents[1] / "data" / "claude_files" / "plugins"


def _plugin(name: str):
    return read_plugin(CORPUS / name, "--plugin-dir").plugin


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_plugin_agents_are_named_plugin_colon_name_and_a_subfolder_adds_a_segment(tmp_path):
    result = load_definitions(tmp_path, home=tmp_path / "home", plugin_dirs=[_plugin("review-kit")])
    names = {n for n, d in result.definitions.items() if d.source == "plugin"}
    assert names == {"review-kit:security-reviewer", "review-kit:style:linter", "review-kit:overreach"}
    reviewer = result.definitions["review-kit:security-reviewer"]
    assert reviewer.model == "sonnet" and reviewer.tools == ["Read", "Grep", "Glob", "Bash"]
    assert reviewer.path.endswith("review-kit/agents/security-reviewer.md")


def test_hooks_mcp_servers_and_permission_mode_of_a_plugin_agent_are_ignored_with_a_warning(tmp_path):
    result = load_definitions(tmp_path, home=tmp_path / "home", plugin_dirs=[_plugin("review-kit")])
    agent = result.definitions["review-kit:overreach"]
    assert (agent.hooks, agent.mcp_servers, agent.permission_mode) == ({}, [], None)
    assert sorted(w.field for w in result.warnings if w.source.endswith("overreach.md")) == [
        "hooks", "mcpServers", "permissionMode"]


def test_a_manifests_agents_field_replaces_the_agents_folder(tmp_path):
    result = load_definitions(tmp_path, home=tmp_path / "home", plugin_dirs=[_plugin("custom-paths")])
    assert "custom-paths:api-reviewer" in result.definitions and "custom-paths:ignored" not in result.definitions


def test_plugin_sits_below_user_in_the_source_priority_and_a_folder_still_works(tmp_path):
    _write(tmp_path / "plugin/agents/linter.md", "---\ndescription: plugin\n---\nbody\n")
    _write(tmp_path / "home/.claude/agents/plugin:linter.md", "---\nname: plugin:linter\ndescription: user\n---\nb\n")
    result = load_definitions(tmp_path, home=tmp_path / "home", plugin_dirs=[tmp_path / "plugin"])
    assert result.definitions["plugin:linter"].source == "user"


def test_policy_agents_beat_every_other_source(tmp_path):
    _write(tmp_path / ".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: project\n---\nb\n")
    _write(tmp_path / "managed/.claude/agents/reviewer.md", "---\nname: reviewer\ndescription: managed\n---\nb\n")
    result = load_definitions(tmp_path, home=tmp_path / "home", flag_agents={"reviewer": {"description": "flag"}},
                              policy_dir=tmp_path / "managed/.claude/agents")
    assert (result.definitions["reviewer"].source, result.definitions["reviewer"].description) == ("policy", "managed")


def test_a_bad_plugin_folder_is_a_definition_error_not_a_crash(tmp_path):
    result = load_definitions(tmp_path, home=tmp_path / "home", plugin_dirs=[CORPUS / "broken-manifest"])
    assert any(e.path.endswith("plugin.json") and "plugin not loaded" in e.message for e in result.errors)
