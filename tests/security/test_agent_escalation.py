"""No escalation through the Agent tool: a child more powerful than its parent needs a person."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from covey.errors import CoveyError
from covey.permissions import Allow, Deny
from covey.subagents.agent_schema import agent_input_model
from covey.subagents.agent_tool import AgentTool
from covey.subagents.escalation import launch_escalation
from covey.tools.base import ToolContext, ToolServices
from tests.security._policies import policy, project


def _call(**fields):
    return SimpleNamespace(**{"mode": None, "cwd": None, **fields})


def _parent(p):
    return SimpleNamespace(permissions=p, definition=None)  # a definition that limits no agent type


@pytest.fixture
def place(tmp_path):
    return project(tmp_path)


@pytest.mark.parametrize("parent_mode, asked, escalates", [
    ("default", "bypassPermissions", True), ("plan", "bypassPermissions", True), ("default", "acceptEdits", True),
    ("dontAsk", "acceptEdits", True), ("acceptEdits", "bypassPermissions", False), ("default", "plan", False),
    ("default", "default", False), ("acceptEdits", "plan", False), ("bypassPermissions", "default", False),
    ("plan", "default", False), ("default", "dontAsk", False),
])
def test_a_more_permissive_mode_from_the_call_needs_approval(place, parent_mode, asked, escalates):
    ask = launch_escalation(_parent(policy(*place, parent_mode)), None, _call(mode=asked), "general-purpose")
    assert (ask is not None) is escalates
    if escalates:
        assert asked in ask.message or "acceptEdits" in ask.message


def test_a_definitions_permission_mode_is_judged_the_same(place):
    definition = SimpleNamespace(permission_mode="bypassPermissions")
    ask = launch_escalation(_parent(policy(*place)), definition, _call(), "cleaner")
    assert ask is not None and "'cleaner' definition's permissionMode" in ask.message


@pytest.mark.parametrize("cwd, escalates", [("{home}", True), ("/", True), ("{root}/src", False), ("{root}/link", True)])
def test_a_cwd_outside_the_working_directories_needs_approval(place, cwd, escalates):
    root, home = place
    ask = launch_escalation(_parent(policy(root, home, "acceptEdits")), None,
                            _call(cwd=cwd.format(root=root, home=home)), "general-purpose")
    assert (ask is not None) is escalates


def test_the_schema_offers_mode_only_with_teams():
    assert "mode" not in agent_input_model(teams=False).model_json_schema()["properties"]
    assert "mode" in agent_input_model(teams=True).model_json_schema()["properties"]


class _Registry:
    async def launch(self, *args, **kwargs):
        raise CoveyError("the registry was reached")


def _ctx(tmp_path, parent, confirm=None):
    runtime = SimpleNamespace(definitions={}, coordinator=False, teams=True, tools=SimpleNamespace(fork=False),
                              registry=_Registry(), spread=False, shared_fs=False)
    services = ToolServices(runtime=runtime, spec=parent, confirm=confirm)
    return ToolContext(agent_id="a-parent", cwd=tmp_path, services=services)


async def test_the_agent_tool_refuses_a_bypass_child_when_nobody_can_be_asked(place, tmp_path):
    tool = AgentTool(teams=True)
    call = tool.input_model.model_validate({"description": "d", "prompt": "p", "mode": "bypassPermissions"})
    parent = SimpleNamespace(permissions=policy(*place), cwd=str(tmp_path), agent_id="a-parent", depth=0, definition=None)
    result = await tool.run(call, _ctx(tmp_path, parent))
    assert result.is_error and "bypassPermissions" in result.content and "not started" in result.content


async def test_the_agent_tool_puts_the_escalation_to_the_approver_and_obeys_a_refusal(place, tmp_path):
    asked = []

    async def refuse(tool, input, ctx, ask):
        asked.append(ask.message)
        return Deny(tool_name="Agent", subject=ask.subject, message="The user said no.")

    tool = AgentTool(teams=True)
    call = tool.input_model.model_validate({"description": "d", "prompt": "p", "mode": "acceptEdits"})
    parent = SimpleNamespace(permissions=policy(*place), cwd=str(tmp_path), agent_id="a-parent", depth=0, definition=None)
    result = await tool.run(call, _ctx(tmp_path, parent, confirm=refuse))
    assert result.is_error and "The user said no." in result.content
    assert asked and "acceptEdits" in asked[0] and "more permissive" in asked[0]


async def test_an_approved_escalation_goes_on_to_launch(place, tmp_path):
    async def approve(tool, input, ctx, ask):
        return Allow(tool_name="Agent", subject=ask.subject)

    tool = AgentTool(teams=True)
    call = tool.input_model.model_validate({"description": "d", "prompt": "p", "mode": "acceptEdits"})
    parent = SimpleNamespace(permissions=policy(*place), cwd=str(tmp_path), agent_id="a-parent", depth=0, definition=None)
    result = await tool.run(call, _ctx(tmp_path, parent, confirm=approve))
    assert result.content == "the registry was reached"  # past the approval, the launch went on


def test_block_reads_outside_working_directories_comes_from_settings(tmp_path):
    from covey.session.setup import policy_from_settings
    from covey.settings.merged import Settings

    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude/settings.json").write_text(json.dumps({"permissions": {"blockReadsOutsideWorkingDirectories": True}}))
    p = policy_from_settings(Settings.load(tmp_path, home=tmp_path / "home"), project_root=tmp_path)
    assert isinstance(p.decide("Read", True, "/etc/hosts", {}), Deny)


def test_a_mode_the_schema_does_not_offer_is_refused_naming_it():
    model = agent_input_model(teams=False)
    with pytest.raises(ValueError, match="'bypassPermissions' cannot be set"):
        model.model_validate({"description": "d", "prompt": "p", "mode": "bypassPermissions"})
