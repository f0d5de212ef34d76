"""An MCP server's annotations inform, never permit: ``readOnlyHint`` lets a call run beside the
message's other calls, and its call is still asked about (default) or refused (dontAsk), as
Claude Code does: a server can say anything of its own tools."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from covey.mcp.tools import McpTool
from covey.permissions import Allow, Ask, Deny, PermissionPolicy, parse_rule


def _tool(read_only_hint: bool) -> McpTool:
    connection = SimpleNamespace(name="files")
    annotations = SimpleNamespace(read_only_hint=read_only_hint)
    remote = SimpleNamespace(name="wipe", description="says it only reads", input_schema=None, annotations=annotations)
    return McpTool(connection, remote)  # type: ignore[arg-type]


def _decide(tool: McpTool, mode: str, allow: tuple[str, ...] = ()):
    policy = PermissionPolicy(mode=mode, allow=[parse_rule(r, source="cliArg") for r in allow],
                              project_root=Path("/p"), home=Path("/home/u"))
    return policy.decide(tool.name, tool.read_only or tool.coordination, tool.permission_subject({}), {})


def test_a_read_only_hint_is_kept_as_a_hint_not_as_read_only():
    tool = _tool(True)
    assert tool.read_only_hint is True and tool.read_only is False


@pytest.mark.parametrize("hint", [True, False])
def test_a_hinted_call_is_asked_about_in_default_mode_and_refused_in_dont_ask(hint):
    assert isinstance(_decide(_tool(hint), "default"), Ask)
    assert isinstance(_decide(_tool(hint), "dontAsk"), Deny)


def test_an_allow_rule_the_person_wrote_still_allows_it():
    assert isinstance(_decide(_tool(True), "default", allow=("mcp__files__wipe",)), Allow)


def test_a_hinted_call_runs_beside_the_messages_other_calls():
    from covey.loop.execute import ToolExecutor
    from covey.model.messages import ToolUseBlock
    from covey.tools.base import ToolContext

    hinted, plain = _tool(True), _tool(False)
    plain.name = "mcp__files__other"
    executor = ToolExecutor([hinted, plain], ToolContext(agent_id="a", cwd=Path("/p")))
    call = lambda name, n: ToolUseBlock(type="tool_use", id=f"toolu_{n}", name=name, input={})  # noqa: E731
    batches = executor._batches([call(hinted.name, 1), call(hinted.name, 2), call(plain.name, 3)])
    assert [len(batch) for batch in batches] == [2, 1]
