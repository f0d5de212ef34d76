"""What covey does not model is skipped with a warning; the rest of the block still registers."""

import logging
import pickle

from covey.hooks import HookConfigError, HookRegistry, parse_hooks, read_hooks

SOURCE = "/p/.claude/settings.json"


def _command(command: str, **extra) -> dict:
    return {"type": "command", "command": command, **extra}


def test_unknown_events_are_skipped_with_a_warning_naming_file_and_event(tmp_path):
    raw = {
        "PreCompact": [{"hooks": [_command("compact")]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [_command("guard")]}],
        "SessionEnd": [{"hooks": [_command("bye")]}],
        "Stop": [{"hooks": [_command("check")]}],
    }
    parsed = read_hooks(raw, SOURCE)
    assert [str(w) for w in parsed.warnings] == [
        f"{SOURCE}: hooks.PreCompact: event not supported by covey; skipped",
        f"{SOURCE}: hooks.SessionEnd: event not supported by covey; skipped",
    ]
    assert sorted(parsed.config) == ["PreToolUse", "Stop"]
    registry = HookRegistry(raw, project_dir=tmp_path, source=SOURCE)
    assert [h.command for h in registry.hooks_for("PreToolUse", "agent-a", "Bash")] == ["guard"]
    assert [h.command for h in registry.hooks_for("Stop", "agent-a")] == ["check"]


def test_an_unknown_handler_field_is_skipped_and_the_handler_kept():
    raw = {"PreToolUse": [{"matcher": "Bash", "hooks": [_command("guard", timeout=5, statusMessage="Checking", once=True)]}]}
    parsed = read_hooks(raw, SOURCE)
    assert [(w.field, w.message) for w in parsed.warnings] == [
        ("hooks.PreToolUse[0].hooks[0].statusMessage", "field not supported by covey; skipped (the hook runs without it)"),
        ("hooks.PreToolUse[0].hooks[0].once", "field not supported by covey; skipped (the hook runs without it)"),
    ]
    (hook,) = parsed.config["PreToolUse"][0].hooks
    assert hook.command == "guard" and hook.timeout_s == 5


def test_an_unknown_field_of_a_short_frontmatter_entry_is_skipped():
    parsed = read_hooks({"PreToolUse": [{"matcher": "Bash", "command": "guard", "async": True}]}, "a.md")
    assert [w.field for w in parsed.warnings] == ["hooks.PreToolUse[0].async"]
    assert parsed.config["PreToolUse"][0].hooks[0].command == "guard"


def test_a_hook_type_covey_does_not_run_is_skipped_and_its_siblings_run():
    raw = {"Stop": [{"hooks": [{"type": "prompt", "prompt": "Done?"}, _command("check"), {"type": "http", "url": "x"}]}]}
    parsed = read_hooks(raw, SOURCE)
    assert [w.field for w in parsed.warnings] == ["hooks.Stop[0].hooks[0].type", "hooks.Stop[0].hooks[2].type"]
    assert "'prompt' not supported by covey" in parsed.warnings[0].message
    assert [h.command for h in parsed.config["Stop"][0].hooks] == ["check"]


def test_kept_is_the_input_minus_what_was_skipped_and_rereads_without_warnings():
    raw = {"PreCompact": [], "PreToolUse": [{"matcher": "Bash", "if": "Bash(git *)", "hooks": [_command("guard", blocking=True)]}]}
    parsed = read_hooks(raw, SOURCE)
    assert parsed.kept == {"PreToolUse": [{"matcher": "Bash", "hooks": [_command("guard")]}]}
    again = read_hooks(parsed.kept, SOURCE)
    assert again.warnings == [] and again.config == parsed.config


def test_a_miscased_event_gets_a_hint():
    (warning,) = read_hooks({"pretooluse": []}, SOURCE).warnings
    assert warning.field == "hooks.pretooluse" and "did you mean 'PreToolUse'?" in warning.message


def test_parse_hooks_logs_its_warnings(caplog):
    with caplog.at_level(logging.WARNING):
        config = parse_hooks({"TeammateIdle": [], "Notification": []}, SOURCE)
    assert list(config) == ["Notification"]
    assert f"{SOURCE}: hooks.TeammateIdle: event not supported by covey; skipped" in caplog.text


def test_a_config_error_keeps_its_fields_through_pickling():
    error = HookConfigError(SOURCE, "hooks.Stop[0].hooks[0].command", "Field required")
    again = pickle.loads(pickle.dumps(error))
    assert type(error)(*error.args).field == again.field == "hooks.Stop[0].hooks[0].command"
    assert str(again) == f"{SOURCE}: field 'hooks.Stop[0].hooks[0].command': Field required"
