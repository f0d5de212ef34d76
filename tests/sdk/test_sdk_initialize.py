"""The answer to the SDK's ``initialize`` (``ClaudeSDKClient.get_server_info()``): covey's run gives
it once the session is open, so its output style and the styles it could choose are the session's,
as Claude Code's are; through the covey service and in the covey process (``--no-service``). And the
session's debug log on the program's stderr (``--debug-to-stderr``), through the service."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from claude_agent_sdk import ClaudeSDKClient, ResultMessage, query

from covey.common.versions import CLAUDE_CODE_VERSION
from tests.sdk.conftest import REFERENCE_CLI
from tests.sdk.test_sdk_compat import collect, with_subtype

pytestmark = pytest.mark.ray  # the covey service (or covey's own) runs a Ray


@pytest.fixture(autouse=True)
def _everything_given_back(served):
    yield
    served.wait_all_given_back(timeout_s=30)


@pytest.mark.parametrize("where", ["served", "no-service"])
async def test_a_settings_output_style_is_what_initialize_answers(sdk_options, fake_api, tmp_path, where):
    style = tmp_path / ".claude" / "output-styles" / "pirate.md"
    style.parent.mkdir(parents=True)
    style.write_text("---\nname: Pirate\ndescription: Talks like one\n---\nAnswer as a pirate would.\n")
    fake_api.replies = [lambda body: {"text": "arr"}]
    options = sdk_options(settings=json.dumps({"outputStyle": "Pirate"}))
    options.env["COVEY_NO_SERVICE"] = "1" if where == "no-service" else "0"

    async with ClaudeSDKClient(options=options) as client:
        info = await client.get_server_info()
        await client.query("ahoy")
        messages = await collect(client.receive_response())

    assert info is not None and info["output_style"] == "Pirate", info
    # Claude Code's order: its built-ins, then the user's styles, then the project's.
    assert info["available_output_styles"] == ["default", "Proactive", "Concise", "Explanatory", "Learning", "Pirate"]
    assert with_subtype(messages, "init")[0].data["output_style"] == "Pirate"
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "arr"


async def test_without_a_style_setting_initialize_answers_the_default(sdk_options, fake_api, tmp_path: Path):
    fake_api.replies = [lambda body: {"text": "plain"}]
    async with ClaudeSDKClient(options=sdk_options()) as client:
        info = await client.get_server_info()
    assert info is not None and info["output_style"] == "default" and "Explanatory" in info["available_output_styles"]


async def test_a_style_that_exists_nowhere_is_reported_by_the_name_the_settings_give(sdk_options, fake_api):
    """As Claude Code 2.1.337: ``initialize`` and ``system/init`` carry the name unchanged (the
    prompt is the default one); its answer names the Claude Code it speaks and no sandbox."""
    fake_api.replies = [lambda body: {"text": "plain"}]
    async with ClaudeSDKClient(options=sdk_options(settings=json.dumps({"outputStyle": "Nowhere"}))) as client:
        info = await client.get_server_info()
        await client.query("hi")
        messages = await collect(client.receive_response())
    assert info is not None and info["output_style"] == "Nowhere" and "Nowhere" not in info["available_output_styles"]
    assert with_subtype(messages, "init")[0].data["output_style"] == "Nowhere"
    assert re.fullmatch(r"2\.1\.\d+", info["claude_code_version"]) and info["sandbox_enabled"] is False
    if not os.environ.get(REFERENCE_CLI):
        assert info["claude_code_version"] == CLAUDE_CODE_VERSION


@pytest.mark.skipif(bool(os.environ.get(REFERENCE_CLI)), reason="covey's own debug lines")
async def test_debug_to_stderr_streams_the_sessions_debug_log_to_the_programs_stderr(sdk_options, fake_api, capsys):
    """The Python SDK's way to Claude Code's debug output: ``extra_args={"debug-to-stderr": None}``."""
    fake_api.replies = [lambda body: {"text": "debugged reply"}]
    messages = await collect(query(prompt="hi", options=sdk_options(extra_args={"debug-to-stderr": None})))
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "debugged reply"
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("[covey] ")]
    assert any("[DEBUG] covey session" in line for line in said), said
    assert any(line.endswith("says: debugged reply") for line in said), said
