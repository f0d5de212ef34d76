"""Comparing covey's stream-json events with Claude Code's recorded ones (tests/data/claude_code).

Values are not compared (ids, times, costs, paths and token counts differ from run to run),
only shapes: an event's kind, its keys, and each value's JSON type, recursively. Claude
Code's ``null`` is "unset" and matches any type.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

DATA = Path(__file__).resolve().parents[1] / "data" / "claude_code"

DYNAMIC_KEYS = frozenset({"modelUsage", "model_usage_since_last_result", "input", "by_type", "tool_input"})
"""Objects keyed by data (a model id, a tool's own input): their entries are compared with any one of Claude Code's."""


def recorded(scenario: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / scenario / "stdout.jsonl").read_text().splitlines() if line.strip()]


def scenarios() -> list[str]:
    return sorted(path.parent.name for path in DATA.glob("*/stdout.jsonl"))


def kind(event: dict[str, Any]) -> str:
    """``type/subtype``, ``main`` or ``child``, and for a user message what it carries."""
    who = "child" if event.get("parent_tool_use_id") else "main"
    name = "/".join(filter(None, (event.get("type"), event.get("subtype"))))
    if event.get("type") == "user":
        content = event.get("message", {}).get("content")
        blocks = content if isinstance(content, list) else []
        name += ":tool_result" if any(b.get("type") == "tool_result" for b in blocks) else ":text"
    return f"{name} ({who})"


def key_names(value: Any) -> set[str]:
    """Every key name used at any depth."""
    if isinstance(value, dict):
        return set(value).union(*(key_names(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(key_names(v) for v in value))
    return set()


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}[type(value)]


def shape_problems(cc: Any, ours: Any, path: str, claude_keys: set[str], allowed: Iterable[str] = ()) -> list[str]:
    """How ``ours`` differs in shape from Claude Code's ``cc`` at ``path`` (empty: same shape).

    ``allowed``: paths (``message.usage.foo``) where a difference is a known, listed one."""
    allowed = set(allowed)
    if cc is None or path in allowed:
        return []
    if json_type(cc) != json_type(ours):
        return [f"{path}: Claude Code has {json_type(cc)}, covey {json_type(ours)}"]
    if isinstance(cc, dict):
        if path.rsplit(".", 1)[-1] in DYNAMIC_KEYS:
            return _dynamic_problems(cc, ours, path, claude_keys, allowed)
        problems = [f"{_join(path, key)}: missing (Claude Code has it)" for key in cc
                    if key not in ours and _join(path, key) not in allowed]
        problems += [f"{_join(path, key)}: covey-only key whose name Claude Code uses elsewhere" for key in ours
                     if key not in cc and key in claude_keys and _join(path, key) not in allowed]
        for key in cc.keys() & ours.keys():
            problems += shape_problems(cc[key], ours[key], _join(path, key), claude_keys, allowed)
        return problems
    if isinstance(cc, list) and cc and ours:
        return _list_problems(cc, ours, path, claude_keys, allowed)
    return []


def _dynamic_problems(cc: dict, ours: dict, path: str, claude_keys: set[str], allowed: set[str]) -> list[str]:
    if not cc or not ours:
        return []
    sample = next(iter(cc.values()))
    return [p for name, value in ours.items()
            for p in shape_problems(sample, value, f"{path}[{name}]", claude_keys, {a.replace("[*]", f"[{name}]") for a in allowed})]


def _list_problems(cc: list, ours: list, path: str, claude_keys: set[str], allowed: set[str]) -> list[str]:
    """Each of our items against Claude Code's item of the same ``type`` (content blocks), else its first."""
    problems = []
    for index, item in enumerate(ours):
        same = [c for c in cc if isinstance(c, dict) and isinstance(item, dict) and c.get("type") == item.get("type")]
        if isinstance(item, dict) and "type" in item and not same and all(isinstance(c, dict) and "type" in c for c in cc):
            continue  # a block type Claude Code's run did not have: nothing to compare with
        problems += shape_problems((same or cc)[0], item, f"{path}[]", claude_keys, allowed)
    return problems


def best_match(candidates: list[dict[str, Any]], ours: dict[str, Any], claude_keys: set[str],
               allowed: Iterable[str]) -> list[str]:
    """The problems against the recorded event of the same kind that ours resembles most."""
    return min((shape_problems(cc, ours, "", claude_keys, allowed) for cc in candidates), key=len)
