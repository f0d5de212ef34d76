"""``task_claims`` and ``mailbox``: a team's task board and the session mailbox under load (issue #5).

task_claims: 20 claimers race over N tasks on covey's real ``TaskBoard`` actor,
made by ``start_team_actors`` (as a lead's TeamCreate makes it), through its
``BoardHandle``. The claimers are 20 small Ray actors (``num_cpus=0``), one claim
call in flight each, started together at one wall-clock instant. Two ways:
``claim_next`` (an idle teammate's call: take the first free task, until
``no_task_available``) and ``claim_race`` (every claimer tries every task id in
the same order with ``claim(id)``: all 20 want task 1 first, the losers get
``already_claimed``; N/2 tasks, as that is 20 calls per task). ``check_busy=False``,
so a claimer may hold many tasks. Double claims = task ids that more than one
claimer was told it ``Claimed`` (goal 0); the final board is also checked
against the claimers' answers (``owner_mismatch``, ``unclaimed``). A third
figure runs ``claim_next`` from 20 asyncio tasks in the driver instead, to
separate the board's cost from that of 20 claimer processes on the same cores.

mailbox: a sender actor puts M ``TeammateMessage``s for a receiver actor into
covey's real mailbox actor (``mailbox_actor_class`` + ``MailboxHandle``, as
the session's ``Kit`` makes it). The receiver empties its queue the ways an agent
does: ``drain`` (between turns; here back to back, as if turns took no time)
or ``wait`` (parked, as ``RuntimeInbox.wait`` does). Sends go one at a time or
``BATCH`` in flight. Latency = the message's ``sent_at`` (``time.time()`` just
before its put) → the receiver's clock when the drain that returned it came
back; one machine, one clock.

Baselines in the same run: the same loops as asyncio tasks in this process on
the plain cores (``TaskBoard`` with its own ``asyncio.Lock``; ``Mailbox`` behind
an ``asyncio.Lock``), yielding after each call so that claimers / sender and
receiver interleave as they would concurrently.
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import ray

from benchmarks.common import log, summary
from covey.teams.board import TaskBoard
from covey.teams.mailbox import Mailbox
from covey.teams.mailbox_actor import MailboxHandle, mailbox_actor_class
from covey.teams.messages import TeammateMessage
from covey.teams.tasks import Claimed
from covey.teams.team_actors import start_team_actors

CLAIMERS = 20
BATCH = 50
BASELINE_REPS = 3
RECEIVE_DEADLINE_S = 60.0
"""A receiver gives up after this long, so a lost message shows up as ``lost`` instead of a hang."""


# -- task board ---------------------------------------------------------------------


async def _claim_loop(board: Any, owner: str, ids: list[str] | None, yield_each: bool) -> dict[str, Any]:
    """``claim_next`` until nothing is left (``ids`` None), or ``claim`` every id in ``ids``."""
    claimed, latency_ms, refused = [], [], Counter()
    queue = iter(ids) if ids is not None else None
    while True:
        if queue is None:
            call = board.claim_next(owner, check_busy=False)
        elif (task_id := next(queue, None)) is None:
            break
        else:
            call = board.claim(task_id, owner, check_busy=False)
        started = time.perf_counter()
        result = await call
        latency_ms.append((time.perf_counter() - started) * 1e3)
        if isinstance(result, Claimed):
            claimed.append(result.task.id)
        else:
            refused[result.reason] += 1
            if result.reason == "no_task_available":
                break
        if yield_each:
            await asyncio.sleep(0)  # one event loop: without it the first claimer would take every task
    return {"owner": owner, "claimed": claimed, "latency_ms": latency_ms, "refused": dict(refused),
            "ended": time.time()}


class _Claimer:
    async def ready(self) -> bool:
        return True

    async def run(self, board: Any, owner: str, ids: list[str] | None, start_at: float) -> dict[str, Any]:
        await asyncio.sleep(max(0.0, start_at - time.time()))
        return await _claim_loop(board, owner, ids, yield_each=False)


async def _fill(board: Any, n: int) -> list[str]:
    tasks = await asyncio.gather(*(board.create(f"task {i}", "benchmark task") for i in range(n)))
    return [t.id for t in tasks]


def _verdict(results: list[dict[str, Any]], final: list[Any], n: int, wall_s: float) -> dict[str, Any]:
    winners = Counter(task_id for r in results for task_id in r["claimed"])
    claimed_by = {task_id: r["owner"] for r in results for task_id in r["claimed"]}
    per_claimer = [len(r["claimed"]) for r in results]
    return {
        "claims": sum(winners.values()), "wall_s": wall_s, "claims_per_s": sum(winners.values()) / wall_s,
        "double_claims": sum(1 for c in winners.values() if c > 1),
        "unclaimed": n - len(winners),
        "owner_mismatch": sum(1 for t in final if t.owner != claimed_by.get(t.id)),
        "refused": sum((Counter(r["refused"]) for r in results), Counter()),
        "claims_per_claimer": {"min": min(per_claimer), "max": max(per_claimer)},
        "claim_ms": [x for r in results for x in r["latency_ms"]],
    }


async def _covey_claims(claimers: list[Any] | None, n: int, race: bool) -> dict[str, Any]:
    """On a fresh board; ``claimers`` None means 20 asyncio tasks in this driver instead of the actors."""
    roster, board = start_team_actors("bench", session_id=uuid.uuid4().hex[:8])
    try:
        ids = await _fill(board, n)
        wanted = ids if race else None
        if claimers is None:
            start_at = time.time()
            results = await asyncio.gather(*(_claim_loop(board, f"claimer-{i}", wanted, yield_each=False)
                                             for i in range(CLAIMERS)))
        else:
            start_at = time.time() + 0.3  # every claimer has its call before the start
            results = await asyncio.gather(*(c.run.remote(board, f"claimer-{i}", wanted, start_at)
                                             for i, c in enumerate(claimers)))
        return _verdict(results, await board.list(), n, max(r["ended"] for r in results) - start_at)
    finally:
        roster.kill()
        board.kill()


async def _baseline_claims(n: int, race: bool) -> dict[str, Any]:
    board = TaskBoard()
    ids = await _fill(board, n)
    start_at = time.time()
    results = await asyncio.gather(*(_claim_loop(board, f"claimer-{i}", ids if race else None, yield_each=True)
                                     for i in range(CLAIMERS)))
    return _verdict(results, await board.list(), n, max(r["ended"] for r in results) - start_at)


def _merge(reps: list[dict[str, Any]], rate: str, lat: str, counts: tuple[str, ...]) -> dict[str, Any]:
    """One figure over repetitions: the median rate, all latencies pooled, correctness counts summed."""
    rates = [r[rate] for r in reps]
    merged = {
        "reps": len(reps), rate: round(statistics.median(rates), 1), f"{rate}_reps": [round(x, 1) for x in rates],
        lat: summary((x for r in reps for x in r[lat]), 4),
        **{k: sum(r[k] for r in reps) for k in counts},
        **{k: v for k, v in reps[-1].items() if k not in (rate, lat, *counts)},  # the last repetition's details
    }
    if "refused" in merged:
        merged["refused"] = dict(sum((r["refused"] for r in reps), Counter()))
    if "wall_s" in merged:
        merged["wall_s"] = [round(r["wall_s"], 3) for r in reps]
    return merged


def _ratios(covey: dict[str, Any], base: dict[str, Any], rate: str, lat: str) -> dict[str, Any]:
    """covey / baseline: below 1 for a rate means slower, above 1 for a latency means slower."""
    return {f"{rate}_vs_baseline": round(covey[rate] / base[rate], 4),
            f"{lat}_p50_vs_baseline": round(covey[lat]["p50"] / base[lat]["p50"], 1) if base[lat]["p50"] else None}


async def _claims_figure(claimers: list[Any] | None, n: int, race: bool, reps: int) -> dict[str, Any]:
    counts = ("claims", "double_claims", "unclaimed", "owner_mismatch")
    covey = _merge([await _covey_claims(claimers, n, race) for _ in range(reps)], "claims_per_s", "claim_ms", counts)
    base = _merge([await _baseline_claims(n, race) for _ in range(BASELINE_REPS)], "claims_per_s", "claim_ms", counts)
    return {"tasks": n, "covey": covey, "baseline": base, **_ratios(covey, base, "claims_per_s", "claim_ms")}


async def run_claims(tmp: Path, quick: bool) -> dict[str, Any]:
    n, reps = (200, 1) if quick else (1000, 2)
    claimer_cls = ray.remote(num_cpus=0, max_restarts=0)(_Claimer)
    claimers = [claimer_cls.remote() for _ in range(CLAIMERS)]
    try:
        started = time.perf_counter()
        await asyncio.gather(*(c.ready.remote() for c in claimers))
        out: dict[str, Any] = {
            "claimers": f"{CLAIMERS} Ray actors (num_cpus=0), one call in flight each, started at one instant",
            "board": "covey TaskBoard actor (start_team_actors) via BoardHandle, check_busy=False; "
                     "a fresh board per rep",
            "baseline": f"{CLAIMERS} asyncio tasks in-process on the plain TaskBoard (its asyncio.Lock), "
                        f"sleep(0) after each call; median of {BASELINE_REPS}",
            "claimers_ready_s": round(time.perf_counter() - started, 2),
        }
        for key, who, race, size, times in (
            ("claim_next", claimers, False, n, reps),
            ("claim_race", claimers, True, n // 2, 1),  # every claimer tries every id: 20 calls per task
            ("claim_next_from_driver", None, False, n, 1),  # the same board, claimers as asyncio tasks here
        ):
            out[key] = fig = await _claims_figure(who, size, race, times)
            log(f"task_claims {key}: covey {fig['covey']['claims_per_s']}/s p50 {fig['covey']['claim_ms']['p50']} ms, "
                f"double {fig['covey']['double_claims']}; baseline {fig['baseline']['claims_per_s']}/s")
    finally:
        for c in claimers:
            ray.kill(c, no_restart=True)
    return out


# -- mailbox ------------------------------------------------------------------------


async def _send_one(mailbox: Any, recipient: str, seq: int) -> None:
    await mailbox.put(recipient, TeammateMessage(sender="bench-sender", text=str(seq), sent_at=time.time()))


async def _send(mailbox: Any, recipient: str, m: int, batch: int, yield_each: bool) -> float:
    for first in range(0, m, batch):
        if batch == 1:
            await _send_one(mailbox, recipient, first)
        else:
            await asyncio.gather(*(_send_one(mailbox, recipient, s) for s in range(first, min(m, first + batch))))
        if yield_each:
            await asyncio.sleep(0)
    return time.time()


async def _receive(mailbox: Any, me: str, m: int, mode: str, yield_each: bool) -> dict[str, Any]:
    got: list[tuple[int, float, float]] = []
    calls = empty = 0
    deadline = time.time() + RECEIVE_DEADLINE_S
    while len(got) < m and time.time() < deadline:
        mail = await (mailbox.drain(me) if mode == "drain" else mailbox.wait(me, 1.0))
        now = time.time()
        calls, empty = calls + 1, empty + (not mail)
        got += [(int(x.text), x.sent_at, now) for x in mail]
        if yield_each:
            await asyncio.sleep(0)
    return {"got": got, "calls": calls, "empty_calls": empty}


class _Agent:
    """A stand-in agent process: sends, or empties its own queue."""

    async def ready(self) -> bool:
        return True

    async def send(self, mailbox: Any, recipient: str, m: int, batch: int, start_at: float) -> float:
        await asyncio.sleep(max(0.0, start_at - time.time()))
        return await _send(mailbox, recipient, m, batch, yield_each=False)

    async def receive(self, mailbox: Any, me: str, m: int, mode: str) -> dict[str, Any]:
        return await _receive(mailbox, me, m, mode, yield_each=False)


class _LockedMailbox(Mailbox):
    """The baseline: the plain core, ``put`` and ``drain`` behind one ``asyncio.Lock`` (``wait`` drains through it)."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = asyncio.Lock()

    async def put(self, recipient: str, mail: Any) -> str:
        async with self.lock:
            return await super().put(recipient, mail)

    async def drain(self, recipient: str) -> list[Any]:
        async with self.lock:
            return await super().drain(recipient)


def _mail_figures(received: dict[str, Any], m: int, first_sent: float) -> dict[str, Any]:
    got = received["got"]
    seqs = [seq for seq, _, _ in got]
    last = max((t for _, _, t in got), default=first_sent)
    return {
        "messages": len(got), "lost": m - len(set(seqs)), "duplicates": len(seqs) - len(set(seqs)),
        "out_of_order": sum(1 for a, b in zip(seqs, seqs[1:]) if b < a),
        "msgs_per_s": len(got) / (last - first_sent) if got else 0.0,
        "latency_ms": [(done - sent) * 1e3 for _, sent, done in got],
        "receiver_calls": received["calls"], "empty_calls": received["empty_calls"],
    }


async def _covey_mail(agents: list[Any], m: int, mode: str, batch: int) -> dict[str, Any]:
    sender, receiver = agents
    handle = MailboxHandle(mailbox_actor_class().options(name=f"bench-{uuid.uuid4().hex[:8]}:mailbox").remote(),
                           "mailbox")
    try:
        await handle.pending("nobody")  # the mailbox is up before the clock starts
        me = f"receiver-{mode}-{batch}"
        start_at = time.time() + 0.3
        received = receiver.receive.remote(handle, me, m, mode)
        await sender.send.remote(handle, me, m, batch, start_at)
        return _mail_figures(await received, m, start_at)
    finally:
        handle.kill()


async def _baseline_mail(m: int, mode: str, batch: int) -> dict[str, Any]:
    mailbox, me = _LockedMailbox(), "receiver"
    first_sent = time.time()
    received, _ = await asyncio.gather(_receive(mailbox, me, m, mode, yield_each=True),
                                       _send(mailbox, me, m, batch, yield_each=True))
    return _mail_figures(received, m, first_sent)


async def run_mailbox(tmp: Path, quick: bool) -> dict[str, Any]:
    m = 300 if quick else 2000
    agent_cls = ray.remote(num_cpus=0, max_restarts=0)(_Agent)
    agents = [agent_cls.remote() for _ in range(2)]
    counts = ("messages", "lost", "duplicates", "out_of_order")
    try:
        await asyncio.gather(*(a.ready.remote() for a in agents))
        out: dict[str, Any] = {
            "messages": m, "agents": "sender and receiver: 2 Ray actors (num_cpus=0), same node",
            "mailbox": "covey mailbox actor (mailbox_actor_class) via MailboxHandle; a fresh one per figure",
            "baseline": "sender and receiver as asyncio tasks in-process on the plain Mailbox, put/drain behind "
                        f"an asyncio.Lock, sleep(0) after each call; median of {BASELINE_REPS}",
        }
        for mode in ("drain", "wait"):
            for batch in (1, BATCH):
                covey = _merge([await _covey_mail(agents, m, mode, batch)], "msgs_per_s", "latency_ms", counts)
                base = _merge([await _baseline_mail(m, mode, batch) for _ in range(BASELINE_REPS)],
                              "msgs_per_s", "latency_ms", counts)
                key = f"{mode}_{'one_at_a_time' if batch == 1 else f'batch{batch}'}"
                out[key] = {"covey": covey, "baseline": base, **_ratios(covey, base, "msgs_per_s", "latency_ms")}
                log(f"mailbox {key}: covey {covey['msgs_per_s']}/s p50 {covey['latency_ms'].get('p50')} ms; "
                    f"baseline {base['msgs_per_s']}/s p50 {base['latency_ms'].get('p50')} ms")
    finally:
        for a in agents:
            ray.kill(a, no_restart=True)
    return out
