"""Claude Code-style hook files (tests/data/claude_files/hooks) load as Claude Code reads them:
every event covey fires registers, what it does not run is one warning each, nothing fails."""

import json
from pathlib import Path

import yaml

from covey.hooks import HookRegistry, read_hooks

CORPUS = Path(__file__).parents[1] / "data" / "claude_files" / "hooks"


def test_a_settings_file_with_every_event_loads_with_a_warning_per_skipped_item():
    path = CORPUS / "everything.settings.json"
    parsed = read_hooks(json.loads(path.read_text())["hooks"], str(path))
    assert sorted(parsed.config) == sorted([
        "SessionStart", "SessionEnd", "PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure",
        "SubagentStart", "SubagentStop", "PreCompact", "Notification", "Setup", "Stop", "TeammateIdle",
        "UserPromptSubmit"])
    assert [w.field for w in parsed.warnings] == [
        "hooks.Stop[0].hooks[0].once",  # honoured only in skill frontmatter
        "hooks.UserPromptSubmit[0].description",  # an unknown key
    ]
    assert parsed.config["SubagentStop"][0].hooks[0].prompt == "Did the review cover every file? $ARGUMENTS"
    pre = parsed.config["PreToolUse"]
    assert [h.if_rule for h in pre[0].hooks] == ["Bash(git push *)", "Bash(rm *)"]
    assert pre[0].hooks[1].args == ["${CLAUDE_PROJECT_DIR}/.claude/hooks/rm-guard.js"]
    assert pre[1].hooks[0].url == "http://localhost:8080/hooks/pre"
    assert parsed.config["PostToolUse"][0].hooks[0].run_async


def test_the_settings_files_matchers_pick_the_right_hooks(tmp_path):
    path = CORPUS / "everything.settings.json"
    registry = HookRegistry(json.loads(path.read_text())["hooks"], project_dir=tmp_path, source=str(path))
    assert len(registry.hooks_for("SessionStart", None, "resume")) == 1
    assert registry.hooks_for("SessionStart", None, "fork") == []
    assert len(registry.hooks_for("Notification", None, "idle_prompt")) == 1
    assert len(registry.hooks_for("PreToolUse", "a", "mcp__github__create_issue")) == 1
    assert len(registry.hooks_for("SubagentStart", "a", "code-reviewer")) == 1
    assert registry.hooks_for("SubagentStart", "a", "Explore") == []
    assert len(registry.hooks_for("PreCompact", None, "auto")) == 1 and registry.hooks_for("PreCompact", None, "manual") == []


def test_a_plugin_hooks_file_loads_without_warnings():
    path = CORPUS / "plugin-hooks.json"
    parsed = read_hooks(json.loads(path.read_text())["hooks"], str(path))
    assert parsed.warnings == [] and sorted(parsed.config) == ["PostToolUse", "SessionStart"]


def test_an_agents_frontmatter_hooks_load_in_both_shapes():
    path = CORPUS / "reviewer-agent.md"
    frontmatter = yaml.safe_load(path.read_text().split("---")[1])
    parsed = read_hooks(frontmatter["hooks"], str(path))
    assert [w.field for w in parsed.warnings] == ["hooks.PostToolUse[0].blocking"]
    assert parsed.config["PreToolUse"][0].hooks[0].if_rule == "Bash(git *)"
    assert parsed.config["PostToolUse"][0].hooks[0].command == "./scripts/never-edits.sh"
