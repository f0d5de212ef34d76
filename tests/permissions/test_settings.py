"""Settings.load: file precedence, rule sources, and errors that name the file and field."""

import json
from pathlib import Path

import pytest

from covey.errors import UserError
from covey.settings.merged import Settings


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.fixture
def dirs(tmp_path):
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir(), project.mkdir()
    return home, project


def test_no_files_gives_empty_settings(dirs):
    home, project = dirs
    settings = Settings.load(project, home=home)
    assert settings.permissions.allow == [] and settings.model is None and settings.sources == []


def test_precedence_lowest_to_highest(dirs):
    home, project = dirs
    files = [
        home / ".claude/settings.json", home / ".covey/settings.json",
        project / ".claude/settings.json", project / ".covey/settings.json",
        project / ".claude/settings.local.json", project / ".covey/settings.local.json",
    ]
    for i, path in enumerate(files):
        write(path, {"model": f"m{i}", "env": {f"K{i}": "v", "SHARED": str(i)}, "permissions": {"allow": [f"Bash(cmd{i})"]}})
    settings = Settings.load(project, home=home)
    assert settings.model == "m5" and settings.env["SHARED"] == "5" and "K0" in settings.env
    assert [r.text for r in settings.permissions.allow] == [f"Bash(cmd{i})" for i in range(6)]
    assert Settings.load(project, home=home, extra={"model": "cli"}).model == "cli"


def test_each_rule_remembers_its_source(dirs):
    home, project = dirs
    user = write(home / ".claude/settings.json", {"permissions": {"deny": ["Bash(rm:*)"]}})
    proj = write(project / ".claude/settings.json", {"permissions": {"allow": ["Edit(/src/**)"], "defaultMode": "plan"}})
    local = write(project / ".claude/settings.local.json", {"permissions": {"ask": ["Bash(git push:*)"]}})
    settings = Settings.load(project, home=home, extra={"permissions": {"deny": ["WebFetch"]}})
    perms = settings.permissions
    assert [r.source for r in perms.deny] == [f"userSettings:{user.resolve()}", "cliArg"]
    assert perms.allow[0].source == f"projectSettings:{proj.resolve()}"
    assert perms.allow[0].root == project.resolve()  # `/src/**` is relative to the project
    assert perms.ask[0].source == f"localSettings:{local.resolve()}"
    assert perms.default_mode == "plan"


def test_hooks_are_kept_raw_and_concatenated_per_event(dirs):
    home, project = dirs
    hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}
    write(home / ".claude/settings.json", {"hooks": {"PreToolUse": [hook]}})
    write(project / ".claude/settings.json", {"hooks": {"PreToolUse": [hook], "Stop": []}, "unknownKey": 1})
    settings = Settings.load(project, home=home)
    assert settings.hooks == {"PreToolUse": [hook, hook], "Stop": []}


def test_model_prices_merge_by_model(dirs):
    home, project = dirs
    write(home / ".claude/settings.json", {"modelPrices": {"a": {"input": 1.0}, "b": {"input": 2.0}}})
    write(project / ".claude/settings.json", {"modelPrices": {"b": {"input": 3.0}}})
    assert Settings.load(project, home=home).model_prices == {"a": {"input": 1.0}, "b": {"input": 3.0}}


def test_invalid_json_names_the_file_line_and_column(dirs):
    home, project = dirs
    path = write(project / ".claude/settings.json", '{\n  "model": "x",\n}')
    with pytest.raises(UserError) as err:
        Settings.load(project, home=home)
    assert str(path.resolve()) in str(err.value) and "line 3" in str(err.value) and "column" in str(err.value)


@pytest.mark.parametrize("data, field", [
    ({"permissions": {"allow": "Bash"}}, "permissions.allow"),
    ({"permissions": {"deny": ["Bash", 3]}}, "permissions.deny.1"),
    ({"permissions": {"defaultMode": "yolo"}}, "permissions.defaultMode"),
    ({"env": {"A": 1}}, "env.A"),
])
def test_wrong_type_names_the_file_and_field(dirs, data, field):
    home, project = dirs
    path = write(home / ".claude/settings.json", data)
    with pytest.raises(UserError) as err:
        Settings.load(project, home=home)
    assert str(path.resolve()) in str(err.value) and repr(field) in str(err.value)


def test_top_level_must_be_an_object(dirs):
    home, project = dirs
    write(project / ".covey/settings.json", "[]")
    with pytest.raises(UserError, match="JSON object"):
        Settings.load(project, home=home)


def test_unreadable_file_names_the_path(dirs):
    home, project = dirs
    (project / ".claude/settings.json").mkdir(parents=True)  # a directory cannot be read as a file
    with pytest.raises(UserError, match="cannot be read") as err:
        Settings.load(project, home=home)
    assert "settings.json" in str(err.value)


def test_malformed_rule_is_skipped_with_a_warning_naming_the_rule_and_its_file(dirs):
    # Claude Code skips an invalid rule ("Invalid permission rule ... was skipped") and loads the rest:
    # one bad rule must not sink the session.
    home, project = dirs
    path = write(project / ".claude/settings.local.json", {"permissions": {"allow": ["Bash(ls", "Read"]}})
    settings = Settings.load(project, home=home)
    assert [r.text for r in settings.permissions.allow] == ["Read"]
    (warning,) = [str(w) for w in settings.warnings]
    assert "'Bash(ls'" in warning and str(path.resolve()) in warning and "permissions.allow[0]" in warning


def test_bad_extra_settings_are_blamed_on_the_cli(dirs):
    home, project = dirs
    with pytest.raises(UserError, match="CLI"):
        Settings.load(project, home=home, extra={"permissions": {"allow": [1]}})


def test_home_equal_to_project_reads_each_file_once(tmp_path):
    write(tmp_path / ".claude/settings.json", {"permissions": {"allow": ["Bash"]}})
    assert len(Settings.load(tmp_path, home=tmp_path).permissions.allow) == 1


def test_rules_claude_code_warns_about_load_with_a_warning_naming_the_file_and_the_rule(dirs):
    home, project = dirs
    path = write(project / ".claude/settings.json", {"permissions": {
        "allow": ["Bash(mv git-*:*)", "Write(docs/**)", "Write"], "deny": ["Glob(secrets/**)"]}})
    settings = Settings.load(project, home=home)
    assert [r.text for r in settings.permissions.allow] == ["Bash(mv git-*:*)", "Write(docs/**)", "Write"]
    warnings = [str(w) for w in settings.warnings]
    assert len(warnings) == 3 and all(str(path.resolve()) in w for w in warnings)
    assert "permissions.allow[0]" in warnings[0] and "Bash(mv git-*:*)" in warnings[0] and "literal" in warnings[0]
    assert "permissions.allow[1]" in warnings[1] and "Use Edit(docs/**) instead" in warnings[1]
    assert "permissions.deny[0]" in warnings[2] and "Use Read(secrets/**) instead" in warnings[2]


def test_a_slash_rule_is_anchored_where_claude_code_anchors_it(dirs):
    # User settings: at ~/.claude (not at home); project settings: at the project; local: where the session started.
    home, project = dirs
    write(home / ".claude/settings.json", {"permissions": {"deny": ["Read(/secrets/**)"]}})
    write(project / ".claude/settings.json", {"permissions": {"deny": ["Edit(/src/**)"]}})
    write(project / ".claude/settings.local.json", {"permissions": {"deny": ["Edit(/build/**)"]}})
    user, proj, local = Settings.load(project, home=home).permissions.deny
    assert user.root == home.resolve() / ".claude"
    assert proj.root == project.resolve() and local.root == project.resolve()


def test_model_limits_merge_by_model_and_auto_compact_can_be_turned_off(dirs):
    home, project = dirs
    write(home / ".claude/settings.json", {"modelLimits": {"local-": {"contextWindow": 8192}}, "autoCompactEnabled": False})
    write(project / ".claude/settings.json", {"modelLimits": {"big-": {"contextWindow": 400000}}})
    settings = Settings.load(project, home=home)
    assert settings.model_limits == {"local-": {"contextWindow": 8192}, "big-": {"contextWindow": 400000}}
    assert settings.auto_compact_enabled is False
    assert Settings.load(project, home=project).auto_compact_enabled is None


def test_rate_limits_merge_by_key_and_a_wrong_key_names_the_file(dirs):
    from covey.ratelimit.signals import RateLimitSettings

    home, project = dirs
    write(home / ".claude/settings.json", {"rateLimits": {"requestsPerMinute": 60, "patienceSeconds": 30}})
    write(project / ".claude/settings.json", {"rateLimits": {"requestsPerMinute": 30, "inputTokensPerMinute": 20000}})
    merged = Settings.load(project, home=home).rate_limits
    assert merged == {"requestsPerMinute": 30, "patienceSeconds": 30.0, "inputTokensPerMinute": 20000}
    limits = RateLimitSettings.load(merged, {"COVEY_RATE_LIMIT_RPM": "45"})  # the environment wins
    assert (limits.requests_per_minute, limits.input_tokens_per_minute, limits.patience_s) == (45, 20000, 30.0)
    write(project / ".claude/settings.json", {"rateLimits": {"requestsPerMinut": 30}})
    with pytest.raises(UserError, match=r"settings.json.*rateLimits\.requestsPerMinut"):
        Settings.load(project, home=home)
