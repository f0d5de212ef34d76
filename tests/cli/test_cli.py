"""The ``covey`` command as a user runs it, against a fake Messages API on 127.0.0.1: a subprocess
where it ends before Ray starts; a run in this process on the shared Ray (tests/inprocess_covey.py)
where it runs agents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI
from tests.inprocess_covey import covey_here

COVEY = [sys.executable, "-m", "covey"]


MANAGED_COVEY = [sys.executable, str(Path(__file__).parents[1] / "managed_covey.py")]
"""``covey`` reading managed settings from a folder the test names (no environment variable can)."""


def covey(*args: str, cwd: Path, env: dict | None = None, timeout: int = 180,
          managed: Path | None = None) -> subprocess.CompletedProcess:
    """``managed``: the managed settings folder (None: the machine's, as for a user)."""
    full_env = {**os.environ, **(env or {})}
    command = [*MANAGED_COVEY, str(managed)] if managed is not None else COVEY
    return subprocess.run([*command, *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout)


def _read_then_answer(body):
    last = body["messages"][-1]
    if isinstance(last["content"], list) and any(b.get("type") == "tool_result" for b in last["content"]):
        return {"text": "The file says hello."}
    return {"content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "notes.txt"}}]}


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")  # covey -p in this process, on the shared Ray
def test_print_mode_json_against_a_messages_api_server(tmp_path):
    (tmp_path / "notes.txt").write_text("FILE_CONTENT_MARKER hello\n")
    with FakeMessagesAPI(replies=[_read_then_answer]) as api:
        done = covey_here("-p", "What do the notes say?", "--output-format", "json", cwd=tmp_path,
                          env={"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "x"})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["type"] == "result" and result["is_error"] is False
    assert result["result"] == "The file says hello." and result["num_turns"] == 2
    assert result["usage"]["input_tokens"] > 0 and result["total_cost_usd"] > 0
    first, second = api.requests[:2]
    read = next(t for t in first["tools"] if t["name"] == "Read")
    assert read["input_schema"]["required"] == ["file_path"] and "offset" in read["input_schema"]["properties"]
    tool_result = second["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result" and "FILE_CONTENT_MARKER" in str(tool_result["content"])


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")  # covey -p in this process, on the shared Ray
def test_stream_json_starts_with_init_and_ends_with_a_result(tmp_path):
    (tmp_path / "notes.txt").write_text("hello\n")
    with FakeMessagesAPI(replies=[_read_then_answer]) as api:
        done = covey_here("-p", "go", "--output-format", "stream-json", cwd=tmp_path,
                          env={"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "x"})
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert (events[0]["type"], events[0]["subtype"]) == ("system", "init") and "Read" in events[0]["tools"]
    assert [e["type"] for e in events[1:]] == ["assistant", "user", "assistant", "result"]


def _main_with_three_sync_children(body):
    system = " ".join(b.get("text", "") for b in body.get("system") or [])
    usage = {"input_tokens": 1000, "output_tokens": 100}
    if "You are covey" not in system:
        return {"text": "CHILD_DONE", "usage": usage}
    if "CHILD_DONE" in str(body["messages"][-1]["content"]):
        return {"text": "all done", "usage": usage}
    calls = [{"type": "tool_use", "id": f"toolu_{i}", "name": "Agent",
              "input": {"description": f"task {i}", "prompt": f"task {i}", "subagent_type": "general-purpose"}}
             for i in range(3)]
    return {"content": calls, "usage": usage}


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")  # covey -p in this process, on the shared Ray
@pytest.mark.parametrize("output_format", ["json", "stream-json"])
def test_the_result_counts_what_every_agent_spent(output_format, tmp_path):
    with FakeMessagesAPI(replies=[_main_with_three_sync_children]) as api:
        done = covey_here("-p", "go", "--output-format", output_format, "--model", "claude-sonnet-4-6", cwd=tmp_path,
                          env={"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "x"})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["type"] == "result" and result["result"] == "all done" and len(api.requests) == 5
    request_usd = (1000 * 3 + 100 * 15) / 1e6
    assert result["usage"]["input_tokens"] == 2000  # the main agent's own two requests
    assert result["total_cost_usd"] == pytest.approx(5 * request_usd)
    assert result["modelUsage"] == {"claude-sonnet-4-6": {
        "inputTokens": 5000, "outputTokens": 500, "cacheReadInputTokens": 0, "cacheCreationInputTokens": 0,
        "webSearchRequests": 0, "costUSD": pytest.approx(5 * request_usd), "contextWindow": 200_000,
        "maxOutputTokens": 64_000, "cacheCreationEphemeral5mInputTokens": 0, "cacheCreationEphemeral1hInputTokens": 0,
        "canonicalModel": "claude-sonnet-4-6", "provider": "firstParty", "costBasis": "list"}}


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")  # covey -p in this process, on the shared Ray
def test_a_persistent_api_error_is_retried_then_reported_with_a_non_zero_exit(tmp_path):
    with FakeMessagesAPI(replies=[("error", 500, None)]) as api:
        done = covey_here("-p", "go", "--quiet", cwd=tmp_path, env={"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "x"})
    assert done.returncode != 0
    assert "500" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert len(api.requests) > 1  # retried


def test_no_api_key_says_how_to_set_one(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    done = subprocess.run([*COVEY, "-p", "go"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "ANTHROPIC_API_KEY" in done.stderr and "scripted" in done.stderr


def test_an_unknown_model_alias_is_named(tmp_path):
    done = covey("-p", "go", "--model", "sonet", cwd=tmp_path, timeout=60)
    assert done.returncode != 0 and "'sonet'" in done.stderr


def test_an_unreadable_settings_file_is_named(tmp_path):
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{not json")
    done = covey("-p", "go", cwd=tmp_path, timeout=60)
    assert done.returncode != 0 and ".claude/settings.json" in done.stderr


def test_covey_agents_lists_definitions_and_reports_bad_files(tmp_path):
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(textwrap.dedent("""\
        ---
        name: reviewer
        description: Reviews code
        tools: [Read, Grep]
        model: sonnet
        ---
        Review.
        """))
    (agents / "bad.md").write_text("---\nname: bad\ndescription: b\nmaxTurns: lots\n---\nx\n")
    done = covey("agents", cwd=tmp_path, timeout=60)
    assert done.returncode == 0
    line = next(l for l in done.stdout.splitlines() if l.strip().startswith("reviewer"))
    assert "project" in line and "sonnet" in line and "Read, Grep" in line
    assert "bad.md: maxTurns" in done.stdout


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")  # covey -p in this process, on the shared Ray
def test_demo_runs_end_to_end_without_a_key(tmp_path):
    done = covey_here("demo", cwd=tmp_path, unset=["ANTHROPIC_API_KEY"])
    assert done.returncode == 0, done.stderr
    assert "greet" in done.stdout and "notification" in done.stderr


class _NoisySession:
    """Stands for Session: while it runs, another thread prints to sys.stdout, as Ray's
    driver does with its cluster warnings ("N PYTHON worker processes have been started")."""

    runtime = None
    kept_worktrees: list = []

    def __init__(self, **_: object) -> None:
        pass

    async def start(self) -> None:
        pass

    def __enter__(self) -> "_NoisySession":
        return self

    def __exit__(self, *exc: object) -> None:
        print("(raylet) WARNING: noise at shutdown")

    async def stream(self, prompt: str):
        import threading

        from covey.events import ResultEvent

        noise = threading.Thread(target=lambda: print("(raylet) WARNING: 18 PYTHON worker processes have been started"))
        noise.start()
        noise.join()
        yield ResultEvent(session_id="s", subtype="success", is_error=False, result="done", num_turns=1,
                          duration_ms=1, duration_api_ms=1, total_cost_usd=0.0, usage={})


@pytest.mark.parametrize("output_format", ["json", "stream-json", "text"])
def test_stdout_carries_covey_output_only_and_rays_warnings_go_to_stderr(output_format, monkeypatch, capsys):
    from covey import session
    from covey.cli import main as cli

    monkeypatch.setattr(session, "Session", _NoisySession)
    assert cli.main(["-p", "go", "--output-format", output_format, "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "WARNING" not in captured.out and captured.err.count("WARNING") == 2
    if output_format == "text":
        assert captured.out == "done\n"
    else:
        assert [json.loads(line)["result"] for line in captured.out.splitlines()] == ["done"]


def _project(tmp_path: Path, hooks: dict) -> Path:
    (tmp_path / ".claude").mkdir(exist_ok=True)
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    return (tmp_path / ".claude" / "settings.json").resolve()


def _script(tmp_path: Path, text: str) -> str:
    (tmp_path / "rules.yaml").write_text(textwrap.dedent(text))
    return f"scripted:{tmp_path / 'rules.yaml'}"


_BASH_THEN_DONE = """\
    rules:
      - when: {last_tool_result_contains: "ran-bash"}
        reply: {text: "all done"}
      - reply:
          tool_use: {name: Bash, input: {command: "echo ran-bash"}}
    """


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")  # covey -p in this process, on the shared Ray
def test_hook_events_covey_lacks_are_skipped_with_a_warning_and_the_rest_run(tmp_path):
    marker, ended = tmp_path / "pre-tool-use.txt", tmp_path / "session-end.json"
    settings = _project(tmp_path, {
        "ConfigChange": [{"hooks": [{"type": "command", "command": "true"}]}],
        "FileChanged": [{"hooks": [{"type": "command", "command": "true"}]}],
        "PreCompact": [{"hooks": [{"type": "command", "command": "true"}]}],
        "SessionEnd": [{"matcher": "other", "hooks": [{"type": "command", "command": f"cat > {ended}"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": f"echo fired > {marker}"}]}],
    })
    done = covey_here("-p", "go", "--model", _script(tmp_path, _BASH_THEN_DONE), "--allowed-tools", "Bash",
                      "--output-format", "json", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "all done"
    assert marker.read_text().strip() == "fired"
    for event in ("ConfigChange", "FileChanged"):
        assert f"covey: {settings}: hooks.{event}: a Claude Code event covey never fires; skipped" in done.stderr.splitlines()
    assert "PreCompact" not in done.stderr  # accepted: it fires before a compaction (docs/compaction.md)
    payload = json.loads(ended.read_text())  # the session's end fired SessionEnd
    assert payload["hook_event_name"] == "SessionEnd" and payload["reason"] == "other"


@pytest.mark.parametrize("output_format", ["json", "stream-json"])
def test_a_malformed_hook_ends_the_run_with_its_cause(tmp_path, output_format):
    settings = _project(tmp_path, {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command"}]}]})
    done = covey("-p", "go", "--model", _script(tmp_path, _BASH_THEN_DONE), "--output-format", output_format,
                 "--quiet", cwd=tmp_path, timeout=60)
    assert done.returncode != 0
    field = "'hooks.PreToolUse[0].hooks[0].command'"
    assert str(settings) in done.stderr and field in done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["type"] == "result" and result["is_error"] is True
    assert result["subtype"] == "error_during_execution"
    assert str(settings) in result["result"] and field in result["result"] and result["errors"] == [result["result"]]


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")  # covey -p in this process, on the shared Ray
def test_an_error_inside_the_main_agent_before_its_first_turn_reaches_the_user(tmp_path):
    """A UserPromptSubmit hook that refuses the prompt fails the main agent in its actor."""
    _project(tmp_path, {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo no-such-task >&2; exit 2"}]}]})
    done = covey_here("-p", "go", "--model", _script(tmp_path, _BASH_THEN_DONE), "--output-format", "stream-json",
                      "--quiet", cwd=tmp_path)
    assert done.returncode != 0
    last = json.loads(done.stdout.splitlines()[-1])
    assert last["type"] == "result" and last["is_error"] is True and "no-such-task" in last["result"]
    assert last["num_turns"] == 0 and "no-such-task" in last["errors"][0]
    assert "no-such-task" in done.stderr and "ended without a result" not in done.stderr


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")  # covey -p in this process, on the shared Ray
def test_print_mode_reports_a_bad_agent_definition_on_stderr(tmp_path):
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "bad.md").write_text("---\nname: bad\ndescription: b\nmaxTurns: lots\n---\nx\n")
    (agents / "good.md").write_text("---\nname: good\ndescription: fine\n---\nx\n")
    done = covey_here("-p", "go", "--model", _script(tmp_path, "rules:\n  - reply: {text: done}\n"), "--output-format",
                      "stream-json", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"{agents / 'bad.md'}: maxTurns: " in done.stderr and "not loaded" in done.stderr
    init = json.loads(done.stdout.splitlines()[0])
    assert "good" in init["agents"] and "bad" not in init["agents"]
