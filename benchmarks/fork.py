"""``fork``: a parent with a ~50,000-token history launches 10 forks, then 10 plain children.

Every request goes over HTTP to the tests' fake Messages API, whose prompt-cache model
(covey/model/prompt_cache.py: tokens ≈ characters / 4) says what each request would read
from the cache and write to it. Figures, per child's first request: its prompt tokens
without caching (the whole request), and with it (read, written, uncached), priced at
Sonnet's rates; and the wall time from the parent's reply that launches the 10 to the
last child's reply, for the forks and for 10 ``general-purpose`` children in the same
run (a fresh session each, on one local Ray). The children answer in one turn at once:
what differs is what each child sends and what covey does to start it.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.common import log
from benchmarks.scripts import new_session
from covey.gateway.anthropic import AnthropicModel
from covey.model.base import ModelRequest
from covey.model.pricing import PriceTable
from covey.model.scripted import ScriptedModel
from tests.fake_messages_api import FakeMessagesAPI
from covey.model.prompt_cache import total_tokens

N = 10
HISTORY_TOKENS = 50_000
TAG = "<fork-boilerplate>"
MAIN = {"system_contains": "You are covey"}


def _history_text(tokens: int) -> str:
    """Distinct lines, ~4 characters a token: the notes of a long investigation."""
    lines, size, i = [], 0, 0
    while size < tokens * 4:
        line = f"note {i}: module_{i % 97}.py line {i * 7} calls helper_{i % 13}() with a retry of {i % 5} and logs it"
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines)


def _rules(fork: bool) -> list[dict[str, Any]]:
    if fork:
        calls = [{"name": "Agent", "input": {"description": f"part {i}", "prompt": f"PART_{i}: check your part"}} for i in range(N)]
        child = {"messages_contain": TAG}
        main = {**MAIN, "messages_lack": TAG}
    else:
        calls = [{"name": "Agent", "input": {"description": f"part {i}", "prompt": f"PART_{i}: check your part",
                                             "subagent_type": "general-purpose", "run_in_background": True}}
                 for i in range(N)]
        child, main = {"system_lacks": "You are covey"}, MAIN
    return [
        {"when": child, "reply": {"text": "part checked"}},
        {"when": {**main, "last_message_contains": "<task-notification>"}, "reply": {"text": "collected"}},
        {"when": {**main, "last_tool_result_contains": "Async agent launched"}, "reply": {"text": "waiting"}},
        {"when": main, "reply": {"tool_use": calls}},
    ]


class _Answers:
    """The fake API's replies from the rules, each request's kind and reply time recorded."""

    def __init__(self, fork: bool) -> None:
        self.script = ScriptedModel.from_dict({"rules": _rules(fork)})
        self.fork = fork
        self.log: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        request = ModelRequest(model=body["model"], system=body.get("system") or [], messages=body["messages"],
                               tools=body.get("tools") or [])
        message = asyncio.run(self.script.create(request))
        with self.lock:
            self.log.append({"body": body, "child": self._is_child(body), "calls": sum(
                1 for block in message.content if block.type == "tool_use"), "at": time.monotonic()})
        return {"content": [block.to_dict() for block in message.content], "stop_reason": message.stop_reason}

    def _is_child(self, body: dict[str, Any]) -> bool:
        if self.fork:
            return TAG in json.dumps(body["messages"])
        return not any("You are covey" in block.get("text", "") for block in body.get("system") or [])


async def _one_run(tmp: Path, fork: bool, prompt: str) -> dict[str, Any]:
    answers = _Answers(fork)
    with FakeMessagesAPI(replies=[answers], prompt_cache=True) as api:
        session = new_session(tmp / ("fork" if fork else "plain"), AnthropicModel(api_key="k", base_url=api.url),
                              settings={"forkSubagent": fork}, pool_size=N + 1, max_turns=20)
        try:
            runtime = await session.start()
            await runtime.registry.warm(N + 1)
            started = time.monotonic()
            result = await session.run(prompt)
            driver_s = time.monotonic() - started
        finally:
            session.close()
        usages = {id(entry["body"]): entry["usage"] for entry in api.cache.log}
    launch = next(entry for entry in answers.log if entry["calls"] == N)
    firsts = _first_requests([entry for entry in answers.log if entry["child"]])
    prices = PriceTable().price_of("claude-sonnet-4-6")
    children = [_child_figures(entry["body"], usages[id(entry["body"])], prices) for entry in firsts]
    return {
        "is_error": result.is_error, "children": len(firsts),
        "parent_history_tokens": total_tokens(launch["body"]),
        "launch_to_last_child_reply_s": round(max(e["at"] for e in answers.log if e["child"]) - launch["at"], 3),
        "driver_s": round(driver_s, 3), "first_requests": children,
        "first_requests_total": {key: round(sum(c[key] for c in children), 5) for key in children[0]} if children else {},
    }


def _first_requests(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each child's first request: the one with the fewest messages per prompt marker."""
    firsts: dict[str, dict[str, Any]] = {}
    for entry in entries:
        last = json.dumps(entry["body"]["messages"][-1])
        key = next((f"PART_{i}:" for i in range(N) if f"PART_{i}:" in last), None)
        if key and key not in firsts:
            firsts[key] = entry
    return list(firsts.values())


def _child_figures(body: dict[str, Any], usage: dict[str, int], prices: Any) -> dict[str, Any]:
    read, written, plain = usage["cache_read_input_tokens"], usage["cache_creation_input_tokens"], usage["input_tokens"]
    total = read + written + plain
    return {
        "request_bytes": len(json.dumps(body)),
        "prompt_tokens_uncached": total,
        "cache_read_tokens": read, "cache_write_tokens": written, "uncached_tokens": plain,
        "usd_without_cache": round(total * prices.input / 1e6, 5),
        "usd_with_cache": round((plain * prices.input + written * prices.cache_write + read * prices.cache_read) / 1e6, 5),
    }


async def run(tmp: Path, quick: bool) -> dict[str, Any]:
    prompt = f"Here is what we know so far:\n{_history_text(HISTORY_TOKENS)}\nSplit the check in {N} parts."
    out: dict[str, Any] = {"n": N, "history_tokens_target": HISTORY_TOKENS}
    out["forks"] = await _one_run(tmp, True, prompt)
    log(f"fork: forks {out['forks']['first_requests_total']} in {out['forks']['launch_to_last_child_reply_s']} s")
    out["plain"] = await _one_run(tmp, False, prompt)
    log(f"fork: plain {out['plain']['first_requests_total']} in {out['plain']['launch_to_last_child_reply_s']} s")
    totals = out["forks"]["first_requests_total"]
    if totals:
        out["fork_cache_saving"] = round(1 - totals["usd_with_cache"] / totals["usd_without_cache"], 3)
    return out
