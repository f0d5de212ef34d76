"""The rate scheduler actor on a real Ray: two models in two worker processes share the one
scheduler of their identity, so the rate-limited fake API refuses none of their requests although
together they ask for more than its bucket holds."""

from __future__ import annotations

import asyncio
import time

import anthropic
import pytest
import ray

from covey.ratelimit.actor import ACTOR_NAME, RateLimitHandle, rate_limit_handle
from covey.ratelimit.ports import RateSnapshot
from covey.ratelimit.signals import RateLimitSettings, identity_for
from tests.fake_ratelimited_api import FakeRateLimitedAPI

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("ray_session")]

MODEL = "claude-sonnet-4-6"
KEY = "test-key-not-real"


@ray.remote(num_cpus=0)
class Sender:
    """A model in a worker process of its own, paced by the identity's shared scheduler."""

    def __init__(self, url: str, agent_id: str) -> None:
        from covey.gateway.anthropic import AnthropicModel
        from covey.ratelimit.actor import SharedAdmission

        admission = SharedAdmission(session_id=f"session-{agent_id}", agent_id=agent_id, foreground=False,
                                    settings=RateLimitSettings())
        self.model = AnthropicModel(api_key=KEY, base_url=url).with_admission(admission)
        self.agent_id = agent_id

    def ready(self) -> bool:
        return True

    async def send(self, count: int) -> list[str]:
        """``count`` requests, one after another; their texts."""
        from covey.model.base import ModelRequest

        request = ModelRequest(model=MODEL, messages=[{"role": "user", "content": "hi"}], max_tokens=16,
                               agent_id=self.agent_id)
        return [(await self.model.create(request)).content[0].text for _ in range(count)]


def _settled(handle: RateLimitHandle, deadline_s: float = 10.0) -> RateSnapshot:
    """The scheduler's state once the last reply has reached it: a reply is told, not awaited, so
    the senders may return before the scheduler has heard of their last request's end."""
    deadline = time.monotonic() + deadline_s
    snapshot = asyncio.run(handle.snapshot())
    while snapshot.in_flight and time.monotonic() < deadline:
        time.sleep(0.05)
        snapshot = asyncio.run(handle.snapshot())
    return snapshot


def test_two_processes_share_one_scheduler_and_get_no_429() -> None:
    with FakeRateLimitedAPI(requests_per_minute=60) as api:
        senders = [Sender.remote(api.url, agent) for agent in ("agent-a", "agent-b")]
        assert ray.get([sender.ready.remote() for sender in senders]) == [True, True]
        identity = identity_for(api.url, KEY, MODEL)
        handle = rate_limit_handle(identity)
        # Someone used the bucket up (60 per minute, 1 a second from now on); one request outside
        # the scheduler takes the last one, and the scheduler learns from its reply that it is empty.
        bucket = api.buckets["requests"]
        bucket.level, bucket.at = 1.0, time.time()
        raw = anthropic.Anthropic(base_url=api.url, api_key=KEY, max_retries=0).messages.with_raw_response.create(
            model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "x"}])
        assert raw.headers["anthropic-ratelimit-requests-remaining"] == "0"
        asyncio.run(handle.record_reply("probe", dict(raw.headers), None))
        started = time.time()
        texts = ray.get([sender.send.remote(3) for sender in senders])
        assert texts == [["ok"] * 3, ["ok"] * 3]
        served = [entry for entry in api.log if entry.at >= started]
        assert [entry.status for entry in served] == [200] * 6  # no 429: they waited in one queue
        assert time.time() - started >= 4.5  # one a second, as the API refills
        snapshot = _settled(handle)
        assert snapshot.identity == identity.key and snapshot.queued == 0 and snapshot.in_flight == 0
        assert ray.get_actor(ACTOR_NAME, namespace="covey") is not None  # one actor holds every identity's
        handle.kill()
        for sender in senders:
            ray.kill(sender)
