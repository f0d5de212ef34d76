"""Managed settings: read from their folder above every other source; enabledPlugins; strictPluginOnlyCustomization."""

import json
from pathlib import Path

import pytest

import covey.settings.managed
from covey.settings.managed import SURFACES, locked_surfaces, managed_dir, managed_files
from covey.settings.merged import Settings

HOOK = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo hi"}]}]}


def _json(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def dirs(tmp_path):
    return tmp_path / "home", tmp_path / "project", tmp_path / "managed"


def test_the_folder_is_the_documented_one_and_no_environment_variable_moves_it(tmp_path, monkeypatch):
    monkeypatch.undo()  # the conftest's test folder off: the module's own value
    assert covey.settings.managed.MANAGED_DIR in (
        Path("/etc/claude-code"), Path("/Library/Application Support/ClaudeCode"), Path(r"C:\Program Files\ClaudeCode"))
    monkeypatch.setenv("COVEY_MANAGED_SETTINGS_DIR", str(tmp_path))
    assert managed_dir() == covey.settings.managed.MANAGED_DIR != tmp_path
    source = Path(covey.settings.managed.__file__).read_text()
    assert "os.environ" not in source and "getenv" not in source  # nothing there reads the environment


def test_managed_json_then_its_drop_ins_in_name_order_hidden_ones_skipped(dirs):
    _, _, managed = dirs
    base = _json(managed / "managed-settings.json", {})
    later, earlier = _json(managed / "managed-settings.d/20-b.json", {}), _json(managed / "managed-settings.d/10-a.json", {})
    _json(managed / "managed-settings.d/.hidden.json", {})
    assert managed_files(managed) == [base, earlier, later]


def test_managed_values_beat_the_project_and_the_command_line(dirs):
    home, project, managed = dirs
    _json(project / ".claude/settings.json", {"model": "haiku", "permissions": {"allow": ["Read"]}})
    _json(managed / "managed-settings.json", {"model": "opus", "permissions": {"deny": ["Bash(curl:*)"]}})
    _json(managed / "managed-settings.d/50-team.json", {"env": {"TEAM": "infra"}})
    settings = Settings.load(project, home=home, extra={"model": "sonnet"}, managed_dir=managed)
    assert settings.model == "opus" and settings.env == {"TEAM": "infra"}
    assert settings.permissions.deny[0].source == f"policySettings:{managed / 'managed-settings.json'}"
    assert settings.sources[-2:] == [f"policySettings:{managed / 'managed-settings.json'}",
                                     f"policySettings:{managed / 'managed-settings.d/50-team.json'}"]
    assert settings.managed_dir == str(managed)


def test_managed_settings_are_read_whatever_setting_sources_say(dirs):
    home, project, managed = dirs
    _json(managed / "managed-settings.json", {"model": "opus"})
    assert Settings.load(project, home=home, sources=[], managed_dir=managed).model == "opus"


def test_enabled_plugins_merge_by_key_and_false_turns_one_off(dirs):
    home, project, managed = dirs
    user = _json(home / ".claude/settings.json", {"enabledPlugins": {"a@m": True, "b@m": True, "c@m": ["1.x"]}})
    local = _json(project / ".claude/settings.local.json", {"enabledPlugins": {"b@m": False, "d@m": True}})
    settings = Settings.load(project, home=home, managed_dir=managed)
    assert settings.enabled_plugins == {"a@m": str(user), "c@m": str(user), "d@m": str(local)}


def test_strict_plugin_only_values():
    assert locked_surfaces(True) == (frozenset(SURFACES), None)
    assert locked_surfaces(["skills", "hooks"]) == (frozenset({"skills", "hooks"}), None)
    assert locked_surfaces(False)[0] == frozenset() and locked_surfaces(None)[0] == frozenset()
    locked, note = locked_surfaces(["hooks", "themes"])
    assert locked == {"hooks"} and "'themes'" in note
    assert "expected true or a list" in locked_surfaces("yes")[1]


def test_a_hooks_lock_drops_user_project_and_local_hooks_but_keeps_managed_ones(dirs):
    home, project, managed = dirs
    _json(home / ".claude/settings.json", {"hooks": HOOK})
    project_file = _json(project / ".claude/settings.json", {"hooks": HOOK})
    _json(managed / "managed-settings.json", {"strictPluginOnlyCustomization": ["hooks"], "hooks": HOOK})
    settings = Settings.load(project, home=home, managed_dir=managed)
    assert settings.strict_plugin_only == ["hooks"] and len(settings.hooks["PreToolUse"]) == 1
    assert any(w.source == str(project_file) and "locks hooks" in w.message for w in settings.warnings)
    settings.add_hooks(HOOK, "plugin 'p'")  # a plugin's hooks still load
    assert len(settings.hooks["PreToolUse"]) == 2


def test_strict_plugin_only_outside_managed_settings_is_ignored_with_a_warning(dirs):
    home, project, managed = dirs
    project_file = _json(project / ".claude/settings.json", {"strictPluginOnlyCustomization": True, "hooks": HOOK})
    settings = Settings.load(project, home=home, managed_dir=managed)
    assert settings.strict_plugin_only == [] and settings.hooks
    assert any(w.source == str(project_file) and w.field == "strictPluginOnlyCustomization" for w in settings.warnings)


# -- the program's managed tier (--managed-settings, the SDK's managedSettings) ----------------

PARENT = {"permissions": {"deny": ["Bash", "!Read(./docs/**)"], "ask": ["Write"], "allow": ["Read"],
                          "defaultMode": "bypassPermissions", "disableBypassPermissionsMode": "disable"},
          "model": "opus", "env": {"A": "1"}, "disableAllHooks": True, "outputStyle": "Concise"}


def test_the_programs_tier_alone_keeps_only_what_restricts(dirs):
    home, project, _ = dirs
    settings = Settings.load(project, home=home, parent_managed=PARENT)
    assert [r.tool for r in settings.permissions.deny] == ["Bash"]  # a "!" exception restricts nothing
    assert [r.tool for r in settings.permissions.ask] == ["Write"] and [r.tool for r in settings.permissions.allow] == ["Read"]
    assert all(r.source == f"policySettings:{covey.settings.managed.PARENT}" for r in settings.permissions.deny)
    assert settings.bypass_disabled and settings.managed_hooks_only  # disableAllHooks binds as allowManagedHooksOnly
    assert settings.model is None and settings.env == {} and settings.output_style is None
    assert settings.permissions.default_mode is None


def test_the_programs_tier_beats_the_project_as_the_policy_tier(dirs):
    home, project, _ = dirs
    _json(project / ".claude/settings.json", {"hooks": HOOK, "permissions": {"allow": ["Bash"]}})
    settings = Settings.load(project, home=home, parent_managed={"allowManagedHooksOnly": True,
                                                                "allowManagedPermissionRulesOnly": True})
    assert settings.hooks == {} and settings.permissions.allow == []
    assert any("allowManagedHooksOnly" in str(w) for w in settings.warnings)


def test_with_the_machines_managed_files_the_programs_tier_applies_only_if_they_say_merge(dirs):
    home, project, managed = dirs
    _json(managed / "managed-settings.json", {"permissions": {"deny": ["WebFetch"]}})
    alone = Settings.load(project, home=home, managed_dir=managed, parent_managed=PARENT)
    assert [r.tool for r in alone.permissions.deny] == ["WebFetch"]
    assert any("managedSettings: not applied" in str(w) for w in alone.warnings)
    _json(managed / "managed-settings.d/10-merge.json", {"parentSettingsBehavior": "merge",
                                                         "allowManagedPermissionRulesOnly": True})
    merged = Settings.load(project, home=home, managed_dir=managed, parent_managed=PARENT)
    assert [r.tool for r in merged.permissions.deny] == ["WebFetch", "Bash"]
    assert merged.permissions.allow == []  # the machine lets only managed rules apply: no widening allow
