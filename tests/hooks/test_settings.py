"""Hooks in settings files: checked as each file is read, before a session starts Ray."""

import json
import logging

import pytest

from covey.errors import UserError
from covey.session import Session
from covey.settings.merged import Settings


def _settings_file(project, hooks):
    path = project / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}))
    return path.resolve()


def _rules(tmp_path):
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules:\n  - reply: {text: done}\n")
    return f"scripted:{rules}"


def test_skipped_hooks_are_settings_warnings_naming_their_file(tmp_path):
    path = _settings_file(tmp_path, {
        "FileChanged": [{"hooks": [{"type": "command", "command": "bye"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}],
    })
    settings = Settings.load(tmp_path, home=tmp_path / "home")
    assert [str(w) for w in settings.warnings] == [f"{path}: hooks.FileChanged: a Claude Code event covey never fires; skipped"]
    assert settings.hooks == {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}]}


def test_a_settings_hook_without_a_hooks_list_is_skipped_with_a_warning(tmp_path):
    """Claude Code reports such an entry an invalid setting and skips it; the short form (the
    handler's keys beside the matcher) is an agent frontmatter's, not a settings file's."""
    path = _settings_file(tmp_path, {"PreToolUse": [
        {"matcher": "Bash", "command": "echo short"},
        {"matcher": "Edit", "hooks": [{"type": "command", "command": "guard"}]},
    ]})
    settings = Settings.load(tmp_path, home=tmp_path / "home")
    (warning,) = settings.warnings
    assert str(warning).startswith(f"{path}: hooks.PreToolUse[0]: has no 'hooks' list") and "skipped" in str(warning)
    commands = [h["command"] for group in settings.hooks["PreToolUse"] for h in group["hooks"]]
    assert commands == ["guard"]


def test_a_malformed_hook_fails_loading_naming_the_file_and_field(tmp_path):
    path = _settings_file(tmp_path, {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": ""}]}]})
    with pytest.raises(UserError) as info:
        Settings.load(tmp_path, home=tmp_path / "home")
    assert str(path) in str(info.value) and "'hooks.PreToolUse[0].hooks[0].command'" in str(info.value)


def test_a_malformed_hook_fails_the_session_before_ray_starts(tmp_path, monkeypatch):
    import covey.session.kit as session_module

    monkeypatch.setattr(session_module, "ensure_ray", lambda *a, **k: pytest.fail("Ray was started"))
    _settings_file(tmp_path, {"Stop": [{"hooks": [{"type": "command"}]}]})
    with pytest.raises(UserError, match=r"hooks\.Stop\[0\]\.hooks\[0\]\.command"):
        Session(cwd=str(tmp_path), model=_rules(tmp_path))


def test_session_warnings_hold_skipped_hooks_and_bad_definitions_and_are_logged(tmp_path, caplog):
    path = _settings_file(tmp_path, {"ConfigChange": [{"hooks": [{"type": "command", "command": "x"}]}]})
    bad = tmp_path / ".claude" / "agents" / "bad.md"
    bad.parent.mkdir()
    bad.write_text("---\nname: bad\ndescription: b\nhooks:\n  PreToolUse: [{command: ''}]\n---\nx\n")
    skipping = tmp_path / ".claude" / "agents" / "skipping.md"
    skipping.write_text("---\nname: skipping\ndescription: d\nhooks:\n  FileChanged: [{command: x}]\n---\nx\n")
    with caplog.at_level(logging.WARNING, logger="covey"):
        session = Session(cwd=str(tmp_path), model=_rules(tmp_path))
    assert session.warnings[0] == f"{path}: hooks.ConfigChange: a Claude Code event covey never fires; skipped"
    assert f"{skipping}: hooks.FileChanged: a Claude Code event covey never fires; skipped" in session.warnings
    assert any(w.startswith(f"{bad}: hooks.PreToolUse[0].command:") for w in session.warnings)
    assert "skipping" in session.definitions and "bad" not in session.definitions
    assert all(warning in caplog.text for warning in session.warnings)
