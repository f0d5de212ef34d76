"""A fake Anthropic Messages API for tests: stdlib only, on 127.0.0.1, port 0.

Each ``POST /v1/messages`` takes the next queued reply (or the last one, once the
queue is down to one, so a "persistent" error needs a single entry). A reply is:

- a dict of message-body pieces: ``content`` (blocks), ``text`` (shorthand for one
  text block), ``stop_reason``, ``usage``, ``model``; missing pieces get defaults;
- ``("error", status_code, body)``: an HTTP error (``body`` None → a standard error body);
- ``("stream_error", error_type)``: HTTP 200, ``message_start``, then an SSE ``error``
  event, as the real API does when it overloads mid-stream;
- ``("drop",)``: HTTP 200, ``message_start``, then the connection closes mid-body;
- ``("truncate",)``: HTTP 200, ``message_start``, then the body ends cleanly (no ``message_stop``);
- a callable ``(request_body) -> reply`` to answer based on the request.

A request whose ``tools`` carry the web search server tool (``web_search_20250305``) is
answered as the real API answers it (tests/fake_web_search.py): from ``search_replies`` when
one is queued (the same kinds of reply; ``web_search_answer`` builds one), else one search over
the fake ``WEB``; the ``replies`` queue is left to the agents' own turns.

With ``prompt_cache=True`` every reply's usage comes from a prompt-cache model
(covey/model/prompt_cache.py): cache reads and writes by the request's breakpoints.

Error replies carry ``retry-after-ms`` (``retry_after_ms``, default 1) so the SDK's
own retry backoff stays short in tests.
"""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

import pytest

from covey.model.prompt_cache import PromptCache
from tests.fake_web_search import search_problem, search_tool, stream_events, web_search_answer

Reply = dict[str, Any] | tuple | Callable[[dict[str, Any]], Any]

_DEFAULT_USAGE = {"input_tokens": 10, "output_tokens": 5}
_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error",
                500: "api_error", 529: "overloaded_error"}


def _message(reply: dict[str, Any], model: str) -> dict[str, Any]:
    content = reply.get("content") or [{"type": "text", "text": reply.get("text", "ok")}]
    has_tool = any(block["type"] == "tool_use" for block in content)
    return {
        "id": f"msg_{uuid.uuid4().hex[:20]}", "type": "message", "role": "assistant",
        "model": reply.get("model", model), "content": content,
        "stop_reason": reply.get("stop_reason", "tool_use" if has_tool else "end_turn"),
        "stop_sequence": None, "usage": {**_DEFAULT_USAGE, **reply.get("usage", {})},
    }


def _error_body(status: int, error_type: str | None = None) -> dict[str, Any]:
    error_type = error_type or _ERROR_TYPES.get(status, "api_error")
    return {"type": "error", "error": {"type": error_type, "message": f"fake {error_type}"}}


def thinking_problem(body: dict[str, Any]) -> str | None:
    """What the real API answers 400 for in a request with extended thinking: a budget under
    1,024 tokens or not below ``max_tokens``; with thinking ``enabled``, a tool-use turn sent back
    without its thinking."""
    thinking = body.get("thinking") or {}
    if thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens", 0)
        if budget < 1024 or budget >= body.get("max_tokens", 0):
            return f"thinking.budget_tokens: {budget} must be >= 1024 and less than max_tokens"
    if thinking.get("type") == "enabled":  # adaptive thinking may skip a turn's thinking
        assistants = [m for m in body.get("messages", []) if m.get("role") == "assistant"]
        last = assistants[-1]["content"] if assistants else []
        if isinstance(last, list) and any(b.get("type") == "tool_use" for b in last) \
                and last[0].get("type") not in ("thinking", "redacted_thinking"):
            return "messages: a final assistant message with tool_use must start with a thinking block"
    return None


def _block_events(index: int, block: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    if (server := stream_events(index, block)) is not None:  # server tools' blocks, cited text
        yield from server
        return
    if block["type"] == "thinking":  # thinking text, then its signature, as the real API streams them
        start = {**block, "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": block["thinking"]},
                  {"type": "signature_delta", "signature": block["signature"]}]
    elif block["type"] == "tool_use":
        start = {**block, "input": {}}
        # Split the JSON in two so the SDK has to assemble partial_json deltas.
        raw = json.dumps(block["input"])
        deltas = [{"type": "input_json_delta", "partial_json": part} for part in (raw[:3], raw[3:])]
    else:
        start = {**block, "text": ""}
        text = block["text"]
        deltas = [{"type": "text_delta", "text": part} for part in (text[:1], text[1:]) if part]
    yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
    for delta in deltas:
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": index}


def _sse_events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        yield from _block_events(index, block)
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    yield "message_delta", {"type": "message_delta", "delta": delta, "usage": usage}
    yield "message_stop", {"type": "message_stop"}


class LoopbackServer(ThreadingHTTPServer):
    """A thread per connection, and room for a burst of them: with the default backlog of 5, the
    sixth of a hundred children connecting at once waits a second for TCP to retry."""

    request_queue_size = 512


class FakeMessagesAPI:
    """The fake server; use as a context manager (or through the ``fake_api`` fixture)."""

    def __init__(self, replies: list[Reply] | None = None, *, retry_after_ms: int = 1,
                 request_ids: bool = False, prompt_cache: bool = False) -> None:
        self.replies: list[Reply] = list(replies or [])
        self.cache = PromptCache() if prompt_cache else None
        """The prompt-cache model whose figures replace each reply's input token counts."""
        self.requests: list[dict[str, Any]] = []
        self.credentials: list[str] = []
        """Each request's credential as sent (``x-api-key``, else ``authorization``)."""
        self.betas: list[str] = []
        """Each request's ``anthropic-beta`` header ("" for none)."""
        self.search_replies: list[Reply] = []
        """Replies to web search requests, taken in order; none left: ``web_search_answer``."""
        self.retry_after_ms = retry_after_ms
        self.request_ids = request_ids
        """Send a ``request-id`` header with each reply, as the real API does (the fake API
        Claude Code's ``subagent_sync`` and ``max_turns`` runs were recorded against sent none)."""
        self._lock = threading.Lock()
        self._server = LoopbackServer(("127.0.0.1", 0), _handler_for(self))
        # A short poll interval so ``shutdown`` (at each test's end) returns quickly.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> "FakeMessagesAPI":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def next_reply(self, body: dict[str, Any]) -> Reply:
        """Record the request and pick its reply (the last reply repeats)."""
        with self._lock:
            self.requests.append(body)
            if search_tool(body) is not None:
                reply: Reply = self.search_replies.pop(0) if self.search_replies else web_search_answer
            elif not self.replies:
                reply = {"text": "ok"}
            else:
                reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        reply = reply(body) if callable(reply) else reply
        if self.cache is not None and isinstance(reply, dict):
            reply = {**reply, "usage": {**reply.get("usage", {}), **self.cache.usage(body)}}
        return reply


def _handler_for(api: FakeMessagesAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # as real servers do: small SSE writes go out at once

        def log_message(self, *args: object) -> None:  # keep pytest output clean
            return

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            api.credentials.append(self.headers.get("x-api-key") or self.headers.get("authorization") or "")
            api.betas.append(self.headers.get("anthropic-beta") or "")
            searching = search_tool(body)
            if problem := thinking_problem(body) or (searching and search_problem(searching)):  # as the real API checks them
                api.requests.append(body)
                self._send_error(400, {"type": "error", "error": {"type": "invalid_request_error", "message": problem}})
                return
            reply = api.next_reply(body)
            if isinstance(reply, tuple) and reply[0] == "error":
                self._send_error(reply[1], reply[2] if len(reply) > 2 else None)
            elif isinstance(reply, tuple) and reply[0] == "stream_error":
                self._send_stream_error(body, reply[1])
            elif isinstance(reply, tuple) and reply[0] in ("drop", "truncate"):
                start = next(_sse_events(_message({}, body["model"])))
                self._send_sse(iter([start]), finish=reply[0] == "truncate")
            elif body.get("stream"):
                self._send_sse(_sse_events(_message(reply, body["model"])))
            else:
                self._send_json(200, _message(reply, body["model"]))

        def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _send_error(self, status: int, body: dict[str, Any] | None) -> None:
            headers = {"retry-after-ms": str(api.retry_after_ms)}
            self._send_json(status, body or _error_body(status), headers)

        def _send_stream_error(self, body: dict[str, Any], error_type: str) -> None:
            start = next(_sse_events(_message({}, body["model"])))
            self._send_sse(iter([start, ("error", _error_body(500, error_type))]))

        def _send_sse(self, events: Iterator[tuple[str, dict[str, Any]]], finish: bool = True) -> None:
            # Chunked, like the real API, so an unfinished body is a protocol error for the client.
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            if api.request_ids:
                self.send_header("request-id", f"req_{uuid.uuid4().hex[:24]}")
            self.end_headers()
            for name, data in events:
                chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            if finish:
                self.wfile.write(b"0\r\n\r\n")
            else:  # a body cut short: the connection cannot carry another request
                self.close_connection = True

    return Handler


@pytest.fixture
def fake_api() -> Iterator[FakeMessagesAPI]:
    """A running FakeMessagesAPI with no replies queued; tests append to ``.replies``."""
    with FakeMessagesAPI() as api:
        yield api


# --- Rules as in tests/data/claude_code/*/rules.json ----------------------------------


def rules_replier(rules: list[dict[str, Any]], cwd: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A reply callable that answers by the first rule whose ``when`` holds for the request.

    The format of the recorded Claude Code fixtures: ``when`` keys ``has_tools``,
    ``tools_include`` (a tool name), ``contains`` / ``not_contains`` (the whole request's
    text: a string or a list that must all occur), ``user_text_contains`` /
    ``user_text_not_contains`` (text the user role wrote, tool results excluded),
    ``has_tool_result``, ``tool_result_contains``; ``reply``: ``text`` and/or ``tool_use``
    (blocks without ids). ``<cwd>`` in a reply is the run's working directory.
    """

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        rule = next((rule for rule in rules if _holds(rule.get("when", {}), body)), None)
        return _rule_reply(rule["reply"] if rule else {"text": "ok"}, cwd)

    return reply


def _holds(when: dict[str, Any], body: dict[str, Any]) -> bool:
    texts = _request_texts(body)
    checks = {
        "has_tools": lambda want: bool(body.get("tools")) == want,
        "tools_include": lambda name: any(tool.get("name") == name for tool in body.get("tools") or []),
        "contains": lambda want: all(part in texts["all"] for part in _listed(want)),
        "not_contains": lambda want: not any(part in texts["all"] for part in _listed(want)),
        "user_text_contains": lambda want: all(part in texts["user"] for part in _listed(want)),
        "user_text_not_contains": lambda want: not any(part in texts["user"] for part in _listed(want)),
        "has_tool_result": lambda want: bool(texts["results"]) == want,
        "tool_result_contains": lambda want: all(part in "\n".join(texts["results"]) for part in _listed(want)),
    }
    return all(checks[key](value) for key, value in when.items())


def _listed(value: Any) -> list[str]:
    return list(value) if isinstance(value, list) else [value]


def _request_texts(body: dict[str, Any]) -> dict[str, Any]:
    user, results = [], []
    for message in body.get("messages", []):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            if block.get("type") == "tool_result":
                results.append(json.dumps(block.get("content")) if not isinstance(block.get("content"), str)
                               else block["content"])
            elif block.get("type") == "text" and message.get("role") == "user":
                user.append(block["text"])
    return {"all": json.dumps(body.get("messages", [])) + json.dumps(body.get("system", "")),
            "user": "\n".join(user), "results": results}


def _rule_reply(reply: dict[str, Any], cwd: str) -> dict[str, Any]:
    reply = json.loads(json.dumps(reply).replace("<cwd>", cwd))
    content = [{"type": "text", "text": reply["text"]}] if reply.get("text") else []
    content += [{"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:24]}", "name": call["name"],
                 "input": call.get("input", {})} for call in reply.get("tool_use", [])]
    # The usage the fixtures' fake API sent (the real API's keys).
    usage = {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 5,
             "service_tier": "standard"}
    return {"content": content or [{"type": "text", "text": ""}], "usage": usage}
