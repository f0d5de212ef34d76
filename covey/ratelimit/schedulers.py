"""Every API identity's scheduler in one place: the cluster's one rate-limits actor holds them
(``covey.ratelimit.actor``), so a new identity costs a dictionary entry, not a process."""

from __future__ import annotations

import time
from typing import Callable

from covey.ratelimit.ports import RateSnapshot
from covey.ratelimit.scheduler import RateScheduler
from covey.ratelimit.signals import Identity


class RateSchedulers:
    """Each identity's scheduler, made on first use. Limits set by hand come with each request and
    are held while its run sends (``RateScheduler.hold``)."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.by_key: dict[str, RateScheduler] = {}

    def of(self, identity: Identity) -> RateScheduler:
        if (scheduler := self.by_key.get(identity.key)) is None:
            scheduler = self.by_key[identity.key] = RateScheduler(identity, clock=self.clock)
        return scheduler

    def snapshots(self) -> list[RateSnapshot]:
        return [scheduler.snapshot() for scheduler in self.by_key.values()]
