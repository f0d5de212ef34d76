"""A Session (built, not run: no Ray) loads plugins from --plugin-dir and enabledPlugins, with their parts,
and its main agent's prelude lists the skills; a plugin's hook runs with ${CLAUDE_PLUGIN_ROOT} set."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from covey.agent.lifecycle import AgentServices, run_agent
from covey.definitions.definition import AgentDefinition
from covey.definitions.skill_listing import HEADER
from covey.model.scripted import ScriptedModel
from covey.plugins import load_plugins
from covey.runtime.spec import AgentSpec, RunSettings
from covey.session import Session
from covey.settings.merged import Settings

CORPUS = Path(__file__).parents[1] / "data" / "claude_files"


def _session(tmp_path: Path, **options) -> Session:
    project = tmp_path / "project"
    if not project.exists():
        shutil.copytree(CORPUS / "skills" / "project", project)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")}
    return Session(cwd=str(project), env=env, model=ScriptedModel.from_turns([]), **options)


def test_a_plugin_dir_brings_its_agents_skills_commands_and_hooks(tmp_path):
    session = _session(tmp_path, plugin_dirs=[str(CORPUS / "plugins" / "review-kit")])
    assert {"review-kit:security-reviewer", "review-kit:style:linter"} <= set(session.definitions)
    assert {"review-kit:changelog-writer", "review-kit:ship", "agent-development"} <= set(session.skills)
    commands = [h["command"] for group in session.settings.hooks["PreToolUse"] for h in group["hooks"]]
    assert any(c.endswith("review-kit/scripts/guard.sh") for c in commands)
    assert any("overreach.md: permissionMode" in w for w in session.warnings)


def test_the_main_agents_prelude_lists_the_skills_after_the_agents(tmp_path):
    session = _session(tmp_path, plugin_dirs=[str(CORPUS / "plugins" / "review-kit")])
    listing = session._main_prelude(None)[-1]["content"][0]["text"]
    assert listing.startswith(f"<system-reminder>\n{HEADER}\n\n")
    assert "- agent-development: This skill should be used when" in listing
    assert "- review-kit:ship: Prepare a release of the given version." in listing
    assert "- deploy:" not in listing  # disable-model-invocation
    without_skill = _session(tmp_path, tools=["Read"])._main_prelude(None)
    assert HEADER not in json.dumps(without_skill)


def test_enabled_plugins_load_and_a_missing_one_is_a_warning_naming_the_settings_file(tmp_path):
    home = tmp_path / "home"
    root = home / ".claude/plugins/cache/tools/review-kit/1.2.0"
    shutil.copytree(CORPUS / "plugins" / "review-kit", root)
    registry = {"version": 2, "plugins": {"review-kit@tools": [{"scope": "user", "installPath": str(root)}]}}
    (home / ".claude/plugins/installed_plugins.json").write_text(json.dumps(registry))
    settings_file = home / ".claude/settings.json"
    settings_file.write_text(json.dumps({"enabledPlugins": {"review-kit@tools": True, "ghost@tools": True}}))
    session = _session(tmp_path)
    assert "review-kit:security-reviewer" in session.definitions
    assert any(w.startswith(f"{settings_file}: plugin 'ghost@tools' is enabled but not installed") for w in session.warnings)
    assert session.init_event().wire()["plugins"] == [{"name": "review-kit", "path": str(root), "source": "review-kit@tools"}]


def test_a_managed_agents_lock_keeps_project_agents_out_of_the_session(tmp_path, managed_settings_dir):
    managed_settings_dir.mkdir()
    (managed_settings_dir / "managed-settings.json").write_text(json.dumps({"strictPluginOnlyCustomization": ["agents", "skills"]}))
    project = tmp_path / "project"
    shutil.copytree(CORPUS / "skills" / "project", project)
    (project / ".claude/agents").mkdir()
    (project / ".claude/agents/mine.md").write_text("---\nname: mine\ndescription: mine\n---\nb\n")
    session = _session(tmp_path, plugin_dirs=[str(CORPUS / "plugins" / "review-kit")])
    assert "mine" not in session.definitions and "agent-development" not in session.skills
    assert "review-kit:security-reviewer" in session.definitions and "review-kit:ship" in session.skills


async def test_a_plugin_hook_runs_its_script_with_the_plugin_root(tmp_path):
    settings = Settings.load(tmp_path, home=tmp_path / "home")
    scan = load_plugins(tmp_path, plugin_dirs=[CORPUS / "plugins" / "review-kit"], home=tmp_path / "home")
    settings.add_hooks(scan.plugins["review-kit"].hooks, "plugin 'review-kit'")
    log = tmp_path / "guard.log"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GUARD_LOG": str(log)}
    spec = AgentSpec(
        session_id="s", agent_id="a-1", definition=AgentDefinition(name="main", description="main"), prompt="go",
        model_id="claude-sonnet-4-6", cwd=str(tmp_path), tool_names=["Bash"], max_turns=3,
        transcript_dir=str(tmp_path / "t"), settings=RunSettings(env=env, hooks=settings.hooks),
    )
    model = ScriptedModel.from_turns([{"tool_use": [{"name": "Bash", "input": {"command": "echo hi"}}]}, {"text": "ok"}])
    [_ async for _ in run_agent(spec, AgentServices(model=model))]
    assert log.read_text().strip() == str((CORPUS / "plugins" / "review-kit").resolve())


def test_system_init_lists_the_loaded_plugins_as_claude_code_does(tmp_path):
    plugin = CORPUS / "plugins" / "review-kit"
    init = _session(tmp_path, plugin_dirs=[str(plugin)]).init_event().wire()
    assert init["plugins"] == [{"name": "review-kit", "path": str(plugin), "source": "review-kit@inline"}]
    assert _session(tmp_path).init_event().wire()["plugins"] == []
