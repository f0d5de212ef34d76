"""The registry's typed calls and answers that are not launch answers (``answers``) or
records (``records``): what crosses the actor boundary instead of tuples and dicts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, TypedDict

from covey.model.base import TokenUsage
from covey.model.usage import ModelUsage
from covey.runtime.records import LaunchRequest

if TYPE_CHECKING:
    from covey.runtime.spec import AgentSpec


@dataclass(frozen=True)
class LaunchCall:
    """One launch of a batch (``launch_many``): ``Supervisor.launch``'s arguments."""

    request: LaunchRequest
    spec: AgentSpec | None
    """None: an unknown agent type (the launch is refused)."""
    follow: bool = False
    lane: str = "home"
    output_file: str | None = None
    runtime_key: str | None = None
    """The session runtime the spec names, when it travels without it."""


class SessionUsage(NamedTuple):
    """What the whole session has spent: its cost, and tokens and cost per model."""

    cost_usd: float
    model_usage: dict[str, ModelUsage]


class RateWait(TypedDict):
    """A request held back by the rate scheduler, as ``covey ps`` shows it."""

    limit: str | None
    """``requests``, ``input_tokens`` or ``output_tokens`` (per minute); None: not known yet."""
    cause: str | None
    """``queue`` (the scheduler paces it), ``rate_limit_error`` or ``overloaded_error`` (the API's retry-after)."""
    since: float
    until: float
    """Epoch seconds: when it first waited, and the scheduler's estimate of when it goes."""


class Held(TypedDict):
    """What the registry holds (the tests check it does not grow without bound)."""

    records: int
    specs: int
    watches: int


class ProgressFields(TypedDict, total=False):
    """A running agent's figures, as it reports them (``Registry.progress``)."""

    usage: TokenUsage
    tool_uses: int
    cost_usd: float
    tools_in_flight: list[str]
    model: str
    turns: int
    seq: int
    """The update's sequence number (``next_seq``): an older one is dropped."""
    model_usage: dict[str, ModelUsage]
    rate_wait: RateWait | None
    """The model request waiting for the API's rate limit; None: none waits."""
    rate_waits: list[RateWait]
    """The waits that ended (``until``: when the request went)."""
    summary: str | None
    """Its last progress summary (a sub-agent's, with ``agentProgressSummaries``)."""


class KeptWorktree(TypedDict, total=False):
    """A worktree an agent's cleanup kept, as its report and ``stop_all`` name it."""

    kept: bool
    path: str
    branch: str
    reason: str


class WarmPoolStats(TypedDict):
    ready: dict[str, int]
    starting: dict[str, int]
    sizes: dict[str, int]
    warmed: dict[str, int]
    targets: dict[str, int]
    created: int


class BorrowedPoolStats(TypedDict):
    shared: bool
    lent: int
    returned: int


PoolStats = WarmPoolStats | BorrowedPoolStats
"""What ``covey ps`` and the tests read of a session's pool."""
