"""Reading a plugin folder as Claude Code's plugins reference describes it."""

import json
import shutil
from pathlib import Path

from covey.plugins import read_plugin

CORPUS = Path(__file__).parents[1] / "data" / "claude_files" / "plugins"


def test_a_full_plugin_reads_its_manifest_and_default_folders():
    read = read_plugin(CORPUS / "review-kit", "--plugin-dir")
    plugin = read.plugin
    assert read.problems == []
    assert (plugin.name, plugin.version, plugin.origin) == ("review-kit", "1.2.0", "--plugin-dir")
    root = (CORPUS / "review-kit").resolve()
    assert plugin.agent_paths == [root / "agents"] and plugin.command_paths == [root / "commands"]
    assert plugin.skill_dirs == [root / "skills"] and plugin.root_skill is None
    assert set(plugin.hooks) == {"PreToolUse", "SessionStart"}
    assert plugin.hook_sources == [str(root / "hooks" / "hooks.json")]


def test_hook_commands_get_the_plugin_root_expanded_and_exported():
    plugin = read_plugin(CORPUS / "review-kit", "--plugin-dir").plugin
    root = (CORPUS / "review-kit").resolve()
    [handler] = plugin.hooks["PreToolUse"][0]["hooks"]
    assert handler["command"] == f"export CLAUDE_PLUGIN_ROOT={root}; {root}/scripts/guard.sh"
    assert "${CLAUDE_PLUGIN_ROOT}" not in json.dumps(plugin.hooks)


def test_without_a_manifest_the_plugin_is_named_by_its_folder_and_a_root_skill_is_its_skill():
    plugin = read_plugin(CORPUS / "bare-helper", "--plugin-dir").plugin
    assert plugin.name == "bare-helper" and plugin.root_skill == (CORPUS / "bare-helper" / "SKILL.md").resolve()


def test_manifest_paths_replace_agents_add_skills_and_may_not_leave_the_plugin():
    read = read_plugin(CORPUS / "custom-paths", "--plugin-dir")
    root = (CORPUS / "custom-paths").resolve()
    plugin = read.plugin
    assert plugin.agent_paths == [root / "reviewers"]  # agents/ no longer scanned
    assert plugin.skill_dirs == [root / "skills", root / "extra-skills"]
    assert set(plugin.hooks) == {"PostToolUse"} and plugin.hook_sources == [str(root / ".claude-plugin" / "plugin.json")]
    [problem] = read.problems
    assert problem.path == str(root / ".claude-plugin" / "plugin.json") and "'../outside/' is outside" in problem.message


def test_a_broken_manifest_skips_the_plugin_naming_the_file():
    read = read_plugin(CORPUS / "broken-manifest", "--plugin-dir")
    assert read.plugin is None
    [problem] = read.problems
    assert problem.path.endswith("broken-manifest/.claude-plugin/plugin.json") and "not valid JSON" in problem.message


def test_a_manifest_field_of_the_wrong_type_names_the_field(tmp_path):
    (tmp_path / "p" / ".claude-plugin").mkdir(parents=True)
    (tmp_path / "p" / ".claude-plugin" / "plugin.json").write_text('{"name": "p", "agents": 3}')
    [problem] = read_plugin(tmp_path / "p", "--plugin-dir").problems
    assert "field 'agents'" in problem.message and "plugin not loaded" in problem.message


def test_a_bad_hooks_file_skips_only_the_hooks(tmp_path):
    plugin_dir = tmp_path / "p"
    shutil.copytree(CORPUS / "review-kit", plugin_dir)
    (plugin_dir / "hooks" / "hooks.json").write_text('{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": []}]}}')
    read = read_plugin(plugin_dir, "--plugin-dir")
    assert read.plugin is not None and read.plugin.hooks == {} and read.plugin.agent_paths
    assert any("hooks.json" in p.path and "not loaded" in p.message for p in read.problems)


def test_a_missing_folder_is_a_problem_not_a_crash(tmp_path):
    read = read_plugin(tmp_path / "nowhere", "--plugin-dir")
    assert read.plugin is None and "not a folder" in read.problems[0].message
