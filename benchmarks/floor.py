"""``floor``: what a fan-out costs on this machine with nothing of covey in it. The very request
bodies a covey run sent, replayed by a bare asyncio HTTP client (one task per agent, each
request streamed and its SSE lines parsed) against a fresh fake Messages API with the same
replies: what the fake server, the loopback and the machine cost, and nothing else.

The replay keeps the run's shape: the main agent's first request; then every child at once,
each sending its own requests one after another; then the main agent's later requests. The
figure is the fake API's, as for covey: the main agent's first to last request as it saw them.

``python -m benchmarks.floor URL BODIES.json`` replays in a process of its own (the fake API's
threads stay out of its interpreter); ``replay_in_process`` is the same thing for a caller that
has the API's URL and the bodies.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.faults.scenario import MAIN_MARK


def agent_of(body: dict[str, Any]) -> str:
    """Which agent sent ``body``: the main agent (its prompt's mark) or ``CHILD-<i>``."""
    text = json.dumps(body["messages"])
    if MAIN_MARK in text:
        return "main"
    found = re.search(r"CHILD-\d+", text)
    return found.group(0) if found else "other"


async def _send(host: str, port: int, body: dict[str, Any]) -> int:
    """One streamed request on a connection of its own (the fake API closes each); the SSE
    events read and parsed. How many events came."""
    data = json.dumps(body).encode()
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(b"POST /v1/messages HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                     b"x-api-key: floor\r\nanthropic-version: 2023-06-01\r\nContent-Length: %d\r\n\r\n%s"
                     % (host.encode(), len(data), data))
        await writer.drain()
        status = await reader.readline()
        if b" 200 " not in status:
            raise RuntimeError(f"the fake API answered {status!r}")
        while (await reader.readline()) not in (b"\r\n", b""):
            pass  # headers
        events, buffer = 0, b""
        while True:
            size = int((await reader.readline()).strip() or b"0", 16)
            if size == 0:
                break
            buffer += (await reader.readexactly(size + 2))[:-2]
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if line.startswith(b"data: "):
                    json.loads(line[6:])
                    events += 1
        return events
    finally:
        writer.close()


def by_agent(url: str, bodies: list[dict[str, Any]]) -> tuple[str, int, list[dict[str, Any]], list[list[dict[str, Any]]]]:
    """(host, port, the main agent's bodies, each child's bodies) of a run to replay at ``url``."""
    parts = urlsplit(url)
    agents: dict[str, list[dict[str, Any]]] = {}
    for body in bodies:
        agents.setdefault(agent_of(body), []).append(body)
    main = agents.pop("main", [])
    agents.pop("other", None)
    return parts.hostname or "127.0.0.1", parts.port or 80, main, list(agents.values())


async def replay(url: str, bodies: list[dict[str, Any]]) -> None:
    """Send ``bodies`` in the run's shape (above)."""
    host, port, main, children = by_agent(url, bodies)

    async def agent(own: list[dict[str, Any]]) -> None:
        for body in own:
            await _send(host, port, body)

    if main:
        await _send(host, port, main[0])
    await asyncio.gather(*(agent(own) for own in children))
    await agent(main[1:])


def replay_in_process(url: str, bodies: list[dict[str, Any]], timeout_s: float = 600,
                      module: str = "benchmarks.floor", args: tuple[str, ...] = ()) -> None:
    """``replay`` in a fresh process (``python -m benchmarks.floor``; ``module``
    ``benchmarks.floor_ray`` for the replay on one Ray actor per child, ``args`` its own)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
        json.dump(bodies, file)
    try:
        done = subprocess.run([sys.executable, "-m", module, url, file.name, *args], capture_output=True,
                              text=True, timeout=timeout_s, cwd=Path(__file__).resolve().parent.parent)
    finally:
        Path(file.name).unlink(missing_ok=True)
    if done.returncode != 0:
        raise RuntimeError(f"the floor's replay failed: {done.stderr[-800:]}")


if __name__ == "__main__":
    asyncio.run(replay(sys.argv[1], json.loads(Path(sys.argv[2]).read_text())))
