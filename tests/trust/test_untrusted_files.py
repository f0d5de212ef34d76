"""What an untrusted folder's files may still say: everything that restricts applies, everything
that grants is set aside and named once (settings, definitions, skills, memory links)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from covey.definitions.loader import load_definitions
from covey.definitions.skill_loader import discover_skills
from covey.settings.merged import Settings
from covey.trust import SetAside, TrustStore, decide


def _write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


GRANTS = {
    "allow rules": {"permissions": {"allow": ["Bash"]}},
    "defaultMode acceptEdits": {"permissions": {"defaultMode": "acceptEdits"}},
    "defaultMode bypassPermissions": {"permissions": {"defaultMode": "bypassPermissions"}},
    "defaultMode auto": {"permissions": {"defaultMode": "auto"}},
    "hooks (SessionStart)": {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch x"}]}]}},
    "env": {"env": {"PATH": "./bin"}},
    "enabledPlugins": {"enabledPlugins": {"kit@market": True}},
    "modelPrices": {"modelPrices": {"claude-sonnet-4-5": {"input": 0, "output": 0}}},
    "enableAllProjectMcpServers": {"enableAllProjectMcpServers": True},
    "enabledMcpjsonServers": {"enabledMcpjsonServers": ["db"]},
}


@pytest.mark.parametrize("relative", [".claude/settings.json", ".covey/settings.json", ".claude/settings.local.json",
                                      ".covey/settings.local.json"])
@pytest.mark.parametrize("grant", sorted(GRANTS))
def test_each_grant_of_an_untrusted_project_file_is_set_aside_and_named(home_and_project, relative, grant):
    home, project = home_and_project
    path = _write(project / relative, GRANTS[grant])
    settings = Settings.load(project, home=home, trusted=False)
    assert settings.permissions.allow == [] and settings.hooks == {} and settings.env == {}
    assert settings.enabled_plugins == {} and settings.model_prices == {} and settings.mcp_approved == set()
    assert settings.permissions.default_mode is None
    assert settings.set_aside.found == {str(path): [grant]}
    line = settings.set_aside.line(project)
    assert f"{relative}: {grant}" in line and f"covey trust {project}" in line and "\n" not in line


@pytest.mark.parametrize("grant", sorted(set(GRANTS) - {"enableAllProjectMcpServers", "enabledMcpjsonServers"}))
def test_the_same_grant_applies_in_a_trusted_folder(home_and_project, grant):
    home, project = home_and_project
    _write(project / ".claude/settings.json", GRANTS[grant])
    settings = Settings.load(project, home=home, trusted=True)
    assert settings.set_aside.found == {}
    applied = (settings.permissions.allow, settings.hooks, settings.env, settings.enabled_plugins,
               settings.model_prices, settings.permissions.default_mode not in (None,) or settings.refused_bypass)
    assert any(applied)


RESTRICTIONS = [
    ({"permissions": {"deny": ["Read(./.env)"]}}, lambda s: [r.text for r in s.permissions.deny] == ["Read(./.env)"]),
    ({"permissions": {"ask": ["Bash(git push:*)"]}}, lambda s: [r.text for r in s.permissions.ask] == ["Bash(git push:*)"]),
    ({"permissions": {"defaultMode": "plan"}}, lambda s: s.permissions.default_mode == "plan"),
    ({"permissions": {"defaultMode": "dontAsk"}}, lambda s: s.permissions.default_mode == "dontAsk"),
    ({"permissions": {"defaultMode": "default"}}, lambda s: s.permissions.default_mode == "default"),
    ({"permissions": {"disableBypassPermissionsMode": "disable"}}, lambda s: s.bypass_disabled is not None),
    ({"permissions": {"blockReadsOutsideWorkingDirectories": True}},
     lambda s: s.permissions.block_reads_outside_working_directories),
    ({"disabledMcpjsonServers": ["db"]}, lambda s: s.mcp_disabled == {"db"}),
    ({"model": "haiku"}, lambda s: s.model == "haiku"),
]


@pytest.mark.parametrize("index", range(len(RESTRICTIONS)))
def test_what_an_untrusted_file_restricts_still_applies(home_and_project, index):
    home, project = home_and_project
    data, holds = RESTRICTIONS[index]
    _write(project / ".claude/settings.json", data)
    settings = Settings.load(project, home=home, trusted=False)
    assert holds(settings) and settings.set_aside.found == {}


def test_the_persons_own_files_grant_in_an_untrusted_folder(home_and_project):
    home, project = home_and_project
    _write(home / ".claude/settings.json", {"permissions": {"allow": ["Bash(make)"]}, "env": {"A": "1"},
                                            "enabledMcpjsonServers": ["db"]})
    _write(project / ".claude/settings.json", {"permissions": {"allow": ["Bash"]}})
    settings = Settings.load(project, home=home, trusted=False)
    assert [r.text for r in settings.permissions.allow] == ["Bash(make)"] and settings.env == {"A": "1"}
    assert settings.mcp_approved == {"db"}


def test_settings_passed_by_the_caller_grant_in_an_untrusted_folder(home_and_project):
    home, project = home_and_project
    settings = Settings.load(project, home=home, trusted=False, extra={"permissions": {"allow": ["Bash(ls)"]}})
    assert [r.text for r in settings.permissions.allow] == ["Bash(ls)"]


def test_a_trusted_projects_own_mcp_approval_is_refused_with_a_warning(home_and_project):
    home, project = home_and_project
    _write(project / ".claude/settings.json", {"enableAllProjectMcpServers": True})
    settings = Settings.load(project, home=home, trusted=True)
    assert settings.mcp_approved == set()
    assert any("enableAllProjectMcpServers" in str(w) and "covey mcp approve" in str(w) for w in settings.warnings)


def test_local_settings_approve_in_a_trusted_folder(home_and_project):
    home, project = home_and_project
    _write(project / ".claude/settings.local.json", {"enabledMcpjsonServers": ["db"]})
    assert Settings.load(project, home=home, trusted=True).mcp_approved == {"db"}


def test_nothing_set_aside_is_no_line(home_and_project):
    assert SetAside().line(home_and_project[1]) is None


def test_each_file_and_kind_is_named_once(home_and_project):
    aside = SetAside()
    for _ in range(3):
        aside.add("hooks", f"{home_and_project[1]}/.claude/settings.json")
    aside.add("env", f"{home_and_project[1]}/.claude/settings.json")
    assert aside.line(home_and_project[1]).count("hooks") == 1 and ".claude/settings.json: hooks, env" in aside.line(home_and_project[1])


AGENT = ("---\nname: helper\ndescription: helps\n{extra}---\nYou help.\n")


@pytest.mark.parametrize("extra, kind, field, empty", [
    ("permissionMode: bypassPermissions\n", "permissionMode bypassPermissions", "permission_mode", None),
    ("permissionMode: acceptEdits\n", "permissionMode acceptEdits", "permission_mode", None),
    ("permissionMode: auto\n", "permissionMode auto", "permission_mode", None),
    ("hooks:\n  Stop:\n    - hooks:\n        - {type: command, command: touch x}\n", "hooks", "hooks", {}),
    ("mcpServers:\n  - db:\n      command: sh\n", "mcpServers", "mcp_servers", []),
])
def test_an_untrusted_folders_definitions_grant_nothing(home_and_project, extra, kind, field, empty):
    home, project = home_and_project
    path = _write(project / ".claude/agents/helper.md", AGENT.format(extra=extra))
    aside = SetAside()
    definition = load_definitions(project, home=home, aside=aside).definitions["helper"]
    assert getattr(definition, field) == empty and aside.found == {str(path): [kind]}
    trusted = load_definitions(project, home=home).definitions["helper"]
    assert getattr(trusted, field) not in (None, {}, [])


@pytest.mark.parametrize("mode", ["plan", "dontAsk", "default"])
def test_a_definitions_stricter_mode_stays(home_and_project, mode):
    home, project = home_and_project
    _write(project / ".claude/agents/helper.md", AGENT.format(extra=f"permissionMode: {mode}\n"))
    aside = SetAside()
    assert load_definitions(project, home=home, aside=aside).definitions["helper"].permission_mode == mode
    assert aside.found == {}


def test_the_persons_own_definitions_keep_their_settings(home_and_project):
    home, project = home_and_project
    _write(home / ".claude/agents/mine.md", AGENT.replace("helper", "mine").format(extra="permissionMode: acceptEdits\n"))
    aside = SetAside()
    assert load_definitions(project, home=home, aside=aside).definitions["mine"].permission_mode == "acceptEdits"
    assert aside.found == {}


@pytest.mark.parametrize("scope, sub", [("project", "agent-memory"), ("local", "agent-memory-local")])
@pytest.mark.parametrize("linked", ["folder", "parent"])
def test_a_memory_folder_that_is_a_link_is_named(home_and_project, tmp_path, scope, sub, linked):
    home, project = home_and_project
    path = _write(project / ".claude/agents/helper.md", AGENT.format(extra=f"memory: {scope}\n"))
    target = tmp_path / "elsewhere"
    target.mkdir()
    if linked == "folder":
        (project / ".claude" / sub).mkdir()
        (project / ".claude" / sub / "helper").symlink_to(target)
    else:
        (project / ".claude" / sub).symlink_to(target)
    aside = SetAside()
    load_definitions(project, home=home, aside=aside)
    assert aside.found == {str(path): ["memory (its folder is a link)"]}


def test_a_real_memory_folder_is_not_named(home_and_project):
    home, project = home_and_project
    _write(project / ".claude/agents/helper.md", AGENT.format(extra="memory: project\n"))
    (project / ".claude/agent-memory/helper").mkdir(parents=True)
    aside = SetAside()
    load_definitions(project, home=home, aside=aside)
    assert aside.found == {}


@pytest.mark.parametrize("folder", ["skills/deploy/SKILL.md", "commands/deploy.md"])
def test_an_untrusted_folders_skills_grant_no_tools(home_and_project, folder):
    home, project = home_and_project
    path = _write(project / ".claude" / folder, "---\ndescription: deploys\nallowed-tools: Bash, Write\n---\nGo.\n")
    aside = SetAside()
    assert discover_skills(project, home=home, aside=aside).skills["deploy"].allowed_tools == []
    assert aside.found == {str(path): ["allowed-tools"]}
    assert discover_skills(project, home=home).skills["deploy"].allowed_tools == ["Bash", "Write"]


def test_the_persons_own_skills_keep_their_tools(home_and_project):
    home, project = home_and_project
    _write(home / ".claude/skills/mine/SKILL.md", "---\ndescription: mine\nallowed-tools: Bash(make)\n---\nGo.\n")
    aside = SetAside()
    assert discover_skills(project, home=home, aside=aside).skills["mine"].allowed_tools == ["Bash(make)"]


def test_the_flag_trusts_for_one_run(home_and_project, untrusted_folder):
    home, project = home_and_project[0], untrusted_folder
    assert decide(project, home=home, env={}).trusted is False
    assert decide(project, home=home, env={}, flag=True).trusted is True
    assert decide(project, home=home, env={}).trusted is False


@pytest.mark.parametrize("entrypoint, sources, trusted", [
    ("sdk-py", ["user", "project"], True), ("sdk-ts", ["project"], True), ("sdk-py", [], True),
    ("sdk-py", None, False), ("cli", ["project"], False), ("", ["user", "project", "local"], False),
])
def test_an_sdk_program_naming_its_setting_sources_has_chosen(home_and_project, untrusted_folder, entrypoint, sources, trusted):
    home, project = home_and_project[0], untrusted_folder
    env = {"CLAUDE_CODE_ENTRYPOINT": entrypoint} if entrypoint else {}
    assert decide(project, home=home, env=env, setting_sources=sources).trusted is trusted


def test_covey_agents_shows_what_a_run_in_the_folder_would_get(tmp_path, untrusted_folder):
    from covey.cli.agents import agents_report

    home = tmp_path / "home"
    home.mkdir()
    _write(untrusted_folder / ".claude/agents/helper.md", AGENT.format(extra="permissionMode: bypassPermissions\n"))
    _write(untrusted_folder / ".claude/settings.json", {"permissions": {"allow": ["Bash"]}})
    report = agents_report(str(untrusted_folder), None, [], {"HOME": str(home)})
    assert "is not a trusted folder" in report and "permissionMode bypassPermissions" in report
    TrustStore(home).trust(untrusted_folder)
    assert "is not a trusted folder" not in agents_report(str(untrusted_folder), None, [], {"HOME": str(home)})
