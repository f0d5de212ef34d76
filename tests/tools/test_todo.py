import pytest
from pydantic import ValidationError

from covey.tools.todo import TodoWrite, TodoWriteInput, clear_todos

ITEM = {"content": "Run tests", "status": "in_progress", "activeForm": "Running tests"}


async def test_stores_list_per_agent_and_replaces(ctx):
    ctx.todos["other-agent"] = [ITEM]
    first = TodoWriteInput.model_validate({"todos": [ITEM, {**ITEM, "status": "pending"}]})
    result = await TodoWrite().run(first, ctx)
    assert "1 in progress" in result.content and "1 pending" in result.content
    assert ctx.todos["agent-test"] == [ITEM, {**ITEM, "status": "pending"}]
    await TodoWrite().run(TodoWriteInput.model_validate({"todos": [{**ITEM, "status": "completed"}]}), ctx)
    assert ctx.todos["agent-test"] == [{**ITEM, "status": "completed"}]
    clear_todos(ctx)
    assert ctx.todos == {"other-agent": [ITEM]}
    clear_todos(ctx)  # idempotent


@pytest.mark.parametrize("bad", [
    {**ITEM, "content": ""},
    {**ITEM, "status": "done"},
    {**ITEM, "priority": "high"},
    {"content": "x", "status": "pending"},
])
def test_rejects_invalid_items(bad):
    with pytest.raises(ValidationError):
        TodoWriteInput.model_validate({"todos": [bad]})
