"""End to end through ``covey -p``: the main agent's request that the API refuses (a 529 burst,
whose timing does not depend on how long the run takes to start) waits for the ``retry-after``
instead of failing, and stream-json shows the wait as a Claude Code-shaped ``rate_limit_event``
line before the reply."""

from __future__ import annotations

import json
import re

import pytest

from tests.fake_ratelimited_api import FakeRateLimitedAPI
from tests.inprocess_covey import covey_here


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")  # covey -p in this process, on the shared Ray
def test_an_overload_is_waited_out_and_shown_as_a_rate_limit_event(tmp_path):
    with FakeRateLimitedAPI(requests_per_minute=60) as api:
        api.overload(2, retry_after_s=1)
        done = covey_here("-p", "go", "--output-format", "stream-json", "--verbose", "--trace",
                          str(tmp_path / "trace.json"), cwd=tmp_path,
                          env={"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "test-key-not-real"})
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    # The trace shows the wait inside the main agent's track, as long as it was.
    (wait,) = [e for e in json.loads((tmp_path / "trace.json").read_text())["traceEvents"] if e.get("cat") == "rate_limit"]
    assert wait["args"]["cause"] == "overloaded_error" and wait["dur"] >= 900_000
    types = [line["type"] for line in lines]
    assert "rate_limit_event" in types and types.index("rate_limit_event") < types.index("assistant")
    event = lines[types.index("rate_limit_event")]
    assert set(event) == {"type", "rate_limit_info", "uuid", "session_id"}
    info = event["rate_limit_info"]
    assert info["status"] == "rejected" and info["cause"] == "overloaded_error" and info["waitMs"] <= 1000
    assert lines[-1]["type"] == "result" and lines[-1]["is_error"] is False
    assert [entry.status for entry in api.log] == [529, 529, 200]  # each waited out, none retried by the SDK


def _main_launches_background_children(api: FakeRateLimitedAPI, children: int):
    """The main agent launches ``children`` background children at once; each child's first request
    is refused 529 once (set when the launch is answered, for the children's first requests only:
    the main agent's next request could take a place in the burst otherwise, and a child that
    starts before the others, as a cold pool of agent processes makes likely, its retries)."""

    def reply(body: dict) -> dict:
        system = " ".join(block.get("text", "") for block in body.get("system") or [])
        content = str(body["messages"][-1]["content"])
        if "You are covey" not in system:
            return {"text": "child done"}
        if "<task-notification>" in content:
            return {"text": "noted"}
        if "tool_result" in content:
            return {"text": "waiting for the children"}
        refused: set[str] = set()

        def first_of_a_child(body: dict) -> bool:
            asked = re.findall(r"child \d+", str(body["messages"]))[:1]
            if "You are covey" in str(body.get("system")) or not asked or asked[0] in refused:
                return False
            refused.add(asked[0])
            return True

        api.overload(children, retry_after_s=1, only=first_of_a_child)
        return {"content": [{"type": "tool_use", "id": f"toolu_{i}", "name": "Agent", "input": {
            "description": f"child {i}", "prompt": f"child {i}", "subagent_type": "general-purpose",
            "run_in_background": True}} for i in range(children)]}

    return reply


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")
def test_a_background_childs_wait_reaches_the_sessions_stream_json(tmp_path):
    with FakeRateLimitedAPI(requests_per_minute=600) as api:
        api.reply = _main_launches_background_children(api, 3)
        done = covey_here("-p", "go", "--output-format", "stream-json", "--verbose", cwd=tmp_path,
                          env={"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "test-key-not-real"})
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    launched = {line["task_id"] for line in lines if line.get("subtype") == "task_notification"}
    assert len(launched) == 3, lines  # each child notified
    waits = [line["rate_limit_info"] for line in lines if line["type"] == "rate_limit_event"]
    # The burst meets the children's first requests: each child's wait is on the session's stream.
    assert {info["agentId"] for info in waits} >= launched, waits
    assert all(info["cause"] == "overloaded_error" and info["status"] == "rejected" for info in waits)
    assert lines[-1]["type"] == "result" and lines[-1]["is_error"] is False
    assert api.count(529) == 3 and api.count(200) == len(api.log) - 3
