"""The data of a run's timeline picture: one row per agent, children under their parent.

Each row holds the agent's run (coloured by its status when drawn), its model requests and
tool calls as spans, and its tokens and cost. It is built from run records (the registry's
``RunRecord``s while a session runs or when it ends, or a finished session's ``DiskRun``s,
``covey.observe.session_runs``) through the session trace (``covey.observe.trace``), so the
picture and the Perfetto trace agree on every span. Times are seconds since the run's first
span. Plain Python: the drawing is ``timeline_draw``, the page ``timeline_page``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterable

from covey.observe.trace import LANES, trace_events

STATUSES = ("completed", "failed", "killed", "running", "queued", "unknown")
"""What a row's status may be; any other a record carries is shown as ``unknown``."""
LIVE = ("running", "queued")


@dataclass(frozen=True)
class Span:
    """A model request (``kind="model"``) or a tool call (``kind="tool"``, named by the tool)."""

    kind: str
    name: str
    start_s: float
    end_s: float
    lane: int = 0
    """Tool calls run together are side by side: each on a lane of its own (0 is the first)."""


@dataclass(frozen=True)
class Row:
    """One agent: ``label`` is ``type:name`` (its team name, else its id without ``agent-``)."""

    agent_id: str
    label: str
    depth: int
    status: str
    start_s: float
    end_s: float
    tokens: int = 0
    cost_usd: float = 0.0
    spans: tuple[Span, ...] = ()

    @property
    def lanes(self) -> int:
        """How many tool calls this agent ran at once, at most (1 when none)."""
        return 1 + max((span.lane for span in self.spans if span.kind == "tool"), default=0)

    def busy_s(self, kind: str) -> float:
        """The summed durations of its spans of one kind (each of the calls run together counts)."""
        return sum(span.end_s - span.start_s for span in self.spans if span.kind == kind)


@dataclass(frozen=True)
class Timeline:
    rows: tuple[Row, ...] = ()
    duration_s: float = 0.0
    title: str = ""
    started_at: float | None = None
    """Epoch seconds of the run's time 0 (None: no agent yet)."""
    problems: tuple[str, ...] = field(default=())
    """One line per record or file that could not be read (what, and where)."""

    @property
    def cost_usd(self) -> float:
        return sum(row.cost_usd for row in self.rows)

    @property
    def tokens(self) -> int:
        return sum(row.tokens for row in self.rows)


def timeline_of(records: Iterable[Any], *, title: str = "", now_s: float | None = None,
                problems: Iterable[str] = ()) -> Timeline:
    """The timeline of these run records; a running agent's row reaches ``now_s`` (default: now)."""
    records = [r for r in records if getattr(r, "started_at", None) is not None]
    if not records:
        return Timeline(title=title, problems=tuple(problems))
    now_s = time.time() if now_s is None else now_s
    problems = list(problems)
    events = _events(records, problems)
    origin = min(r.started_at for r in records) - 1.0  # the trace's own time 0 (trace.trace_events)
    agents = {e["args"]["agent_id"]: e for e in events if e.get("ph") == "X" and e.get("cat") == "agent"}
    inner: dict[int, list[Span]] = {}
    for event in events:
        if event.get("ph") == "X" and event.get("cat") in ("model", "tool"):
            tid, lane = (event["tid"], 0) if event["tid"] < LANES else divmod(event["tid"], LANES)
            inner.setdefault(tid, []).append(Span(event["cat"], event["name"], *_seconds(event, origin), lane))
    zero = min(_seconds(e, origin)[0] for e in agents.values())
    rows = [_row(record, depth, agents[record.agent_id], inner, origin, zero, now_s)
            for record, depth in _tree_order(records)]
    end = max([row.end_s for row in rows] + [0.0])
    return Timeline(tuple(rows), end, title, origin + zero, tuple(problems))


def _events(records: list[Any], problems: list[str]) -> list[dict[str, Any]]:
    """The trace's events; an agent whose transcript the trace cannot read (a record of the wrong
    shape) is drawn without its spans, and a line says which transcript it was."""
    try:
        return trace_events(records)
    except Exception:  # untrusted files: find the agents whose transcripts break it
        pass
    kept = []
    for record in records:
        try:
            trace_events([record])
            kept.append(record)
        except Exception as exc:
            problems.append(f"{getattr(record, 'output_file', None)!r}: its records could not be read ({exc!r}); "
                            f"{label_of(record)} is shown without its model requests and tool calls")
            kept.append(_WithoutTranscript(record))
    return trace_events(kept)


class _WithoutTranscript:
    """A run record whose transcript is left out."""

    output_file = None

    def __init__(self, record: Any) -> None:
        self._record = record

    def __getattr__(self, name: str) -> Any:
        return getattr(self._record, name)


def _row(record: Any, depth: int, agent: dict[str, Any], inner: dict[int, list[Span]], origin: float, zero: float,
         now_s: float) -> Row:
    start, end = _seconds(agent, origin)
    status = record.status if record.status in STATUSES else "unknown"
    spans = [Span(s.kind, s.name, s.start_s - zero, s.end_s - zero, s.lane) for s in inner.get(agent["tid"], [])]
    if status in LIVE:
        end = max(end, now_s - origin)
        spans = _in_flight(spans, list(getattr(record, "tools_in_flight", None) or []), end - zero)
    return Row(record.agent_id, label_of(record), depth, status, start - zero, end - zero,
               int(agent["args"].get("tokens") or 0), float(agent["args"].get("cost_usd") or 0.0), tuple(spans))


def _in_flight(spans: list[Span], tools: list[str], now_s: float) -> list[Span]:
    """A running agent's calls still at work (its record names them; its transcript has no result
    for them yet) reach now, side by side from the reply that made them."""
    if not tools:
        return spans
    since = max((s.end_s for s in spans if s.kind == "model"), default=0.0)
    done = [s for s in spans if not (s.kind == "tool" and s.start_s >= since)]
    return done + [Span("tool", name, since, max(now_s, since), lane) for lane, name in enumerate(tools)]


def _seconds(event: dict[str, Any], origin: float) -> tuple[float, float]:
    start = event["ts"] / 1_000_000
    return start, start + event.get("dur", 0) / 1_000_000


def label_of(record: Any) -> str:
    name = getattr(record, "member_name", None) or str(record.agent_id).removeprefix("agent-")[:12]
    return f"{record.agent_type}:{name}"


def _tree_order(records: list[Any]) -> list[tuple[Any, int]]:
    """Each agent with its depth, then its children (in the order they started) under it; an agent
    whose parent is not among the records is a root (and one caught in a loop of parents is shown last)."""
    ids = {r.agent_id for r in records}
    children: dict[str | None, list[Any]] = {}
    for record in sorted(records, key=lambda r: r.started_at):
        parent = getattr(record, "parent_agent_id", None)
        children.setdefault(parent if parent in ids and parent != record.agent_id else None, []).append(record)
    ordered: list[tuple[Any, int]] = []
    seen: set[str] = set()

    def visit(parent: str | None, depth: int) -> None:
        for record in children.get(parent, []):
            if record.agent_id not in seen:
                seen.add(record.agent_id)
                ordered.append((record, depth))
                visit(record.agent_id, depth + 1)

    visit(None, 0)
    return ordered + [(r, 0) for r in records if r.agent_id not in seen]
