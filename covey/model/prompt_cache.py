"""A prompt-cache model: what the real API's usage would say about caching, offline.

The tests' fake Messages API and the scripted model (``prompt_cache`` in a rule file) use it.

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
from pathlib import Path
from typing import Any, Iterator

from covey.common.private_dirs import make_dirs


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


def _usage(marks: list[dict[str, Any]], total: int, cached: set[str]) -> dict[str, int]:
    read = max((mark["tokens"] for mark in marks if mark["hash"] in cached), default=0)
    written = marks[-1]["tokens"] if marks else 0
    return {"cache_read_input_tokens": read, "cache_creation_input_tokens": max(0, written - read),
            "input_tokens": total - max(written, read)}


class PromptCache:
    """Cache entries in memory, shared by every request to one server (the tests' fake API)."""

    def __init__(self) -> None:
        self.entries: set[str] = set()
        self.log: list[dict[str, Any]] = []
        """Per request: its body, its breakpoints and the usage it was given (in the order served)."""
        self._lock = threading.Lock()

    def usage(self, body: dict[str, Any]) -> dict[str, int]:
        marks, total = breakpoints(body), total_tokens(body)
        with self._lock:
            usage = _usage(marks, total, self.entries & {mark["hash"] for mark in marks})
            self.entries.update(mark["hash"] for mark in marks)
            self.log.append({"body": body, "breakpoints": marks, "usage": usage})
        return usage


class DirectoryCache:
    """Cache entries as empty files in a directory: every agent actor on the machine shares them
    (the scripted model's copies, one per actor, keep no state in common). Two requests that
    race may both write an entry, as two concurrent requests may with the real API."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def usage(self, body: dict[str, Any]) -> dict[str, int]:
        marks, total = breakpoints(body), total_tokens(body)
        make_dirs(self.path)  # 0700 when covey makes it: the names are hashes of prompts
        cached = {mark["hash"] for mark in marks if (self.path / mark["hash"]).exists()}
        for mark in marks:
            (self.path / mark["hash"]).touch(mode=0o600)
        return _usage(marks, total, cached)
