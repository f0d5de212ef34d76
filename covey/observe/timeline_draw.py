"""The timeline picture of a run, drawn with matplotlib (the ``covey[notebook]`` extra).

Left, one row per agent (children under their parent, labelled ``type:name``): the agent's run
as a pale bar edged in its status's colour, its model requests on the upper half of the row
and its tool calls on the lower half, each kind in its own colour. Right, the cost of each
agent in USD with its tokens. ``figure`` builds a ``matplotlib.figure.Figure`` without pyplot
(no global state, no GUI backend), ``png`` and ``svg`` render it.
"""

from __future__ import annotations

import io
import re
from dataclasses import replace
from typing import Any

from covey.errors import UserError
from covey.observe.timeline import Timeline

STATUS_COLOURS = {"completed": "#1a7f37", "failed": "#cf222e", "killed": "#9a6700", "running": "#1f6feb",
                  "queued": "#6e7781", "unknown": "#6e7781"}
SPAN_COLOURS = {"model": "#8250df", "tool": "#f08c00"}
INSTALL = "pip install 'covey[notebook]'"
MAX_ROWS = 150
"""Rows drawn at most (a picture of a 1,000-agent fan-out would be too tall to draw); the page's table lists all."""


def require_matplotlib() -> Any:
    """matplotlib's ``Figure``; a ``UserError`` of one line when the extra is not installed."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise UserError(f"the timeline picture needs matplotlib, which is not installed: {INSTALL}") from None
    return Figure


def figure(timeline: Timeline, *, width_in: float = 12.0) -> Any:
    """The picture as a matplotlib ``Figure``: the timeline, and the cost by agent beside it."""
    figure_class = require_matplotlib()
    count = len(timeline.rows)
    shown = replace(timeline, rows=timeline.rows[:MAX_ROWS])
    height = 1.5 + 0.42 * max(1, len(shown.rows))
    fig = figure_class(figsize=(width_in, height), layout="constrained")
    chart, costs = fig.subplots(1, 2, sharey=True, width_ratios=[4, 1])
    _draw_rows(chart, shown)
    _draw_costs(costs, shown)
    title = timeline.title or "covey run"
    cut = f" (the first {MAX_ROWS} drawn)" if count > MAX_ROWS else ""
    fig.suptitle(f"{title}: {count} agent{'s' * (count != 1)}{cut}, {timeline.duration_s:.1f} s, "
                 f"${timeline.cost_usd:.4f}, {timeline.tokens:,} tokens", fontsize=11)
    return fig


def _draw_rows(ax: Any, timeline: Timeline) -> None:
    rows = timeline.rows
    for y, row in enumerate(rows):
        colour = STATUS_COLOURS.get(row.status, STATUS_COLOURS["unknown"])
        ax.barh(y, max(row.end_s - row.start_s, 0.001), left=row.start_s, height=0.84, color=colour, alpha=0.15,
                edgecolor=colour, linewidth=1.5)
        lane_height = 0.34 / row.lanes  # calls run together share the lower half, side by side
        for span in row.spans:
            # y grows downwards (inverted below): model requests above the middle, tool calls below
            middle, height = (y - 0.19, 0.34) if span.kind == "model" else \
                (y + 0.02 + lane_height * (span.lane + 0.5), lane_height * 0.9)
            ax.barh(middle, max(span.end_s - span.start_s, 0.001), left=span.start_s, height=height,
                    color=SPAN_COLOURS.get(span.kind, "#999999"))
        ax.text(row.end_s, y, f" {row.status}", va="center", ha="left", fontsize=8, color=colour)
    ax.set_yticks(range(len(rows)), [("  " * row.depth + ("└ " if row.depth else "") + row.label) for row in rows],
                  fontsize=9)
    ax.set_ylim(max(len(rows), 1) - 0.5, -0.5)
    ax.set_xlim(0, max(timeline.duration_s, 0.1) * 1.12)
    ax.set_xlabel("seconds since the run started")
    ax.grid(axis="x", alpha=0.3)
    handles = [_patch(SPAN_COLOURS["model"], "model request"), _patch(SPAN_COLOURS["tool"], "tool call")]
    statuses = sorted({row.status for row in rows}, key=list(STATUS_COLOURS).index)
    handles += [_patch(STATUS_COLOURS[s], s, pale=True) for s in statuses]
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=len(handles), fontsize=8,
              frameon=False)


def _draw_costs(ax: Any, timeline: Timeline) -> None:
    rows = timeline.rows
    ax.barh(range(len(rows)), [row.cost_usd for row in rows], height=0.6,
            color=[STATUS_COLOURS.get(row.status, "#6e7781") for row in rows])
    top = max([row.cost_usd for row in rows] + [1e-6])
    for y, row in enumerate(rows):
        ax.text(row.cost_usd + top * 0.02, y, f"${row.cost_usd:.4f}\n{row.tokens:,} tok", va="center", fontsize=7)
    ax.set_xlim(0, top * 1.9)
    ax.set_xlabel("cost (USD)")
    ax.set_title("cost and tokens by agent", fontsize=9)
    ax.tick_params(axis="y", left=False)
    ax.grid(axis="x", alpha=0.3)


def _patch(colour: str, label: str, pale: bool = False) -> Any:
    from matplotlib.patches import Patch

    if pale:
        return Patch(facecolor=colour, alpha=0.3, edgecolor=colour, label=label)
    return Patch(color=colour, label=label)


def png(timeline: Timeline, dpi: int = 96) -> bytes:
    """The picture as PNG bytes."""
    out = io.BytesIO()
    figure(timeline).savefig(out, format="png", dpi=dpi)
    return out.getvalue()


def svg(timeline: Timeline) -> str:
    """The picture as one ``<svg>`` element (no XML prolog, no metadata: it goes inside an HTML page);
    text as paths, so it looks the same with no font installed."""
    out = io.StringIO()
    figure(timeline).savefig(out, format="svg", metadata={"Date": None})
    text = out.getvalue()
    return re.sub(r"<metadata>.*?</metadata>", "", text[text.index("<svg"):], flags=re.DOTALL)
