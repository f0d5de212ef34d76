"""WebSearch: search the web through the Messages API's server-side web search tool.

As Claude Code's: one request through the agent's model carries the server tool
``web_search_20250305`` (the domain filters passed on); the API runs the searches and
answers with ``server_tool_use`` and ``web_search_tool_result`` blocks and text. The
calling agent reads the links (title and URL) each search found and the model's summary.
A search that fails (``web_search_tool_result_error``) comes back as an error result that
says what to do; a request the API refuses likewise.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult

SERVER_TOOL_TYPE = "web_search_20250305"
MAX_USES = 8
"""Searches the API may run for one call (the server tool's ``max_uses``), as Claude Code allows."""
SEARCH_MAX_TOKENS = 8192
MAX_CONTINUATIONS = 3
"""How often a ``pause_turn`` reply (the API stopped a long server-tool turn) is sent back to go on."""
SYSTEM_PROMPT = "You are an assistant for performing a web search tool use."

ERROR_ADVICE = {
    "max_uses_exceeded": f"the search used all {MAX_USES} searches it may run; narrow the query and search again",
    "too_many_requests": "the search service is rate limited; wait a little, then search again",
    "invalid_tool_input": "the search service refused the query as invalid; rephrase it",
    "invalid_input": "the search service refused the query as invalid; rephrase it",
    "query_too_long": "the query is too long; search again with a shorter one",
    "request_too_large": "the request was too large for the search service; search again with a shorter query",
    "unavailable": "web search is unavailable right now; try again later, or WebFetch a URL you already know",
}


class WebSearchInput(ToolInput):
    query: str = Field(min_length=2, description="What to search the web for.")
    allowed_domains: list[str] = Field(default_factory=list,
                                       description="Only return results from these domains.")
    blocked_domains: list[str] = Field(default_factory=list,
                                       description="Never return results from these domains.")


class WebSearch(Tool):
    name = "WebSearch"
    touches_files = False
    asked_in_plan_mode = True
    background = True
    activity = ("Searching for", "query")
    description = (
        "Search the web for current information: news, recent releases, documentation newer than your "
        "training data. Anthropic's web search runs the query; you get the links it found (title and URL) "
        "and a short summary of what they say. Narrow the results with allowed_domains or exclude sites "
        "with blocked_domains (one or the other, not both). When your answer uses the results, name the "
        "sources you used as markdown links. Read a page in full with WebFetch."
    )
    input_model = WebSearchInput
    concurrent = True  # it changes nothing locally; permission is still asked

    async def run(self, input: WebSearchInput, ctx: ToolContext) -> ToolResult:
        if problem := _input_problem(input):
            return ToolResult.error(problem)
        model = ctx.services.model
        if model is None:
            return ToolResult.error("WebSearch needs the session's model to search, and this agent has none.")
        started = time.monotonic()
        try:
            content = await _search(model, _request(input, ctx))
        except Exception as exc:  # the API refused (no web search for this key, a proxy without it, ...)
            return ToolResult.error(f"WebSearch could not search: {exc}. The web search server tool may not "
                                    "be enabled for this API key or server; use WebFetch on a URL you know.")
        outcome = Outcome.of(content)
        return outcome.result(input.query, round(time.monotonic() - started, 3))

    def tool_use_result(self, result: ToolResult) -> Any:
        """Claude Code's structured WebSearch result: the query, each search's links, the time taken."""
        return result.data


def _input_problem(input: WebSearchInput) -> str | None:
    if input.allowed_domains and input.blocked_domains:
        return ("WebSearch takes allowed_domains or blocked_domains, not both in one call: "
                "search with one of them.")
    if not input.query.strip():
        return "WebSearch needs a query."
    return None


def server_tool(input: WebSearchInput) -> dict[str, Any]:
    """The Messages API's web search tool, as the request's ``tools`` carries it."""
    tool: dict[str, Any] = {"type": SERVER_TOOL_TYPE, "name": "web_search", "max_uses": MAX_USES}
    if input.allowed_domains:
        tool["allowed_domains"] = list(input.allowed_domains)
    if input.blocked_domains:
        tool["blocked_domains"] = list(input.blocked_domains)
    return tool


def _request(input: WebSearchInput, ctx: ToolContext) -> Any:
    """One request on the agent's own model (Claude Code searches with the main loop's model)."""
    from covey.model.aliases import resolve_model
    from covey.model.base import ModelRequest

    spec = ctx.services.spec
    model_id = getattr(spec, "model_id", None) or resolve_model("sonnet", env=ctx.env)
    return ModelRequest(
        model=model_id, max_tokens=SEARCH_MAX_TOKENS, agent_id=ctx.agent_id,
        system=[{"type": "text", "text": SYSTEM_PROMPT}], tools=[server_tool(input)],
        messages=[{"role": "user", "content": f"Perform a web search for the query: {input.query}"}],
    )


async def _search(model: Any, request: Any) -> list[dict[str, Any]]:
    """Every content block of the reply; a ``pause_turn`` is sent back (as the API asks) to go on."""
    blocks: list[dict[str, Any]] = []
    for _ in range(MAX_CONTINUATIONS + 1):
        message = await model.create(request)
        content = [block.to_dict() for block in message.content]
        blocks += content
        if message.stop_reason != "pause_turn":
            break
        messages = [*request.messages, {"role": "assistant", "content": content}]
        request = request.model_copy(update={"messages": messages})
    return blocks


@dataclass
class Outcome:
    """What the searches found, in reply order: each search's links or error, and the model's text."""

    queries: dict[str, str] = field(default_factory=dict)
    """The query of each ``server_tool_use`` by its id."""
    searches: list[dict[str, Any]] = field(default_factory=list)
    """``{tool_use_id, content: [{title, url}]}`` per search that answered; ``{tool_use_id, error}`` per failed one."""
    texts: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, blocks: list[dict[str, Any]]) -> "Outcome":
        """Text blocks in a row make one text (the API splits text where a citation starts or ends)."""
        outcome, text = cls(), ""
        for block in blocks:
            kind = block.get("type")
            if kind == "text":
                text += str(block.get("text", ""))
                continue
            outcome._add_text(text)
            text = ""
            if kind == "server_tool_use":
                outcome.queries[block.get("id", "")] = str((block.get("input") or {}).get("query", ""))
            elif kind == "web_search_tool_result":
                outcome.searches.append(_search_of(block))
        outcome._add_text(text)
        return outcome

    def _add_text(self, text: str) -> None:
        if text.strip():
            self.texts.append(text.strip())

    @property
    def errors(self) -> list[str]:
        return [search["error"] for search in self.searches if "error" in search]

    @property
    def links(self) -> int:
        return sum(len(search.get("content", [])) for search in self.searches)

    def result(self, query: str, duration_s: float) -> ToolResult:
        found = [s if "error" not in s else f"Web search error: {s['error']}" for s in self.searches]
        data = {"query": query, "results": [*found, *self.texts], "durationSeconds": duration_s}
        if self.errors and not self.links:
            return ToolResult(content=self._failure(query), is_error=True, data=data)
        return ToolResult(content=self._render(query), data=data)

    def _failure(self, query: str) -> str:
        codes = list(dict.fromkeys(self.errors))
        advice = "; ".join(f"{code}: {ERROR_ADVICE.get(code, 'the search failed')}" for code in codes)
        return f"Web search for {json.dumps(query)} failed ({advice})."

    def _render(self, query: str) -> str:
        lines = [f"Web search results for {json.dumps(query)}:", ""]
        for search in self.searches:
            searched = self.queries.get(search["tool_use_id"]) or query
            if "error" in search:
                lines.append(f"Search {json.dumps(searched)} failed: {search['error']} "
                             f"({ERROR_ADVICE.get(search['error'], 'the search failed')}).")
                continue
            lines.append(f"Links for {json.dumps(searched)}:")
            lines += [f"- {link['title'] or link['url']}: {link['url']}" for link in search["content"]]
            lines += [] if search["content"] else ["(no links found)"]
        if not self.searches:
            lines.append("No search was run: the model answered without searching.")
        if self.texts:
            lines += ["", "Summary:", "\n\n".join(self.texts)]
        lines += ["", "Cite the sources you use from these results as markdown links ([title](url))."]
        return "\n".join(lines)


def _search_of(block: dict[str, Any]) -> dict[str, Any]:
    """One ``web_search_tool_result``: its links (title and URL), or its error code."""
    tool_use_id = block.get("tool_use_id", "")
    content = block.get("content")
    if isinstance(content, dict):  # web_search_tool_result_error
        return {"tool_use_id": tool_use_id, "error": str(content.get("error_code", "unavailable"))}
    links = [{"title": str(item.get("title") or ""), "url": str(item.get("url") or "")}
             for item in content or [] if isinstance(item, dict) and item.get("url")]
    return {"tool_use_id": tool_use_id, "content": links}
