"""An MCP server's result is bounded before it reaches the model."""

import base64
from types import SimpleNamespace

from covey.loop.execute import ToolExecutor
from covey.mcp.tools import as_tool_result
from covey.model.messages import ToolUseBlock
from covey.tools.base import MAX_RESULT_CHARS, Tool, ToolContext, ToolInput, ToolResult
from covey.tools.read_media import MAX_IMAGE_BYTES


def _text(text: str) -> SimpleNamespace:
    return SimpleNamespace(type="text", text=text)


def test_a_long_text_result_is_cut_with_a_note():
    result = as_tool_result(SimpleNamespace(content=[_text("t" * 300_000)], is_error=False))
    head, note = result.content.rsplit("\n", 1)
    assert head == "t" * MAX_RESULT_CHARS
    assert note.startswith(f"[tool output cut: 300,000 characters, first {MAX_RESULT_CHARS:,} kept; ask the tool")


def test_a_long_error_result_is_cut_too():
    result = as_tool_result(SimpleNamespace(content=[_text("e" * 300_000)], is_error=True))
    assert result.is_error and len(result.content) < MAX_RESULT_CHARS + 200


def test_an_image_over_the_api_limit_becomes_a_note():
    data = base64.b64encode(b"\0" * (MAX_IMAGE_BYTES + 3)).decode()
    image = SimpleNamespace(type="image", mime_type="image/png", data=data)
    result = as_tool_result(SimpleNamespace(content=[image], is_error=False))
    assert result.blocks == [] and "image not shown" in result.content


class _Loud(Tool):
    name = "Loud"
    description = "prints a lot"
    input_model = ToolInput
    read_only = True

    async def run(self, input, ctx):
        return ToolResult(content="l" * (MAX_RESULT_CHARS * 2))


async def test_the_executor_cuts_any_tool_result_over_the_cap(tmp_path):
    executor = ToolExecutor([_Loud()], ToolContext(agent_id="a", cwd=tmp_path))
    block = await executor.run_one(ToolUseBlock(type="tool_use", id="toolu_1", name="Loud", input={}))
    assert len(block["content"]) < MAX_RESULT_CHARS + 200 and "[tool output cut: 200,000 characters" in block["content"]
