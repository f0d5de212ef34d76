"""WebFetch against a local HTTP server on 127.0.0.1, the small model scripted: markdown, the
answer, redirects (same host followed, other host reported), the cache, errors, permission rules."""

import asyncio
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from covey.model.scripted import ScriptedModel
from covey.permissions.decisions import Allow, Ask, Deny
from covey.permissions.policy import PermissionPolicy
from covey.permissions.rules import parse_rule
from covey.tools.base import ToolContext, ToolServices
from covey.tools.web_fetch import _CACHE, WebFetch, WebFetchInput, normalized_url

PAGES = {
    "/page": (200, "text/html", "<html><head><style>p{}</style></head><body><h1>Ray</h1><p>Ray has <b>actors</b>.</p></body></html>"),
    "/moved": (301, "text/html", "/page"),
    "/away": (302, "text/html", "http://other.example/x"),
    "/data.json": (200, "application/json", '{"answer": 42}'),
    "/blob": (200, "application/octet-stream", "\0\1"),
    "/gone": (404, "text/plain", "no"),
}


class Handler(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self):  # noqa: N802 -- http.server's name
        Handler.hits.append(self.path)
        status, kind, body = PAGES.get(self.path, (404, "text/plain", "missing"))
        self.send_response(status)
        if status in (301, 302):
            self.send_header("Location", body)
        self.send_header("Content-Type", kind)
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture
def model(tmp_path):
    _CACHE.clear()
    Handler.hits.clear()
    return ScriptedModel.from_turns([{"text": "Ray has actors."}] * 3)


def context(tmp_path, model):
    return ToolContext(agent_id="agent-main", cwd=tmp_path, services=ToolServices(model=model))


async def fetch(ctx, url, prompt="What does Ray have?"):
    return await WebFetch().run(WebFetchInput(url=url, prompt=prompt), ctx)


async def test_the_page_goes_as_markdown_to_haiku_and_its_answer_comes_back(tmp_path, server, model):
    result = await fetch(context(tmp_path, model), f"{server}/page")
    assert not result.is_error and result.content == "Ray has actors."
    (request,) = model.requests
    assert request.model.startswith("claude-haiku")
    text = request.messages[0]["content"]
    assert "# Ray" in text and "Ray has **actors**." in text and "p{}" not in text
    assert "What does Ray have?" in text
    assert result.data["code"] == 200 and result.data["url"] == f"{server}/page"


async def test_same_host_redirects_are_followed_and_pages_cached(tmp_path, server, model):
    ctx = context(tmp_path, model)
    assert (await fetch(ctx, f"{server}/moved")).content == "Ray has actors."
    assert Handler.hits == ["/moved", "/page"]
    await fetch(ctx, f"{server}/moved")
    assert Handler.hits == ["/moved", "/page"]  # the second call was served from the cache
    assert len(model.requests) == 2  # but the prompt is answered each time


async def test_a_redirect_to_another_host_is_reported_not_followed(tmp_path, server, model):
    result = await fetch(context(tmp_path, model), f"{server}/away", prompt="Summarise")
    assert not result.is_error and result.content.startswith("REDIRECT DETECTED")
    assert "Redirect URL: http://other.example/x" in result.content and 'prompt: "Summarise"' in result.content
    assert Handler.hits == ["/away"] and model.requests == []


async def test_json_is_read_as_text(tmp_path, server, model):
    await fetch(context(tmp_path, model), f"{server}/data.json")
    assert '{"answer": 42}' in model.requests[0].messages[0]["content"]


async def test_errors_are_results_the_model_reads(tmp_path, server, model):
    ctx = context(tmp_path, model)
    assert "HTTP 404" in (await fetch(ctx, f"{server}/gone")).content
    assert "not text or HTML" in (await fetch(ctx, f"{server}/blob")).content
    assert "absolute http or https URL" in (await fetch(ctx, "ftp://example.com/x")).content
    assert "absolute http or https URL" in (await fetch(ctx, "not a url")).content
    assert "over the 2000" in (await fetch(ctx, "https://example.com/" + "a" * 2000)).content
    nobody = await fetch(ToolContext(agent_id="a", cwd=tmp_path), f"{server}/page")
    assert nobody.is_error and "model" in nobody.content
    assert model.requests == []


async def test_a_page_over_the_size_limit_is_refused(tmp_path, server, model, monkeypatch):
    monkeypatch.setattr("covey.tools.web_fetch.MAX_CONTENT_BYTES", 10)
    result = await fetch(context(tmp_path, model), f"{server}/page")
    assert result.is_error and "WebFetch stops there" in result.content


def test_http_is_upgraded_except_on_loopback():
    assert normalized_url("http://example.com/a?b=1") == "https://example.com/a?b=1"
    assert normalized_url("http://127.0.0.1:8000/x") == "http://127.0.0.1:8000/x"
    assert normalized_url("http://localhost/x") == "http://localhost/x"
    assert normalized_url("https://user:pw@example.com/").is_error


def test_permission_rules_name_the_domain(tmp_path):
    tool = WebFetch()
    subject = tool.permission_subject(WebFetchInput(url="https://docs.example.com/a", prompt="p"))
    assert subject == "domain:docs.example.com"
    policy = PermissionPolicy(project_root=tmp_path, allow=[parse_rule("WebFetch(domain:docs.example.com)")],
                              deny=[parse_rule("WebFetch(domain:evil.example)")])
    assert isinstance(policy.decide("WebFetch", False, subject), Allow)
    assert isinstance(policy.decide("WebFetch", False, "domain:evil.example"), Deny)
    asked = policy.decide("WebFetch", False, "domain:other.example")
    assert isinstance(asked, Ask)


def test_in_plan_mode_a_fetch_is_asked_not_refused(tmp_path):
    policy = PermissionPolicy(mode="plan", project_root=tmp_path)
    assert isinstance(policy.decide("WebFetch", False, "domain:example.com"), Ask)
