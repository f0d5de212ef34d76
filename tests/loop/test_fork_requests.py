"""Prompt caching that pays, on the request bytes: five forks of one parent send one
prefix byte for byte, with a breakpoint at its end, and the fake API's cache model serves all but
the first from the cache. No Ray: each fork runs in an in-process ``AgentRunner``."""

from __future__ import annotations

import hashlib
import json

from covey.agent.actor import AgentRunner
from covey.loop.wire import with_breakpoints
from covey.model.scripted import ScriptedModel
from covey.subagents.agent_schema import agent_input_model
from covey.subagents.fork import fork_spec
from tests.subagents.test_fork import _history, _params, _parent
from covey.model.prompt_cache import PromptCache, breakpoints

CACHE = {"type": "ephemeral"}


async def _first_requests(tmp_path, n: int = 5, params=None) -> tuple[list[dict], int]:
    """Each fork's first request as the Messages API gets it, and how many messages it inherited."""
    parent, params = _parent(tmp_path), params or _params()
    call_model = agent_input_model(fork=True)
    bodies, inherited = [], 0
    for i in range(n):
        spec = fork_spec(parent, params, call_model(description=f"part {i}", prompt=f"PART_{i}"),
                         agent_id=f"agent-f{i}", tool_use_id=f"toolu_f{i}")
        inherited = len(spec.inherited)
        model = ScriptedModel.from_dict({"rules": [{"when": {}, "reply": {"text": f"fork {i} done"}}]})
        runner = AgentRunner()
        await runner.start(spec.model_copy(update={"model": model, "runtime": None, "transcript_dir": str(tmp_path / "t")}))
        report = await runner.wait()
        assert report.status == "completed", report.text
        bodies.append(json.loads(json.dumps(model.requests[0].to_api_kwargs())))
    return bodies, inherited


def _prefix(body: dict, inherited: int) -> str:
    """Tools, system and the inherited messages, serialized as sent."""
    return json.dumps([body["tools"], body["system"], body["messages"][:inherited]], separators=(",", ":"))


async def test_five_forks_send_one_prefix_byte_for_byte_with_a_breakpoint_at_its_end(tmp_path):
    bodies, inherited = await _first_requests(tmp_path)
    prefixes = {_prefix(body, inherited) for body in bodies}
    assert len(prefixes) == 1
    for index, body in enumerate(bodies):
        assert body["messages"][inherited - 1]["content"][-1]["cache_control"] == CACHE  # the inherited end
        assert body["tools"][-1]["cache_control"] == CACHE and body["system"][-1]["cache_control"] == CACHE
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        directive = body["messages"][inherited]["content"]
        assert "<fork-boilerplate>" in json.dumps(directive) and f"PART_{index}" in json.dumps(directive)
        assert len(breakpoints(body)) == 4  # tools, system, inherited end, tail: the API's maximum
    print("fork prefix sha256:", hashlib.sha256(prefixes.pop().encode()).hexdigest()[:16])


def _parent_request(params) -> dict:
    """The parent's request that the Agent calls answered, as its loop sent it."""
    return {"tools": [*params.tools[:-1], {**params.tools[-1], "cache_control": CACHE}],
            "system": [*params.system[:-1], {**params.system[-1], "cache_control": CACHE}],
            "messages": with_breakpoints(params.messages[:-1])}


async def test_the_forks_prefix_is_the_parents_last_request_when_the_fork_calls_were_all_it_said(tmp_path):
    """The parent's tail breakpoint already wrote that prefix: even the first fork reads it all."""
    bodies, inherited = await _first_requests(tmp_path, n=1)
    parent = _parent_request(_params())
    assert _prefix(parent, inherited) == _prefix(bodies[0], inherited)
    cache = PromptCache()
    cache.usage(parent)
    assert cache.usage(bodies[0])["cache_read_input_tokens"] == breakpoints(bodies[0])[2]["tokens"]


async def test_the_fake_apis_cache_model_serves_every_fork_after_the_first_from_the_cache(tmp_path):
    params = _params(messages=_history(text_before_calls=True))  # a prefix the parent never sent
    bodies, inherited = await _first_requests(tmp_path, params=params)
    cache = PromptCache()
    cache.usage(_parent_request(params))
    usages = [cache.usage(body) for body in bodies]
    prefix_tokens = breakpoints(bodies[0])[2]["tokens"]  # up to the inherited end
    assert 0 < usages[0]["cache_read_input_tokens"] < prefix_tokens  # the parent's part of it
    assert usages[0]["cache_creation_input_tokens"] > 0  # the rest, and the directive, written
    for usage in usages[1:]:
        assert usage["cache_read_input_tokens"] == prefix_tokens  # the prefix the first fork wrote
        assert usage["cache_creation_input_tokens"] == usages[0]["cache_creation_input_tokens"] - (
            prefix_tokens - usages[0]["cache_read_input_tokens"])  # its own directive only
