"""Every covey exception is in the hierarchy and crosses an actor boundary whole (STYLE 10):
Ray pickles it, and ``type(e)(*e.args)`` must rebuild it with its fields."""

from __future__ import annotations

import pickle

import covey.cli.main  # noqa: F401  (imported for the exceptions they define)
import covey.definitions.skill_loader  # noqa: F401
import covey.hooks.read  # noqa: F401
import covey.session  # noqa: F401
import covey.transcripts.resume  # noqa: F401
from covey.errors import (
    AgentUnavailable, CoveyError, LimitExceeded, ModelAPIError, ModelBehaviorError, PromptBlocked, UserError,
)
from covey.cli.served import PromptTooLarge
from covey.client.paths import ServiceDirError
from covey.client.process import LineTooLong, ServiceUnavailable
from covey.definitions.skill_loader import UnknownSkill
from covey.hooks.read import HookConfigError
from covey.mcp.manager import McpServerUnavailable
from covey.permissions.rules import RuleError
from covey.ratelimit.ports import RateLimitRefused
from covey.ray.start import RayUnreachable
from covey.service.controls import ControlRefused
from covey.service.preflight import MissingKey
from covey.session import SessionBroken
from covey.settings.files import SandboxUnavailable
from covey.transcripts.resume import ResumeError

EXAMPLES = [
    CoveyError("x"), UserError("settings.json: field 'model': bad"), ModelBehaviorError("Agent type 'x' not found."),
    LimitExceeded("the spawn depth limit is 2", "depth"), AgentUnavailable("actor 'registry' is gone"),
    ModelAPIError("overloaded", 529), PromptBlocked("a UserPromptSubmit hook blocked the prompt"),
    HookConfigError("/p/settings.json", "hooks.Stop", "not a list"), UnknownSkill("no skill 'x'"),
    SessionBroken("covey's registry actor died"), ServiceUnavailable("the covey service did not answer"),
    ServiceDirError("covey service directory '/tmp/x' is open to others"),
    ResumeError("Session 'abc' cannot be resumed: its transcript '/t/a.jsonl' is missing.", "abc", "/t/a.jsonl"),
    RuleError("Bash(:*)", "cliArg", "the prefix before :* cannot be empty"),
    McpServerUnavailable("the agent definition requires MCP server 'x': it did not connect within 30 s"),
    PromptTooLarge("the prompt is 70,000,000 bytes; the limit is 67,108,864 bytes (64 MiB) a line"),
    LineTooLong("a covey_run line of 70,000,000 bytes is over the covey service's limit"),
    RateLimitRefused("Rate limit: the requests per minute limit (60), 60 consumed", "requests", 60, 60, 1.8e9),
    RayUnreachable("no Ray answers at 127.0.0.1:1 (Connection refused): give none for a private Ray"),
    MissingKey("no Anthropic API key in the run's environment: set ANTHROPIC_API_KEY"),
    ControlRefused("Unsupported control request subtype: update_queued_message", "unsupported_request"),
    SandboxUnavailable("settings require a command sandbox (sandbox.failIfUnavailable): covey has none"),
]


def _all_subclasses(cls: type) -> set[type]:
    return {sub for direct in cls.__subclasses__() for sub in {direct, *_all_subclasses(direct)}}


def test_the_examples_cover_every_covey_exception():
    assert _all_subclasses(CoveyError) | {CoveyError} == {type(e) for e in EXAMPLES}


def test_every_covey_exception_rebuilds_from_its_args_and_pickles_with_its_fields():
    for error in EXAMPLES:
        for copy in (type(error)(*error.args), pickle.loads(pickle.dumps(error))):
            assert type(copy) is type(error) and str(copy) == str(error)
            assert vars(copy) == vars(error), type(error).__name__


def test_a_limit_says_which_limit_and_prints_its_message_only():
    error = LimitExceeded("Cannot spawn a sub-agent: the session budget of $1.00 is spent.", "budget")
    assert error.limit == "budget" and str(error) == "Cannot spawn a sub-agent: the session budget of $1.00 is spent."
    assert LimitExceeded("no limit named").limit is None
    assert isinstance(PromptBlocked("blocked"), UserError)
