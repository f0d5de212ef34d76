"""Every permission mode, bubble included, is one a session runs in (no Ray: decided in
``Session.__init__``): the main agent in ``bubble`` asks the session's asker, as in ``default``."""

from __future__ import annotations

import pytest

from covey.errors import UserError
from covey.model.scripted import ScriptedModel
from covey.permissions.decisions import Allow, Ask
from covey.session import Session


def _session(tmp_path, **options) -> Session:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    return Session(cwd=str(project), model=ScriptedModel.from_dict({"rules": []}), env={"HOME": str(tmp_path)}, **options)


async def test_bubble_on_the_main_agent_asks_the_sessions_asker(tmp_path):
    asked = []
    session = _session(tmp_path, permission_mode="bubble", on_permission=lambda request: asked.append(request) or True)
    assert session.policy.mode == "bubble" and session.init_event().permissionMode == "bubble"
    decision = session.policy.decide("Bash", False, "make", {"command": "make"})
    assert isinstance(decision, Ask)
    assert isinstance(await session.policy.resolve(decision, asker=session.asker), Allow)
    assert [r.subject for r in asked] == ["make"]


def test_auto_runs_as_default_without_a_classifier(tmp_path):
    session = _session(tmp_path, permission_mode="auto")
    assert isinstance(session.policy.decide("Bash", False, "make", {}), Ask)  # Claude Code's classifier might allow it
    assert isinstance(session.policy.decide("Bash", False, "cat README.md", {}), Allow)


def test_set_permission_mode_takes_bubble_and_refuses_an_unknown_mode(tmp_path):
    session = _session(tmp_path)
    session.set_permission_mode("bubble")
    assert session.policy.mode == "bubble"
    with pytest.raises(UserError, match="'yolo'"):
        session.set_permission_mode("yolo")
    with pytest.raises(UserError, match="'yolo'"):
        _session(tmp_path, permission_mode="yolo")


def test_permission_rule_warnings_reach_the_session_warnings_the_cli_prints(tmp_path):
    settings = tmp_path / "proj" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"permissions": {"allow": ["Bash(mv git-*:*)", "Bash(ls"], "deny": ["Write(~/.ssh/**)"]}}')
    warnings = _session(tmp_path).warnings
    assert len(warnings) == 3 and all(str(settings) in w for w in warnings)
    assert "Bash(mv git-*:*)" in warnings[0] and "'Bash(ls' skipped" in warnings[1]
    assert "Write(~/.ssh/**) is not matched by file permission checks" in warnings[2]
