"""Settings' ``sandbox``: covey runs every command unsandboxed, so it says so, as Claude Code 2.1.337
says so on a machine that cannot sandbox (a warning), and refuses to start where the settings
require a sandbox (``failIfUnavailable``, Claude Code's ``sandbox_required_unavailable``). Built,
not run: no Ray."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from covey.model.scripted import ScriptedModel
from covey.service.startup import failure_fields
from covey.session import Session
from covey.settings.files import SandboxUnavailable
from tests.session.scripts import write


def _session(tmp_path: Path, **options) -> Session:
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")}
    (tmp_path / "project").mkdir(exist_ok=True)
    return Session(cwd=str(tmp_path / "project"), env=env, model=ScriptedModel.from_turns([]),
                   transcript_dir=str(tmp_path / "t"), **options)


def _sandbox_warnings(session: Session) -> list[str]:
    return [w for w in session.warnings if "sandbox" in w]


def test_an_enabled_sandbox_is_one_warning_naming_the_file_and_saying_commands_run_unsandboxed(tmp_path):
    settings = write(tmp_path / "home/.claude/settings.json", json.dumps({"sandbox": {"enabled": True}}))
    with _session(tmp_path) as session:
        (warning,) = _sandbox_warnings(session)
        assert warning.startswith(f"{settings}: sandbox.enabled: not applied: covey does not sandbox commands")
        assert "WITHOUT sandboxing" in warning and "\n" not in warning
        assert session.init_event().wire()["sandbox_enabled"] is False


def test_no_warning_without_enabled_and_a_later_file_turning_it_off_wins(tmp_path):
    write(tmp_path / "home/.claude/settings.json", json.dumps({"sandbox": {"enabled": True}}))
    with _session(tmp_path, settings={"sandbox": {"enabled": False}}) as session:
        assert _sandbox_warnings(session) == []
    with _session(tmp_path, settings={"sandbox": {"enabled": True}}) as session:
        assert len(_sandbox_warnings(session)) == 1  # --settings names it (the later file wins)
    (tmp_path / "other").mkdir()
    with _session(tmp_path / "other", settings={"sandbox": {"network": {}}}) as session:
        assert _sandbox_warnings(session) == []  # sandbox settings without enabled ask for nothing


def test_a_required_sandbox_refuses_the_session_with_claude_codes_reason(tmp_path):
    with pytest.raises(SandboxUnavailable, match="sandbox required but unavailable") as refused:
        _session(tmp_path, settings={"sandbox": {"enabled": True, "failIfUnavailable": True}})
    assert failure_fields(refused.value) == {"startup_failure_reason": "sandbox_required_unavailable"}
