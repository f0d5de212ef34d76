"""Where a session's MCP servers come from, and ``${VAR}`` expansion, as Claude Code reads them."""

from __future__ import annotations

import json

import pytest

from covey.errors import UserError
from covey.mcp.approval import Approval
from covey.mcp.config import expand
from covey.mcp.sources import session_servers


def _EVERY(project):
    """The person approved every server of the project's .mcp.json."""
    return Approval(project.resolve(), approved=frozenset({"*"}))


def _write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


@pytest.fixture
def dirs(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir(parents=True)
    home.mkdir()
    _write(home / ".claude.json", {
        "mcpServers": {"both": {"command": "user-both"}, "user-only": {"command": "u"}},
        "projects": {str(project.resolve()): {"mcpServers": {"local-only": {"command": "l"}, "both": {"command": "local-both"}}}},
    })
    _write(project / ".mcp.json", {"mcpServers": {"both": {"command": "project-both"}, "web": {
        "type": "http", "url": "${API:-https://example.invalid}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}})
    return home, project


def test_scopes_merge_local_over_project_over_user(dirs):
    home, project = dirs
    found = session_servers(project, home=home, approval=_EVERY(project), env={"TOKEN": "t0k"})
    assert set(found.servers) == {"both", "user-only", "local-only", "web"}
    assert found.servers["both"].command == "local-both"
    web = found.servers["web"]
    assert (web.type, web.url, web.headers) == ("http", "https://example.invalid/mcp", {"Authorization": "Bearer t0k"})


def test_given_servers_win_and_strict_keeps_only_them(dirs):
    home, project = dirs
    given = [{"mcpServers": {"both": {"command": "cli"}}}, {"mine": {"command": "api"}}]
    assert session_servers(project, home=home, approval=_EVERY(project), env={"TOKEN": "x"}, given=given).servers["both"].command == "cli"
    strict = session_servers(project, home=home, approval=_EVERY(project), env={}, given=given, strict=True)
    assert set(strict.servers) == {"both", "mine"} and not strict.warnings


def test_the_plugin_only_policy_skips_user_project_and_local_servers(dirs):
    home, project = dirs
    found = session_servers(project, home=home, approval=_EVERY(project), env={}, locked=True)
    assert found.servers == {} and "strictPluginOnlyCustomization locks mcp" in found.warnings[0]


def test_a_bad_server_or_file_is_a_warning_naming_it_and_the_others_load(dirs):
    home, project = dirs
    (home / ".claude.json").write_text("{not json")
    found = session_servers(project, home=home, approval=_EVERY(project), env={})  # TOKEN unset, no default
    assert set(found.servers) == {"both"}
    assert any(".claude.json" in w and "cannot be read" in w for w in found.warnings)
    assert any("mcpServers.web.headers.Authorization" in w and "'TOKEN' is not set" in w for w in found.warnings)
    _write(project / ".mcp.json", {"mcpServers": {"nocmd": {"args": ["x"]}, "ok": {"command": "ok"}}})
    found = session_servers(project, home=home, approval=_EVERY(project), env={})
    assert set(found.servers) == {"ok"} and any("'nocmd'" in w and "needs a 'command'" in w for w in found.warnings)


def test_expansion_forms():
    env = {"A": "1", "EMPTY": ""}
    assert expand("${A}-${B:-two}-$A-${EMPTY:-d}", env, where="x") == "1-two-$A-"
    with pytest.raises(UserError, match="x: environment variable 'B' is not set"):
        expand("${B}", env, where="x")


def test_mcp_config_values_as_text_or_file(tmp_path):
    path = tmp_path / "m.json"
    path.write_text('{"mcpServers": {"f": {"command": "from-file"}}}')
    found = session_servers(tmp_path, home=tmp_path, env={}, strict=True,
                            given=['{"mcpServers": {"t": {"command": "from-text"}}}', str(path)])
    assert {n: s.command for n, s in found.servers.items()} == {"t": "from-text", "f": "from-file"}
    with pytest.raises(UserError, match="neither a JSON object nor a file"):
        session_servers(tmp_path, home=tmp_path, env={}, given=["/no/such.json"])
