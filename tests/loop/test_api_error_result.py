"""An API error that outlived its retries ends the run as Claude Code ends it: subtype
``success`` with ``is_error: true``, ``terminal_reason: "api_error"``, the HTTP status, and the
API's own error body in the result text (``API Error: 529 {...}``)."""

from __future__ import annotations

import asyncio
import pickle
from pathlib import Path

from covey.cli.served import print_result
from covey.errors import ModelAPIError
from covey.loop import AgentLoop, LoopConfig, ToolExecutor
from covey.model.scripted import ScriptedModel
from covey.tools.base import ToolContext

BODY = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def _result(error: ModelAPIError) -> dict:
    loop = AgentLoop(model=ScriptedModel.from_turns([error]), config=LoopConfig(model_id="m", system=[]),
                     executor=ToolExecutor([], ToolContext(agent_id="main", cwd=Path("."))))

    async def run() -> list:
        return [event async for event in loop.run([{"role": "user", "content": "go"}])]

    return asyncio.run(run())[-1].wire()


def test_an_api_error_is_claude_codes_success_that_is_an_error_with_the_body() -> None:
    result = _result(ModelAPIError("Anthropic API error 529 (overloaded_error): Overloaded", 529, BODY))
    assert (result["subtype"], result["is_error"], result["terminal_reason"]) == ("success", True, "api_error")
    assert result["api_error_status"] == 529
    assert result["result"] == 'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    assert result["errors"] and "overloaded_error" in result["errors"][0]


def test_without_a_body_the_text_is_covey_s_message() -> None:
    result = _result(ModelAPIError("Anthropic API connection failed: refused"))
    assert result["result"] == "API Error: Anthropic API connection failed: refused" and result["is_error"]


def test_the_error_keeps_its_body_across_an_actor_boundary() -> None:
    again = pickle.loads(pickle.dumps(ModelAPIError("m", 500, BODY)))
    assert (again.status_code, again.payload, str(again)) == (500, BODY, "m")


def test_the_command_says_which_error_on_stderr(capsys) -> None:
    code = print_result({"subtype": "success", "is_error": True, "terminal_reason": "api_error",
                         "result": "API Error: 529 {}", "errors": ["Anthropic API error 529 (overloaded_error): x"]},
                        "json")
    assert code == 1 and capsys.readouterr().err == "covey: api_error: Anthropic API error 529 (overloaded_error): x\n"
