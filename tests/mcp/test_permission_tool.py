"""``--permission-prompt-tool mcp__SERVER__TOOL``: an MCP tool of the session answers its
permission prompts, as in Claude Code's print mode; what it does not clearly allow is denied,
saying why; a name no server of the session serves is refused up front."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from covey.cli import main as cli
from covey.errors import UserError
from covey.mcp.config import McpServerConfig
from covey.mcp.permission_tool import McpPermissionTool
from covey.permissions.decisions import Deny, PermissionRequest

APPROVER = str(Path(__file__).with_name("approver.py"))


def _request(command: str) -> PermissionRequest:
    return PermissionRequest(tool_name="Bash", subject=command, input={"command": command}, message=f"Allow Bash: {command}?",
                             reason="default mode", suggested_rule=f"Bash({command})", tool_use_id="toolu_9")


def _asker(tool: str, tmp_path: Path, servers: dict[str, McpServerConfig] | None = None) -> McpPermissionTool:
    config = McpServerConfig(command=sys.executable, args=[APPROVER, "--log", str(tmp_path / "asked.jsonl")])
    return McpPermissionTool(tool, servers if servers is not None else {"perm": config}, cwd=str(tmp_path))


async def test_the_tool_is_asked_with_the_call_and_its_answer_allows_or_denies(tmp_path):
    asker = _asker("mcp__perm__approve", tmp_path)
    assert await asker(_request("ls")) is True
    denied = await asker(_request("cat forbidden.txt"))
    assert isinstance(denied, Deny) and denied.message == "Bash may not touch forbidden things"
    asked = [json.loads(line) for line in (tmp_path / "asked.jsonl").read_text().splitlines()]
    assert asked[0] == {"tool_name": "Bash", "input": {"command": "ls"}, "tool_use_id": "toolu_9"}


async def test_an_answer_that_is_not_allow_or_deny_denies_and_says_what_came(tmp_path):
    denied = await _asker("mcp__perm__bad", tmp_path)(_request("ls"))
    assert isinstance(denied, Deny) and "'sure, go ahead'" in denied.message and "mcp__perm__bad" in denied.message


async def test_a_server_that_does_not_start_denies_rather_than_raising(tmp_path):
    broken = {"perm": McpServerConfig(command=sys.executable, args=["-c", "import sys; sys.exit(3)"])}
    denied = await _asker("mcp__perm__approve", tmp_path, broken)(_request("ls"))
    assert isinstance(denied, Deny) and "did not allow the call" in denied.message


def test_a_tool_no_server_of_the_session_serves_is_refused_in_one_line(tmp_path):
    with pytest.raises(UserError, match=r"mcp__nope__ask: no MCP server of this session serves it .*: perm\)"):
        _asker("mcp__nope__ask", tmp_path)


def test_the_command_line_takes_stdio_or_an_mcp_tool_and_refuses_anything_else(capsys):
    assert cli.main(["-p", "x", "--permission-prompt-tool", "ask-somebody"]) == 1
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and "give stdio" in said[0] and "mcp__SERVER__TOOL" in said[0]


RULES = """
rules:
  - when: {last_tool_result_contains: "hello-from-bash"}
    reply: {text: "now the other", tool_use: {name: Bash, input: {command: "touch forbidden"}}}
  - when: {last_tool_result_contains: "forbidden things"}
    reply: {text: "denied as it said"}
  - when: {}
    reply: {text: "running", tool_use: {name: Bash, input: {command: "touch made && echo hello-from-bash"}}}
"""


@pytest.mark.ray
def test_covey_p_asks_the_tool_through_the_service_and_does_what_it_says(shared_service, tmp_path):
    served, log = shared_service, tmp_path / "asked.jsonl"
    servers = {"mcpServers": {"perm": {"command": sys.executable, "args": [APPROVER, "--log", str(log)]}}}
    done = served.covey("-p", "go", "--model", served.rules(RULES), "--mcp-config", json.dumps(servers),
                        "--permission-prompt-tool", "mcp__perm__approve", "--output-format", "json", "--max-turns", "5",
                        cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "denied as it said"
    assert [d["tool_input"]["command"] for d in result["permission_denials"]] == ["touch forbidden"]
    assert (tmp_path / "made").exists() and not (tmp_path / "forbidden").exists()
    assert [json.loads(line)["input"]["command"] for line in log.read_text().splitlines()] == [
        "touch made && echo hello-from-bash", "touch forbidden"]
