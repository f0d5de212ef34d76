"""WebSearch against the fake Messages API on 127.0.0.1 through the real anthropic SDK path
(``AnthropicModel``, streamed): the server tool in the request, the links and summary in the
result, the domain filters, search errors and refusals as error results, permission rules."""

from types import SimpleNamespace

import pytest

from covey.agent.catalog import tool_catalog
from covey.gateway.anthropic import AnthropicModel
from covey.permissions.decisions import Allow, Ask, Deny
from covey.permissions.policy import PermissionPolicy
from covey.permissions.rules import parse_rule
from covey.tools.base import ToolContext, ToolServices
from covey.tools.web_search import MAX_USES, WebSearch, WebSearchInput
from tests.fake_messages_api import FakeMessagesAPI, fake_api  # noqa: F401  (fixture)
from tests.fake_web_search import web_search_answer


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def context(tmp_path, api: FakeMessagesAPI, model_id: str = "claude-opus-4-5") -> ToolContext:
    model = AnthropicModel(base_url=api.url, retry_backoff_s=0.01, max_retries=0)
    spec = SimpleNamespace(model_id=model_id)
    return ToolContext(agent_id="agent-main", cwd=tmp_path, services=ToolServices(model=model, spec=spec))


async def search(ctx, query="ray actors", **filters):
    return await WebSearch().run(WebSearchInput(query=query, **filters), ctx)


async def test_one_request_with_the_server_tool_and_the_links_and_summary_come_back(tmp_path, fake_api):
    result = await search(context(tmp_path, fake_api))
    (sent,) = fake_api.requests
    assert sent["stream"] is True and sent["model"] == "claude-opus-4-5"  # the agent's own model
    assert sent["tools"] == [{"type": "web_search_20250305", "name": "web_search", "max_uses": MAX_USES}]
    assert "ray actors" in sent["messages"][0]["content"]
    assert not result.is_error
    for title, url in [("Actors - Ray", "https://docs.ray.io/en/latest/ray-core/actors.html"),
                       ("Actor model - Wikipedia", "https://en.wikipedia.org/wiki/Actor_model")]:
        assert f"- {title}: {url}" in result.content
    assert "Ray actors are stateful workers." in result.content  # the model's cited summary
    assert "markdown links" in result.content
    assert result.data["query"] == "ray actors" and result.data["durationSeconds"] >= 0
    (links,) = [item for item in result.data["results"] if isinstance(item, dict)]
    assert links["tool_use_id"].startswith("srvtoolu_") and {"title": "Actors - Ray", "url":
        "https://docs.ray.io/en/latest/ray-core/actors.html"} in links["content"]
    assert WebSearch().tool_use_result(result) == result.data


async def test_domain_filters_go_to_the_server_tool_and_filter_the_results(tmp_path, fake_api):
    ctx = context(tmp_path, fake_api)
    blocked = await search(ctx, blocked_domains=["wikipedia.org"])
    assert fake_api.requests[-1]["tools"][0]["blocked_domains"] == ["wikipedia.org"]
    assert "docs.ray.io" in blocked.content and "wikipedia" not in blocked.content
    allowed = await search(ctx, allowed_domains=["ray.io"])
    assert fake_api.requests[-1]["tools"][0]["allowed_domains"] == ["ray.io"]
    assert "docs.ray.io" in allowed.content and "anyscale" not in allowed.content


async def test_both_domain_filters_are_an_error_result_and_nothing_is_sent(tmp_path, fake_api):
    result = await search(context(tmp_path, fake_api), allowed_domains=["ray.io"], blocked_domains=["x.com"])
    assert result.is_error and "not both" in result.content
    assert fake_api.requests == []


@pytest.mark.parametrize("code, advice", [("too_many_requests", "wait"), ("max_uses_exceeded", "narrow"),
                                           ("query_too_long", "shorter"), ("unavailable", "WebFetch")])
async def test_a_failed_search_is_an_error_result_saying_what_to_do(tmp_path, fake_api, code, advice):
    fake_api.search_replies.append(lambda body: web_search_answer(body, error=code))
    result = await search(context(tmp_path, fake_api))
    assert result.is_error
    assert code in result.content and advice in result.content
    assert result.data["results"][0] == f"Web search error: {code}"


async def test_a_search_that_finds_nothing_says_so(tmp_path, fake_api):
    fake_api.search_replies.append(lambda body: web_search_answer(body, []))
    result = await search(context(tmp_path, fake_api))
    assert not result.is_error and "(no links found)" in result.content


async def test_a_refused_request_is_an_error_result_not_an_exception(tmp_path, fake_api):
    refusal = {"type": "error", "error": {"type": "invalid_request_error", "message": "web search is not enabled"}}
    fake_api.search_replies.append(("error", 400, refusal))
    result = await search(context(tmp_path, fake_api))
    assert result.is_error and "web search is not enabled" in result.content and "WebFetch" in result.content


async def test_a_paused_turn_is_sent_back_to_go_on(tmp_path, fake_api):
    fake_api.search_replies += [lambda body: web_search_answer(body, stop_reason="pause_turn"),
                                lambda body: web_search_answer(body, text="More about actors.")]
    result = await search(context(tmp_path, fake_api))
    first, second = fake_api.requests
    resent = second["messages"][-1]
    assert resent["role"] == "assistant" and [b["type"] for b in resent["content"]][1:3] == \
        ["server_tool_use", "web_search_tool_result"]
    assert "More about actors." in result.content and len(result.data["results"]) > 2


async def test_without_a_model_it_says_so(tmp_path):
    result = await WebSearch().run(WebSearchInput(query="ray"), ToolContext(agent_id="a", cwd=tmp_path))
    assert result.is_error and "model" in result.content


def test_the_catalog_offers_it_with_claude_codes_fields():
    (tool,) = [tool for tool in tool_catalog() if tool.name == "WebSearch"]
    schema = tool.schema()["input_schema"]
    assert schema["required"] == ["query"]
    assert schema["properties"]["allowed_domains"]["type"] == "array"
    assert schema["properties"]["blocked_domains"]["items"] == {"type": "string"}
    with pytest.raises(ValueError):
        WebSearchInput(query="x")  # Claude Code's queries are at least 2 characters


def decide(policy: PermissionPolicy, query: str = "ray actors"):
    tool = WebSearch()
    call = WebSearchInput(query=query)
    return policy.decide(tool.name, tool.read_only, tool.permission_subject(call), call.model_dump())


def test_it_asks_by_default_and_rules_named_websearch_decide(tmp_path):
    assert isinstance(decide(PermissionPolicy(project_root=tmp_path)), Ask)
    assert isinstance(decide(PermissionPolicy(project_root=tmp_path, allow=[parse_rule("WebSearch")])), Allow)
    assert isinstance(decide(PermissionPolicy(project_root=tmp_path, deny=[parse_rule("WebSearch")])), Deny)
    ask = PermissionPolicy(project_root=tmp_path, allow=[parse_rule("WebSearch")], ask=[parse_rule("WebSearch")])
    assert isinstance(decide(ask), Ask)
    # As in Claude Code, a rule with content never matches a search: only the whole tool's does.
    content_rule = PermissionPolicy(project_root=tmp_path, allow=[parse_rule("WebSearch(ray actors)")])
    assert isinstance(decide(content_rule), Ask)


def test_in_plan_mode_a_search_is_asked_not_refused(tmp_path):
    assert isinstance(decide(PermissionPolicy(mode="plan", project_root=tmp_path)), Ask)
    assert isinstance(decide(PermissionPolicy(mode="dontAsk", project_root=tmp_path)), Deny)
