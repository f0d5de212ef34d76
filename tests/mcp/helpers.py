"""Shared by the MCP tests: the test server's config, a free port, a process check."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from covey.mcp.config import McpServerConfig

SERVER = str(Path(__file__).with_name("server.py"))


def stdio(*args: str, env: dict[str, str] | None = None) -> McpServerConfig:
    return McpServerConfig(command=sys.executable, args=[SERVER, *args], env=env or {})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_http_server(port: int) -> subprocess.Popen:
    """The test server over streamable HTTP, once it accepts connections."""
    process = subprocess.Popen([sys.executable, SERVER, "http", str(port)], stderr=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process
        except OSError:
            if process.poll() is not None:
                raise RuntimeError("the HTTP test server exited")
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the HTTP test server did not listen")


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone: it has exited)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z" and os.path.exists(f"/proc/{pid}")
