"""Every flag claude-agent-sdk can pass is one covey's command line takes: the flags are read
from the installed SDK (its own command builder, every option set), not from a copied list."""

from __future__ import annotations

import dataclasses
import inspect
import io
import re
import subprocess
import sys
import textwrap
import tokenize
from typing import Any

import pytest

from covey.cli.flags import session_options
from covey.cli.main import _parser
from covey.cli.sdk_flags import initialize_reads
from covey.errors import CoveyError
from tests.sdk_ts.conftest import TS_SDK_VERSIONS

sdk = pytest.importorskip("claude_agent_sdk")


def _every_option() -> Any:
    """ClaudeAgentOptions with every option that becomes a flag set to a plausible value."""
    from claude_agent_sdk import ClaudeAgentOptions

    return ClaudeAgentOptions(
        system_prompt={"type": "preset", "preset": "claude_code", "append": "be brief"},
        tools=["Read", "Bash"], allowed_tools=["Read", "Bash(git status)"], disallowed_tools=["Write"],
        max_turns=3, max_budget_usd=1.5, task_budget={"total": 50_000}, model="sonnet", fallback_model="haiku",
        betas=["context-1m-2025-08-07"], permission_prompt_tool_name="stdio", permission_mode="acceptEdits",
        continue_conversation=True, resume="11111111-1111-4111-8111-111111111111", session_id=None,
        settings='{"model": "sonnet"}', add_dirs=["/tmp/a", "/tmp/b"], mcp_servers={"s": {"command": "true"}},
        include_partial_messages=True, include_hook_events=True, strict_mcp_config=True, fork_session=True,
        resume_session_at="22222222-2222-4222-8222-222222222222", resume_drops_turn="33333333-3333-4333-8333-333333333333",
        setting_sources=["user", "project"], plugins=[{"type": "local", "path": "/tmp/plugin"}],
        thinking={"type": "enabled", "budget_tokens": 2000, "display": "summarized"}, effort="high",
        output_format={"type": "json_schema", "schema": {"type": "object"}}, session_store=_Store(),
    )


class _Store:
    """A session store: the SDK only asks whether there is one to build its command line."""


def _sdk_argv(options: Any) -> list[str]:
    from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

    transport = SubprocessCLITransport(prompt="hi", options=options)
    transport._cli_path = "covey"
    return transport._build_command()[1:]


def _flags(argv: list[str]) -> set[str]:
    return {arg.split("=", 1)[0] for arg in argv if arg.startswith("--")}


def test_every_flag_the_sdk_builds_is_known_to_covey() -> None:
    argv = _sdk_argv(_every_option())
    args = _parser().parse_args(["run", *argv])  # an unknown flag would exit 2 here
    options = session_options(args)
    assert options["allowed_tools"] == ["Read", "Bash(git status)"] and options["tools"] == ["Read", "Bash"]
    assert options["betas"] == ["context-1m-2025-08-07"] and options["task_budget"] == 50_000
    assert options["max_thinking_tokens"] == 2000 and options["thinking_display"] == "summarized"
    assert options["effort"] == "high" and options["json_schema"] == {"type": "object"}
    assert options["additional_directories"] == ["/tmp/a", "/tmp/b"] and options["session_mirror"] is True


def test_a_truncating_resume_is_taken() -> None:
    from claude_agent_sdk import ClaudeAgentOptions

    options = ClaudeAgentOptions(resume="s", fork_session=True, resume_session_at="-u1", resume_drops_turn="u2")
    taken = session_options(_parser().parse_args(["run", *_sdk_argv(options)]))
    assert (taken["resume_session_at"], taken["resume_drops_turn"], taken["fork_session"]) == ("-u1", "u2", True)


def test_the_sdks_flags_are_all_covered_by_this_test(tmp_path: Any) -> None:
    """A flag a newer SDK builds that the option set above does not reach shows up here."""
    from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

    source = inspect.getsource(SubprocessCLITransport._build_command)
    # The flags its string literals name; its comments may quote a flag as an example ("--flag=value").
    strings = [token.string for token in tokenize.generate_tokens(io.StringIO(textwrap.dedent(source)).readline)
               if token.type in (tokenize.STRING, getattr(tokenize, "FSTRING_START", -1))]
    named = set(re.findall(r'^[rbuf]*"(--[a-zA-Z][a-zA-Z-]+)', "\n".join(strings), re.M))
    other = dataclasses.replace(_every_option(), system_prompt=None, thinking={"type": "adaptive"})
    for options in (_every_option(), other):
        _parser().parse_args(["run", *_sdk_argv(options)])
    reached = _flags(_sdk_argv(_every_option())) | _flags(_sdk_argv(other))
    # Two the option sets cannot reach: a system prompt file instead of a string, a session id
    # besides --resume; covey takes both.
    assert named - reached == {"--system-prompt-file", "--session-id"}
    (tmp_path / "prompt.md").write_text("be brief")
    args = _parser().parse_args(["run", "--system-prompt-file", str(tmp_path / "prompt.md"),
                                 "--session-id=11111111-1111-4111-8111-111111111111"])
    assert session_options(args)["system_prompt"] == "be brief"


def test_claude_codes_space_separated_lists_keep_every_value() -> None:
    args = _parser().parse_args(["run", "-p", "task", "--allowedTools", "Read", "Bash(git log *)",
                                 "--disallowedTools", "Write,Edit", "--add-dir", "/x", "/y"])
    options = session_options(args)
    assert args.prompt == "task" and options["allowed_tools"] == ["Read", "Bash(git log *)"]
    assert options["disallowed_tools"] == ["Write", "Edit"] and options["additional_directories"] == ["/x", "/y"]


def test_an_unknown_flag_is_one_line_naming_it() -> None:
    done = subprocess.run([sys.executable, "-m", "covey", "-p", "hi", "--no-such-flag"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == ["covey: unrecognized arguments: --no-such-flag (covey --help lists the flags)"]


# -- the TypeScript SDK -------------------------------------------------------------------

TS_BUILDER = ('"--output-format","stream-json","--verbose","--input-format","stream-json"', "CLAUDE_CODE_ENTRYPOINT")
"""Where @anthropic-ai/claude-agent-sdk builds Claude Code's command line in its sdk.mjs: from the
flags it always passes to the environment it sets next (its ``ProcessTransport.initialize``)."""
REFUSED = {"--agent", "--channels"}
"""The TypeScript SDK's flags covey refuses in one line (docs/sdk.md#the-typescript-sdk)."""
VALUES = {"--json-schema": '{"type": "object"}', "--mcp-config": '{"mcpServers": {}}', "--initialize-fields": "settings",
          "--managed-settings": '{"permissions": {"deny": ["Bash"]}}', "--effort": "high", "--max-budget-usd": "1"}


def _ts_sdk_text(version: str) -> str:
    """That TypeScript SDK version's sdk.mjs (installed as tests/sdk_ts installs it; skips without node or npm)."""
    from tests.sdk_ts.conftest import installed_sdk

    _, modules = installed_sdk(version)
    return (modules / "@anthropic-ai" / "claude-agent-sdk" / "sdk.mjs").read_text(encoding="utf-8")


def _ts_sdk_flags(version: str) -> set[str]:
    """Every flag that TypeScript SDK version's command builder names."""
    text = _ts_sdk_text(version)
    start = text.index(TS_BUILDER[0])
    return set(re.findall(r'"(--[a-z][a-zA-Z-]*)', text[start:text.index(TS_BUILDER[1], start)]))


def _run_parser() -> Any:
    return _parser()._subparsers._group_actions[0].choices["run"]


def _one_flag(flag: str, tmp_path: Any) -> list[str]:
    """``flag`` as the SDK would pass it (``--flag=value``), with a value covey can take."""
    action = _run_parser()._option_string_actions[flag]
    if action.nargs == 0 or action.nargs == "?":
        return [flag]
    value = VALUES.get(flag) or (action.choices[0] if action.choices else "2" if action.type is int else str(tmp_path))
    return [f"{flag}={value}"]


@pytest.mark.parametrize("version", TS_SDK_VERSIONS)
def test_every_flag_the_typescript_sdk_builds_is_known_to_covey(version, tmp_path) -> None:
    flags = _ts_sdk_flags(version)
    assert {"--no-session-persistence", "--initialize-fields", "--managed-settings", "--plugin-dir-no-mcp"} <= flags
    assert flags - set(_run_parser()._option_string_actions) == set()  # none "unrecognized arguments"
    refused = set()
    for flag in sorted(flags):
        argv = ["run", "--input-format=stream-json", "--output-format=stream-json", "--await-initialize",
                *_one_flag(flag, tmp_path)]
        try:
            session_options(_parser().parse_args(argv))
        except CoveyError as exc:
            assert flag in str(exc) and "\n" not in str(exc), exc
            refused.add(flag)
    assert refused == REFUSED


@pytest.mark.parametrize("argv, says", [
    (["--channels=plugin:telegram@claude-plugins-official"], "--channels plugin:telegram@claude-plugins-official: "
                                                             "covey takes no MCP channel notifications"),
    (["--initialize-fields=settings"], "--initialize-fields requires --await-initialize"),
    (["--await-initialize", "--initialize-fields=settings,tools"], "covey does not take 'tools' in the initialize"),
    (["--managed-settings-in-initialize"], "--managed-settings-in-initialize requires --await-initialize"),
    (["--project-config-root=relative/dir"], "--project-config-root relative/dir: must be an absolute local path"),
    (["--project-config-root=/no/such/dir"], "not an existing directory that this user can list"),
])
def test_what_covey_refuses_of_them_is_one_line_naming_the_flag(argv, says, capsys) -> None:
    from covey.cli import main as cli

    assert cli.main(["--input-format=stream-json", "--output-format=stream-json", *argv]) == 1
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and says in said[0], said


def test_replaying_user_messages_needs_stream_json_both_ways_as_in_claude_code(capsys) -> None:
    from covey.cli import main as cli

    assert cli.main(["-p", "hi", "--output-format=stream-json", "--verbose", "--replay-user-messages"]) == 1
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and "--replay-user-messages requires both --input-format=stream-json and " \
                               "--output-format=stream-json" in said[0], said


def test_the_debug_flags_and_the_no_mcp_plugin_dir_set_their_options(tmp_path) -> None:
    def taken(*argv: str) -> dict[str, Any]:
        return session_options(_parser().parse_args(["run", "-p", "x", *argv]))

    log = str(tmp_path / "debug.txt")
    # --debug writes Claude Code's own file (""), its filter is no path; a file named wins in either order.
    assert taken("--debug")["debug"] == taken("--debug=api,hooks")["debug"] == taken("-d")["debug"] == ""
    assert taken("--debug", f"--debug-file={log}")["debug"] == taken(f"--debug-file={log}", "--debug")["debug"] == log
    assert taken("--no-session-persistence")["session_persistence"] is False
    assert taken("--permission-prompts=none")["permission_prompts"] == "none"
    both = taken("--plugin-dir", str(tmp_path / "a"), f"--plugin-dir-no-mcp={tmp_path / 'b'}")
    assert both["plugin_dirs"] == [str(tmp_path / "a"), str(tmp_path / "b")]
    assert taken("--managed-settings", '{"model": "opus"}')["managed_settings"] == {"model": "opus"}
    assert taken(f"--project-config-root={tmp_path}")["project_config_root"] == str(tmp_path)


@pytest.mark.parametrize("version", TS_SDK_VERSIONS)
def test_every_field_the_typescript_sdk_delivers_in_initialize_is_one_covey_takes(version) -> None:
    """``settingsDelivery: "initialize"`` and the like: the SDK names the field in ``--initialize-fields``
    and ends the session unless the answer confirms it; a field a new SDK adds fails here first."""
    fields = set(re.findall(r'ViaInitialize\?\["(\w+)"\]', _ts_sdk_text(version)))
    assert {"settings", "disallowedTools"} <= fields
    for field in sorted(fields):
        argv = ["run", "--input-format=stream-json", "--output-format=stream-json", "--await-initialize",
                f"--initialize-fields={field}"]
        args = _parser().parse_args(argv)
        session_options(args)  # nothing refused
        assert field in initialize_reads(args), field


CONTROL_REQUESTS_REVIEWED = frozenset({
    # answered: the session's own
    "initialize", "interrupt", "set_permission_mode", "set_model", "stop_task", "mcp_status", "mcp_message",
    "get_context_usage", "rewind_files", "mcp_reconnect", "mcp_toggle", "end_session",
    # Claude Code's "Unsupported control request subtype" error (error_code unsupported_request), as its print
    # mode answers the first; the others are its app's account, browser and dialog features
    "update_queued_message", "apply_flag_settings", "background_tasks", "cancel_async_message", "channel_enable", "claim_session",
    "claude_authenticate", "claude_oauth_callback", "claude_oauth_wait_for_completion", "decide_held_peer_message",
    "export_conversation", "generate_session_title", "get_chrome_browsers", "get_chrome_dialog", "get_hooks_listing",
    "get_memory_dialog", "get_plan", "get_sandbox_dialog", "get_settings", "get_skills_dialog", "get_status",
    "get_task_output", "get_usage", "list_permission_rules", "mcp_authenticate", "mcp_clear_auth",
    "mcp_oauth_callback_url", "mcp_read_resource", "mcp_set_servers", "message_rated", "mirror_error",
    "prompt_draft_activity", "read_file", "reload_output_styles", "reload_plugins", "reload_skills", "remote_control",
    "rename_session", "seed_read_state", "select_chrome_browser", "set_chrome_browser_hints", "set_cwd",
    "set_max_thinking_tokens", "set_mcp_permission_mode_override", "set_peer_delivery", "set_prompt_suggestions_paused",
    "side_question", "submit_feedback", "submit_survey_feedback", "ultrareview_launch", "update_settings",
    # the protocol's own answers
    "success", "error",
})
"""Every control request a pinned TypeScript SDK can send, with what covey does with it: a new SDK's
request fails the test below until someone decides (docs/sdk.md lists the answers)."""


@pytest.mark.parametrize("version", TS_SDK_VERSIONS)
def test_every_control_request_the_typescript_sdk_can_send_has_been_reviewed(version) -> None:
    sent = set(re.findall(r'subtype:"(\w+)"', _ts_sdk_text(version)))
    assert {"initialize", "interrupt", "set_permission_mode"} <= sent
    assert sent - CONTROL_REQUESTS_REVIEWED == set()
