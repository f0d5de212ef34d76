"""A warm pool of pre-started agent actors (creating an actor costs ~250 ms of CPU; calling one ~1 ms).

``WarmPool`` holds the rules (plain Python, tested with fakes); ``AgentFactory`` (``covey.agent.factory``)
creates real actors. The registry actor owns the session's pool, so a launch is one call: reserve a slot
and take a warm actor. An actor goes back into the pool only if its runner reports a clean reset (no run,
no task, no child process, no extra file descriptor) and it has served fewer than ``max_uses`` runs;
otherwise it is killed. A lane starts at its floor and grows with the session's demand up to its size;
refills happen in the background, once a lane has fallen under half its target. A lane of an agent that
asks for resources has size 0: each take makes a new actor, killed when given back.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import defaultdict, deque
from typing import Awaitable, Callable, Generic, Mapping

from covey.runtime.payloads import WarmPoolStats
from covey.runtime.ports import H

log = logging.getLogger(__name__)

MAX_PARALLEL_STARTS = 4
DEFAULT_MAX_USES = 50
REFILL_DELAY_S = 2.0
"""How long a lane stays under half before the pool starts replacements: children of a
burst usually come back within that time, and starting processes while they run takes
the CPU they need (py-spy showed the registry starting replacements during a fan-out of 100)."""


def default_pool_size(env: Mapping[str, str] | None = None) -> int:
    """``COVEY_POOL_SIZE`` in ``env`` (default: this process's environment), else 4 per CPU
    of this node, between 4 and 16."""
    if value := (os.environ if env is None else env).get("COVEY_POOL_SIZE"):
        return max(0, int(value))
    return min(16, max(4, 4 * (os.cpu_count() or 1)))


def default_pool_floor(env: Mapping[str, str] | None = None) -> int:
    """Agent actors ready before any demand: ``COVEY_POOL_FLOOR`` (default 2: a main agent and one child)."""
    return max(0, int((os.environ if env is None else env).get("COVEY_POOL_FLOOR") or 2))


def session_floors(sizes: Mapping[str, int]) -> dict[str, int]:
    """A session's own pool starts its home lane at the floor (its size if smaller); the
    other lanes start empty and grow with demand."""
    return {lane: min(size, default_pool_floor()) if lane == "home" else 0 for lane, size in sizes.items()}


class WarmPool(Generic[H]):
    """A session's own pool of ready agent actors, lane by lane.

    ``sizes`` caps what a lane is refilled to; ``floors`` is what it starts with (default: its
    size). Between the two a lane grows with the session's demand: it is refilled to the most
    of its actors the session has had out at once, so a run of three agents keeps three ready,
    not the whole size (each process costs about a second of CPU to start).
    """

    def __init__(
        self, create: Callable[[str], Awaitable[H]], sizes: dict[str, int], *, max_uses: int = DEFAULT_MAX_USES,
        refill_delay_s: float = REFILL_DELAY_S, floors: dict[str, int] | None = None,
    ) -> None:
        self.create = create
        self.sizes = dict(sizes)
        """The most a lane is refilled to."""
        self.floors = {lane: min(size, (floors if floors is not None else sizes).get(lane, 0))
                       for lane, size in self.sizes.items()}
        """What a lane is filled to before any demand."""
        self.out: dict[str, int] = defaultdict(int)
        """A lane's actors taken and not given back."""
        self.peak: dict[str, int] = defaultdict(int)
        """The most of a lane's actors out at once: the demand the lane is refilled for."""
        self.warmed: dict[str, int] = {}
        """What ``warm`` grew a lane to: kept when given back, not refilled (see ``warm``)."""
        self.max_uses = max_uses
        self.refill_delay_s = refill_delay_s
        self._due: set[str] = set()
        """Lanes with a refill check waiting out the delay."""
        self.ready: dict[str, deque[H]] = defaultdict(deque)
        self.starting: dict[str, int] = defaultdict(int)
        self.uses: dict[H, int] = {}
        self.lane_of: dict[H, str] = {}
        self._refills: set[asyncio.Task[None]] = set()
        self._filling: set[str] = set()
        """Lanes being filled back to their size (from under half of it)."""
        self.created = 0

    async def take(self, lane: str = "home") -> H:
        """A ready actor if one is warm (the one given back last: its connections to the
        registry and mailbox are open), else a cold one started now."""
        queue = self.ready[lane]
        actor = queue.pop() if queue else await self._new(lane)
        self.uses[actor] = self.uses.get(actor, 0) + 1
        self.out[lane] += 1
        self.peak[lane] = max(self.peak[lane], self.out[lane])
        self.refill(lane)
        return actor

    async def give_back(self, actor: H, clean: bool | None = None) -> bool:
        """True if the actor was clean and kept warm; otherwise it is killed.

        ``clean``: the actor's reset already answered (it resets itself after a run
        nobody follows); None asks it now, whatever becomes of the actor: the reset
        waits until the run's follower has its report, and a kill before that would
        take the report with it.
        """
        lane = self.lane_of.get(actor, "home")
        self.out[lane] = max(0, self.out[lane] - 1)
        if clean is None:
            clean = await actor.reset()
        # Up to twice the pool size stays warm: a refill during a burst may already have
        # replaced this actor, and killing a clean one only to start another costs ~1 s of CPU.
        keep = bool(
            clean and self.uses.get(actor, 0) < self.max_uses
            and len(self.ready[lane]) < max(2 * self.sizes.get(lane, 0), self.warmed.get(lane, 0))
        )
        if keep:
            self.ready[lane].append(actor)
        else:
            self._forget(actor)
            actor.kill()
        self.refill(lane)
        return keep

    async def warm(self, n: int, lane: str = "home") -> int:
        """Grow the lane to at least ``n`` ready actors and wait for them.

        They are kept when given back, but the lane is refilled to its configured size
        only: replacing a whole burst while its agents still run would start N processes
        that compete with them for the CPU (about 1 s of it each).
        """
        self.warmed[lane] = max(self.warmed.get(lane, 0), n)
        while len(self.ready[lane]) < n:
            self._start(lane, n - len(self.ready[lane]) - self.starting[lane])
            await asyncio.sleep(0.05)
        return len(self.ready[lane])

    def refill(self, lane: str) -> None:
        """Fill the lane back to its size once it has stayed under half of it for
        ``refill_delay_s``: not after every take, since a sync child hands its actor back
        moments later and starting a process costs ~1 s of CPU the running agents would feel."""
        if self.refill_delay_s <= 0:
            self.fill(lane)
            return
        if lane in self._due or (lane not in self._filling and not self._under_half(lane)):
            return
        self._due.add(lane)
        self._track(asyncio.create_task(self._fill_later(lane)))

    async def _fill_later(self, lane: str) -> None:
        await asyncio.sleep(self.refill_delay_s)
        self._due.discard(lane)
        self.fill(lane)

    def target(self, lane: str) -> int:
        """What the lane is filled to: its floor, or the most actors the session has had out
        at once if that is more, never over its size."""
        return min(self.sizes.get(lane, 0), max(self.floors.get(lane, 0), self.peak[lane]))

    def _under_half(self, lane: str) -> bool:
        return len(self.ready[lane]) + self.starting[lane] < (self.target(lane) + 1) // 2

    def fill(self, lane: str) -> None:
        """Start actors until the lane holds its target again, once it has fallen under half of it."""
        size = self.target(lane)
        have = len(self.ready[lane]) + self.starting[lane]
        if self._under_half(lane):
            self._filling.add(lane)
        if have >= size:
            self._filling.discard(lane)
        if lane not in self._filling:
            return
        self._start(lane, size - have)

    def _start(self, lane: str, missing: int) -> None:
        """Start up to ``missing`` actors, at most ``MAX_PARALLEL_STARTS`` at a time per lane."""
        for _ in range(max(0, min(missing, MAX_PARALLEL_STARTS - self.starting[lane]))):
            self.starting[lane] += 1
            self._track(asyncio.create_task(self._start_one(lane)))

    def _track(self, task: asyncio.Task[None]) -> None:
        self._refills.add(task)
        task.add_done_callback(self._refills.discard)

    async def shutdown(self) -> None:
        for task in list(self._refills):
            task.cancel()
        for queue in self.ready.values():
            while queue:
                queue.popleft().kill()

    def stats(self) -> WarmPoolStats:
        return {
            "ready": {lane: len(q) for lane, q in self.ready.items()},
            "starting": dict(self.starting), "sizes": dict(self.sizes), "warmed": dict(self.warmed),
            "targets": {lane: self.target(lane) for lane in self.sizes}, "created": self.created,
        }

    async def _start_one(self, lane: str) -> None:
        try:
            actor = await self._new(lane)
            self.ready[lane].append(actor)
        except Exception:  # a failed start is retried by the next refill
            log.exception("starting a pooled agent actor failed")
        finally:
            self.starting[lane] -= 1
        self.fill(lane)

    async def _new(self, lane: str) -> H:
        actor = await self.create(lane)
        self.created += 1
        self.lane_of[actor] = lane
        return actor

    def _forget(self, actor: H) -> None:
        self.uses.pop(actor, None)
        self.lane_of.pop(actor, None)
