"""Queued spawns end to end (docs/subagents.md#queued-spawns): ``covey -p`` with twenty
background reviews asked for in one message, a concurrency limit of five and queueing on.
Every launch is answered ``async_launched``, fifteen of them say they are queued, and the
run answers after twenty notices, one per review. The rules themselves (never more than
the limit running, launch order, a kill, the budget) are tested without Ray in
tests/registry/test_queue.py."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from covey.subagents.launch import QUEUED_NOTE
from tests.inprocess_covey import covey_here

REVIEWS, LIMIT = 20, 5


def _rules(path: Path) -> None:
    reviews = [{"name": "Agent", "input": {"description": f"review {i}", "prompt": f"Review part {i}.",
                                           "subagent_type": "general-purpose", "run_in_background": True}}
               for i in range(REVIEWS)]
    path.write_text(json.dumps({"rules": [
        # A review takes a while, so the first five still run when the other fifteen are launched.
        {"when": {"system_lacks": "You are covey"}, "reply": {"text": "reviewed: fine"}, "latency_s": 0.5},
        {"when": {"last_message_contains": "<task-notification>"}, "reply": {"text": "noted"}},
        {"when": {"last_tool_result_contains": "Async agent launched"}, "reply": {"text": "Twenty reviews are on their way."}},
        {"reply": {"text": "Launching the reviews.", "tool_use": reviews}},
    ]}))


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")  # covey -p in this process, on the shared Ray
def test_twenty_background_reviews_past_a_limit_of_five_all_notify_once(tmp_path):
    _rules(tmp_path / "reviews.json")
    done = covey_here("-p", "Review the twenty parts", "--model", "scripted:reviews.json",
                      "--output-format", "stream-json", "--verbose", cwd=tmp_path,
                      env={"COVEY_QUEUE_SPAWNS": "1", "COVEY_MAX_CONCURRENT_AGENTS": str(LIMIT)})
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    answers = [block for e in events if e["type"] == "user" and e.get("parent_tool_use_id") is None
               for block in e["message"]["content"] if isinstance(block, dict) and block.get("type") == "tool_result"]
    texts = ["".join(part.get("text", "") for part in a["content"]) if isinstance(a["content"], list) else a["content"]
             for a in answers]
    assert len(texts) == REVIEWS and not any(a.get("is_error") for a in answers)
    assert sum(QUEUED_NOTE in text for text in texts) == REVIEWS - LIMIT
    assert all(text.startswith("Async agent launched") for text in texts)  # each one's async_launched answer
    notified = Counter(e["task_id"] for e in events if e.get("subtype") == "task_notification")
    assert len(notified) == REVIEWS and set(notified.values()) == {1}
    assert events[-1]["type"] == "result" and not events[-1]["is_error"]
