"""Issue 39 item 6: a hostile ``.mcp.json`` (a cloned repository's) or ``~/.claude.json`` is one
warning naming the file; the session goes on with the servers of the other files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from covey.mcp.approval import Approval
from covey.mcp.sources import session_servers
from tests.hostile_files import special_files

BAD = {
    "truncated": ('{"mcpServers": {', "not valid JSON"),
    "top-level-list": ("[]", "holds a JSON list, not an object"),
    "top-level-string": ('"x"', "holds a JSON str, not an object"),
    "deep": ('{"mcpServers": ' + "[" * 100_000 + "]" * 100_000 + "}", "nests"),
    "deep-objects": ('{"x": ' + '{"a": ' * 300 + "1" + "}" * 300 + "}", "more than 200 levels"),
    "nul-byte": ('{"mcpServers": {"a\x00": {}}}', "Invalid control character"),
    "servers-int": ('{"mcpServers": 3}', "'mcpServers' must be an object"),
    "server-string": ('{"mcpServers": {"s": "run me"}}', "mcpServers.s must be an object"),
    "server-command-list": ('{"mcpServers": {"s": {"command": ["a"]}}}', "mcpServers.s"),
}



SPECIAL = special_files("too large: over 4,194,304 bytes", b'{"mcpServers": "\xff"}')


def _servers(home: Path, project: Path):
    """The servers, the person having trusted the project and approved every one of its servers."""
    return session_servers(project, home=home, env={}, approval=Approval(project.resolve(), approved=frozenset({"*"})))


@pytest.mark.parametrize("name", sorted(BAD) + sorted(SPECIAL))
def test_a_hostile_project_mcp_json_is_one_warning_and_the_user_servers_load(home_and_project, name):
    home, project = home_and_project
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"mine": {"command": "m"}}}))
    path = project / ".mcp.json"
    if name in BAD:
        path.write_text(BAD[name][0])
    else:
        SPECIAL[name][0](path)
    found = _servers(home, project)  # returns at all: the FIFO is never opened for reading
    assert "mine" in found.servers and len(found.warnings) == 1, found.warnings
    warning = found.warnings[0]
    assert str(path) in warning and "\n" not in warning
    assert (BAD[name][1] if name in BAD else SPECIAL[name][1]) in warning, warning


@pytest.mark.parametrize("name", ["fifo", "huge-200mb", "symlink-dev-zero"])
def test_a_hostile_claude_json_is_one_warning_and_the_project_servers_load(home_and_project, name):
    home, project = home_and_project
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"theirs": {"command": "t"}}}))
    SPECIAL[name][0](home / ".claude.json")
    found = _servers(home, project)
    assert "theirs" in found.servers and len(found.warnings) == 1
    assert str(home / ".claude.json") in found.warnings[0] and SPECIAL[name][1] in found.warnings[0]
