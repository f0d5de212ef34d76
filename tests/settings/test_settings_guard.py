"""Settings that cannot be turned against the person (docs/definitions.md#settings-that-cannot-be-turned-against-you):
a project's ``defaultMode: bypassPermissions``, ``disableBypassPermissionsMode``,
``allowManagedPermissionRulesOnly`` and ``allowManagedHooksOnly``. No Ray: a Session is only built."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from covey.definitions.definition import AgentDefinition
from covey.errors import ModelBehaviorError, UserError
from covey.model.scripted import ScriptedModel
from covey.session import Session
from covey.settings.guard import check_mode, start_mode
from covey.settings.merged import Settings
from covey.subagents.children import _child_mode
from tests.settings.test_settings_managed import HOOK, _json

KIT = Path(__file__).parents[1] / "data" / "claude_files" / "plugins" / "review-kit"


@pytest.fixture
def dirs(tmp_path):
    (tmp_path / "project").mkdir()
    return tmp_path / "home", tmp_path / "project", tmp_path / "managed"


def _session(home: Path, project: Path, **options) -> Session:
    return Session(cwd=str(project), env={"PATH": "/usr/bin", "HOME": str(home)},
                   model=ScriptedModel.from_turns([]), **options)


# --- a project's defaultMode: bypassPermissions -------------------------------------

@pytest.mark.parametrize("relative", [".claude/settings.json", ".covey/settings.json",
                                      ".claude/settings.local.json", ".covey/settings.local.json"])
def test_a_projects_bypass_default_is_not_applied_and_the_run_says_why(dirs, relative):
    home, project, _ = dirs
    path = _json(project / relative, {"permissions": {"defaultMode": "bypassPermissions"}})
    settings = Settings.load(project, home=home)
    assert settings.permissions.default_mode is None and settings.refused_bypass == str(path)
    mode, notes = start_mode(settings, explicit=None, resumed=None)
    assert mode == "default"
    assert len(notes) == 1 and str(path) in notes[0] and "--permission-mode bypassPermissions" in notes[0]
    assert "--dangerously-skip-permissions" in notes[0]


def test_the_session_runs_in_default_and_warns(dirs):
    home, project, _ = dirs
    path = _json(project / ".claude/settings.json", {"permissions": {"defaultMode": "bypassPermissions"}})
    session = _session(home, project)
    assert session.policy.mode == "default" and session.init_event().permissionMode == "default"
    assert any(str(path) in w and "may not switch off permission checks" in w for w in session.warnings)


def test_the_mode_the_project_would_have_replaced_stands(dirs):
    home, project, _ = dirs
    _json(home / ".claude/settings.json", {"permissions": {"defaultMode": "acceptEdits"}})
    _json(project / ".claude/settings.json", {"permissions": {"defaultMode": "bypassPermissions"}})
    mode, notes = start_mode(Settings.load(project, home=home), explicit=None, resumed=None)
    assert mode == "acceptEdits" and "this run is in acceptEdits mode" in notes[0]


def test_a_later_files_mode_replaces_the_refused_one_without_a_warning(dirs):
    home, project, _ = dirs
    _json(project / ".claude/settings.json", {"permissions": {"defaultMode": "bypassPermissions"}})
    _json(project / ".claude/settings.local.json", {"permissions": {"defaultMode": "plan"}})
    assert start_mode(Settings.load(project, home=home), explicit=None, resumed=None) == ("plan", [])


@pytest.mark.parametrize("where", ["user", "caller"])
def test_the_users_own_settings_and_the_callers_may_set_bypass(dirs, where):
    home, project, _ = dirs
    bypass = {"permissions": {"defaultMode": "bypassPermissions"}}
    _json(project / ".claude/settings.json", bypass)  # refused, but the user's own choice stands: no warning
    if where == "user":
        _json(home / ".claude/settings.json", bypass)
    settings = Settings.load(project, home=home, extra=bypass if where == "caller" else None)
    assert start_mode(settings, explicit=None, resumed=None) == ("bypassPermissions", [])


def test_an_explicit_mode_wins_without_a_warning(dirs):
    home, project, _ = dirs
    _json(project / ".claude/settings.json", {"permissions": {"defaultMode": "bypassPermissions"}})
    session = _session(home, project, permission_mode="bypassPermissions")
    assert session.policy.mode == "bypassPermissions"
    assert not any("defaultMode" in w for w in session.warnings)
    assert _session(home, project, permission_mode="default").policy.mode == "default"


def test_dangerously_skip_permissions_is_the_bypass_mode(tmp_path):
    from covey.cli import main as cli

    args = cli._parser().parse_args(["run", "-p", "x", "--dangerously-skip-permissions"])
    assert cli._session_options(args)["permission_mode"] == "bypassPermissions"
    args = cli._parser().parse_args(["run", "-p", "x", "--dangerously-skip-permissions", "--permission-mode", "plan"])
    assert cli._session_options(args)["permission_mode"] == "plan"


# --- disableBypassPermissionsMode --------------------------------------------------

@pytest.fixture
def disabled(dirs, managed_settings_dir):
    home, project, _ = dirs
    path = _json(managed_settings_dir / "managed-settings.json", {"permissions": {"disableBypassPermissionsMode": "disable"}})
    return home, project, path


def test_disabled_bypass_refuses_the_command_line_and_the_sdk(disabled):
    home, project, path = disabled
    with pytest.raises(UserError, match="disableBypassPermissionsMode") as refused:
        _session(home, project, permission_mode="bypassPermissions")
    assert str(path) in str(refused.value)
    session = _session(home, project)
    with pytest.raises(UserError, match="set_permission_mode asks for bypassPermissions"):
        session.set_permission_mode("bypassPermissions")
    session.set_permission_mode("acceptEdits")
    assert session.policy.mode == "acceptEdits"


def test_disabled_bypass_turns_a_settings_or_resumed_bypass_into_default(disabled):
    home, project, path = disabled
    _json(home / ".claude/settings.json", {"permissions": {"defaultMode": "bypassPermissions"}})
    settings = Settings.load(project, home=home, managed_dir=path.parent)
    assert settings.bypass_disabled == str(path)
    mode, notes = start_mode(settings, explicit=None, resumed=None)
    assert mode == "default" and str(path) in notes[0] and "permissions.defaultMode" in notes[0]
    mode, notes = start_mode(settings, explicit=None, resumed="bypassPermissions")
    assert mode == "default" and "resumed session" in notes[0]
    session = _session(home, project)
    assert session.policy.mode == "default" and any(str(path) in w for w in session.warnings)


def test_any_settings_file_may_disable_bypass(dirs):
    home, project, _ = dirs
    _json(project / ".claude/settings.json", {"permissions": {"disableBypassPermissionsMode": "disable"}})
    settings = Settings.load(project, home=home)
    with pytest.raises(UserError):
        check_mode("bypassPermissions", settings, "--permission-mode")
    _json(project / ".claude/settings.json", {"permissions": {"disableBypassPermissionsMode": "yes"}})
    settings = Settings.load(project, home=home)
    assert settings.bypass_disabled is None
    assert any("expected \"disable\"" in str(w) for w in settings.warnings)


def _parent(disabled: bool):
    return SimpleNamespace(settings=SimpleNamespace(bypass_disabled=disabled))


def test_an_agent_call_may_not_ask_for_a_disabled_bypass():
    definition = AgentDefinition(name="x", description="x", prompt="p")
    call = SimpleNamespace(mode="bypassPermissions")
    with pytest.raises(ModelBehaviorError, match="disabled"):
        _child_mode(_parent(True), definition, call)
    assert _child_mode(_parent(False), definition, call) == "bypassPermissions"
    assert _child_mode(_parent(True), definition, SimpleNamespace(mode="plan")) == "plan"


def test_a_definitions_bypass_falls_back_to_default_where_disabled():
    definition = AgentDefinition(name="x", description="x", prompt="p", permissionMode="bypassPermissions")
    assert _child_mode(_parent(True), definition, SimpleNamespace(mode=None)) == "default"
    assert _child_mode(_parent(False), definition, SimpleNamespace(mode=None)) == "bypassPermissions"


# --- allowManagedPermissionRulesOnly ---------------------------------------------------

def test_only_managed_rules_apply(dirs):
    home, project, managed = dirs
    _json(managed / "managed-settings.json", {"allowManagedPermissionRulesOnly": True,
                                              "permissions": {"deny": ["Bash(rm *)"]}})
    user = _json(home / ".claude/settings.json", {"permissions": {"allow": ["Bash(*)"]}})
    local = _json(project / ".claude/settings.local.json", {"permissions": {"ask": ["Read"], "deny": ["Grep"]}})
    settings = Settings.load(project, home=home, extra={"permissions": {"allow": ["Write"]}}, managed_dir=managed)
    assert [r.text for r in settings.permissions.deny] == ["Bash(rm *)"]
    assert settings.permissions.allow == [] and settings.permissions.ask == []
    noted = [w.source for w in settings.warnings if "allowManagedPermissionRulesOnly" in w.message]
    assert noted == [str(user), str(local), "settings passed by the CLI / API"]


def test_only_managed_rules_drops_the_command_lines_rules_with_a_note(dirs, managed_settings_dir):
    home, project, _ = dirs
    _json(managed_settings_dir / "managed-settings.json", {"allowManagedPermissionRulesOnly": True})
    session = _session(home, project, allowed_tools=["Bash(*)"], disallowed_tools=["Read(/x)"])
    assert session.policy.rules["allow"] == [] and session.policy.rules["deny"] == []
    assert any("--allowed-tools / --disallowed-tools rules not applied" in w for w in session.warnings)


def test_managed_only_keys_in_other_files_are_ignored_with_a_warning(dirs):
    home, project, _ = dirs
    path = _json(project / ".claude/settings.json", {"allowManagedPermissionRulesOnly": True, "allowManagedHooksOnly": True,
                                                     "permissions": {"allow": ["Read"]}, "hooks": HOOK})
    settings = Settings.load(project, home=home)
    assert not settings.managed_rules_only and not settings.managed_hooks_only
    assert [r.text for r in settings.permissions.allow] == ["Read"] and settings.hooks
    ignored = {w.field for w in settings.warnings if w.source == str(path) and "only managed" in w.message}
    assert ignored == {"allowManagedPermissionRulesOnly", "allowManagedHooksOnly"}


# --- allowManagedHooksOnly -------------------------------------------------------

def test_only_managed_hooks_run(dirs):
    home, project, managed = dirs
    _json(managed / "managed-settings.json", {"allowManagedHooksOnly": True, "hooks": {
        "PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "managed"}]}]}})
    user = _json(home / ".claude/settings.json", {"hooks": HOOK})
    project_file = _json(project / ".claude/settings.json", {"hooks": HOOK})
    settings = Settings.load(project, home=home, managed_dir=managed)
    assert [m["matcher"] for m in settings.hooks["PreToolUse"]] == ["Write"]
    skipped = [w.source for w in settings.warnings if "allowManagedHooksOnly" in w.message]
    assert skipped == [str(user), str(project_file)]


def test_only_managed_hooks_skips_plugin_and_definition_hooks(tmp_path, dirs, managed_settings_dir):
    home, project, _ = dirs
    _json(managed_settings_dir / "managed-settings.json", {"allowManagedHooksOnly": True})
    agent = project / ".claude/agents/hooked.md"
    agent.parent.mkdir(parents=True)
    agent.write_text("---\nname: hooked\ndescription: d\nhooks:\n  Stop:\n    - hooks:\n"
                     "        - {type: command, command: echo x}\n---\nbody\n")
    session = _session(home, project, plugin_dirs=[str(shutil.copytree(KIT, tmp_path / "kit"))])
    assert session.settings.hooks == {} and session.definitions["hooked"].hooks == {}
    assert any("plugin 'review-kit'" in w and "allowManagedHooksOnly" in w for w in session.warnings)
    assert any(str(agent) in w and "allowManagedHooksOnly" in w for w in session.warnings)
    session.settings.add_hooks(HOOK, "hooks of the claude-agent-sdk client")  # an SDK client's still run
    assert session.settings.hooks["PreToolUse"]
