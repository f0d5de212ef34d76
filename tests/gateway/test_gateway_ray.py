"""An agent actor on the real model's path sends through its node's gateway and never imports the
``anthropic`` SDK, yet gets the replies, the raw stream events and the errors it would in-process
(a Session against the fake Messages API on 127.0.0.1)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from ray import cloudpickle

from covey.events import ResultEvent, StreamEvent
from covey.gateway.anthropic import AnthropicModel
from covey.runtime.travel import travelling
from covey.session import Session
from tests.fake_messages_api import FakeMessagesAPI

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("ray_session")]


KEY = "test-key-only-the-gateway-holds"


async def _run_in_actor(tmp_path: Path, api: FakeMessagesAPI, partial: bool = True) -> tuple[list[Any], list[str]]:
    """The main agent's events, run in a pooled actor, and the modules that actor has loaded.
    What the actor was sent (its spec, the session runtime) never holds the API key. With
    ``partial``, each request is a stream from the gateway; without, one plain call."""
    model = AnthropicModel(api_key=KEY, base_url=api.url, max_retries=0)
    session = Session(cwd=str(tmp_path), model=model, pool_size=1, transcript_dir=str(tmp_path / "t"),
                      include_partial_messages=partial)
    try:
        runtime = await session.start()
        actor = await runtime.registry.take("home")
        spec = session.main_spec("hi", runtime)
        assert KEY.encode() not in cloudpickle.dumps(travelling(spec)) + cloudpickle.dumps(runtime)
        events = [e async for e in actor.events(spec)]
        modules = await actor.loaded_modules()
        actor.kill()
        return events, modules
    finally:
        session.close()


async def test_the_agent_actor_gets_the_reply_and_stream_events_without_the_sdk(tmp_path):
    with FakeMessagesAPI(replies=[{"text": "through the gateway"}]) as api:
        events, modules = await asyncio.wait_for(_run_in_actor(tmp_path, api), 120)
        assert len(api.requests) == 1
        assert [sent.removeprefix("Bearer ") for sent in api.credentials] == [KEY]  # the gateway had it
    assert "anthropic" not in modules and "covey.gateway.anthropic" not in modules
    assert "covey.gateway.remote_model" in modules
    result = next(e for e in events if isinstance(e, ResultEvent))
    assert (result.is_error, result.result) == (False, "through the gateway")
    streamed = [e.event["type"] for e in events if isinstance(e, StreamEvent)]
    assert streamed[0] == "message_start" and streamed[-1] == "message_stop"


async def test_the_agent_actor_reports_the_apis_error_as_in_process(tmp_path):
    with FakeMessagesAPI(replies=[("error", 401, None)]) as api:
        events, modules = await asyncio.wait_for(_run_in_actor(tmp_path, api, partial=False), 120)
    assert "anthropic" not in modules
    result = next(e for e in events if isinstance(e, ResultEvent))
    # Claude Code's shape: the API's own body as the result, covey's words (and hint) in errors.
    assert result.is_error and result.result.startswith('API Error: 401 {"type":"error"') and result.api_error_status == 401
    assert "Anthropic API error 401 (authentication_error)" in result.errors[0] and "ANTHROPIC_API_KEY" in result.errors[0]
    assert "check ANTHROPIC_API_KEY" in result.errors[0]


async def test_without_partial_messages_the_reply_comes_in_one_call(tmp_path):
    with FakeMessagesAPI(replies=[{"text": "one call"}]) as api:
        events, _ = await asyncio.wait_for(_run_in_actor(tmp_path, api, partial=False), 120)
        assert len(api.requests) == 1
    result = next(e for e in events if isinstance(e, ResultEvent))
    assert (result.is_error, result.result) == (False, "one call")
    assert not any(isinstance(e, StreamEvent) for e in events)
