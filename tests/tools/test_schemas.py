import json
from pathlib import Path

import pytest

from covey.agent.catalog import tool_catalog
from covey.tools import core_tools

REFERENCE = json.loads((Path(__file__).parents[1] / "data" / "tool-schemas.json").read_text())


def _types(schema: dict) -> dict:
    return {name: prop.get("type") for name, prop in schema["properties"].items()}


@pytest.mark.parametrize("tool", core_tools(), ids=lambda t: t.name)
def test_input_schema_matches_claude_code(tool):
    ours, theirs = tool.schema()["input_schema"], REFERENCE[tool.name]
    assert _types(ours) == _types(theirs)
    assert sorted(ours.get("required", [])) == sorted(theirs["required"])
    assert ours["additionalProperties"] is False


def test_todo_item_schema_is_inlined_and_matches():
    (todo_write,) = [t for t in core_tools() if t.name == "TodoWrite"]
    items = todo_write.schema()["input_schema"]["properties"]["todos"]["items"]
    ref_items = REFERENCE["TodoWrite"]["properties"]["todos"]["items"]
    assert _types(items) == _types(ref_items)
    assert items["required"] == ref_items["required"]
    assert items["properties"]["status"]["enum"] == ref_items["properties"]["status"]["enum"]
    assert "$defs" not in json.dumps(todo_write.schema())


def test_core_tools_order_and_read_only_flags():
    tools = core_tools()
    assert [t.name for t in tools] == ["Read", "Write", "Edit", "Glob", "Grep", "Bash", "TodoWrite"]
    assert {t.name for t in tools if t.read_only} == {"Read", "Glob", "Grep"}


@pytest.mark.parametrize("tool", [t for t in tool_catalog() if t.name in ("NotebookEdit", "TaskStop")], ids=lambda t: t.name)
def test_everyday_tools_match_claude_code_where_the_reference_lists_them(tool):
    ours, theirs = tool.schema()["input_schema"], REFERENCE[tool.name]
    assert _types(ours) == _types(theirs)
    assert sorted(ours.get("required", [])) == sorted(theirs["required"])
    for name, prop in theirs["properties"].items():
        assert ours["properties"][name].get("enum") == prop.get("enum"), name


def test_the_catalog_offers_the_everyday_tools():
    names = [t.name for t in tool_catalog()]
    assert {"NotebookEdit", "WebFetch", "WebSearch", "TaskOutput", "TaskStop", "ExitPlanMode"} <= set(names)
    assert names.index("WebSearch") == names.index("WebFetch") + 1  # beside WebFetch, as Claude Code lists it
