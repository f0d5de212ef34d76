"""The fake Messages API's server-side web search, as the real API answers a request whose
``tools`` carry ``{"type": "web_search_20250305", "name": "web_search", ...}``.

The reply is what the real one holds: a ``server_tool_use`` block (the query as its input),
a ``web_search_tool_result`` block (results with url, title, page_age and encrypted_content,
or a ``web_search_tool_result_error`` with its ``error_code``), then text citing the results
(``web_search_result_location`` citations); ``usage.server_tool_use.web_search_requests``
counts the search. ``allowed_domains`` / ``blocked_domains`` filter the results, and a tool
with both is a 400, as the real API answers.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Iterator
from urllib.parse import urlsplit

WEB: list[dict[str, Any]] = [
    {"url": "https://docs.ray.io/en/latest/ray-core/actors.html", "title": "Actors - Ray", "page_age": "2 days ago"},
    {"url": "https://www.anyscale.com/blog/ray-actors", "title": "Ray actors explained", "page_age": "May 1, 2025"},
    {"url": "https://en.wikipedia.org/wiki/Actor_model", "title": "Actor model - Wikipedia", "page_age": None},
]
"""The pages the fake search finds (every query finds them all, then the domain filters apply)."""


def search_tool(body: dict[str, Any]) -> dict[str, Any] | None:
    """The request's web search server tool, if it carries one."""
    return next((tool for tool in body.get("tools") or [] if str(tool.get("type", "")).startswith("web_search_")), None)


def search_problem(tool: dict[str, Any]) -> str | None:
    """What the real API answers 400 for in a web search tool definition."""
    if tool.get("allowed_domains") and tool.get("blocked_domains"):
        return "tools.0: allowed_domains and blocked_domains cannot be used together"
    if tool.get("name") != "web_search":
        return "tools.0.name: the web search tool must be named 'web_search'"
    return None


def web_search_answer(body: dict[str, Any], pages: list[dict[str, Any]] | None = None, *,
                      error: str | None = None, text: str | None = None, stop_reason: str = "end_turn") -> dict[str, Any]:
    """The reply to a search request: one search for the user's query over ``pages`` (default
    ``WEB``), or a search that failed with ``error`` (an ``error_code``)."""
    tool = search_tool(body) or {}
    query = _query(body)
    use_id = f"srvtoolu_{uuid.uuid4().hex[:24]}"
    found = [page for page in (WEB if pages is None else pages) if _kept(page["url"], tool)]
    results: Any = ({"type": "web_search_tool_result_error", "error_code": error} if error else
                    [{"type": "web_search_result", "url": p["url"], "title": p["title"], "page_age": p.get("page_age"),
                      "encrypted_content": f"enc_{uuid.uuid4().hex}"} for p in found])
    content: list[dict[str, Any]] = [
        {"type": "text", "text": "I'll search for that."},
        {"type": "server_tool_use", "id": use_id, "name": "web_search", "input": {"query": query}},
        {"type": "web_search_tool_result", "tool_use_id": use_id, "content": results},
    ]
    if error:
        content.append({"type": "text", "text": text or "The search failed."})
    else:
        content += _cited_text(found, text)
    usage = {"input_tokens": 2000, "output_tokens": 120, "server_tool_use": {"web_search_requests": 1}}
    return {"content": content, "usage": usage, "stop_reason": stop_reason}


def _query(body: dict[str, Any]) -> str:
    """The query the model would search: what follows ``query:`` in the last user text, else all of it."""
    last = next((m for m in reversed(body.get("messages", [])) if m.get("role") == "user"), {})
    content = last.get("content", "")
    text = content if isinstance(content, str) else " ".join(b.get("text", "") for b in content if b.get("type") == "text")
    return text.split("query:", 1)[1].strip() if "query:" in text else text.strip()


def _kept(url: str, tool: dict[str, Any]) -> bool:
    host = urlsplit(url).hostname or ""

    def under(domain: str) -> bool:
        return host == domain or host.endswith("." + domain)

    if tool.get("allowed_domains"):
        return any(under(domain) for domain in tool["allowed_domains"])
    return not any(under(domain) for domain in tool.get("blocked_domains") or [])


def _cited_text(found: list[dict[str, Any]], text: str | None) -> list[dict[str, Any]]:
    if not found:
        return [{"type": "text", "text": text or "The search found nothing."}]
    first = found[0]
    citation = {"type": "web_search_result_location", "url": first["url"], "title": first["title"],
                "encrypted_index": f"idx_{uuid.uuid4().hex[:16]}", "cited_text": "Actors are stateful workers."}
    return [{"type": "text", "text": "Here is what I found. "},
            {"type": "text", "text": text or "Ray actors are stateful workers.", "citations": [citation]}]


def server_block_events(block: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """How the real API streams a server tool's block (start, deltas), or None for other blocks:
    ``server_tool_use`` input as ``input_json_delta``s, a ``web_search_tool_result`` whole in its
    start, a text block's citations as ``citations_delta``s before its text."""
    if block["type"] == "server_tool_use":
        raw = json.dumps(block["input"])
        return {**block, "input": {}}, [{"type": "input_json_delta", "partial_json": part} for part in (raw[:5], raw[5:])]
    if block["type"] == "web_search_tool_result":
        return block, []
    if block["type"] == "text" and block.get("citations"):
        start = {key: value for key, value in block.items() if key != "citations"}
        deltas = [{"type": "citations_delta", "citation": citation} for citation in block["citations"]]
        return {**start, "text": ""}, [*deltas, {"type": "text_delta", "text": block["text"]}]
    return None


def stream_events(index: int, block: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]] | None:
    """The SSE events of a server tool's block at ``index``, or None for a block this module does not stream."""
    shaped = server_block_events(block)
    if shaped is None:
        return None
    start, deltas = shaped

    def events() -> Iterator[tuple[str, dict[str, Any]]]:
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
        for delta in deltas:
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}

    return events()
