"""The live agent tree on stderr while a CLI run works (docs/cli.md, "long work shows progress").

On a terminal the tree is redrawn in place; otherwise one plain line is
printed whenever an agent starts or changes status, so logs stay readable.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any, Awaitable, Callable, TextIO


def tree_lines(tree: dict[str, Any], depth: int = 0) -> list[str]:
    """One line per agent: type, name, status, turns, tokens, cost, the tool it is running."""
    if not tree:
        return []
    tools = ",".join(tree.get("current_tools") or [])
    name = tree.get("member_name") or tree["agent_id"][-8:]
    line = (
        f"{'  ' * depth}{'└ ' if depth else ''}{tree['type']} {name}  {tree['status']}"
        f"  {tree.get('turns', 0)} turns  {_tokens(tree['subtree_tokens'])} tok  ${tree['subtree_cost_usd']:.4f}"
        + (f"  ▸ {tools}" if tools and tree["status"] == "running" else "")
        + (f"  ⏸ {wait}" if (wait := rate_wait_text(tree.get("rate_wait"), tree["status"])) else "")
    )
    return [line] + [l for child in tree.get("children", []) for l in tree_lines(child, depth + 1)]


LIMIT_NAMES = {"requests": "requests per minute", "input_tokens": "input tokens per minute",
               "output_tokens": "output tokens per minute"}


def rate_wait_text(wait: dict[str, Any] | None, status: str, now: float | None = None) -> str:
    """``waiting for the rate limit (requests per minute), 12 s`` for a running agent whose model
    request the rate scheduler holds back (``covey.registry.payloads.RateWait``); else empty."""
    if not wait or status != "running":
        return ""
    waited = max((time.time() if now is None else now) - wait["since"], 0.0)
    cause = {"rate_limit_error": "the API said 429", "overloaded_error": "the API said 529"}.get(wait.get("cause") or "")
    detail = ", ".join(part for part in (LIMIT_NAMES.get(wait.get("limit") or ""), cause) if part)
    return f"waiting for the rate limit{f' ({detail})' if detail else ''}, {waited:.0f} s"


def _tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


class LiveView:
    def __init__(self, get_tree: Callable[[], Awaitable[dict[str, Any]]] | None, stream: TextIO | None = None,
                 interval_s: float = 0.5) -> None:
        self.get_tree = get_tree
        self.stream = sys.stderr if stream is None else stream  # the one of now, not of import time
        self.interval_s = interval_s
        self.tty = self.stream.isatty()
        self._drawn = 0
        self._seen: dict[str, str] = {}

    async def run(self) -> None:
        while True:
            await self.refresh()
            await asyncio.sleep(self.interval_s)

    async def refresh(self) -> None:
        if self.get_tree is None:  # snapshots arrive through show() (the CLI client's): nothing to fetch
            return
        try:
            tree = await self.get_tree()
        except Exception:  # the view never stops a run
            return
        self.show(tree)

    def show(self, tree: dict[str, Any]) -> None:
        """Draw one snapshot (the CLI client draws those a covey service sends)."""
        if self.tty:
            self._redraw(tree_lines(tree))
        else:
            self._changes(tree)

    def _redraw(self, lines: list[str]) -> None:
        up = f"\x1b[{self._drawn}F\x1b[J" if self._drawn else ""
        self.stream.write(up + "".join(line + "\n" for line in lines))
        self.stream.flush()
        self._drawn = len(lines)

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
