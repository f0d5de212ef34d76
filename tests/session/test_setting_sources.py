"""``--setting-sources`` (the SDK's ``setting_sources``) decides every kind of file a Session reads,
as Claude Code's does: user files (``~/.claude``, ``~/.covey``), project files (``.claude/``,
``.mcp.json``, ``CLAUDE.md``) and local ones (``settings.local.json``). Managed files, ``--plugin-dir``
plugins, ``~/.claude.json`` and what the caller passes load whatever it says. Built, not run: no Ray."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from tests.trusting import trust
from covey.model.scripted import ScriptedModel
from covey.runtime.ports import SessionRuntime
from covey.session import Session

PLUGIN = Path(__file__).parents[1] / "data" / "claude_files" / "plugins" / "review-kit"
FLAG_AGENTS = {"flagged": {"description": "given on the command line", "prompt": "p"}}


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _agent(path: Path, name: str) -> None:
    _write(path, f"---\nname: {name}\ndescription: {name} agent\n---\nYou are {name}.\n")


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    """A home and a project that hold every kind of file, each naming its source."""
    home, project = tmp_path / "home", tmp_path / "project"
    for base, kind in ((home, "user"), (project, "project")):
        _agent(base / ".claude/agents" / f"{kind}-agent.md", f"{kind}-agent")
        _agent(base / ".covey/agents" / f"{kind}-covey-agent.md", f"{kind}-covey-agent")
        _write(base / ".claude/skills" / f"{kind}-skill/SKILL.md", f"---\ndescription: {kind} skill\n---\nDo it.\n")
        _write(base / ".claude/commands" / f"{kind}-command.md", f"---\ndescription: {kind} command\n---\nRun it.\n")
        _write(base / ".claude/settings.json", json.dumps({"permissions": {"allow": [f"Bash({kind}-rule)"]}}))
    _write(project / ".claude/settings.local.json", json.dumps({"permissions": {"allow": ["Bash(local-rule)"]}}))
    _write(project / "CLAUDE.md", "PROJECT_RULES_MARKER\n")
    _write(project / ".mcp.json", json.dumps({"mcpServers": {"project-server": {"command": "p"}}}))
    trust(home, project, mcp=["project-server"])
    global_config = {"mcpServers": {"user-server": {"command": "u"}},
                     "projects": {str(project.resolve()): {"mcpServers": {"local-server": {"command": "l"}}}}}
    _write(home / ".claude.json", json.dumps(global_config))
    return home, project


def _session(tmp_path: Path, sources: list[str] | None, **options) -> Session:
    home, project = _tree(tmp_path)
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    return Session(cwd=str(project), env=env, model=ScriptedModel.from_turns([]), setting_sources=sources,
                   plugin_dirs=[str(PLUGIN)], agents=FLAG_AGENTS, mcp_servers={"given-server": {"command": "g"}},
                   **options)


def _rules(session: Session) -> set[str]:
    return {rule.content or "" for rule in session.settings.permissions.allow}


def _prelude(session: Session) -> str:
    return json.dumps(session._main_prelude(None))


def test_every_kind_of_file_loads_when_no_sources_are_named(tmp_path):
    session = _session(tmp_path, None)
    assert {"user-agent", "user-covey-agent", "project-agent", "project-covey-agent"} <= set(session.definitions)
    assert {"user-skill", "user-command", "project-skill", "project-command"} <= set(session.skills)
    assert {"user-server", "project-server", "local-server", "given-server"} <= set(session.mcp.servers)
    assert {"user-rule", "project-rule", "local-rule"} <= _rules(session)
    assert "PROJECT_RULES_MARKER" in _prelude(session)


def test_user_only_keeps_the_projects_agents_skills_commands_servers_and_instructions_out(tmp_path):
    session = _session(tmp_path, ["user"])
    names = set(session.definitions) | set(session.skills)
    assert {"user-agent", "user-covey-agent", "user-skill", "user-command"} <= names
    assert not {"project-agent", "project-covey-agent", "project-skill", "project-command"} & names
    assert "project-server" not in session.mcp.servers
    assert "PROJECT_RULES_MARKER" not in _prelude(session)
    assert _rules(session) >= {"user-rule"} and not {"project-rule", "local-rule"} & _rules(session)


def test_project_only_keeps_the_users_agents_skills_and_commands_out(tmp_path):
    session = _session(tmp_path, ["project"])
    names = set(session.definitions) | set(session.skills)
    assert {"project-agent", "project-covey-agent", "project-skill", "project-command"} <= names
    assert not {"user-agent", "user-covey-agent", "user-skill", "user-command"} & names
    assert "project-server" in session.mcp.servers and "PROJECT_RULES_MARKER" in _prelude(session)
    assert _rules(session) >= {"project-rule"} and not {"user-rule", "local-rule"} & _rules(session)


def test_no_sources_is_isolation_but_what_is_given_managed_and_global_still_loads(tmp_path, managed_settings_dir):
    _agent(managed_settings_dir / ".claude/agents/policy-agent.md", "policy-agent")
    _write(managed_settings_dir / "managed-settings.json", json.dumps({"permissions": {"allow": ["Bash(managed-rule)"]}}))
    session = _session(tmp_path, [])
    names = set(session.definitions) | set(session.skills)
    assert not {name for name in names if name.startswith(("user-", "project-"))}
    assert {"flagged", "policy-agent", "review-kit:security-reviewer", "review-kit:ship"} <= names
    assert "general-purpose" in session.definitions  # the built-ins are no file
    # ~/.claude.json is Claude Code's global config, read whatever the sources say; .mcp.json is a project file.
    assert set(session.mcp.servers) == {"user-server", "local-server", "given-server"}
    assert _rules(session) == {"managed-rule"}
    assert "PROJECT_RULES_MARKER" not in _prelude(session)


def test_local_alone_reads_only_the_local_settings(tmp_path):
    session = _session(tmp_path, ["local"])
    assert {"user-rule", "project-rule", "local-rule"} & _rules(session) == {"local-rule"}
    assert not {n for n in session.definitions if n.startswith(("user-", "project-"))}


def test_a_child_in_another_directory_reads_its_instructions_only_with_project(tmp_path):
    other = tmp_path / "worktree"
    _write(other / "CLAUDE.md", "WORKTREE_RULES_MARKER\n")

    def context(sources: frozenset[str] | None) -> str:
        runtime = SessionRuntime(session_id="s", registry=None, mailbox=None, setting_sources=sources)  # type: ignore[arg-type]
        return json.dumps(asyncio.run(runtime.context_for(str(other), omit=False)))

    assert "WORKTREE_RULES_MARKER" in context(None) and "WORKTREE_RULES_MARKER" in context(frozenset({"project"}))
    assert "WORKTREE_RULES_MARKER" not in context(frozenset({"user", "local"}))


def test_an_unknown_source_is_refused_naming_it(tmp_path):
    from covey.errors import UserError

    with pytest.raises(UserError, match="--setting-sources: unknown source 'team'"):
        _session(tmp_path, ["user", "team"])
