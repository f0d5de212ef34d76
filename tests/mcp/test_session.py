"""A Session's MCP servers (no Ray: decided in ``Session.__init__`` and ``main_spec``), the
``covey mcp list`` command and ``mcp_status``."""

from __future__ import annotations

import json
import sys

from covey.cli import main as cli
from covey.model.scripted import ScriptedModel
from covey.runtime.ports import SessionRuntime
from covey.session import Session
from tests.mcp.helpers import SERVER
from tests.trusting import trust


def _project(tmp_path, servers):
    project, home = tmp_path / "proj", tmp_path / "home"
    (project / ".claude").mkdir(parents=True)
    home.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    trust(home, project, mcp=list(servers))
    return project, home


def _session(project, home, **options):
    env = {"HOME": str(home), "PATH": "/usr/bin", **options.pop("env", {})}
    return Session(cwd=str(project), model=ScriptedModel.from_dict({"rules": []}), env=env, **options)


def test_session_servers_from_the_project_the_run_and_the_api_reach_every_agent(tmp_path):
    project, home = _project(tmp_path, {"p": {"command": "${TOOL:-p-server}"}})
    session = _session(project, home, env={"TOOL": "p-bin"}, mcp_servers={"api": {"command": "a"}})
    assert {n: s.command for n, s in session.mcp.servers.items()} == {"p": "p-bin", "api": "a"}
    assert session.init_event().mcp_servers == [{"name": "p", "status": "pending"}, {"name": "api", "status": "pending"}]
    runtime = SessionRuntime(session_id=session.session_id, registry=None, mailbox=None)
    assert set(session.main_spec("go", runtime).settings.mcp_servers) == {"p", "api"}  # children copy these settings
    strict = _session(project, home, mcp_servers=['{"mcpServers": {"cli": {"command": "c"}}}'], strict_mcp_config=True)
    assert list(strict.mcp.servers) == ["cli"]


def test_the_plugin_only_policy_skips_project_servers_with_a_warning(tmp_path, managed_settings_dir):
    project, home = _project(tmp_path, {"p": {"command": "p"}})
    managed_settings_dir.mkdir()
    (managed_settings_dir / "managed-settings.json").write_text(json.dumps({"strictPluginOnlyCustomization": ["mcp"]}))
    session = _session(project, home)
    assert session.mcp.servers == {}
    assert any("locks mcp" in warning for warning in session.warnings)


async def test_mcp_status_answers_each_servers_state(tmp_path):
    project, home = _project(tmp_path, {"demo": {"command": sys.executable, "args": [SERVER]},
                                        "broken": {"command": sys.executable, "args": [SERVER, "--die"]}})
    statuses = {entry["name"]: entry for entry in await _session(project, home).mcp_status()}
    assert statuses["demo"]["status"] == "connected" and {"name": "add", "description": "Add two integers."} in statuses["demo"]["tools"]
    assert statuses["broken"]["status"] == "failed" and "cannot open its database" in statuses["broken"]["stderr"]


def test_covey_mcp_list_shows_each_server_and_fails_if_one_did(tmp_path, capsys, monkeypatch):
    project, _ = _project(tmp_path, {"demo": {"command": sys.executable, "args": [SERVER]}})
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cli.main(["mcp", "list", "--cwd", str(project)]) == 0
    assert "demo: " in (out := capsys.readouterr().out) and "✓ Connected (5 tools: add, getenv, fail, pixel, whoami)" in out
    bad = json.dumps({"mcpServers": {"gone": {"command": str(tmp_path / "no-such-binary")}}})
    assert cli.main(["mcp", "list", "--cwd", str(project), "--mcp-config", bad, "--strict-mcp-config"]) == 1
    out = capsys.readouterr().out
    assert "gone: " in out and "✗ Failed" in out and "demo" not in out


def test_system_init_names_each_server_s_scope_as_claude_code_does():
    from types import SimpleNamespace

    from covey.mcp.config import McpServerConfig
    from covey.session.main_agent import _server_entry

    servers = {name: McpServerConfig(command="x", source=source) for name, source in (
        ("u", "user config '/h/.claude.json'"), ("p", "project config '/w/.mcp.json'"),
        ("l", "local config '/h/.claude.json'"), ("d", "--mcp-config"))}
    servers["s"] = McpServerConfig(type="sdk")
    answered = {name: {"status": "connected"} for name in servers if name != "d"} | {"d": {"status": "failed"}}
    session = SimpleNamespace(mcp=SimpleNamespace(servers=servers, program=answered))
    assert [_server_entry(name, session) for name in servers] == [
        {"name": "u", "status": "connected", "source": "user"}, {"name": "p", "status": "connected", "source": "project"},
        {"name": "l", "status": "connected", "source": "local"}, {"name": "d", "status": "failed", "source": "dynamic"},
        {"name": "s", "status": "connected", "source": "sdk"}]
    session.mcp.program = None  # before the first turn asked them
    assert _server_entry("u", session) == {"name": "u", "status": "pending"}
