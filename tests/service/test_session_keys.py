"""Every run option a client sends reaches the Session the service builds (one list: SessionOptions)."""

from __future__ import annotations

from pathlib import Path

import covey
from covey.service.runs import SERVICE_OWNED, SESSION_KEYS, session_for
from covey.session import SessionOptions


OK = Path(covey.__file__).parent / "scenarios" / "ok.yaml"


def test_the_service_passes_on_every_session_option_but_those_it_owns():
    assert set(SESSION_KEYS) == set(SessionOptions.model_fields) - SERVICE_OWNED
    assert {"mcp_servers", "strict_mcp_config"} <= set(SESSION_KEYS)


def test_mcp_config_through_the_service_reaches_the_session(tmp_path):
    server = {"mcpServers": {"echo": {"command": "python3", "args": ["-c", "pass"]}}}
    request = {"cwd": str(tmp_path), "env": {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
               "options": {"model": f"scripted:{OK}", "mcp_servers": [server], "strict_mcp_config": True}}
    session = session_for(request, service=False)
    assert session.options.mcp_servers == [server] and session.options.strict_mcp_config is True
    assert "echo" in session.mcp.servers
