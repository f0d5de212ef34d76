"""What covey does not model is skipped with a warning; the rest of the block still registers."""

import logging
import pickle

from covey.hooks import HookConfigError, HookRegistry, parse_hooks, read_hooks

SOURCE = "/p/.claude/settings.json"


def _command(command: str, **extra) -> dict:
    return {"type": "command", "command": command, **extra}


def test_events_covey_never_fires_and_unknown_ones_are_skipped_with_a_warning(tmp_path):
    raw = {
        "FileChanged": [{"hooks": [_command("idle")]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [_command("guard")]}],
        "Bogus": "not even a list",
        "SessionEnd": [{"hooks": [_command("bye")]}],
        "PreCompact": [{"matcher": "auto", "hooks": [_command("compact")]}],
    }
    parsed = read_hooks(raw, SOURCE)
    assert [str(w) for w in parsed.warnings] == [
        f"{SOURCE}: hooks.FileChanged: a Claude Code event covey never fires; skipped",
        f"{SOURCE}: hooks.Bogus: unknown event; skipped",
    ]
    assert sorted(parsed.config) == ["PreCompact", "PreToolUse", "SessionEnd"]
    registry = HookRegistry(raw, project_dir=tmp_path, source=SOURCE)
    assert [h.command for h in registry.hooks_for("PreToolUse", "agent-a", "Bash")] == ["guard"]
    assert [h.command for h in registry.hooks_for("SessionEnd", None, "other")] == ["bye"]


def test_handler_fields_covey_runs_are_read_and_unknown_ones_skipped():
    raw = {"PreToolUse": [{"matcher": "Bash", "hooks": [_command(
        "guard", timeout=5, statusMessage="Checking", once=True, colour="red", **{"if": "Bash(git *)", "async": True})]}]}
    parsed = read_hooks(raw, SOURCE)
    assert [(w.field, w.message) for w in parsed.warnings] == [
        ("hooks.PreToolUse[0].hooks[0].once",
         "honoured only for hooks in skill frontmatter; ignored here, as Claude Code ignores it"),
        ("hooks.PreToolUse[0].hooks[0].colour", "field not supported by covey; skipped (the hook runs without it)"),
    ]
    (hook,) = parsed.config["PreToolUse"][0].hooks
    assert hook.command == "guard" and hook.timeout_s == 5 and hook.if_rule == "Bash(git *)"
    assert hook.run_async and hook.status_message == "Checking"


def test_an_unknown_field_of_a_short_frontmatter_entry_is_skipped():
    parsed = read_hooks({"PreToolUse": [{"matcher": "Bash", "command": "guard", "blocking": True}]}, "a.md")
    assert [w.field for w in parsed.warnings] == ["hooks.PreToolUse[0].blocking"]
    assert parsed.config["PreToolUse"][0].hooks[0].command == "guard"


def test_unknown_keys_at_every_level_never_sink_the_block():
    raw = {"Stop": [{"matcher": "", "description": "x", "hooks": [_command("check", extra={"a": 1})], "id": 3}]}
    parsed = read_hooks(raw, SOURCE)
    assert [w.field for w in parsed.warnings] == [
        "hooks.Stop[0].description", "hooks.Stop[0].id", "hooks.Stop[0].hooks[0].extra"]
    assert [h.command for h in parsed.config["Stop"][0].hooks] == ["check"]


def test_hook_types_covey_does_not_run_are_skipped_and_their_siblings_run():
    raw = {"Stop": [{"hooks": [
        {"type": "prompt", "prompt": "Done?"}, _command("check"), {"type": "http", "url": "http://127.0.0.1:9/h"},
        {"type": "agent", "prompt": "Verify"}, {"type": "mcp_tool", "server": "s", "tool": "t"},
        _command("pwsh", shell="powershell"),
    ]}]}
    parsed = read_hooks(raw, SOURCE)
    assert [w.field for w in parsed.warnings] == ["hooks.Stop[0].hooks[5].shell"]
    assert [h.command for h in parsed.config["Stop"][0].hooks] == [
        "prompt 'Done?'", "check", "POST http://127.0.0.1:9/h", "agent 'Verify'", "mcp_tool s/t"]
    unknown = read_hooks({"Stop": [{"hooks": [{"type": "websocket", "url": "x"}]}]}, SOURCE)
    assert "'websocket' not supported by covey (unknown hook type)" in unknown.warnings[0].message


def test_an_if_that_is_no_permission_rule_skips_the_hook_with_a_warning():
    raw = {"PreToolUse": [{"hooks": [_command("bad", **{"if": "Bash(git *"}), _command("good")]}]}
    parsed = read_hooks(raw, SOURCE)
    assert [w.field for w in parsed.warnings] == ["hooks.PreToolUse[0].hooks[0].if"]
    assert [h.command for h in parsed.config["PreToolUse"][0].hooks] == ["good"]


def test_kept_is_the_input_minus_what_was_skipped_and_rereads_without_warnings():
    raw = {"FileChanged": [], "PreToolUse": [{"matcher": "Bash", "if": "Bash(git *)", "hooks": [_command("guard", blocking=True)]}]}
    parsed = read_hooks(raw, SOURCE)
    assert parsed.kept == {"PreToolUse": [{"matcher": "Bash", "hooks": [_command("guard")]}]}
    again = read_hooks(parsed.kept, SOURCE)
    assert again.warnings == [] and again.config == parsed.config


def test_a_miscased_event_gets_a_hint():
    (warning,) = read_hooks({"pretooluse": []}, SOURCE).warnings
    assert warning.field == "hooks.pretooluse" and "did you mean 'PreToolUse'?" in warning.message


def test_parse_hooks_logs_its_warnings(caplog):
    with caplog.at_level(logging.WARNING):
        config = parse_hooks({"FileChanged": [], "Notification": []}, SOURCE)
    assert list(config) == ["Notification"]
    assert f"{SOURCE}: hooks.FileChanged: a Claude Code event covey never fires; skipped" in caplog.text


def test_a_config_error_keeps_its_fields_through_pickling():
    error = HookConfigError(SOURCE, "hooks.Stop[0].hooks[0].command", "Field required")
    again = pickle.loads(pickle.dumps(error))
    assert type(error)(*error.args).field == again.field == "hooks.Stop[0].hooks[0].command"
    assert str(again) == f"{SOURCE}: field 'hooks.Stop[0].hooks[0].command': Field required"
