"""A session's files as covey writes them (session.json, transcripts, sub-agents' meta), for the timeline tests.

The session: a main agent (completed) launches a background ``general-purpose`` child ``a`` (it
reads a file, completes, and is told by a notice) and a foreground ``Explore`` child ``b`` (its
tool result is an error: failed); ``a`` launches ``c`` in the background, killed; ``d`` was
launched last and is still running (its transcript is open, no notice yet).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from covey.transcripts.session_json import SessionRecord, record_session

T0 = 1_800_000_000.0
MAIN = "agent-main0000000000"


def _reply(t: float, msg: str, *blocks: dict, model: str = "claude-sonnet-4-6", stop: str = "end_turn",
           tokens: int = 1000) -> dict:
    usage = {"input_tokens": tokens, "output_tokens": 10, "cache_read_input_tokens": 0,
             "cache_creation_input_tokens": 0}
    return {"type": "assistant", "timestamp": t, "message": {"id": msg, "model": model, "content": list(blocks),
                                                             "stop_reason": stop, "usage": usage}}


def _user(t: float, *blocks: dict | str) -> dict:
    content = [b if isinstance(b, dict) else {"type": "text", "text": b} for b in blocks]
    return {"type": "user", "timestamp": t, "message": {"role": "user", "content": content}}


def _call(call_id: str, name: str, **input: object) -> dict:
    return {"type": "tool_use", "id": call_id, "name": name, "input": input}


def _result(call_id: str, text: str, error: bool = False) -> dict:
    return {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": error}


def _notice(call_id: str, status: str) -> str:
    return (f"<task-notification>\n<task-id>x</task-id>\n<tool-use-id>{call_id}</tool-use-id>\n"
            f"<status>{status}</status>\n<summary>done</summary>\n</task-notification>")


def _write(path: Path, lines: list[dict | str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))


def write_session(config_dir: Path, cwd: Path, *, extra_child_lines: list | None = None) -> str:
    """Write the session under ``config_dir`` (a ``CLAUDE_CONFIG_DIR``); its id."""
    session_id = str(uuid.uuid4())
    record = SessionRecord.new(config_dir, session_id=session_id, main_agent_id=MAIN, cwd=cwd, now_s=T0)
    record_session(config_dir, record)
    main = Path(record.transcript)
    subagents = main.with_suffix("") / "subagents"
    _write(main, [
        _user(T0, "go"),
        _reply(T0 + 1, "m1", _call("call-a", "Agent", prompt="A"), _call("call-b", "Agent", prompt="B"),
               stop="tool_use"),
        _user(T0 + 4, _result("call-a", "Async agent launched: a"), _result("call-b", "B broke", error=True)),
        _reply(T0 + 5, "m2", _call("call-d", "Agent", prompt="D"), stop="tool_use"),
        _user(T0 + 5.1, _result("call-d", "Async agent launched: d")),
        _user(T0 + 8, _notice("call-a", "completed")),
        _reply(T0 + 9, "m3", {"type": "text", "text": "all done"}),
    ])
    children = {
        "a": ({"agentType": "general-purpose", "toolUseId": "call-a", "description": "job a", "finished": True}, [
            _user(T0 + 1.2, "A"),
            _reply(T0 + 2, "a1", _call("call-r", "Read", file_path="x"), _call("call-c", "Agent", prompt="C"),
                   stop="tool_use"),
            _user(T0 + 2.5, _result("call-r", "text"), _result("call-c", "Async agent launched: c")),
            _user(T0 + 6, _notice("call-c", "killed")),
            _reply(T0 + 7, "a2", {"type": "text", "text": "a done"}, model="claude-haiku-4-5"),
        ]),
        "b": ({"agentType": "Explore", "toolUseId": "call-b", "finished": True}, [
            _user(T0 + 1.3, "B"), _reply(T0 + 3.5, "b1", {"type": "text", "text": "oops"}),
        ]),
        "c": ({"agentType": "worker", "toolUseId": "call-c", "parentAgentId": "a", "spawnDepth": 2, "finished": True},
              [_user(T0 + 2.6, "C"), _reply(T0 + 5.5, "c1", {"type": "text", "text": "c"})]),
        "d": ({"agentType": "general-purpose", "toolUseId": "call-d"},
              [_user(T0 + 5.2, "D"), _reply(T0 + 6, "d1", _call("call-s", "Bash", command="sleep 9"), stop="tool_use"),
               *(extra_child_lines or [])]),
    }
    for name, (meta, lines) in children.items():
        _write(subagents / f"agent-{name}.jsonl", lines)
        (subagents / f"agent-{name}.meta.json").write_text(json.dumps(meta))
    return session_id
