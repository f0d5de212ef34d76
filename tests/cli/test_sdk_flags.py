"""Every flag claude-agent-sdk can pass is one covey's command line takes: the flags are read
from the installed SDK (its own command builder, every option set), not from a copied list."""

from __future__ import annotations

import dataclasses
import inspect
import re
import subprocess
import sys
from typing import Any

import pytest

from covey.cli import _parser
from covey.cli_flags import session_options

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
    named = set(re.findall(r'"(--[a-zA-Z][a-zA-Z-]+)', source))
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
    assert args.print_prompt == "task" and options["allowed_tools"] == ["Read", "Bash(git log *)"]
    assert options["disallowed_tools"] == ["Write", "Edit"] and options["additional_directories"] == ["/x", "/y"]


def test_an_unknown_flag_is_one_line_naming_it() -> None:
    done = subprocess.run([sys.executable, "-m", "covey", "-p", "hi", "--no-such-flag"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == ["covey: unrecognized arguments: --no-such-flag (covey --help lists the flags)"]
