"""WebFetch: fetch a URL, turn its HTML into markdown, and answer a prompt about it with a small model.

As Claude Code's: ``http`` is upgraded to ``https`` (loopback hosts excepted: local servers
rarely speak TLS), a redirect to another host is reported instead of followed (the model
calls again with the new URL), pages are cached for 15 minutes, and the model reads the
small model's answer, not the page. HTML becomes markdown with ``markdownify``.
"""

from __future__ import annotations

import ipaddress
import time
from collections import OrderedDict
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field

from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult

MAX_URL_CHARS = 2000
MAX_CONTENT_BYTES = 10 * 1024 * 1024
MAX_MARKDOWN_CHARS = 100_000
MAX_REDIRECTS = 10
FETCH_TIMEOUT_S = 60.0
CACHE_TTL_S = 15 * 60
CACHE_ENTRIES = 64
ANSWER_MAX_TOKENS = 4096
_REDIRECTS = {301, 302, 303, 307, 308}


class WebFetchInput(ToolInput):
    url: str = Field(description="The URL to fetch (http is upgraded to https).")
    prompt: str = Field(description="What to find out from the page.")


class WebFetch(Tool):
    name = "WebFetch"
    primary_field = "url"
    touches_files = False
    asked_in_plan_mode = True
    background = True
    activity = ("Fetching", "url")
    description = (
        "Fetch a web page and answer a prompt about it: the page is turned into markdown and a small, "
        "fast model reads it with your prompt; you get that model's answer, not the raw page. http URLs "
        "are upgraded to https. When a URL redirects to another host you are told the new URL: call "
        "WebFetch again with it. Results are cached for 15 minutes. For the raw page, use curl in Bash."
    )
    input_model = WebFetchInput
    concurrent = True  # it changes nothing locally; permission is still asked (by domain)

    def permission_subject(self, input: WebFetchInput, ctx: ToolContext | None = None) -> str | None:
        host = urlsplit(input.url).hostname
        return f"domain:{host}" if host else None

    async def run(self, input: WebFetchInput, ctx: ToolContext) -> ToolResult:
        url = normalized_url(input.url)
        if isinstance(url, ToolResult):
            return url
        page = _CACHE.get(url)
        if page is None:
            fetched = await fetch(url)
            if isinstance(fetched, ToolResult):
                return fetched
            page = fetched
            if page.get("redirect") is None:
                _CACHE.put(url, page)
        if page.get("redirect"):
            return ToolResult(content=_redirect_text(url, page, input.prompt), data=page)
        answer = await _ask_small_model(ctx, page["markdown"], input.prompt)
        if isinstance(answer, ToolResult):
            return answer
        data = {"bytes": page["bytes"], "code": page["code"], "codeText": page["codeText"], "result": answer, "url": url}
        return ToolResult(content=answer, data=data)


def normalized_url(raw: str) -> str | ToolResult:
    if len(raw) > MAX_URL_CHARS:
        return ToolResult.error(f"The URL is {len(raw)} characters long, over the {MAX_URL_CHARS} allowed.")
    parts = urlsplit(raw.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return ToolResult.error(f"Invalid URL {raw!r}: WebFetch takes an absolute http or https URL.")
    if parts.username or parts.password:
        return ToolResult.error(f"Invalid URL {raw!r}: URLs with credentials are not fetched.")
    if parts.scheme == "http" and not _loopback(parts.hostname):
        parts = parts._replace(scheme="https")
    return urlunsplit(parts)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def fetch(url: str) -> dict[str, Any] | ToolResult:
    """The page as markdown, following redirects that stay on the same host (``www.`` aside)."""
    import httpx2

    async with httpx2.AsyncClient(timeout=FETCH_TIMEOUT_S, follow_redirects=False,
                                  headers={"User-Agent": "covey-WebFetch/1.0", "Accept": "text/markdown, text/html, */*"}) as client:
        for _ in range(MAX_REDIRECTS + 1):
            try:
                async with client.stream("GET", url) as response:
                    if response.status_code in _REDIRECTS and "location" in response.headers:
                        target = str(response.url.join(response.headers["location"]))
                        if not _same_host(url, target):
                            return {"redirect": target, "code": response.status_code, "codeText": response.reason_phrase}
                        url = target
                        continue
                    return await _page(response, url)
            except httpx2.HTTPError as exc:
                return ToolResult.error(f"Fetching {url} failed: {type(exc).__name__}: {exc}")
    return ToolResult.error(f"Fetching {url} failed: more than {MAX_REDIRECTS} redirects.")


def _same_host(a: str, b: str) -> bool:
    def bare(url: str) -> str:
        host = urlsplit(url).hostname or ""
        return host[4:] if host.startswith("www.") else host

    return bare(a) == bare(b) and urlsplit(a).port == urlsplit(b).port


async def _page(response: Any, url: str) -> dict[str, Any] | ToolResult:
    if response.status_code >= 400:
        return ToolResult.error(f"Fetching {url} failed: HTTP {response.status_code} {response.reason_phrase}")
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > MAX_CONTENT_BYTES:
            return ToolResult.error(f"{url} is over {MAX_CONTENT_BYTES // (1024 * 1024)} MB; WebFetch stops there.")
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if not (kind.startswith("text/") or kind in ("", "application/json", "application/xml", "application/xhtml+xml")):
        return ToolResult.error(f"{url} is {kind}, not text or HTML; download it with curl in Bash instead.")
    text = bytes(body).decode(response.encoding or "utf-8", errors="replace")
    if "html" in kind:
        text = html_to_markdown(text)
    if len(text) > MAX_MARKDOWN_CHARS:
        text = text[:MAX_MARKDOWN_CHARS] + "\n\n[Content truncated due to length...]"
    return {"markdown": text, "bytes": len(body), "code": response.status_code, "codeText": response.reason_phrase}


def html_to_markdown(html: str) -> str:
    """The page's readable part as markdown: scripts, styles and the like go whole, not only their tags."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    for hidden in soup(["script", "style", "noscript", "template", "head"]):
        hidden.decompose()
    return MarkdownConverter(heading_style="ATX").convert_soup(soup).strip()


def _redirect_text(url: str, page: dict[str, Any], prompt: str) -> str:
    return (
        "REDIRECT DETECTED: The URL redirects to a different host.\n\n"
        f"Original URL: {url}\nRedirect URL: {page['redirect']}\nStatus: {page['code']} {page['codeText']}\n\n"
        "To complete your request, fetch the redirected URL: use WebFetch again with these parameters:\n"
        f'- url: "{page["redirect"]}"\n- prompt: "{prompt}"'
    )


async def _ask_small_model(ctx: ToolContext, markdown: str, prompt: str) -> str | ToolResult:
    """The page and the prompt to the small fast model (haiku), as Claude Code does."""
    from covey.errors import ModelAPIError
    from covey.model.aliases import resolve_model
    from covey.model.base import ModelRequest
    from covey.model.messages import TextBlock

    model = ctx.services.model
    if model is None:
        return ToolResult.error("WebFetch needs the session's model to read the page, and this agent has none.")
    request = ModelRequest(
        model=resolve_model("haiku", env=ctx.env), max_tokens=ANSWER_MAX_TOKENS, agent_id=ctx.agent_id,
        messages=[{"role": "user", "content": _SMALL_MODEL_PROMPT.format(content=markdown, prompt=prompt)}],
    )
    try:
        message = await model.create(request)
    except ModelAPIError as exc:
        return ToolResult.error(f"WebFetch fetched the page but the model could not read it: {exc}")
    answer = "".join(block.text for block in message.content if isinstance(block, TextBlock)).strip()
    return answer or "(the model gave no answer about this page)"


_SMALL_MODEL_PROMPT = """Web page content:
---
{content}
---

{prompt}

Answer concisely from the content above only. Quote at most a short sentence word for word from \
the page; put everything else in your own words. If the content does not answer the question, say so."""


class _PageCache:
    """Pages by URL for 15 minutes, the oldest dropped past ``CACHE_ENTRIES`` (one per process)."""

    def __init__(self) -> None:
        self._pages: OrderedDict[str, tuple[float, dict[str, Any]]] = OrderedDict()

    def get(self, url: str) -> dict[str, Any] | None:
        found = self._pages.get(url)
        if found is None or time.monotonic() - found[0] > CACHE_TTL_S:
            self._pages.pop(url, None)
            return None
        return found[1]

    def put(self, url: str, page: dict[str, Any]) -> None:
        self._pages[url] = (time.monotonic(), page)
        while len(self._pages) > CACHE_ENTRIES:
            self._pages.popitem(last=False)

    def clear(self) -> None:
        self._pages.clear()


_CACHE = _PageCache()
