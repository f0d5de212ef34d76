"""``--json-schema``: the main agent's final answer through the StructuredOutput tool, driven
through the loop without Ray (the scripted model stands for the API)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from covey.errors import UserError
from covey.events import ResultEvent, UserEvent
from covey.loop import AgentLoop, LoopConfig, ToolExecutor
from covey.model.scripted import ScriptedModel
from covey.tools.base import ToolContext
from covey.tools.structured_output import ACCEPTED, MAX_ATTEMPTS, REMINDER, StructuredOutput, check_schema

SCHEMA = {"type": "object", "properties": {"color": {"type": "string"}, "legs": {"type": "integer"}},
          "required": ["color", "legs"], "additionalProperties": False}


def _run(turns: list[dict], schema: dict | None = SCHEMA) -> tuple[AgentLoop, list]:
    tools = [StructuredOutput(check_schema(schema))] if schema is not None else []
    loop = AgentLoop(model=ScriptedModel.from_turns(turns),
                     config=LoopConfig(model_id="m", system=[{"type": "text", "text": "sys"}]),
                     executor=ToolExecutor(tools, ToolContext(agent_id="main", cwd=Path("."))))

    async def events() -> list:
        return [event async for event in loop.run([{"role": "user", "content": "go"}])]

    return loop, asyncio.run(events())


def _answer(**value: object) -> dict:
    return {"text": "Here it is.", "tool_use": [{"name": "StructuredOutput", "input": value}]}


def test_a_valid_call_ends_the_run_with_its_input_as_structured_output() -> None:
    loop, events = _run([_answer(color="blue", legs=4), {"text": "never asked"}])
    result = events[-1]
    assert isinstance(result, ResultEvent) and result.subtype == "success" and not result.is_error
    assert result.wire()["structured_output"] == {"color": "blue", "legs": 4}
    # The result's text is the answer's JSON, and the pass that took it a turn, as Claude Code's
    # (one request: num_turns 2); no request after the answer.
    assert result.result == '{"color":"blue","legs":4}' and result.num_turns == 2
    assert len(loop.model.requests) == 1
    assert loop.messages[-1]["content"][0]["content"] == ACCEPTED  # the call has its result in the history


def test_an_invalid_call_is_an_error_result_naming_each_mismatch_and_the_model_tries_again() -> None:
    loop, events = _run([_answer(color=3), _answer(color="red", legs=2)])
    first = loop.messages[2]["content"][0]
    assert first["is_error"] and "input[\"color\"]: 3 is not of type 'string'" in first["content"]
    assert "'legs' is a required property" in first["content"]
    assert events[-1].subtype == "success" and events[-1].structured_output == {"color": "red", "legs": 2}


def test_an_answer_without_the_call_is_sent_back_with_a_reminder() -> None:
    loop, events = _run([{"text": "blue, four"}, _answer(color="blue", legs=4)])
    reminders = [e for e in events if isinstance(e, UserEvent) and e.message["content"] == REMINDER]
    assert len(reminders) == 1
    assert events[-1].subtype == "success" and events[-1].structured_output == {"color": "blue", "legs": 4}


def test_an_answer_still_without_the_call_after_the_reminder_ends_the_run_as_it_is() -> None:
    """As Claude Code 2.1.332: one reminder, then the answer stands, without structured output."""
    loop, events = _run([{"text": "no"}, {"text": "still no"}, {"text": "never asked"}])
    result = events[-1]
    assert (result.subtype, result.is_error, result.result, result.num_turns) == ("success", False, "still no", 2)
    assert "structured_output" not in result.wire()


def test_five_calls_that_do_not_match_end_in_claude_codes_error_subtype() -> None:
    loop, events = _run([_answer(color=1)] * (MAX_ATTEMPTS + 2))
    result = events[-1]
    assert result.subtype == "error_max_structured_output_retries" and result.is_error
    assert result.num_turns == MAX_ATTEMPTS and "structured_output" not in result.wire()
    assert result.result.startswith(f"Failed to provide valid structured output after {MAX_ATTEMPTS} attempts")
    assert "'legs' is a required property" in result.result  # the last mismatch, named


def test_without_a_schema_nothing_changes() -> None:
    loop, events = _run([{"text": "done"}], schema=None)
    assert events[-1].subtype == "success" and events[-1].result == "done" and "structured_output" not in events[-1].wire()


def test_the_tool_offers_the_users_schema_as_its_input_schema() -> None:
    tool = StructuredOutput(check_schema(SCHEMA))
    assert tool.schema()["name"] == "StructuredOutput" and tool.schema()["input_schema"] == SCHEMA


@pytest.mark.parametrize("schema, words", [
    ([1], "must be a JSON object"),
    ({"type": "array"}, 'type must be "object"'),
    ({"type": "object", "properties": {"a": {"type": "nope"}}}, "not a valid JSON Schema"),
])
def test_a_bad_schema_is_refused_saying_why(schema: object, words: str) -> None:
    with pytest.raises(UserError, match=words):
        check_schema(schema)
