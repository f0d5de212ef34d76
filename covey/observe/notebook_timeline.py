"""The timeline picture in a notebook: live while a run works, a PNG in the cell when it ends.

``TimelinePicture`` is one picture as Jupyter shows it: a PNG (``image/png``), which a saved
notebook keeps and ``jupyter nbconvert --to html`` embeds as an ``<img>``, so no widget is
needed to see it. ``TimelineDisplay`` shows it under the running cell through one IPython
display handle and draws it again every ``interval_s`` (in a thread: drawing must not hold up
the run's event loop, nor take most of the CPU) from the session's run records and transcripts. Without matplotlib it shows one line
saying how to install it, once, and the run goes on.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any, Awaitable, Callable, Iterable

from covey.errors import UserError
from covey.observe.notebook import LiveDisplay
from covey.observe.session_runs import find_session, runs_on_disk
from covey.observe.timeline import Timeline, timeline_of
from covey.observe.timeline_draw import png, require_matplotlib


class TimelinePicture:
    """One timeline, shown as a PNG in Jupyter and as a line of text in a console."""

    def __init__(self, timeline: Timeline, image: bytes | None = None) -> None:
        self.timeline = timeline
        self.image = image

    def _repr_png_(self) -> bytes:
        if self.image is None:
            self.image = png(self.timeline)
        return self.image

    def __repr__(self) -> str:
        t = self.timeline
        statuses = ", ".join(f"{row.label} {row.status}" for row in t.rows)
        return f"covey timeline: {len(t.rows)} agents, {t.duration_s:.1f} s, ${t.cost_usd:.4f} ({statuses})"


def timeline_picture(records: Iterable[Any], *, title: str = "") -> TimelinePicture:
    """The picture of these run records (``await session.records()``)."""
    return TimelinePicture(timeline_of(records, title=title))


def session_timeline(session_id: str, transcript_dir: str | os.PathLike | None = None) -> TimelinePicture:
    """The picture of a session on disk, finished or running (``covey.session_timeline(result.session_id)``),
    read as ``covey trace`` reads it; ``transcript_dir`` as the session's own option."""
    runs, problems = runs_on_disk(find_session(session_id, transcript_dir), transcript_dir)
    return TimelinePicture(timeline_of(runs, title=f"covey session {session_id[:8]}", problems=problems))


class _Note:
    """A line of text in the cell (``text/plain`` only: no stderr box)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


class TimelineDisplay(LiveDisplay):
    """The run's timeline under the cell, drawn again every ``interval_s`` while agents work (or, when
    drawing it takes longer than half that, twice the drawing's time: the run keeps most of the CPU)."""

    def __init__(self, get_records: Callable[[], Awaitable[list[Any]]], interval_s: float = 1.0,
                 display: Callable[..., Any] | None = None, title: str = "") -> None:
        super().__init__(interval_s, display)
        self.get_records = get_records
        self.title = title
        self.missing: str | None = None
        self.draw_s = 0.0
        """How long the last picture took to read and draw."""

    def first(self) -> _Note:
        try:
            require_matplotlib()
        except UserError as exc:
            self.missing = f"covey: {exc}"
            return _Note(self.missing)
        return _Note("covey: the timeline appears when the first agent starts")

    async def current(self) -> TimelinePicture | None:
        if self.missing is not None:
            return None
        records = await self.get_records()
        if not records:
            return None
        started = time.monotonic()
        picture = await asyncio.to_thread(self._draw, records, time.time())  # transcripts read there too
        self.draw_s = time.monotonic() - started
        return picture

    def _draw(self, records: list[Any], now_s: float) -> TimelinePicture:
        timeline = timeline_of(records, title=self.title, now_s=now_s)
        return TimelinePicture(timeline, png(timeline))

    def pause_s(self) -> float:
        return max(self.interval_s, 2 * self.draw_s)
