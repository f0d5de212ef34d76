"""The wire shapes of covey's events: Claude Code's keys, nulls where it writes null, covey's own key names."""

from __future__ import annotations

import re
import uuid

from covey.events import (
    AssistantEvent, ResultEvent, SystemInit, TaskNotification, UserEvent, token_count, wire_usage,
)
from covey.model.base import TokenUsage
from covey.model.usage import ModelUsage


def test_every_event_has_a_fresh_uuid():
    first, second = (AssistantEvent(message={}) for _ in range(2))
    assert uuid.UUID(first.wire()["uuid"]).version == 4 and first.uuid != second.uuid
    assert TaskNotification(task_id="a", run_id="r", status="completed", summary="s").wire()["uuid"]


def test_a_main_message_writes_a_null_parent_and_no_agent_id_a_child_s_both():
    main = UserEvent(message={"role": "user", "content": []}, agent_id="agent-main").wire()
    assert main["parent_tool_use_id"] is None and "agent_id" not in main
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", main["timestamp"])
    child = AssistantEvent(message={}, agent_id="agent-c", parent_tool_use_id="toolu_1", subagent_type="Explore").wire()
    assert (child["parent_tool_use_id"], child["agent_id"], child["subagent_type"]) == ("toolu_1", "agent-c", "Explore")


def test_a_result_carries_claude_code_s_keys_and_no_agent_id():
    result = ResultEvent(agent_id="agent-main", subtype="success", is_error=False, result="ok", num_turns=1,
                         duration_ms=1, duration_api_ms=1, total_cost_usd=0.0, usage={"input_tokens": 3}).wire()
    assert "agent_id" not in result and result["errors"] == [] and result["stop_reason"] is None
    assert result["usage"]["input_tokens"] == 3 and result["usage"]["cache_read_input_tokens"] == 0
    assert result["api_error_status"] is None and result["usage"]["server_tool_use"] == {
        "web_search_requests": 0, "web_fetch_requests": 0}
    failure = ResultEvent.failure("boom").wire()
    assert failure["errors"] == ["boom"] and "api_error_status" not in failure


def test_usage_counts_every_cache_write_as_a_five_minute_one():
    usage = wire_usage({"input_tokens": 3, "output_tokens": 2, "cache_creation_input_tokens": 7})
    assert usage["cache_creation"] == {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 7}
    assert token_count(usage) == 12


def test_init_speaks_claude_code_s_version_and_names_covey_s_under_its_own_key():
    init = SystemInit(cwd="/p", model="m", tools=["Read"], permissionMode="default").wire()
    assert init["claude_code_version"] == "2.1.337" and init["covey_version"]
    assert init["original_cwd"] == "/p" and init["mcp_servers"] == [] and init["output_style"] == "default"


def test_model_usage_has_claude_code_s_entry_keys():
    entry = ModelUsage.of("claude-opus-5-5", TokenUsage(input_tokens=1, cache_creation_input_tokens=4), 0.5)
    wire = (entry + entry).model_dump(by_alias=True)
    assert wire["contextWindow"] == 1_000_000 and wire["canonicalModel"] == "claude-opus-5-5"
    assert wire["cacheCreationEphemeral5mInputTokens"] == 8 and wire["provider"] == "firstParty"
    assert wire["costBasis"] == "list" and wire["webSearchRequests"] == 0
