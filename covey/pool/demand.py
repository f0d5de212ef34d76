"""The rules of the service's shared pool: lend actors to sessions, take them back, and
keep ready what recent demand asks for (plain Python, tested with fakes).

One pool serves every session of a covey service. Each lane ("home": agents that touch
the working tree, on the service's node; "any": agents placed anywhere; "kit": a new
session's registry and mailbox) has a *demand*: the most items lent at once lately. A
burst bigger than what is ready starts the missing items at once, and whatever becomes
ready first (a new item or one given back) goes to the oldest waiting taker; while the burst runs,
the lane keeps starting, one at a time, up to what it asked for. Given back, an item is kept while
the lane holds fewer than its demand, so the next run of the same size finds everything ready.
While a lane lends nothing, its demand decays (a half-life) towards its floor.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import time
from collections import defaultdict, deque
from dataclasses import dataclass
from typing import Awaitable, Callable, Generic, Hashable, Protocol, TypedDict, TypeVar

log = logging.getLogger(__name__)

DEFAULT_HALF_LIFE_S = 300.0
DEFAULT_MAX_USES = 50


class Lendable(Protocol):
    """What the pool lends: something it can kill."""

    def kill(self) -> None: ...


I = TypeVar("I", bound=Lendable)


@dataclass
class Loan(Generic[I]):
    item: I
    lane: str
    session_id: str


class LaneStats(TypedDict):
    ready: int
    lent: int
    starting: int
    target: int
    floor: int
    demand: float
    high_water: int
    loans: int  # items this lane ever lent: a run that borrowed shows here, whatever the high-water


SharedPoolStats = dict[str, "LaneStats | int"]
"""Each lane's figures by its name, and ``"created"``: how many items the pool ever started."""


class DemandPool(Generic[I]):
    def __init__(
        self, create: Callable[[str], Awaitable[I]], floors: dict[str, int], *, key: Callable[[I], Hashable] = id,
        owner: Callable[[I], str] = lambda item: "", half_life_s: float = DEFAULT_HALF_LIFE_S,
        max_uses: int = DEFAULT_MAX_USES, clock: Callable[[], float] = time.monotonic,
        parallel_starts: int | None = None,
    ) -> None:
        """``key``: what tells items apart; ``owner``: the session an item serves when it is
        taken without naming one (a session kit's own)."""
        self.create, self.key, self.owner, self.clock = create, key, owner, clock
        self.parallel_starts = parallel_starts or max(2, os.cpu_count() or 1)
        """Starts in flight per lane: starting a process is CPU-bound, so more than the
        machine's cores finish no sooner and take the CPU the running agents need."""
        self.floors = dict(floors)
        self.half_life_s, self.max_uses = half_life_s, max_uses
        self.ready: dict[str, deque[I]] = defaultdict(deque)
        self.waiting: dict[str, deque[asyncio.Future[I]]] = defaultdict(deque)
        self.starting: dict[str, int] = defaultdict(int)
        self.lent: dict[Hashable, Loan[I]] = {}
        self.uses: dict[Hashable, int] = defaultdict(int)
        self.demand: dict[str, float] = defaultdict(float)  # most lent at once, decaying while none is
        self.high_water: dict[str, int] = defaultdict(int)  # most ever lent at once (``covey status``)
        self.loans: dict[str, int] = defaultdict(int)
        self.created = 0
        self._since: dict[str, float] = {}  # when a lane lent its last item: its demand decays from then,
        self._peaks: dict[str, float] = {}  # from what it was at that moment
        self._tasks: set[asyncio.Task[None]] = set()
        self._warming: dict[str, int] = defaultdict(int)  # lanes ``warm`` fills: their demand holds
        self._asked: dict[str, int] = {}  # the most asked for at once since the lane last lent nothing

    # -- lending --------------------------------------------------------------------

    async def take(self, lane: str, session_id: str | None = None) -> I:
        """A ready item, else the first to become ready; one is started for every taker
        that no ready, starting or returning item will serve. ``session_id``: who borrows
        it (None: the item's own ``session_id``, as a session kit has)."""
        if self.ready[lane]:
            item = self.ready[lane].pop()  # the last given back: its connections are warm
        else:
            waiter: asyncio.Future[I] = asyncio.get_running_loop().create_future()
            self.waiting[lane].append(waiter)
            # Demand is what was asked for at once, not what cold starts let run at once.
            asked = self.in_use(lane) + len(self.waiting[lane])
            self.demand[lane] = max(self.demand[lane], float(asked))
            self._asked[lane] = max(self._asked.get(lane, 0), asked)
            self._start(lane, len(self.waiting[lane]) - self.starting[lane])
            try:
                item = await waiter
            except asyncio.CancelledError:
                self._drop_waiter(lane, waiter)
                raise
        self._lend(item, lane, session_id if session_id is not None else self.owner(item))
        return item

    def take_ready(self, lane: str, n: int, session_id: str) -> list[I]:
        """Up to ``n`` items ready now, lent at once (a burst's warm share; the rest is ``take``n)."""
        items = [self.ready[lane].pop() for _ in range(min(n, len(self.ready[lane])))]
        for item in items:
            self._lend(item, lane, session_id)
        return items

    def give_back(self, item: I, clean: bool) -> bool:
        """True if ``item`` is kept for the next taker; otherwise it is killed (as is one
        this pool no longer lends: its session was ended meanwhile)."""
        loan = self.lent.pop(self.key(item), None)
        if loan is None:
            self._drop(item)
            return False
        lane = loan.lane
        self._settle(lane)
        keep = clean and self.uses[self.key(item)] < self.max_uses and (
            bool(self.waiting[lane]) or self._held(lane) < self.target(lane))
        if keep:
            self._ready(item, lane)
        else:
            self._drop(item)
        return keep

    def end_session(self, session_id: str, spare: tuple[str, ...] = ()) -> list[I]:
        """Kill what ``session_id`` still holds (agents it never gave back), except its items
        of the ``spare`` lanes: they stay lent, returned for the caller to give back (a kit,
        once it is ready for another session) or not."""
        ended = [loan for loan in self.lent.values() if loan.session_id == session_id]
        for loan in ended:
            if loan.lane not in spare:
                del self.lent[self.key(loan.item)]
                self._drop(loan.item)
                self._settle(loan.lane)
        return [loan.item for loan in ended if loan.lane in spare]

    async def warm(self, n: int, lane: str = "home") -> int:
        """Raise ``lane``'s demand to ``n`` and wait until that many are ready or lent. While it waits the lane's demand holds (``tick`` neither decays it nor lets go of
        what is being warmed: with cold starts slower than the decay, it would drop items
        as fast as this starts them); once warm, an idle lane decays from ``n``."""
        self.demand[lane] = max(self.demand[lane], float(n))
        self._warming[lane] += 1
        try:
            while self._held(lane) + self.starting[lane] < n or self.starting[lane]:
                self._start(lane, n - self._held(lane) - self.starting[lane])
                await asyncio.sleep(0.05)
        finally:
            self._warming[lane] -= 1
            if lane in self._since:
                self._since[lane], self._peaks[lane] = self.clock(), self.demand[lane]
        return len(self.ready[lane])

    # -- demand ---------------------------------------------------------------------

    def target(self, lane: str) -> int:
        """How many items ``lane`` keeps, lent or ready."""
        return max(self.floors.get(lane, 0), math.ceil(self.demand[lane] - 1e-9))

    def tick(self) -> None:
        """Decay idle lanes' demand, let go of ready items above it, and fill lanes (``_ramp``)."""
        now = self.clock()
        for lane in set(self.ready) | set(self.floors) | set(self.demand):
            if self.in_use(lane) == 0 and lane in self._since and not self._warming[lane]:
                halves = (now - self._since[lane]) / self.half_life_s
                self.demand[lane] = max(float(self.floors.get(lane, 0)), self._peak(lane) * 0.5 ** halves)
            while len(self.ready[lane]) > max(0, self.target(lane) - self.in_use(lane)):
                self._drop(self.ready[lane].popleft())  # the longest idle first
            self._ramp(lane)

    def in_use(self, lane: str) -> int:
        return sum(1 for loan in self.lent.values() if loan.lane == lane)

    def stats(self) -> SharedPoolStats:
        lanes = sorted(set(self.ready) | set(self.floors) | set(self.demand) | set(self.starting))
        figures: SharedPoolStats = {lane: {
            "ready": len(self.ready[lane]), "lent": self.in_use(lane), "starting": self.starting[lane],
            "target": self.target(lane), "floor": self.floors.get(lane, 0), "demand": round(self.demand[lane], 2),
            "high_water": self.high_water[lane], "loans": self.loans[lane],
        } for lane in lanes}
        figures["created"] = self.created
        return figures

    async def shutdown(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for waiters in self.waiting.values():
            for waiter in waiters:
                waiter.cancel()
        for ready in self.ready.values():
            while ready:
                self._drop(ready.popleft())
        for loan in list(self.lent.values()):
            self._drop(loan.item)
        self.lent.clear()

    # -- inside ---------------------------------------------------------------------

    def _lend(self, item: I, lane: str, session_id: str) -> None:
        self.lent[self.key(item)] = Loan(item, lane, session_id)
        self.uses[self.key(item)] += 1
        self.loans[lane] += 1
        in_use = self.in_use(lane)
        self.high_water[lane] = max(self.high_water[lane], in_use)
        self.demand[lane] = max(self.demand[lane], float(in_use))
        self._since.pop(lane, None)

    def _settle(self, lane: str) -> None:
        if self.in_use(lane) == 0:
            if not self.waiting[lane]:  # a run whose next taker waits is not over
                self._asked.pop(lane, None)
            self._since[lane] = self.clock()
            self._peaks[lane] = self.demand[lane]

    def _peak(self, lane: str) -> float:
        return self._peaks.get(lane, self.demand[lane])

    def _held(self, lane: str) -> int:
        """What counts against the lane's target: ready items, and lent ones (they come back)."""
        return len(self.ready[lane]) + self.in_use(lane)

    def _ready(self, item: I, lane: str) -> bool:
        """Hand ``item`` to the oldest taker still waiting (True), else keep it ready."""
        while self.waiting[lane]:
            waiter = self.waiting[lane].popleft()
            if not waiter.done():
                waiter.set_result(item)
                return True
        self.ready[lane].append(item)
        return False

    def _ramp(self, lane: str, busy: bool = False) -> None:
        """To the target while nothing is lent; while a run is, to what it asked at once, a start at a time (its
        agents keep the other cores). ``busy``: an item was just handed to a taker not yet borrowing it."""
        if busy or self.lent:
            goal, room = max(self.floors.get(lane, 0), self._asked.get(lane, 0)), 1
        else:
            goal, room = self.target(lane), self.parallel_starts
        self._start(lane, min(goal - self._held(lane) - int(busy), room) - self.starting[lane])

    def _follow_up(self, lane: str, busy: bool) -> None:
        """After a start: the next one for a taker still waiting, else the ramp."""
        if len(self.waiting[lane]) > self.starting[lane]:
            self._start(lane, len(self.waiting[lane]) - self.starting[lane])
        else:
            self._ramp(lane, busy)

    def _start(self, lane: str, missing: int) -> None:
        for _ in range(max(0, min(missing, self.parallel_starts - self.starting[lane]))):
            self.starting[lane] += 1
            self._track(asyncio.get_running_loop().create_task(self._start_one(lane)))

    def _track(self, task: asyncio.Task[None]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _start_one(self, lane: str) -> None:
        try:
            item = await self.create(lane)
        except Exception as exc:  # the next take or tick starts another
            log.warning("starting a pooled %s item failed: %s", lane, exc)
            self.starting[lane] -= 1
            self._fail_waiter(lane, exc)
            return
        self.starting[lane] -= 1
        self.created += 1
        handed = self._ready(item, lane)
        self._follow_up(lane, busy=handed)

    def _fail_waiter(self, lane: str, exc: Exception) -> None:
        """A failed start fails one waiter it was started for (none left over is waiting for it)."""
        if len(self.waiting[lane]) > self.starting[lane]:
            waiter = self.waiting[lane].pop()
            if not waiter.done():
                waiter.set_exception(exc)

    def _drop_waiter(self, lane: str, waiter: asyncio.Future[I]) -> None:
        try:
            self.waiting[lane].remove(waiter)
        except ValueError:  # served just as it was cancelled: keep what it got
            if waiter.done() and not waiter.cancelled():
                self._ready(waiter.result(), lane)

    def _drop(self, item: I) -> None:
        self.uses.pop(self.key(item), None)
        item.kill()
