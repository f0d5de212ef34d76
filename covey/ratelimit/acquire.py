"""The asyncio side of the rate scheduler: wait for a request's turn, or fail with the limit named."""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable

from covey.ratelimit.ports import AdmitRequest, Admitted, RateRefused, Wait
from covey.ratelimit.scheduler import RateScheduler


async def acquire(scheduler: RateScheduler, request: AdmitRequest, *,
                  sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
                  on_wait: Callable[[Wait | RateRefused], object] | None = None, recheck_s: float = 1.0) -> Admitted:
    """Wait for ``request``'s turn; raise ``RateLimitRefused`` when its patience runs out.

    ``on_wait`` sees each new wait once (for a ``rate_limit_event`` line) and the refusal. The
    sleep is cut to ``recheck_s`` so a refund or a cancelled request ahead is noticed early.
    """
    while True:
        decision = scheduler.admit(request)
        if isinstance(decision, Admitted):
            return decision
        if isinstance(decision, RateRefused):
            if on_wait is not None:
                on_wait(decision)
            raise decision.error(scheduler.now())
        if decision.new and on_wait is not None:
            on_wait(decision)
        await sleep(min(max(decision.until - scheduler.now(), 0.0), recheck_s))
