"""A small MCP server written with the official SDK, for covey's MCP tests.

``python server.py`` serves over stdio; ``python server.py http PORT`` over streamable
HTTP on 127.0.0.1. ``--pidfile F`` writes its pid (a test checks the process is gone);
``--die`` exits at once after a line on stderr (a server that fails to start).
"""

from __future__ import annotations

import argparse
import base64
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.types import Image

app = MCPServer("covey-test")
PIXEL = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
def getenv(name: str) -> str:
    """The value of an environment variable in the server's process."""
    return os.environ.get(name, "<unset>")


@app.tool()
def fail(reason: str) -> str:
    """Always fails with the reason."""
    raise ValueError(reason)


@app.tool()
def pixel() -> Image:
    """A one-pixel PNG."""
    return Image(data=PIXEL, format="png")


@app.tool()
def whoami() -> str:
    """This server's argv tail and pid."""
    return f"{' '.join(sys.argv[1:])} pid={os.getpid()}"


@app.resource("notes://today", name="today", mime_type="text/plain")
def today() -> str:
    """Today's notes."""
    return "ship the MCP support"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", nargs="?", default="stdio")
    parser.add_argument("port", nargs="?", type=int, default=0)
    parser.add_argument("--pidfile")
    parser.add_argument("--die", action="store_true")
    parser.add_argument("--hang", action="store_true")
    args, _ = parser.parse_known_args()
    if args.pidfile:
        with open(args.pidfile, "w") as f:
            f.write(str(os.getpid()))
    if args.die:
        print("covey-test server: cannot open its database", file=sys.stderr, flush=True)
        sys.exit(3)
    if args.hang:
        import time

        time.sleep(3600)
    if args.transport == "http":
        app.run("streamable-http", host="127.0.0.1", port=args.port)
    else:
        app.run()


if __name__ == "__main__":
    main()
