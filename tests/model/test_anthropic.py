import pickle

import pytest

from covey.errors import ModelAPIError, UserError
from covey.gateway.anthropic import AnthropicModel
from covey.model.base import ModelRequest, TokenUsage
from tests.fake_messages_api import FakeMessagesAPI, fake_api  # noqa: F401  (fixture)

REQUEST = ModelRequest(
    model="claude-test-1",
    system=[{"type": "text", "text": "Be brief."}],
    messages=[{"role": "user", "content": "hi"}],
)


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def model_for(api: FakeMessagesAPI, **options) -> AnthropicModel:
    return AnthropicModel(base_url=api.url, retry_backoff_s=0.01, **options)


async def test_streamed_text_reply(fake_api):
    fake_api.replies.append({"text": "Hello there"})
    message = await model_for(fake_api).create(REQUEST)
    assert message.content[0].text == "Hello there"
    assert message.stop_reason == "end_turn"
    sent = fake_api.requests[0]
    assert sent["stream"] is True
    assert sent["model"] == "claude-test-1" and sent["system"] == REQUEST.system
    assert sent["messages"] == REQUEST.messages


async def test_the_responses_request_id_is_kept_beside_the_message():
    with FakeMessagesAPI([{"text": "hi"}], request_ids=True) as api:
        message = await model_for(api).create(REQUEST)
    assert message.request_id.startswith("req_")  # Claude Code's requestId / request_id
    assert "request_id" not in message.model_dump()  # never sent back in a request's history


async def test_without_a_request_id_header_there_is_none(fake_api):
    fake_api.replies.append({"text": "hi"})
    assert (await model_for(fake_api).create(REQUEST)).request_id is None


async def test_tool_use_input_is_assembled_from_deltas(fake_api):
    tool_input = {"file_path": "README.md", "limit": [1, 2]}
    fake_api.replies.append({"content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": tool_input}]})
    message = await model_for(fake_api).create(REQUEST)
    assert message.stop_reason == "tool_use"
    assert (message.content[0].name, message.content[0].input) == ("Read", tool_input)


async def test_overload_is_retried_then_succeeds(fake_api):
    fake_api.replies += [("error", 529, None), {"text": "ok"}]
    message = await model_for(fake_api).create(REQUEST)
    assert message.content[0].text == "ok"
    assert len(fake_api.requests) == 2


async def test_persistent_500_fails_after_retries(fake_api):
    fake_api.replies.append(("error", 500, None))
    with pytest.raises(ModelAPIError) as info:
        await model_for(fake_api, max_retries=2).create(REQUEST)
    assert info.value.status_code == 500
    assert "500" in str(info.value) and "2 retries" in str(info.value) and "\n" not in str(info.value)
    assert len(fake_api.requests) == 3


async def test_bad_request_fails_at_once(fake_api):
    fake_api.replies.append(("error", 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                                         "message": "max_tokens:\n too big"}}))
    with pytest.raises(ModelAPIError) as info:
        await model_for(fake_api).create(REQUEST)
    assert info.value.status_code == 400
    assert str(info.value) == "Anthropic API error 400 (invalid_request_error): max_tokens: too big"
    assert len(fake_api.requests) == 1


async def test_unauthorized_hints_at_the_key(fake_api):
    fake_api.replies.append(("error", 401, None))
    with pytest.raises(ModelAPIError, match="ANTHROPIC_API_KEY"):
        await model_for(fake_api).create(REQUEST)


@pytest.mark.parametrize("failure", [("stream_error", "overloaded_error"), ("drop",), ("truncate",)])
async def test_stream_failing_midway_is_retried(fake_api, failure):
    fake_api.replies += [failure, {"text": "recovered"}]
    message = await model_for(fake_api).create(REQUEST)
    assert message.content[0].text == "recovered"
    assert len(fake_api.requests) == 2


async def test_persistent_midstream_overload_reports_529(fake_api):
    fake_api.replies.append(("stream_error", "overloaded_error"))
    with pytest.raises(ModelAPIError) as info:
        await model_for(fake_api, max_retries=1).create(REQUEST)
    assert info.value.status_code == 529 and "1 retries" in str(info.value)
    assert len(fake_api.requests) == 2


async def test_usage_is_recorded_per_request_and_bounded(fake_api):
    usage = {"input_tokens": 12, "output_tokens": 7, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 50}
    fake_api.replies.append({"text": "ok", "usage": usage})
    model = model_for(fake_api, max_records=2)
    for _ in range(3):
        await model.create(REQUEST)
    assert len(model.requests) == 2
    record = model.requests[-1]
    assert record.usage == TokenUsage(**usage)
    assert (record.model, record.stop_reason) == ("claude-test-1", "end_turn")
    assert record.duration_ms >= 0


async def test_base_url_env_is_honoured(fake_api, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    await AnthropicModel().create(REQUEST)
    assert len(fake_api.requests) == 1


async def test_a_pickled_copy_reaches_the_same_server(fake_api):
    copy = AnthropicModel.of(pickle.loads(pickle.dumps(model_for(fake_api))))
    await copy.create(REQUEST)
    assert len(fake_api.requests) == 1


def test_missing_key_is_a_user_error(monkeypatch, tmp_path):
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no user-level credentials file either
    with pytest.raises(UserError, match="ANTHROPIC_API_KEY.*scripted:PATH"):
        AnthropicModel()


def test_unloadable_credentials_are_a_user_error(monkeypatch, tmp_path):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("ANTHROPIC_PROFILE", "work")
    with pytest.raises(UserError, match="credentials"):
        AnthropicModel()


def test_fake_api_answers_unstreamed_json():
    import anthropic

    with FakeMessagesAPI([lambda body: {"text": f"echo {body['messages'][0]['content']}"}]) as api:
        client = anthropic.Anthropic(api_key="k", base_url=api.url)
        message = client.messages.create(**REQUEST.to_api_kwargs())
    assert message.content[0].text == "echo hi"
    assert "stream" not in api.requests[0]


async def test_an_overloaded_model_falls_back_to_the_fallback_model(fake_api):
    def answer(body):
        return ("error", 529, None) if body["model"] == REQUEST.model else {"text": "from the fallback"}

    fake_api.replies.append(answer)
    message = await model_for(fake_api, max_retries=1, fallback_model="claude-haiku-4-5").create(REQUEST)
    assert message.content[0].text == "from the fallback"
    assert [r["model"] for r in fake_api.requests] == [REQUEST.model, REQUEST.model, "claude-haiku-4-5"]


async def test_other_errors_do_not_fall_back(fake_api):
    fake_api.replies.append(("error", 500, None))
    with pytest.raises(ModelAPIError):
        await model_for(fake_api, max_retries=0, fallback_model="claude-haiku-4-5").create(REQUEST)
    assert {r["model"] for r in fake_api.requests} == {REQUEST.model}


async def test_the_raw_stream_events_reach_on_stream(fake_api):
    fake_api.replies.append({"text": "Hello there"})
    seen = []
    message = await model_for(fake_api).create(REQUEST.model_copy(update={"on_stream": seen.append}))
    assert message.content[0].text == "Hello there"
    kinds = [event["type"] for event in seen]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop" and "content_block_delta" in kinds
    assert "text" not in kinds  # the SDK's derived events are not the API's
    assert "".join(e["delta"].get("text", "") for e in seen if e["type"] == "content_block_delta") == "Hello there"


async def test_effort_goes_in_the_request_body_as_output_config(fake_api):
    fake_api.replies.append({"text": "quick"})
    await model_for(fake_api).create(REQUEST.model_copy(update={"model": "claude-opus-4-8", "effort": "low"}))
    assert fake_api.requests[0]["output_config"] == {"effort": "low"}
    await model_for(fake_api).create(REQUEST)
    assert "output_config" not in fake_api.requests[1]


async def test_the_body_is_written_once_not_walked_by_the_sdk(fake_api, monkeypatch):
    """covey's bodies are plain JSON: sent as bytes, the SDK's copy of the whole body (looking
    for files in it) is skipped; a body json cannot write goes the SDK's way and still works."""
    import anthropic._base_client as base_client

    walked: list[object] = []
    real = base_client.async_prepare_request_data

    async def spy(data, **how):
        if data is not None:
            walked.append(data)
        return await real(data, **how)

    monkeypatch.setattr(base_client, "async_prepare_request_data", spy)
    fake_api.replies += [{"text": "one"}, {"text": "two"}]
    model = model_for(fake_api)
    assert (await model.create(REQUEST)).content[0].text == "one"
    assert walked == [] and fake_api.requests[0]["stream"] is True
    assert fake_api.requests[0]["messages"] == REQUEST.messages
    from anthropic.types import TextBlock  # a pydantic model: the SDK writes it, json does not

    odd = REQUEST.model_copy(update={"messages": [{"role": "user", "content": [TextBlock(type="text", text="hi")]}]})
    assert (await model.create(odd)).content[0].text == "two"
    assert len(walked) == 1  # the SDK's path: it walks the body


async def test_a_web_search_reply_streams_into_its_server_tool_blocks(fake_api):
    from tests.fake_web_search import web_search_answer

    search = {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}
    request = REQUEST.model_copy(update={"tools": [search]})
    message = await model_for(fake_api).create(request)
    assert fake_api.requests[0]["tools"] == [search]
    expected = web_search_answer(fake_api.requests[0])["content"]
    blocks = [block.to_dict() for block in message.content]
    assert [b["type"] for b in blocks] == [b["type"] for b in expected]  # unknown block types are kept
    use, result = blocks[1], blocks[2]
    assert use["name"] == "web_search" and use["input"] == {"query": "hi"}  # assembled from input_json_delta
    assert result["tool_use_id"] == use["id"] and [r["url"] for r in result["content"]] == \
        [r["url"] for r in expected[2]["content"]]
    assert result["content"][0]["encrypted_content"].startswith("enc_")
    assert blocks[-1]["citations"][0]["type"] == "web_search_result_location"  # from citations_delta
    assert message.usage.model_dump()["server_tool_use"] == {"web_search_requests": 1}
