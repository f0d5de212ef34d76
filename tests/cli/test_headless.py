"""Claude Code's headless command line as claude-agent-sdk starts it, and the conversation's
first line (issue 14): what covey accepts, what it refuses, and how it says so."""

from __future__ import annotations

import io
import json
import os
import time

import pytest

from covey.cli import main as cli
from covey.cli import flags as cli_flags
from covey.cli.argv import as_command
from covey.cli.sdk import read_initialize, sdk_options
from covey.cli.sdk_flags import INITIALIZE_FIELDS, debug_to_stderr, initialize_reads
from covey.client import ports as protocol
from covey.client.ports import initialize_response
from covey.common.versions import CLAUDE_CODE_VERSION
from covey.errors import CoveyError
from covey.hooks.callback import sdk_hook_settings

SDK_ARGV = ["--output-format", "stream-json", "--verbose", "--system-prompt", "", "--permission-prompt-tool",
            "stdio", "--permission-mode", "acceptEdits", "--setting-sources=user,project", "--resume=abc",
            "--max-turns", "3", "--add-dir", "/tmp", "--tools", "Read,Bash", "--max-budget-usd", "0.5",
            "--include-partial-messages", "--input-format", "stream-json"]


def _parsed(argv: list[str]):
    return cli._parser().parse_args(["run", *argv])


def test_the_sdks_command_line_needs_no_p_and_maps_to_session_options():
    assert as_command(SDK_ARGV, cli.COMMANDS)[0] == "run"
    options = cli._session_options(_parsed(SDK_ARGV))
    assert options["system_prompt"] == "" and options["permission_mode"] == "acceptEdits"
    assert options["setting_sources"] == ["user", "project"] and options["resume"] == "abc"
    assert options["max_turns"] == 3 and options["additional_directories"] == ["/tmp"]
    assert options["tools"] == ["Read", "Bash"] and options["max_budget_usd"] == 0.5


@pytest.mark.parametrize("value, tools", [(None, None), ("default", None), ("", []), ("Read Edit", ["Read", "Edit"])])
def test_tools_flag(value, tools):
    assert cli_flags.tools_arg(value) == tools


def test_every_permission_mode_is_accepted_bubble_included(capsys):
    # `bubble` on the main agent (it has no parent) sends its prompts to the session's asker, the
    # person, as `default` does (issue 15): it is no longer refused.
    for mode in ("default", "acceptEdits", "bypassPermissions", "dontAsk", "plan", "auto", "bubble"):
        assert cli._session_options(_parsed(["-p", "x", "--permission-mode", mode]))["permission_mode"] == mode
    with pytest.raises(SystemExit):
        _parsed(["-p", "x", "--permission-mode", "yolo"])
    assert "yolo" in capsys.readouterr().err


def test_an_unknown_flag_is_named(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["-p", "x", "--no-such-flag"])
    assert exit_.value.code == 2 and "--no-such-flag" in capsys.readouterr().err


@pytest.mark.parametrize("argv, says", [
    (["-p", "x", "--mcp-config", "/no/such/mcp.json"], "--mcp-config: cannot read"),
    (["-p", "x", "--mcp-config", "{not json"], "--mcp-config: not a JSON object"),
    (["--input-format", "stream-json", "--output-format", "json"], "needs --output-format stream-json"),
    (["-p", "x", "--agent=reviewer"], "--agent reviewer: covey cannot run the main thread as an agent"),  # not --agents
])
def test_what_covey_cannot_honour_is_refused_clearly(argv, says, capsys):
    assert cli.main(argv) == 1
    assert says in capsys.readouterr().err


def test_mcp_config_takes_json_or_a_file_and_travels_as_objects(tmp_path):
    path = tmp_path / "servers.json"
    path.write_text('{"mcpServers": {"b": {"command": "b-server"}}}')
    options = cli._session_options(_parsed(["-p", "x", "--mcp-config", '{"mcpServers": {"a": {"command": "a"}}}',
                                            "--mcp-config", str(path), "--strict-mcp-config"]))
    assert options["mcp_servers"] == [{"mcpServers": {"a": {"command": "a"}}}, {"mcpServers": {"b": {"command": "b-server"}}}]
    assert options["strict_mcp_config"] is True


def test_settings_flag_takes_json_or_a_file(tmp_path):
    assert cli_flags.settings_arg('{"model": "opus"}') == {"model": "opus"}
    path = tmp_path / "s.json"
    path.write_text('{"permissions": {"allow": ["Read"]}}')
    assert cli_flags.settings_arg(str(path)) == {"permissions": {"allow": ["Read"]}}
    with pytest.raises(CoveyError, match="cannot read"):
        cli_flags.settings_arg(str(tmp_path / "missing.json"))
    with pytest.raises(CoveyError, match="JSON object"):
        cli_flags.settings_arg('{"a": ')


def test_initialize_is_passed_on_to_the_run_and_its_agents_and_hooks_go_with_the_run():
    """The run answers it once its session is open (its output styles are the session's)."""
    hooks = {"PreToolUse": [{"matcher": "Write", "hookCallbackIds": ["hook_0"], "timeout": 5}]}
    agents = {"helper": {"description": "helps", "prompt": "You help."}}
    message = protocol.control_request("initialize", "req_1_ab", hooks=hooks, agents=agents)
    first, initialize = read_initialize(io.StringIO(json.dumps(message) + "\n"))
    assert first == message and initialize == message["request"]
    options = sdk_options(initialize)
    assert json.loads(options["agents"]) == agents and options["sdk_hooks"] == hooks


def test_a_first_line_that_is_not_initialize_is_sent_on():
    user = protocol.user_message("hi")
    first, initialize = read_initialize(io.StringIO(json.dumps(user) + "\n"))
    assert first == user and initialize == {}


def test_the_initialize_answer_before_a_session_is_the_requests_and_confirms_what_was_taken():
    request = {"subtype": "initialize", "agents": {"helper": {"description": "helps"}}}
    answer = protocol.initialize_response(request, ["settings", "plugins"])
    assert answer["hooks_applied"] is True and answer["agents"] == [{"name": "helper", "description": "helps"}]
    assert (answer["output_style"], answer["available_output_styles"]) == ("default", ["default"])
    assert {flag: answer[flag] for flag in protocol.APPLIED.values()} == {
        "settings_applied": True, "plugins_applied": True, "disallowed_tools_applied": False,
        "managed_settings_applied": False, "mcp_servers_applied": False, "additional_directories_applied": False}


def test_sdk_hook_registrations_become_callback_hooks():
    config = sdk_hook_settings({"PreToolUse": [{"matcher": "Write|Edit", "hookCallbackIds": ["hook_0", "hook_1"],
                                                "timeout": 5}], "Stop": [{"matcher": None, "hookCallbackIds": ["h"]}]})
    assert config["PreToolUse"] == [{"matcher": "Write|Edit", "hooks": [
        {"type": "callback", "callback_id": "hook_0", "timeout": 5},
        {"type": "callback", "callback_id": "hook_1", "timeout": 5}]}]
    assert config["Stop"] == [{"matcher": "", "hooks": [{"type": "callback", "callback_id": "h"}]}]


TS_SDK_ARGV = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
               "--max-thinking-tokens=4000", '--json-schema={"type":"object"}', "--allowedTools=mcp__calc__add",
               "--permission-mode=bypassPermissions", "--allow-dangerously-skip-permissions"]
"""What @anthropic-ai/claude-agent-sdk 0.3.332 passes for maxThinkingTokens, outputFormat, allowedTools and
permissionMode "bypassPermissions" with allowDangerouslySkipPermissions (tests/sdk_ts runs the SDK itself)."""


def test_the_typescript_sdks_command_line_is_accepted():
    assert as_command(TS_SDK_ARGV, cli.COMMANDS)[0] == "run"
    options = cli._session_options(_parsed(TS_SDK_ARGV))
    assert options["max_thinking_tokens"] == 4000 and options["json_schema"] == {"type": "object"}
    assert options["allowed_tools"] == ["mcp__calc__add"] and options["permission_mode"] == "bypassPermissions"
    # Accepted, and nothing more: it does not put the run in bypass.
    allowed_only = cli._session_options(_parsed(TS_SDK_ARGV[:5] + ["--allow-dangerously-skip-permissions"]))
    assert "permission_mode" not in allowed_only


def test_the_typescript_sdks_initialize_carries_its_sdk_servers_and_system_prompt():
    """The TypeScript SDK sends these in ``initialize``, not on the command line as Python's does."""
    given = {"mcp_servers": [{"mcpServers": {"a": {"command": "a"}}}], "max_turns": 3}
    initialize = {"sdkMcpServers": ["calc"], "systemPrompt": [""], "appendSystemPrompt": "Be brief.",
                  "sdkMcpServerManifests": {"calc": {"toolsListResult": {"tools": []}}}}
    options = sdk_options(initialize, given)
    assert options["mcp_servers"] == [{"mcpServers": {"a": {"command": "a"}}},
                                      {"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}]
    assert options["system_prompt"] == "" and options["append_system_prompt"] == "Be brief."  # [""]: none
    assert sdk_options({"systemPrompt": ["Be terse.", "Answer in French."]})["system_prompt"] == \
        "Be terse.\n\nAnswer in French."
    # The Python SDK's initialize has none of them: its command line's stand.
    assert not {"mcp_servers", "system_prompt", "append_system_prompt"} & set(sdk_options({"hooks": None}, given))


def _flags(*argv: str) -> dict:
    return cli._session_options(_parsed(["-p", "x", *argv]))


def test_settings_and_disallowed_tools_in_initialize_are_taken_as_their_flags_would_be():
    """``--initialize-fields settings,disallowedTools`` (the TypeScript SDK's ``*Delivery: "initialize"``)."""
    settings = {"outputStyle": "Concise", "permissions": {"deny": ["Bash(rm *)"]}}
    initialize = {"settings": settings, "disallowedTools": ["WebFetch", "Bash(git push), Write"]}
    given = _flags("--disallowedTools", "Edit")
    taken = sdk_options(initialize, given, frozenset(INITIALIZE_FIELDS))
    as_flags = _flags("--disallowedTools", "Edit", "--settings", json.dumps(settings),
                      "--disallowedTools", "WebFetch", "Bash(git push), Write")
    assert taken["settings"] == as_flags["settings"] and taken["disallowed_tools"] == as_flags["disallowed_tools"]
    # Not named on the command line: not taken (as Claude Code, which confirms neither).
    assert "settings" not in sdk_options(initialize, given) and "disallowed_tools" not in sdk_options(initialize, given)


def test_additional_directories_in_initialize_are_taken_as_add_dir_would_take_them(tmp_path):
    """``--initialize-fields=additionalDirectories`` (the TypeScript SDK's ``additionalDirectoriesDelivery``):
    as Claude Code 2.1.337, strings only, a folder that does not exist passed over, after the ``--add-dir`` ones."""
    (tmp_path / "a").mkdir()
    args = _parsed(["--input-format=stream-json", "--output-format=stream-json", "--await-initialize",
                    "--initialize-fields=additionalDirectories", "--add-dir", str(tmp_path)])
    reads = initialize_reads(args)
    assert reads == {"plugins", "mcpServers", "additionalDirectories"}
    initialize = {"additionalDirectories": [str(tmp_path / "a"), str(tmp_path / "gone"), 3]}
    taken = sdk_options(initialize, cli._session_options(args), reads)
    assert taken["additional_directories"] == [str(tmp_path), str(tmp_path / "a")]
    assert "additional_directories" not in sdk_options(initialize, {}, frozenset())
    answer = initialize_response({}, reads)
    assert answer["additional_directories_applied"] is True and answer["settings_applied"] is False
    assert answer["claude_code_version"] == CLAUDE_CODE_VERSION and answer["sandbox_enabled"] is False


def test_await_initialize_takes_its_plugins_and_mcp_servers_and_managed_settings_when_told(tmp_path):
    initialize = {"plugins": [{"type": "local", "path": str(tmp_path / "a")},
                              {"type": "local", "path": str(tmp_path / "b"), "skipMcpDiscovery": True}],
                  "mcpServers": {"s": {"command": "s-server"}}, "sdkMcpServers": ["calc"],
                  "managedSettings": {"permissions": {"deny": ["Bash"]}}}
    args = _parsed(["--input-format=stream-json", "--output-format=stream-json", "--await-initialize",
                    "--managed-settings-in-initialize", "--mcp-config", '{"mcpServers": {"g": {"command": "g"}}}'])
    reads = initialize_reads(args)
    assert reads == {"plugins", "mcpServers", "managedSettings"}
    taken = sdk_options(initialize, cli._session_options(args), reads)
    assert taken["plugin_dirs"] == [str(tmp_path / "a"), str(tmp_path / "b")]
    assert taken["mcp_servers"] == [{"mcpServers": {"g": {"command": "g"}}},
                                    {"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}},
                                    {"mcpServers": {"s": {"command": "s-server"}}}]
    assert taken["managed_settings"] == {"permissions": {"deny": ["Bash"]}}
    assert "plugin_dirs" not in sdk_options(initialize) and "managed_settings" not in sdk_options(initialize)
    with pytest.raises(CoveyError, match="covey loads local plugins"):
        sdk_options({"plugins": [{"type": "marketplace", "name": "x"}]}, {}, reads)


def test_debug_to_stderr_copies_the_sessions_debug_log_as_it_is_written(tmp_path, capsys):
    with debug_to_stderr({"max_turns": 2}, True) as options:
        path = options["debug"]
        assert options["max_turns"] == 2 and os.path.isfile(path) and (os.stat(path).st_mode & 0o777) == 0o600
        with open(path, "a") as log:  # as the session does, from its own process
            log.write("2026-01-01T00:00:00.000Z [DEBUG] first\n")
            log.flush()
            deadline = time.monotonic() + 10
            while "first" not in capsys.readouterr().err and time.monotonic() < deadline:
                time.sleep(0.05)
            log.write("2026-01-01T00:00:00.000Z [DEBUG] last\n")
    assert "[DEBUG] last" in capsys.readouterr().err  # what came before the end is copied too
    assert not os.path.exists(path)  # its own temporary file is gone
    kept = tmp_path / "debug.txt"
    kept.write_text("older run\n")
    with debug_to_stderr({"debug": str(kept)}, True) as options:
        assert options["debug"] == str(kept)
        with open(kept, "a") as log:
            log.write("this run\n")
    said = capsys.readouterr().err
    assert "this run" in said and "older run" not in said and kept.exists()  # a --debug-file stays
    with debug_to_stderr({"a": 1}, False) as options:
        assert options == {"a": 1}
