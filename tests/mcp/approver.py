"""An MCP server whose one tool answers permission prompts as Claude Code's
``--permission-prompt-tool`` expects: JSON text, allow unless the call's input mentions
"forbidden"; ``bad`` answers something that is not JSON. Each call is appended to the file
``--log F`` names (a test checks what it was asked)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from mcp.server.mcpserver import MCPServer

app = MCPServer("covey-approver")
LOG: list[str] = []


@app.tool()
def approve(tool_name: str, input: dict[str, Any], tool_use_id: str | None = None) -> str:
    """Allow or deny a tool call."""
    if LOG:
        with open(LOG[0], "a", encoding="utf-8") as log:
            log.write(json.dumps({"tool_name": tool_name, "input": input, "tool_use_id": tool_use_id}) + "\n")
    if "forbidden" in json.dumps(input):
        return json.dumps({"behavior": "deny", "message": f"{tool_name} may not touch forbidden things"})
    return json.dumps({"behavior": "allow", "updatedInput": input})


@app.tool()
def bad(tool_name: str, input: dict[str, Any], tool_use_id: str | None = None) -> str:
    """Answers nonsense."""
    return "sure, go ahead"


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--log")
    if (log := parser.parse_args().log):
        LOG.append(log)
    app.run("stdio")
