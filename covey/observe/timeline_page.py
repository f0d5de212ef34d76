"""A run's timeline as one self-contained HTML page (``covey trace SESSION_ID``).

The picture inline as SVG (``timeline_draw.svg``), a table of the agents (status, when, model
and tool time, tokens, cost) and inline CSS: no script, no link, no font or file fetched, so
the page opens offline in any browser and can be mailed as one file. Every text from the
session (labels, descriptions, file names) is escaped.
"""

from __future__ import annotations

import html
import os
import time
from pathlib import Path

from covey.common.private_dirs import make_dirs, open_private
from covey.observe.timeline import Timeline
from covey.observe.timeline_draw import STATUS_COLOURS, svg

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em; color: #1f2328; background: #fff; }
h1 { font-size: 1.3em; margin-bottom: 0.2em; }
p.summary { color: #57606a; margin-top: 0; }
figure.timeline { margin: 1em 0; }
figure.timeline svg { max-width: 100%; height: auto; }
table.agents { border-collapse: collapse; font-size: 0.9em; }
table.agents th, table.agents td { padding: 0.25em 0.8em; border-bottom: 1px solid #d0d7de; text-align: left; }
table.agents td.num { text-align: right; font-variant-numeric: tabular-nums; }
ul.problems { color: #9a6700; }
"""


def page(timeline: Timeline) -> str:
    """The page's HTML."""
    title = html.escape(timeline.title or "covey run")
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(timeline.started_at)) if timeline.started_at else ""
    summary = (f"{len(timeline.rows)} agents, {timeline.duration_s:.1f} s from {html.escape(when)}, "
               f"${timeline.cost_usd:.4f}, {timeline.tokens:,} tokens")
    problems = "".join(f"<li>{html.escape(line)}</li>" for line in timeline.problems)
    return "\n".join([
        "<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
        f"<title>{title}</title><style>{STYLE}</style></head><body>",
        f"<h1>{title}</h1><p class='summary'>{summary}</p>",
        f"<figure class='timeline'>{svg(timeline) if timeline.rows else '<p>No agent has started.</p>'}</figure>",
        _table(timeline),
        f"<ul class='problems'>{problems}</ul>" if problems else "",
        "</body></html>\n",
    ])


def _table(timeline: Timeline) -> str:
    head = "".join(f"<th>{name}</th>" for name in
                   ("agent", "status", "start (s)", "end (s)", "model (s)", "tools (s)", "tokens", "cost (USD)"))
    body = []
    for row in timeline.rows:
        colour = STATUS_COLOURS.get(row.status, STATUS_COLOURS["unknown"])
        cells = [
            f"<td style='padding-left:{0.8 + 1.5 * row.depth}em'>{'└ ' if row.depth else ''}{html.escape(row.label)}</td>",
            f"<td style='color:{colour}'>{html.escape(row.status)}</td>",
            *(f"<td class='num'>{value:.2f}</td>" for value in
              (row.start_s, row.end_s, row.busy_s("model"), row.busy_s("tool"))),
            f"<td class='num'>{row.tokens:,}</td>", f"<td class='num'>${row.cost_usd:.4f}</td>",
        ]
        body.append(f"<tr class='agent' data-agent-id='{html.escape(row.agent_id)}'>{''.join(cells)}</tr>")
    return f"<table class='agents'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def write_page(path: str | os.PathLike, timeline: Timeline) -> Path:
    """Write the page (0600: it names the agents' descriptions and files; missing folders are made 0700)."""
    path = Path(path)
    make_dirs(path.parent)
    with os.fdopen(open_private(path, os.O_WRONLY | os.O_TRUNC), "w", encoding="utf-8") as handle:
        handle.write(page(timeline))
    return path
