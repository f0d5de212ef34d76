"""``MapRunner``: the rules of a map, plain: which rows run, how many at once, retries, the
journal, the progress and the summary. What runs one row (an agent through the session's
registry: ``covey.rowmap.agents``) is passed in, so tests drive the rules without Ray.

A row runs at most once to completion: a row with an outcome in the journal is skipped, each
row is in the queue once, and its outcome is journaled (durably) before it counts as done. A
failed attempt is tried again up to ``retries`` times, then journaled ``failed`` with its
error. An attempt that was ``stopped`` (the budget is spent, the map was stopped) is not an
outcome: nothing is journaled, no new row starts, and a later run of the map runs it.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import asdict
from typing import Any, Awaitable, Callable

from covey.rowmap.journal import MapJournal
from covey.rowmap.rows import Row
from covey.rowmap.summary import MapState, RowResult, Summary

RunRow = Callable[[Row, str, int], Awaitable[RowResult]]
"""Runs one attempt (row, prompt, attempt number from 1) to its end."""
Progress = Callable[[str, MapState, dict[str, Any] | None], None]
"""Told each change: ``start``, ``row`` (with the outcome journaled), ``stopped``, ``end``."""


class MapRunner:
    """One run of a map over its rows, ``concurrency`` at a time."""

    def __init__(self, journal: MapJournal, run_row: RunRow, *, concurrency: int = 8, retries: int = 0,
                 retry_failed: bool = False, on_progress: Progress | None = None) -> None:
        if concurrency < 1 or retries < 0:
            raise ValueError("concurrency must be at least 1 and retries at least 0")
        self.journal, self.run_row = journal, run_row
        self.concurrency, self.retries, self.retry_failed = concurrency, retries, retry_failed
        self.on_progress = on_progress or (lambda kind, state, outcome: None)
        self.state = MapState()
        self.stopped: str | None = None
        """Why no further row starts (the budget is spent), once something stopped the map."""

    async def run(self, rows: list[Row], prompts: dict[str, str]) -> Summary:
        """Run every row without an outcome; the summary of this run (the journal holds the outcomes)."""
        state = self.state
        state.started_s = time.monotonic()
        queue = deque(row for row in rows if not self.journal.done(row.key, retry_failed=self.retry_failed))
        state.total, state.skipped, state.queued = len(rows), len(rows) - len(queue), len(queue)
        self.on_progress("start", state, None)
        workers = [asyncio.create_task(self._worker(queue, prompts)) for _ in range(min(self.concurrency, len(queue)))]
        try:
            await asyncio.gather(*workers)
        finally:
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            state.ended_s = time.monotonic()
        state.not_run = state.queued + state.running
        self.on_progress("end", state, None)
        return Summary.of(state, self.stopped)

    async def _worker(self, queue: deque[Row], prompts: dict[str, str]) -> None:
        state = self.state
        while queue and self.stopped is None:
            row = queue.popleft()
            state.queued -= 1
            state.running += 1
            try:
                result, attempts = await self._attempts(row, prompts[row.key])
            finally:
                state.running -= 1
            self._ended(row, result, attempts)

    async def _attempts(self, row: Row, prompt: str) -> tuple[RowResult, int]:
        """The row's last attempt and how many it took (a failed one tried again up to ``retries`` times)."""
        attempt = 0
        while True:
            attempt += 1
            result = await self._attempt(row, prompt, attempt)
            self.state.add_spend(result)
            if not self._again(result, attempt):
                return result, attempt
            self.state.retried += 1

    def _ended(self, row: Row, result: RowResult, attempts: int) -> None:
        """A stopped row goes back to the count of those not run; any other is journaled, then counted."""
        if result.status == "stopped":
            self.state.queued += 1  # not run: it has no outcome
            self._stop(result.error or "the map was stopped")
            return
        outcome = outcome_of(row, result, attempts)
        self.journal.record(outcome)
        self.state.ended(result.status)
        self.on_progress("row", self.state, outcome)

    def _again(self, result: RowResult, attempt: int) -> bool:
        """Whether a failed attempt is tried again."""
        return result.status == "failed" and result.retryable and attempt <= self.retries and self.stopped is None

    async def _attempt(self, row: Row, prompt: str, attempt: int) -> RowResult:
        try:
            return await self.run_row(row, prompt, attempt)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # one row's failure is its outcome, never the map's end
            return RowResult(status="failed", error=f"{type(exc).__name__}: {exc}")

    def _stop(self, reason: str) -> None:
        if self.stopped is None:
            self.stopped = reason
            self.on_progress("stopped", self.state, {"reason": reason})


def outcome_of(row: Row, result: RowResult, attempts: int) -> dict[str, Any]:
    """The journal's line for a row that ended: its place, key and input, then how it ended."""
    fields = asdict(result)
    fields.pop("retryable")
    return {"row": row.index, "key": row.key, "input": row.data, **fields, "attempts": attempts}
