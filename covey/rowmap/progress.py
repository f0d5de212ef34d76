"""What ``covey map`` shows while it runs: a progress bar on a terminal (rich, which covey's live
tree already uses: a well-kept library rather than hand-written terminal code), or one
stream-json line per change for a program (``--output-format stream-json``); then the summary.

The bar goes to stderr, so stdout holds only what a program reads. Its line: rows done,
failed, running and queued, the cost so far and the time left at the pace so far.
"""

from __future__ import annotations

import json
from typing import IO, Any, Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from covey.rowmap.summary import MapState, Summary


class MapDisplay:
    """The map's ``on_progress``: a bar (``bar``), stream-json lines (``lines``), both or neither."""

    def __init__(self, *, lines: IO[str] | None = None, bar: IO[str] | None = None) -> None:
        self.lines = lines
        self.progress: Progress | None = None
        self.task: TaskID | None = None
        if bar is not None:
            # Fits 80 columns: the bar, rows with an outcome of all, then the rest.
            self.progress = Progress(BarColumn(bar_width=16), MofNCompleteColumn(), TextColumn("{task.fields[counts]}"),
                                     console=Console(file=bar), transient=False, auto_refresh=True)

    def __call__(self, kind: str, state: MapState, outcome: dict[str, Any] | None) -> None:
        if self.lines is not None:
            self._line({"type": "map_progress", "event": kind, **state.line(), **_row_fields(outcome)})
        if self.progress is not None:
            self._bar(kind, state)

    def _bar(self, kind: str, state: MapState) -> None:
        assert self.progress is not None
        if kind == "start":
            self.progress.start()
            self.task = self.progress.add_task("rows", total=state.total, completed=state.skipped, counts="")
        if self.task is None:
            return
        self.progress.update(self.task, completed=state.skipped + state.finished, counts=counts(state))
        if kind == "end":
            self.progress.stop()

    def stop(self) -> None:
        """Leave the bar where it is (an interrupted map ends without its ``end``)."""
        if self.progress is not None:
            self.progress.stop()

    def summary(self, summary: Summary) -> None:
        if self.lines is not None:
            self._line({"type": "map_summary", **summary.as_dict()})

    def _line(self, fields: dict[str, Any]) -> None:
        assert self.lines is not None
        print(json.dumps(fields, default=str), file=self.lines, flush=True)


class NotebookProgress:
    """``covey.map``'s progress under a notebook cell: one line, updated in place through one
    IPython display handle as rows end. ``display`` is IPython's (injected in tests)."""

    def __init__(self, display: Callable[..., Any] | None = None) -> None:
        show: Any = display
        if show is None:
            from IPython.display import display as show
        self.handle = show(_Line("covey map: starting"), display_id=True)

    def __call__(self, kind: str, state: MapState, outcome: dict[str, Any] | None) -> None:
        done = state.skipped + state.finished
        self.handle.update(_Line(f"covey map: {done}/{state.total} rows · {counts(state)}"))


class _Line:
    """A line of text as a notebook shows it."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def counts(state: MapState) -> str:
    """The bar's text after ``rows with an outcome/all``: ``1 failed · 8 running · 79 queued · $0.0412 · ETA 1m05s``."""
    eta = state.eta_s()
    shown = "?" if eta is None else f"{int(eta // 60)}m{int(eta % 60):02d}s"
    return (f"{state.failed} failed · {state.running} running · {state.queued} queued · "
            f"${state.cost_usd:.4f} · ETA {shown}")


def _row_fields(outcome: dict[str, Any] | None) -> dict[str, Any]:
    """A row's end in its progress line: which row, how it ended, its session; not its answer (in the output)."""
    if outcome is None:
        return {}
    if "key" not in outcome:  # the stop's reason
        return dict(outcome)
    return {"row": outcome["row"], "key": outcome["key"], "status": outcome["status"],
            "session_id": outcome.get("session_id"), "row_cost_usd": outcome.get("cost_usd"),
            "error": outcome.get("error")}
