"""What one attempt at a row gave (``RowResult``); a map's figures as it runs (``MapState``:
what the progress bar and the stream-json lines show) and at its end (``Summary``: rows by status, cost, tokens, wall time, and the share of
the rows' time their model requests waited for the API's rate limit)."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Attempt = Literal["completed", "failed", "stopped"]


@dataclass
class RowResult:
    """What one attempt at a row gave."""

    status: Attempt
    result: str = ""
    structured_output: Any = None
    cost_usd: float = 0.0
    turns: int = 0
    session_id: str | None = None
    error: str | None = None
    tokens: dict[str, int] = field(default_factory=dict)
    """input, output, cache read and cache creation tokens."""
    duration_ms: int = 0
    rate_wait_s: float = 0.0
    """How long its model requests waited for the API's rate limit."""
    retryable: bool = True
    """False: trying again cannot help (the input is wrong): it is journaled failed at once."""


@dataclass
class MapState:
    """The counts of one run of a map, updated as rows start and end."""

    total: int = 0
    skipped: int = 0
    """Rows that had an outcome already (an earlier run's): not run again."""
    queued: int = 0
    running: int = 0
    completed: int = 0
    failed: int = 0
    retried: int = 0
    """Attempts that failed and were tried again."""
    not_run: int = 0
    cost_usd: float = 0.0
    tokens: dict[str, int] = field(default_factory=dict)
    rate_wait_s: float = 0.0
    row_s: float = 0.0
    """The rows' own time, attempts summed (the rate limit's share is of this)."""
    started_s: float = 0.0
    ended_s: float | None = None

    def add_spend(self, result: RowResult) -> None:
        self.cost_usd += result.cost_usd
        for kind, count in result.tokens.items():
            self.tokens[kind] = self.tokens.get(kind, 0) + count
        self.rate_wait_s += result.rate_wait_s
        self.row_s += result.duration_ms / 1000

    def ended(self, status: str) -> None:
        if status == "completed":
            self.completed += 1
        else:
            self.failed += 1

    @property
    def finished(self) -> int:
        """Rows of this run with an outcome now."""
        return self.completed + self.failed

    def wall_s(self) -> float:
        return (self.ended_s if self.ended_s is not None else time.monotonic()) - self.started_s

    def eta_s(self) -> float | None:
        """Seconds left at this run's pace so far; None before the first row ends."""
        if self.finished == 0:
            return None
        return self.wall_s() / self.finished * (self.queued + self.running)

    def line(self) -> dict[str, Any]:
        """The stream-json progress line's figures."""
        eta = self.eta_s()
        return {"total": self.total, "skipped": self.skipped, "completed": self.completed, "failed": self.failed,
                "running": self.running, "queued": self.queued, "cost_usd": round(self.cost_usd, 6),
                "wall_s": round(self.wall_s(), 3), "eta_s": None if eta is None else round(eta, 1)}


@dataclass(frozen=True)
class Summary:
    """The end of one run of a map."""

    total: int
    completed: int
    failed: int
    skipped: int
    not_run: int
    retried: int
    cost_usd: float
    tokens: dict[str, int]
    wall_s: float
    rate_wait_s: float
    rate_limit_share: float
    """The share of the rows' time spent waiting for the API's rate limit (0 to 1)."""
    stopped: str | None = None
    """Why rows were left without an outcome (the budget), if any were."""

    @classmethod
    def of(cls, state: MapState, stopped: str | None) -> Summary:
        share = state.rate_wait_s / state.row_s if state.row_s > 0 else 0.0
        return cls(total=state.total, completed=state.completed, failed=state.failed, skipped=state.skipped,
                   not_run=state.not_run, retried=state.retried, cost_usd=state.cost_usd, tokens=dict(state.tokens),
                   wall_s=state.wall_s(), rate_wait_s=state.rate_wait_s, rate_limit_share=min(share, 1.0),
                   stopped=stopped)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        """The summary as a person reads it, a few lines."""
        tokens = ", ".join(f"{count:,} {kind}" for kind, count in self.tokens.items() if count) or "none"
        lines = [
            f"covey map: {self.total} rows: {self.completed} completed, {self.failed} failed, "
            f"{self.skipped} had an outcome already, {self.not_run} not run",
            f"  cost ${self.cost_usd:.4f}; tokens: {tokens}",
            f"  wall {self.wall_s:.1f}s; waiting for the rate limit {self.rate_wait_s:.1f}s "
            f"({self.rate_limit_share:.0%} of the rows' time); {self.retried} attempts retried",
        ]
        if self.stopped:
            lines.append(f"  stopped: {self.stopped}; run the same command again to run the rest")
        return "\n".join(lines)
