"""A prompt-cache model for the fake Messages API: what the real API's usage says about caching.

A request is read in the API's cache order (tools, system, messages), one content block at
a time. Each block with ``cache_control`` is a breakpoint: the hash of everything up to it
(the markers left out) names a cache entry. The longest prefix whose entry exists is read
(``cache_read_input_tokens``), the rest up to the last breakpoint is written
(``cache_creation_input_tokens``), and what follows it is plain ``input_tokens``. Tokens
are estimated as characters / 4, as the scripted model does. Entries never expire, and
there is no minimum cacheable length (the real API caches nothing under ~1,024 tokens).
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any, Iterator


def prefix_items(body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, block) in cache order; ``where`` tells a block's place (``tools``, ``system``, ``messages[i].role``)."""
    for tool in body.get("tools") or []:
        yield "tools", tool
    system = body.get("system") or []
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system:
        yield "system", block
    for index, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            yield f"messages[{index}].{message.get('role')}", block


def _unmarked(block: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in block.items() if key != "cache_control"}


def breakpoints(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every breakpoint of a request: its position, the prefix's hash and its tokens so far."""
    digest, tokens, found = hashlib.sha256(), 0, []
    for position, (where, block) in enumerate(prefix_items(body)):
        text = json.dumps([where, _unmarked(block)], sort_keys=True, separators=(",", ":"))
        digest.update(text.encode())
        tokens += max(1, len(text) // 4)
        if "cache_control" in block:
            found.append({"position": position, "where": where, "hash": digest.hexdigest(), "tokens": tokens})
    return found


def total_tokens(body: dict[str, Any]) -> int:
    return sum(max(1, len(json.dumps([where, _unmarked(block)], sort_keys=True, separators=(",", ":"))) // 4)
               for where, block in prefix_items(body))


class PromptCache:
    """The cache entries one fake server has written, shared by all requests to it."""

    def __init__(self) -> None:
        self.entries: set[str] = set()
        self.log: list[dict[str, Any]] = []
        """Per request: its body, its breakpoints and the usage it was given (in the order served)."""
        self._lock = threading.Lock()

    def usage(self, body: dict[str, Any]) -> dict[str, int]:
        marks, total = breakpoints(body), total_tokens(body)
        with self._lock:
            read = max((mark["tokens"] for mark in marks if mark["hash"] in self.entries), default=0)
            written = marks[-1]["tokens"] if marks else 0
            self.entries.update(mark["hash"] for mark in marks)
            usage = {"cache_read_input_tokens": read, "cache_creation_input_tokens": max(0, written - read),
                     "input_tokens": total - max(written, read)}
            self.log.append({"body": body, "breakpoints": marks, "usage": usage})
        return usage
