"""The live agent tree on stderr while a CLI run works (docs/cli.md, "long work shows progress").

On a terminal the tree is drawn with rich's ``Live``: redrawn in place when a snapshot
differs, each agent on one line cropped to the terminal's width (a line that wrapped
would throw the in-place redraw off), and left on the screen showing the final state
(``LiveView.finish``). Otherwise one plain line is printed whenever an agent starts or
changes status, so logs stay readable. rich is imported only to draw on a terminal: the
thin client (``covey.cli.served``) stays light.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Iterator, TextIO

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions
    from rich.live import Live
    from rich.table import Table

FINAL_TREE_TIMEOUT_S = 5.0
"""How long the final snapshot may take to fetch when a run ends (the view never holds a run up)."""
STATUS_STYLES = {"running": "blue", "completed": "green", "failed": "red", "killed": "yellow", "queued": "dim"}


def tree_lines(tree: dict[str, Any], depth: int = 0) -> list[str]:
    """One line per agent, indented under its parent (``covey tree``, a notebook's console)."""
    if not tree:
        return []
    line = f"{'  ' * depth}{'└ ' if depth else ''}{node_line(tree)}"
    return [line] + [l for child in tree.get("children", []) for l in tree_lines(child, depth + 1)]


def node_line(node: dict[str, Any]) -> str:
    """One agent: type, name, status, turns, tokens, cost, the tool it is running, its rate-limit wait."""
    return "  ".join(part for part in _cells(node) if part)


def _cells(node: dict[str, Any]) -> tuple[str, str, str, str]:
    """An agent's line in four parts: who, status, figures, what it does now (the terminal's columns)."""
    tools = ",".join(node.get("current_tools") or [])
    name = node.get("member_name") or node["agent_id"][-8:]
    figures = f"{node.get('turns', 0)} turns  {_tokens(node['subtree_tokens'])} tok  ${node['subtree_cost_usd']:.4f}"
    wait = rate_wait_text(node.get("rate_wait"), node["status"])
    doing = (f"▸ {tools}" if tools and node["status"] == "running" else "", f"⏸ {wait}" if wait else "")
    now = "  ".join(part for part in doing if part)
    return f"{node['type']} {name}", node["status"], figures, now


LIMIT_NAMES = {"requests": "requests per minute", "input_tokens": "input tokens per minute",
               "output_tokens": "output tokens per minute"}


def rate_wait_text(wait: dict[str, Any] | None, status: str, now: float | None = None) -> str:
    """``waiting for the rate limit (requests per minute), 12 s`` for a running agent whose model
    request the rate scheduler holds back (``covey.runtime.payloads.RateWait``); else empty."""
    if not wait or status != "running":
        return ""
    waited = max((time.time() if now is None else now) - wait["since"], 0.0)
    cause = {"rate_limit_error": "the API said 429", "overloaded_error": "the API said 529"}.get(wait.get("cause") or "")
    detail = ", ".join(part for part in (LIMIT_NAMES.get(wait.get("limit") or ""), cause) if part)
    return f"waiting for the rate limit{f' ({detail})' if detail else ''}, {waited:.0f} s"


def _tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


GAP = 2
"""Spaces between the terminal's columns."""
MARGIN = 2
"""Cells left free at the right: the terminal echoes ``^C`` after the last row, and a full row would
wrap then, which throws the in-place redraw off by a row."""
CROPPED_FIRST = ((3, 8), (0, 24), (2, 7), (0, 12))
"""When a terminal is too narrow for the rows, the columns are cut in this order, each down to a
width: now (dropped under 8 cells), who (to 24), figures (dropped under 7), who (to 12, never dropped)."""


class AgentTable:
    """The agent tree for a terminal, laid out for the console's width at each render: one row per
    agent under tree guides, in columns who, status, figures, now. A row never wraps: when the
    terminal is narrower, the columns are cut in ``CROPPED_FIRST``'s order, each with an ellipsis;
    the status stays whole."""

    def __init__(self, tree: dict[str, Any]) -> None:
        self.tree = tree

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Table]:
        yield self.table(max(options.max_width - MARGIN, 1))

    def table(self, width: int) -> Table:
        from rich.cells import cell_len
        from rich.table import Table
        from rich.text import Text

        rows = [(guide, *_cells(node)) for guide, node in _guided(self.tree)]
        cells = [(guide + who, status, figures, now) for guide, who, status, figures, now in rows]
        widths = fit([max(cell_len(row[i]) for row in cells) for i in range(4)], width)
        table = Table.grid(padding=(0, GAP))
        for column_width in widths:
            if column_width:
                table.add_column(width=column_width, no_wrap=True, overflow="ellipsis")
        for guide, who, status, figures, now in rows:
            texts = (Text.assemble((guide, "dim"), who), Text(status, STATUS_STYLES.get(status, "")), Text(figures),
                     Text(now))
            table.add_row(*(text for text, column_width in zip(texts, widths) if column_width))
        return table


def fit(widths: list[int], room: int) -> list[int]:
    """The columns' widths cut to fit in ``room`` cells (``CROPPED_FIRST``); 0: the column is dropped."""
    widths = list(widths)
    for column, least in CROPPED_FIRST:
        over = sum(widths) + GAP * (sum(1 for w in widths if w) - 1) - room
        if over <= 0:
            break
        if column == 0:  # who: never dropped, never widened
            widths[0] = max(widths[0] - over, min(least, widths[0]))
        else:
            widths[column] = widths[column] - over if widths[column] - over >= least else 0
    return widths


def _guided(tree: dict[str, Any], prefix: str = "", guide: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Each agent with the tree guide drawn before it (``├── ``, ``└── ``, ``│   ``), parents first."""
    yield prefix + guide, tree
    below = prefix + {"": "", "├── ": "│   ", "└── ": "    "}[guide]
    children = tree.get("children", [])
    for index, child in enumerate(children):
        yield from _guided(child, below, "└── " if index == len(children) - 1 else "├── ")


class LiveView:
    """The agent tree on ``stream`` (stderr by default) while a run works.

    ``show(tree)`` draws a snapshot; ``finish(tree)`` draws the final one and stops, leaving it
    on the screen. Around a run, ``async with LiveView(session.tree):`` fetches a snapshot every
    ``interval_s`` and, when the block ends (even cancelled), the final one. ``console``: the
    rich console to draw on (tests give one of a fixed width); by default one on ``stream``.
    """

    def __init__(self, get_tree: Callable[[], Awaitable[dict[str, Any]]] | None, stream: TextIO | None = None,
                 interval_s: float = 0.5, console: Console | None = None) -> None:
        self.get_tree = get_tree
        self.stream = sys.stderr if stream is None else stream  # the one of now, not of import time
        self.interval_s = interval_s
        self.console = console
        self.tty = console.is_terminal if console is not None else self.stream.isatty()
        self._live: Live | None = None
        self._drawn: list[str] = []
        self._finished = False
        self._seen: dict[str, str] = {}
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> LiveView:
        self._task = asyncio.create_task(self._refresh_every())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        self.finish(await self._fetch(FINAL_TREE_TIMEOUT_S))

    async def refresh(self) -> None:
        """Fetch a snapshot and draw it."""
        if (tree := await self._fetch()) is not None:
            self.show(tree)

    def show(self, tree: dict[str, Any]) -> None:
        """Draw one snapshot (the CLI client draws those a covey service sends)."""
        if self._finished:
            return
        if self.tty:
            self._redraw(tree)
        else:
            self._changes(tree)

    def finish(self, tree: dict[str, Any] | None = None) -> None:
        """Draw the final snapshot, if given, and stop: on a terminal the last frame stays as drawn.
        Call it before anything else is printed after the run (the result, a message)."""
        if tree is not None:
            self.show(tree)
        self._finished = True
        self.pause()

    def pause(self) -> None:
        """Stop redrawing in place, the last frame left as drawn (a prompt is printed below it);
        the next snapshot starts a new frame under what was printed meanwhile."""
        if self._live is not None:
            self._live.stop()
            self._live = None
            self._drawn = []

    async def _refresh_every(self) -> None:
        while True:
            await self.refresh()
            await asyncio.sleep(self.interval_s)

    async def _fetch(self, timeout_s: float | None = None) -> dict[str, Any] | None:
        if self.get_tree is None:  # snapshots arrive through show() (the CLI client's): nothing to fetch
            return None
        try:
            return await asyncio.wait_for(self.get_tree(), timeout_s)
        except Exception:  # the view never stops a run
            return None

    def _redraw(self, tree: dict[str, Any]) -> None:
        lines = tree_lines(tree)
        if not lines or lines == self._drawn:
            return
        self._drawn = lines
        if self._live is None:
            self._live = self._start()
        self._live.update(AgentTable(tree), refresh=True)

    def _start(self) -> Live:
        from rich.console import Console
        from rich.live import Live

        # Redrawn only when a snapshot differs (no refresh thread). What is printed to stderr meanwhile
        # goes above the tree, and so does stdout when it is this stream already (an in-process run
        # sends Ray's prints there); otherwise stdout carries covey's output (stream-json lines) and
        # is left alone.
        live = Live(console=self.console or Console(file=self.stream), auto_refresh=False, transient=False,
                    redirect_stdout=sys.stdout is self.stream, redirect_stderr=True)
        live.start()
        return live

    def _changes(self, tree: dict[str, Any]) -> None:
        for node in _walk(tree):
            if self._seen.get(node["agent_id"]) != node["status"]:
                self._seen[node["agent_id"]] = node["status"]
                name = node.get("member_name") or node["agent_id"]
                print(f"covey: {node['type']} {name} {node['status']}: {node['description']}", file=self.stream)


def _walk(tree: dict[str, Any]):
    if tree:
        yield tree
        for child in tree.get("children", []):
            yield from _walk(child)
