"""What a model consults before each request: an ``Admission`` (one rate scheduler per API
identity, wherever it lives), and the loop that waits for a request's turn.

The model layer knows only this Protocol. The shared scheduler is a Ray actor
(``covey.ratelimit.actor``), injected where an agent gets its model; ``LocalAdmission`` is
the same rules in this process (tests, and any caller without Ray).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Awaitable, Callable, Mapping, Protocol

from covey.model.base import ModelRequest, TokenUsage
from covey.ratelimit.ports import AdmitRequest, Admitted, RateDecision, RateRefused, Wait
from covey.ratelimit.scheduler import RateScheduler
from covey.ratelimit.signals import Identity, RateLimitSettings


class Admission(Protocol):
    """Admits each model request of one identity before it is sent, and hears how it went."""

    async def admit(self, identity: Identity, request: AdmitRequest) -> RateDecision: ...

    async def record_reply(self, identity: Identity, request_id: str, headers: Mapping[str, str],
                           usage: TokenUsage | None) -> None: ...

    async def record_refusal(self, identity: Identity, request_id: str, status: int,
                             headers: Mapping[str, str]) -> None: ...

    def cancel(self, identity: Identity, request_id: str) -> None:
        """Forget a request whose caller gave up or whose send failed otherwise (fire and forget:
        it is called while a task is being cancelled)."""

    def waited(self, decision: Wait | RateRefused) -> None:
        """A new wait, or the refusal: where it is reported (a ``rate_limit_event`` line)."""


def admit_request_for(request: ModelRequest, request_id: str, cache_read_tokens: int = 0) -> AdmitRequest:
    """What ``request`` will cost, before it is sent. Input tokens: the prompt's JSON length / 4
    (a rough count, the reply's usage corrects it), of which ``cache_read_tokens`` should come
    from the prompt cache (``covey.ratelimit.cache``); output tokens: its ``max_tokens``,
    as the API counts them until the reply."""
    prompt = json.dumps([request.system, request.messages, request.tools], default=str)
    input_tokens = max(len(prompt) // 4, 1)
    return AdmitRequest(request_id, input_tokens=input_tokens, max_tokens=request.max_tokens,
                        cache_read_tokens=min(max(cache_read_tokens, 0), input_tokens),
                        agent_id=request.agent_id or "")


async def wait_for_turn(admission: Admission, identity: Identity, request: AdmitRequest, *,
                        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
                        clock: Callable[[], float] = time.time, recheck_s: float = 1.0) -> Admitted:
    """Ask until ``request`` may go; raise ``RateLimitRefused`` once its patience runs out.

    Each new wait (and the refusal) is reported once, through ``admission.waited``. A sleep is
    cut to ``recheck_s`` so a refund or a cancelled request ahead is noticed early. A caller
    cancelled while it waits gives its place up.
    """
    try:
        while True:
            decision = await admission.admit(identity, request)
            if isinstance(decision, Admitted):
                return decision
            if isinstance(decision, RateRefused):
                admission.waited(decision)
                raise decision.error(clock())
            if decision.new:
                admission.waited(decision)
            await sleep(min(max(decision.until - clock(), 0.0), recheck_s))
    except asyncio.CancelledError:
        admission.cancel(identity, request.request_id)
        raise


class LocalAdmission:
    """``Admission`` over plain schedulers in this process, one per identity."""

    def __init__(self, settings: RateLimitSettings | None = None, *, clock: Callable[[], float] = time.time,
                 on_wait: Callable[[Wait | RateRefused], object] | None = None) -> None:
        self.settings = settings or RateLimitSettings()
        self.clock = clock
        self.on_wait = on_wait
        self.schedulers: dict[str, RateScheduler] = {}

    def scheduler(self, identity: Identity) -> RateScheduler:
        if (found := self.schedulers.get(identity.key)) is None:
            found = self.schedulers[identity.key] = RateScheduler(identity, self.settings, clock=self.clock)
        return found

    async def admit(self, identity: Identity, request: AdmitRequest) -> RateDecision:
        return self.scheduler(identity).admit(request)

    async def record_reply(self, identity: Identity, request_id: str, headers: Mapping[str, str],
                           usage: TokenUsage | None) -> None:
        self.scheduler(identity).record_reply(request_id, headers=headers, usage=usage)

    async def record_refusal(self, identity: Identity, request_id: str, status: int,
                             headers: Mapping[str, str]) -> None:
        self.scheduler(identity).record_refusal(request_id, status, headers)

    def cancel(self, identity: Identity, request_id: str) -> None:
        self.scheduler(identity).cancel(request_id)

    def waited(self, decision: Wait | RateRefused) -> None:
        if self.on_wait is not None:
            self.on_wait(decision)
