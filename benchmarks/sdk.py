"""``sdk``: claude-agent-sdk programs with ``cli_path`` at covey, and at Claude Code, as users run them.

One private HOME, service directory and ``RAY_TMPDIR``, and one fake Messages API on
127.0.0.1 answering "ok" after ``REPLY_S``, for the whole case:

1. ``query("say ok")`` with covey, cold (this program starts the covey service) and then
   warm, ``RUNS`` times: seconds from ``query()`` to its ``ResultMessage`` and to the end of
   the iteration (the process has exited).
2. A ``ClaudeSDKClient`` over ``TURNS`` turns: seconds per turn after the first.
3. The same two with the Claude Code the SDK bundles (``_bundled/claude``), against
   the same fake API, when the SDK has it: the peer, measured in the same run.
4. ``covey stop``, and the processes left after it (by the private ``RAY_TMPDIR``).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.cli import _covey, _stop
from benchmarks.cli_peer import bundled_claude
from benchmarks.common import log
from tests.fake_messages_api import FakeMessagesAPI

REPLY_S = 0.05
RUNS = 5
TURNS = 4


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    time.sleep(REPLY_S)
    return {"text": "ok", "usage": {"input_tokens": 10, "output_tokens": 1}}


def _env(tmp: Path, api_url: str) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "ANTHROPIC_BASE_URL": api_url, "ANTHROPIC_API_KEY": "x", "COVEY_NO_SERVICE": "0",
            "COVEY_SERVICE_DIR": tempfile.mkdtemp(prefix="cs-", dir="/tmp"),
            "RAY_TMPDIR": tempfile.mkdtemp(prefix="cb-", dir="/tmp"),
            "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}


async def _query(cli: str, env: dict[str, str], cwd: Path) -> dict[str, float]:
    from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

    options = ClaudeAgentOptions(cli_path=cli, cwd=str(cwd), env=env)
    started = time.monotonic()
    marks: dict[str, float] = {}
    async for message in query(prompt="say ok", options=options):
        if isinstance(message, ResultMessage):
            if message.is_error or message.result != "ok":
                raise RuntimeError(f"{cli}: the result was {message.result!r}")
            marks["result_s"] = round(time.monotonic() - started, 3)
    marks["end_s"] = round(time.monotonic() - started, 3)
    return marks


async def _client_turns(cli: str, env: dict[str, str], cwd: Path) -> list[float]:
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage

    times = []
    async with ClaudeSDKClient(options=ClaudeAgentOptions(cli_path=cli, cwd=str(cwd), env=env)) as client:
        for turn in range(TURNS):
            started = time.monotonic()
            await client.query(f"say ok ({turn})")
            async for message in client.receive_response():
                if isinstance(message, ResultMessage) and message.is_error:
                    raise RuntimeError(f"{cli}: turn {turn} failed: {message.result}")
            times.append(round(time.monotonic() - started, 3))
    return times


async def _measure(cli: str, env: dict[str, str], cwd: Path, runs: int) -> dict[str, Any]:
    first = await _query(cli, env, cwd)
    warm = [await _query(cli, env, cwd) for _ in range(runs)]
    turns = await _client_turns(cli, env, cwd)
    return {
        "first_query": first,
        "warm_query_result_s": [m["result_s"] for m in warm],
        "warm_query_result_median_s": statistics.median(m["result_s"] for m in warm),
        "warm_query_end_median_s": statistics.median(m["end_s"] for m in warm),
        "client_turn_s": turns,
        "client_later_turn_median_s": statistics.median(turns[1:]),
    }


async def run(tmp: Path, quick: bool) -> dict[str, Any]:
    runs = 2 if quick else RUNS
    project = tmp / "proj"
    project.mkdir()
    out: dict[str, Any] = {"reply_s": REPLY_S, "runs": runs, "turns": TURNS}
    with FakeMessagesAPI(replies=[_reply]) as api:
        env = _env(tmp, api.url)
        try:
            log("sdk: covey")
            command = _covey()
            if len(command) != 1:
                raise RuntimeError("the covey console script is not installed in this venv (pip install -e .)")
            out["covey"] = await _measure(command[0], env, project, runs)
        finally:
            out["stop"] = await asyncio.to_thread(_stop, {**os.environ, **env})
        if claude := bundled_claude():
            log("sdk: Claude Code (the SDK's bundled CLI)")
            out["claude_code"] = await _measure(claude, env, project, runs)
    if "claude_code" in out:
        ours, theirs = out["covey"], out["claude_code"]
        out["warm_query_vs_claude_code"] = round(
            ours["warm_query_end_median_s"] / theirs["warm_query_end_median_s"], 2)
        out["later_turn_vs_claude_code"] = round(
            ours["client_later_turn_median_s"] / theirs["client_later_turn_median_s"], 2)
    return out
