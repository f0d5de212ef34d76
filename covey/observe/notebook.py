"""The agent tree in a notebook: a table that updates in place while agents work (docs/cli.md).

``AgentTree`` renders one snapshot (HTML for Jupyter, the CLI's lines for a
console); ``TreeDisplay`` shows it under the running cell through one IPython
display handle and updates that handle every ``interval_s``, so the cell holds
one live table, not a scroll of copies. ``Session.run(live=...)`` and
``covey.run(live=...)`` use it; by default it is on inside a Jupyter kernel.
"""

from __future__ import annotations

import asyncio
import html
import sys
from typing import Any, Awaitable, Callable

from covey.observe.live import tree_lines

COLUMNS = ("agent", "type", "status", "turns", "tokens", "cost", "node", "now")
STATUS_COLOURS = {"running": "#1f6feb", "completed": "#1a7f37", "failed": "#cf222e", "killed": "#9a6700",
                  "queued": "#6e7781"}


class AgentTree:
    """One snapshot of the agent tree; Jupyter shows it as a table, a console as indented lines."""

    def __init__(self, tree: dict[str, Any]) -> None:
        self.tree = tree

    def __repr__(self) -> str:
        return "\n".join(tree_lines(self.tree)) or "(no agents yet)"

    def _repr_html_(self) -> str:
        if not self.tree:
            return "<p><em>covey: no agents yet</em></p>"
        head = "".join(f"<th style='text-align:left'>{c}</th>" for c in COLUMNS)
        body = "".join(_row(node, depth) for depth, node in _walk(self.tree))
        return f"<table class='covey-tree'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _row(node: dict[str, Any], depth: int) -> str:
    name = node.get("member_name") or node["agent_id"]
    colour = STATUS_COLOURS.get(node["status"], "inherit")
    now = ", ".join(node.get("current_tools") or []) if node["status"] == "running" else ""
    cells = [
        f"<span style='padding-left:{1.5 * depth}em'>{'└ ' if depth else ''}{html.escape(name)}</span>",
        html.escape(node["type"]),
        f"<span style='color:{colour}'>{html.escape(node['status'])}</span>",
        str(node.get("turns", 0)),
        f"{node['subtree_tokens']:,}",
        f"${node['subtree_cost_usd']:.4f}",
        html.escape((node.get("node_id") or "")[:8]),
        html.escape(now),
    ]
    return "<tr>" + "".join(f"<td style='text-align:left'>{cell}</td>" for cell in cells) + "</tr>"


def _walk(tree: dict[str, Any], depth: int = 0):
    yield depth, tree
    for child in tree.get("children", []):
        yield from _walk(child, depth + 1)


def in_notebook() -> bool:
    """True inside a Jupyter kernel (not a plain IPython console, not a script)."""
    shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
    return shell is not None and hasattr(shell, "kernel")


class LiveDisplay:
    """One display under the current cell, updated every ``interval_s`` while a run works, and once
    more at its end (the final state stays in the cell, and in the saved notebook).

    ``display`` is IPython's ``display`` (injected in tests); it must accept ``display_id=True`` and
    return a handle with ``update(obj)``. A subclass says what is shown first and what each update shows.
    """

    def __init__(self, interval_s: float, display: Callable[..., Any] | None = None) -> None:
        self.interval_s = interval_s
        self.display = display
        self.handle: Any = None
        self.updates = 0
        self._task: asyncio.Task | None = None

    def first(self) -> Any:
        raise NotImplementedError

    async def current(self) -> Any:
        """What the display shows now (None: leave it as it is)."""
        raise NotImplementedError

    async def __aenter__(self) -> Any:
        if self.display is None:
            from IPython.display import display

            self.display = display
        self.handle = self.display(self.first(), display_id=True)
        self._task = asyncio.create_task(self._refresh_every())
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        await self.refresh()  # the final state stays in the cell

    async def refresh(self) -> None:
        try:
            shown = await self.current()
        except Exception:  # the display never stops a run
            return
        if shown is not None:
            self.handle.update(shown)
            self.updates += 1

    def pause_s(self) -> float:
        """How long to wait before the next update."""
        return self.interval_s

    async def _refresh_every(self) -> None:
        while True:
            await asyncio.sleep(self.pause_s())
            await self.refresh()


class TreeDisplay(LiveDisplay):
    """The agent tree as one table under the cell, updated in place while agents work."""

    def __init__(self, get_tree: Callable[[], Awaitable[dict[str, Any]]], interval_s: float = 0.5,
                 display: Callable[..., Any] | None = None) -> None:
        super().__init__(interval_s, display)
        self.get_tree = get_tree

    def first(self) -> AgentTree:
        return AgentTree({})

    async def current(self) -> AgentTree:
        return AgentTree(await self.get_tree())
