"""The run options only the SDKs set (the TypeScript SDK's mostly): ``session_persistence``,
``debug``, ``managed_settings``, ``permission_prompts``, ``project_config_root``, a plugin
without its MCP servers; and the ``initialize`` answer a conversation gives once its session
is open. Built, not run: no Ray (tests/session/test_ephemeral.py runs a session not kept)."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest

from tests.trusting import trust
from covey.events import AssistantEvent
from covey.service.conversation import ConversationRun
from covey.session import Session, main_agent
from covey.session.debug_log import DebugLog, open_debug_log
from tests.session.scripts import offline_session, write


# -- no session persistence -------------------------------------------------------------------


def test_a_session_not_kept_writes_to_a_private_folder_its_close_removes(tmp_path):
    session = offline_session(tmp_path, session_persistence=False)
    private = session.private
    assert private is not None and private.is_dir() and (private.stat().st_mode & 0o777) == 0o700
    assert session.transcript_folder.is_relative_to(private) and session.roots.root == private
    assert session.kept.root == tmp_path / "home" / ".claude"  # where a resumed session would be found
    session.close()
    assert not private.exists() and not (tmp_path / "home" / ".claude").exists()


def test_a_kept_session_has_no_private_folder(tmp_path):
    session = offline_session(tmp_path)
    assert session.private is None and session.roots == session.kept
    assert session.transcript_folder.is_relative_to(tmp_path / "home" / ".claude" / "projects")
    session.close()


def test_a_session_that_fails_to_load_leaves_no_private_folder(tmp_path, monkeypatch):
    import covey.session.ephemeral as ephemeral

    made: list[Path] = []
    original = ephemeral.private_folder
    monkeypatch.setattr(ephemeral, "private_folder", lambda options: made.append(original(options)) or made[-1])
    write(tmp_path / "project/.claude/settings.json", "{not json")
    with pytest.raises(Exception, match="not valid JSON"):
        offline_session(tmp_path, session_persistence=False)
    assert made and not made[0].exists()


# -- the debug log ----------------------------------------------------------------------------


def test_debug_writes_claude_codes_file_with_the_sessions_log_and_steps(tmp_path):
    session = offline_session(tmp_path, debug="")
    path = tmp_path / "home" / ".claude" / "debug" / f"{session.session_id}.txt"
    assert session.debug is not None and session.debug.path == path
    assert (path.parent / "latest").resolve() == path
    logging.getLogger("covey.hooks").debug("a hook ran: %s", "PreToolUse")
    logging.getLogger("covey.mcp").warning("a server failed")

    async def one_event():
        yield AssistantEvent(message={"role": "assistant", "content": [{"type": "text", "text": "hello there"}]},
                             agent_id="agent-0123456789")

    async def follow():
        return [event async for event in session.debug.follow(one_event())]

    assert len(asyncio.run(follow())) == 1
    session.close()
    lines = path.read_text().splitlines()
    assert any(line.endswith("[DEBUG] a hook ran: PreToolUse") for line in lines)
    assert any(line.endswith("[WARN] a server failed") for line in lines)
    assert any(line.endswith("[DEBUG] [agent-01234567] says: hello there") for line in lines)
    assert any("main model" in line for line in lines)  # what the session loaded
    assert all(line[:4].isdigit() and line[23:25] == "Z " for line in lines)  # 2026-01-01T00:00:00.000Z
    assert session.debug is None and not any(isinstance(h, DebugLog) for h in logging.getLogger("covey").handlers)
    logging.getLogger("covey.hooks").debug("after the close")
    assert "after the close" not in path.read_text()


def test_a_debug_file_is_appended_to_and_the_loggers_level_comes_back(tmp_path):
    logger = logging.getLogger("covey")
    before = logger.level
    path = tmp_path / "logs" / "debug.txt"
    first = open_debug_log(str(path), tmp_path / "config", "s1", tmp_path)
    second = open_debug_log(str(path), tmp_path / "config", "s2", tmp_path)
    assert first is not None and second is not None and logger.level == logging.DEBUG
    first.close()
    assert logger.level == logging.DEBUG  # the other log is still open
    second.close()
    assert logger.level == before and not (tmp_path / "logs" / "latest").exists()
    said = path.read_text()
    assert "covey session s1" in said and "covey session s2" in said and (path.stat().st_mode & 0o777) == 0o600


# -- permission prompts, plugins, the project's config root, managed settings ----------------


def test_with_permission_prompts_none_nobody_is_asked_whatever_asker_was_given(tmp_path):
    asked = offline_session(tmp_path, on_permission=lambda request: True)
    assert asked.asker is not None
    nobody = offline_session(tmp_path, on_permission=lambda request: True, permission_prompts="none")
    assert nobody.asker is None
    asked.close()
    nobody.close()


def test_a_plugin_dir_without_mcp_loads_the_plugins_agents(tmp_path):
    plugin = tmp_path / "kit"
    write(plugin / ".claude-plugin/plugin.json", json.dumps({"name": "kit", "mcpServers": {"x": {"command": "x"}}}))
    write(plugin / "agents/helper.md", "---\nname: helper\ndescription: helps\n---\nHelp.\n")
    session = offline_session(tmp_path, plugin_dirs=[str(plugin)])
    assert "kit:helper" in session.definitions and "kit" in session.plugins.plugins
    assert not any(name.startswith("x") for name in session.mcp.servers)  # covey starts no plugin's MCP servers
    session.close()


def test_the_project_config_root_is_where_the_projects_settings_and_definitions_come_from(tmp_path):
    root, worktree = tmp_path / "checkout", tmp_path / "worktree"
    write(root / ".claude/settings.json", json.dumps({"outputStyle": "Root style", "permissions": {"deny": ["Bash"]}}))
    write(root / ".claude/agents/root-agent.md", "---\nname: root-agent\ndescription: from the root\n---\nHi.\n")
    write(root / ".claude/output-styles/root.md", "---\nname: Root style\n---\nAs the root says.\n")
    write(root / ".mcp.json", json.dumps({"mcpServers": {"root-server": {"command": "true"}}}))
    trust(tmp_path / "home", root, mcp=["root-server"])
    write(worktree / ".claude/settings.json", json.dumps({"outputStyle": "Concise"}))
    write(worktree / ".claude/agents/branch-agent.md", "---\nname: branch-agent\ndescription: a branch's\n---\nHi.\n")
    session = offline_session(tmp_path, cwd=str(worktree), project_config_root=str(root))
    assert session.cwd == worktree.resolve() and session.config_root == root.resolve()
    assert "root-agent" in session.definitions and "branch-agent" not in session.definitions
    assert session.output_style.name == "Root style" and "root-server" in session.mcp.servers
    assert [rule.tool for rule in session.settings.permissions.deny] == ["Bash"]
    assert main_agent._run_settings(session.config, session.transcript()).project_dir == str(root.resolve())  # hooks' CLAUDE_PROJECT_DIR
    plain = offline_session(tmp_path, cwd=str(worktree))
    assert "branch-agent" in plain.definitions and plain.output_style.name == "Concise"
    for each in (session, plain):
        each.close()


def test_managed_settings_from_the_program_apply_as_the_policy_tier_restrictive_keys_only(tmp_path):
    session = offline_session(tmp_path, managed_settings={
        "permissions": {"deny": ["Bash"], "allow": ["Read"], "defaultMode": "bypassPermissions"},
        "model": "opus", "outputStyle": "Concise"})
    deny = session.settings.permissions.deny
    assert [rule.tool for rule in deny] == ["Bash"] and deny[0].source.startswith("policySettings:")
    assert [rule.tool for rule in session.settings.permissions.allow] == ["Read"]
    assert session.settings.model is None and session.output_style.name == "default"  # not restrictive: dropped
    assert session.policy.mode == "default"
    session.close()


# -- the initialize answer --------------------------------------------------------------------


def _answer(session: Session, **flags) -> dict:
    request = {"request_id": "r", "request": {"subtype": "covey_run", "cwd": "/", "env": {}, "options": {}, "run": flags}}
    run = ConversationRun(request, None, None, service=False)  # type: ignore[arg-type]
    return run._initialized({"subtype": "initialize"}, session)


def test_initialize_is_answered_with_the_sessions_output_style_and_the_styles_it_could_choose(tmp_path):
    write(tmp_path / "home/.claude/output-styles/zeta.md", "Z.\n")
    write(tmp_path / "project/.claude/output-styles/pirate.md", "---\nname: Pirate\n---\nArr.\n")
    session = offline_session(tmp_path, settings={"outputStyle": "pirate"})
    answer = _answer(session, initialize_reads=["settings"])
    # As Claude Code 2.1.332's: the built-ins in its order, then the user's, then the project's.
    assert answer["output_style"] == "Pirate" == session.init_event().wire()["output_style"]
    assert answer["available_output_styles"] == ["default", "Proactive", "Concise", "Explanatory", "Learning",
                                                 "zeta", "Pirate"]
    assert answer["settings_applied"] is True and answer["disallowed_tools_applied"] is False
    assert {agent["name"] for agent in answer["agents"]} >= {"general-purpose", "Explore"}
    only_user = offline_session(tmp_path, setting_sources=["user"])
    assert _answer(only_user)["available_output_styles"][-1] == "zeta"
    for each in (session, only_user):
        each.close()


def test_a_session_that_takes_its_kits_id_moves_what_is_named_after_its_id(tmp_path):
    """A served session takes its kit's id: the files its agents may read, and ``--debug``'s file, follow."""
    session = offline_session(tmp_path, debug="")
    old = session.debug.path
    session.kit.renamed("11111111-2222-4333-8444-555555555555")
    assert session.transcript_folder / "11111111-2222-4333-8444-555555555555" in session.policy.readable
    assert all(session.session_id in str(path) or "covey-" in path.name for path in session.policy.readable)
    assert not old.exists() and session.debug.path.name == "11111111-2222-4333-8444-555555555555.txt"
    assert (old.parent / "latest").resolve() == session.debug.path
    logging.getLogger("covey.session").debug("after the rename")
    session.close()
    assert "after the rename" in (old.parent / "11111111-2222-4333-8444-555555555555.txt").read_text()
