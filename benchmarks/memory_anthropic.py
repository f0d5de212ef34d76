"""The ``memory`` case's real-model figures: what an agent actor on the Anthropic path holds once
it has sent through its node's gateway, against a bare Ray actor and against an actor that loaded
the SDK itself (the path before the gateway); the gateway's own USS; a fresh agent's first request
and a warm one, through the gateway and the rate scheduler, against the fake Messages API.

Part of ``memory`` (``benchmarks/memory.py``); alone: ``python -m benchmarks.memory_anthropic``.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

import ray

from benchmarks.common import actor_procs, summary, uss_mib
from benchmarks.scripts import new_session
from covey.gateway.anthropic import AnthropicModel
from covey.model.base import ModelRequest
from tests.fake_messages_api import FakeMessagesAPI

WARM_REQUESTS = 200


@ray.remote(num_cpus=0)
class _Sender:
    """A bare actor that sends model requests as an agent does: through the gateway (with the
    run's pacing), or with the SDK in this process (no scheduler)."""

    def __init__(self, url: str, via_gateway: bool) -> None:
        from covey.model.anthropic_config import AnthropicConfig

        config = AnthropicConfig("bench-key", None, url, max_retries=2, retry_backoff_s=0.001)  # the fake API may close a kept-alive connection
        if via_gateway:
            from covey.gateway.ports import Pacing
            from covey.gateway.remote_model import GatewayModel
            from covey.ratelimit.signals import RateLimitSettings

            self.model: Any = GatewayModel(config, pacing=Pacing("bench", "bench-agent", True, RateLimitSettings()))
        else:
            from covey.gateway.anthropic import AnthropicModel, warm_up_offline

            warm_up_offline()
            self.model = AnthropicModel.of(config)

    async def floor(self, echo: Any, count: int) -> list[float]:
        """The bound of any gateway: a bare call to another actor with the same request and its
        answer, ``count`` times; each one's wall time in ms."""
        return await _timed(count, lambda request: echo.call.remote(request))

    async def send(self, count: int) -> list[float]:
        """``count`` requests one after another; each one's wall time in ms."""
        return await _timed(count, self.model.create)


async def _timed(count: int, call: Callable[[ModelRequest], Awaitable[Any]]) -> list[float]:
    request = ModelRequest(model="claude-sonnet-4-6", messages=[{"role": "user", "content": "hi"}], max_tokens=8)
    times = []
    for _ in range(count):
        started = time.perf_counter()
        await call(request)
        times.append((time.perf_counter() - started) * 1000)
    return times


@ray.remote(num_cpus=0)
class _Echo:
    async def call(self, request: ModelRequest) -> ModelRequest:
        return request


def _procs_uss(cls_name: str) -> list[float]:
    return [u for u in (uss_mib(p) for p in actor_procs(cls_name)) if u is not None]


async def _agents_after_a_run(tmp: Path, api: FakeMessagesAPI) -> dict[str, Any]:
    """USS of a session's agent actors once its main agent has answered through the gateway."""
    session = new_session(tmp, AnthropicModel(api_key="bench-key", base_url=api.url, max_retries=2), pool_size=2)
    try:
        started = time.monotonic()
        result = await session.run("hi")
        run_s = time.monotonic() - started
        return {"agent_uss_mib": summary(_procs_uss("_AgentActor"), 1), "first_run_s": round(run_s, 3),
                "reply": result.result, "gateway_uss_mib": summary(_procs_uss("_GatewayActor"), 1)}
    finally:
        session.close()


def _latency(api: FakeMessagesAPI) -> dict[str, Any]:
    """First and warm requests from a fresh actor: through the gateway and the scheduler, or with
    the SDK in the actor (no scheduler). The difference of the warm p50s is what the path adds."""
    out: dict[str, Any] = {}
    for name, via in (("gateway", True), ("in_process", False)):
        sender = _Sender.remote(api.url, via)
        first = ray.get(sender.send.remote(1))[0]
        warm = ray.get(sender.send.remote(WARM_REQUESTS))
        out[name] = {"first_ms": round(first, 2), "warm_ms": summary(warm, 2)}
        if not via:
            out["sdk_actor_uss_mib"] = summary(_procs_uss("_Sender"), 1)
        ray.kill(sender)
    out["warm_added_ms"] = round(out["gateway"]["warm_ms"]["p50"] - out["in_process"]["warm_ms"]["p50"], 2)
    echo, sender = _Echo.remote(), _Sender.remote(api.url, False)
    floor = ray.get(sender.floor.remote(echo, WARM_REQUESTS))
    out["bare_ray_call_ms"] = summary(floor, 2)  # what one actor call costs here: the bound of the gateway's hop
    for actor in (echo, sender):
        ray.kill(actor)
    return out


async def run(tmp: Path, bare_uss: dict[str, Any]) -> dict[str, Any]:
    with FakeMessagesAPI(replies=[{"text": "ok"}]) as api:
        out = await _agents_after_a_run(tmp / "anthropic", api)
        out.update(_latency(api))
    out["bare_actor_uss_mib"] = bare_uss
    if out["agent_uss_mib"].get("n") and bare_uss.get("n"):
        out["agent_vs_bare_actor"] = round(out["agent_uss_mib"]["p50"] / bare_uss["p50"], 2)
        out["sdk_actor_vs_bare_actor"] = round(out["sdk_actor_uss_mib"]["p50"] / bare_uss["p50"], 2)
    return out


if __name__ == "__main__":
    import json

    from benchmarks.memory import _bare_actor_uss

    ray.init(num_cpus=2, include_dashboard=False, namespace="covey", log_to_driver=False)
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(asyncio.run(run(Path(tmp), _bare_actor_uss())), indent=2), flush=True)
    ray.shutdown()
