import json
import pickle
import time

import pytest
import anthropic.types
from anthropic.types import Message, ToolUseBlock

from covey.errors import ModelAPIError, UserError
from covey.model import messages
from covey.model.base import ModelRequest
from covey.model.scripted import Reply, Rule, ScriptedModel, When


def request(*messages, system="You are a helper.", tools=(), model="claude-sonnet-4-5"):
    return ModelRequest(
        model=model,
        system=[{"type": "text", "text": system}],
        messages=[{"role": "user", "content": m} if isinstance(m, str) else m for m in messages],
        tools=[{"name": name, "input_schema": {"type": "object"}} for name in tools],
    )


ASSISTANT_READ = {
    "role": "assistant",
    "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "notes.md"}}],
}
TOOL_RESULT = {
    "role": "user",
    "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "line one"}]}],
}


@pytest.mark.parametrize(
    "when, holds, fails",
    [
        ({"system_contains": "helper"}, request("hi"), request("hi", system="You plan.")),
        ({"system_lacks": "helper"}, request("hi", system="You plan."), request("hi")),
        ({"messages_contain": "notes.md"}, request("go", ASSISTANT_READ, TOOL_RESULT), request("go")),
        ({"messages_contain": "line one"}, request("go", ASSISTANT_READ, TOOL_RESULT), request("go")),
        ({"messages_lack": "secret"}, request("go"), request("the secret")),
        ({"last_message_contains": "two"}, request("one", "two"), request("two", "one")),
        ({"last_tool_result_contains": "line one"}, request("go", ASSISTANT_READ, TOOL_RESULT),
         request("line one")),
        ({"tools_include": ["Read", "Agent"]}, request("hi", tools=["Read", "Agent"]), request("hi", tools=["Read"])),
        ({"tools_exclude": "Agent"}, request("hi", tools=["Read"]), request("hi", tools=["Agent"])),
        ({"model": "claude-haiku-4-5"}, request("hi", model="claude-haiku-4-5"), request("hi")),
        ({"messages_contain": ["alpha", "beta"]}, request("alpha beta"), request("alpha only")),
    ],
)
def test_each_condition(when, holds, fails):
    assert When.model_validate(when).matches(holds)
    assert not When.model_validate(when).matches(fails)


def test_sdk_blocks_in_messages_are_searched():
    block = ToolUseBlock(type="tool_use", id="toolu_9", name="Grep", input={"pattern": "needle"})
    req = request("go", {"role": "assistant", "content": [block]})
    assert When(messages_contain="needle").matches(req)


async def test_first_matching_rule_wins_and_times_limits_it():
    model = ScriptedModel.from_dict({"rules": [
        {"when": {"messages_contain": "hello"}, "reply": {"text": "first"}, "times": 1},
        {"when": {"messages_contain": "hello"}, "reply": {"text": "second"}},
        {"reply": {"text": "fallback"}},
    ]})
    texts = [(await model.create(request(prompt))).content[0].text for prompt in ("hello", "hello", "other")]
    assert texts == ["first", "second", "fallback"]
    assert [r.messages[-1]["content"] for r in model.requests] == ["hello", "hello", "other"]


async def test_reply_with_text_and_tool_calls_is_a_real_message():
    reply = {"text": "Reading.", "tool_use": [{"name": "Read", "input": {"file_path": "a"}}, {"name": "Glob"}]}
    model = ScriptedModel([Rule(reply=Reply.model_validate(reply))])
    message = await model.create(request("hi"))
    assert isinstance(message, messages.Message)
    # the same JSON the API sends: the SDK's own type accepts it field for field
    sdk = anthropic.types.Message.model_validate(message.model_dump())
    assert sdk.model_dump(exclude_none=True) == message.model_dump(exclude_none=True)
    assert [block.type for block in message.content] == ["text", "tool_use", "tool_use"]
    assert message.content[1].input == {"file_path": "a"}
    assert message.stop_reason == "tool_use"
    ids = [block.id for block in message.content[1:]]
    assert all(i.startswith("toolu_") for i in ids) and len(set(ids)) == 2
    assert message.usage.input_tokens >= 1 and message.usage.output_tokens >= 1


async def test_single_tool_use_dict_and_stop_reasons():
    model = ScriptedModel.from_turns([
        {"tool_use": {"name": "Read", "input": {}}},
        {"text": "done"},
        {"text": "cut", "stop_reason": "max_tokens"},
    ])
    stops = [(await model.create(request("x"))).stop_reason for _ in range(3)]
    assert stops == ["tool_use", "end_turn", "max_tokens"]


async def test_usage_grows_with_request_size():
    model = ScriptedModel([Rule(reply=Reply(text="ok"))])
    small = await model.create(request("hi"))
    large = await model.create(request("hi " * 1000))
    assert large.usage.input_tokens > small.usage.input_tokens + 500


async def test_no_match_shows_the_last_message():
    model = ScriptedModel([Rule(when=When(messages_contain="never"), reply=Reply(text="x"))])
    with pytest.raises(ModelAPIError, match="no rule matches.*'please summarise"):
        await model.create(request("please summarise the repo"))


async def test_turns_queue_messages_and_exceptions():
    canned = Message.model_validate({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
    })
    model = ScriptedModel.from_turns([canned, ModelAPIError("overloaded", 529), {"text": "after"}])
    answered = await model.create(request("a"))  # an SDK Message comes back as covey's, field for field
    assert isinstance(answered, messages.Message)
    assert answered.model_dump(exclude_none=True) == canned.model_dump(exclude_none=True)
    with pytest.raises(ModelAPIError, match="overloaded"):
        await model.create(request("b"))
    assert (await model.create(request("c"))).content[0].text == "after"
    with pytest.raises(ModelAPIError, match="no rule matches"):
        await model.create(request("d"))


async def test_latency_per_rule_and_default():
    model = ScriptedModel.from_dict({"latency_s": 0.05, "rules": [
        {"when": {"messages_contain": "slow"}, "reply": {"text": "s"}, "latency_s": 0.15},
        {"reply": {"text": "f"}},
    ]})
    for prompt, at_least_s in (("slow", 0.15), ("fast", 0.05)):
        started = time.monotonic()
        await model.create(request(prompt))
        assert time.monotonic() - started >= at_least_s


async def test_from_file_yaml_and_json(tmp_path):
    read = {"name": "Read", "input": {"file_path": "README.md"}}
    rules = {"rules": [{"when": {"tools_include": "Read"}, "reply": {"tool_use": read}}]}
    yaml_path = tmp_path / "script.yaml"
    yaml_path.write_text(
        "rules:\n"
        "  - when: {tools_include: Read}\n"
        "    reply:\n"
        "      tool_use: {name: Read, input: {file_path: README.md}}\n"
    )
    json_path = tmp_path / "script.json"
    json_path.write_text(json.dumps(rules))
    for path in (yaml_path, json_path):
        message = await ScriptedModel.from_file(path).create(request("hi", tools=["Read"]))
        assert message.content[0].input == {"file_path": "README.md"}


@pytest.mark.parametrize(
    "content, problem",
    [
        ("rules: [", "cannot read"),
        ("rules:\n  - reply: {txt: hi}\n", "rules.0.reply.txt"),
        ("rules:\n  - when: {sytem_contains: x}\n    reply: {text: hi}\n", "sytem_contains"),
        ("- just a list\n", "invalid scripted model"),
    ],
)
def test_bad_file_names_path_and_problem(tmp_path, content, problem):
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(UserError) as info:
        ScriptedModel.from_file(path)
    assert "bad.yaml" in str(info.value) and problem in str(info.value)


def test_missing_file_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="nope.yaml"):
        ScriptedModel.from_file(tmp_path / "nope.yaml")


async def test_pickles_with_its_state():
    model = ScriptedModel([Rule(reply=Reply(text="once"), times=1), Rule(reply=Reply(text="then"))])
    await model.create(request("x"))
    copy = pickle.loads(pickle.dumps(model))
    assert (await copy.create(request("y"))).content[0].text == "then"  # rule use counts travel
    # the request log does not: a copy in another actor logs its own requests only
    assert [r.messages[-1]["content"] for r in copy.requests] == ["y"] and len(model.requests) == 1


async def test_input_from_fills_a_field_from_the_last_match_in_the_conversation():
    """For what a script cannot know in advance: the id of an agent it started."""
    call = {"name": "SendMessage", "input": {"message": "more"},
            "input_from": {"to": r"launched: 'fix'\.\nagentId: (agent-[0-9a-f]+)", "whole": r"agent-b\w+"}}
    model = ScriptedModel.from_dict({"rules": [{"reply": {"tool_use": call}}]})
    receipts = ["Async agent launched: 'fix'.\nagentId: agent-a1 (internal id)",
                "Async agent launched: 'check'.\nagentId: agent-b2", "Async agent launched: 'fix'.\nagentId: agent-c3"]
    message = await model.create(request(*receipts))
    assert message.content[0].input == {"message": "more", "to": "agent-c3", "whole": "agent-b2"}
    with pytest.raises(ModelAPIError, match="SendMessage input 'to': nothing in the conversation matches"):
        await model.create(request("no receipts here"))


def test_input_from_with_a_bad_regex_names_the_field(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("rules:\n  - reply: {tool_use: {name: SendMessage, input_from: {to: '(agent-'}}}\n")
    with pytest.raises(UserError, match=r"bad.yaml.*input_from.*to: not a regular expression"):
        ScriptedModel.from_file(path)


async def test_with_a_prompt_cache_directory_copies_in_other_actors_read_what_the_first_wrote(tmp_path):
    """``prompt_cache``: usage splits input tokens by the request's breakpoints, across pickled copies."""
    import pickle

    from covey.loop.wire import with_breakpoints
    from covey.model.base import ModelRequest

    rules = tmp_path / "rules.yaml"
    rules.write_text("prompt_cache: cache\nrules:\n  - reply: {text: done}\n")
    first = ScriptedModel.from_file(rules)
    assert first.prompt_cache == str(tmp_path / "cache")
    shared = [{"role": "user", "content": "a long shared history " * 200}]

    def request(directive: str) -> ModelRequest:
        messages = with_breakpoints([*shared, {"role": "user", "content": directive}], inherited=1)
        return ModelRequest(model="m", system=[{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
                            messages=messages)

    one = (await first.create(request("one"))).usage
    two = (await pickle.loads(pickle.dumps(first)).create(request("two"))).usage
    assert one.cache_read_input_tokens == 0 and one.cache_creation_input_tokens > 1000
    assert two.cache_read_input_tokens > 1000 and two.cache_creation_input_tokens < 20
    plain = (await ScriptedModel.from_dict({"rules": [{"reply": {"text": "x"}}]}).create(request("one"))).usage
    assert plain.cache_read_input_tokens is None and plain.input_tokens > 1000  # off: the old estimate


def test_a_rule_file_with_an_alias_bomb_is_a_user_error_naming_the_file(tmp_path):
    from tests.common.test_safe_yaml import BOMB

    path = tmp_path / "rules.yaml"
    path.write_text(BOMB)
    with pytest.raises(UserError, match="rules.yaml.*aliases"):
        ScriptedModel.from_file(path)
